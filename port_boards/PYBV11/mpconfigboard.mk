# pyboard v1.1 (STM32F405RG: Cortex-M4F at 168 MHz, 1 MiB flash, 128 KiB RAM
# + 64 KiB CCM) with the tflm module and a ROMFS region for models in the
# internal flash. Build through the project: make firmware BOARD=PYBV11
# (or make -C ports/stm32 BOARD_DIR=<project>/port_boards/PYBV11 USER_C_MODULES=<project>).
#
# Flash map (tflm_pybv11.ld, its one source):
#   0x08000000  16 KiB  sector 0      vectors and the first text
#   0x08004000  48 KiB  sectors 1-3   the internal filesystem (/flash)
#   0x08010000 576 KiB  sectors 4-8   firmware text
#   0x080A0000 384 KiB  sectors 9-11  ROMFS, mounted at /rom on boot
MCU_SERIES = f4
CMSIS_MCU = STM32F405xx
AF_FILE = boards/stm32f405_af.csv

ifeq ($(USE_MBOOT),1)
$(error BOARD_DIR=$(BOARD_DIR) has no Mboot layout; build without USE_MBOOT)
endif
TFLM_PYBV11_LD := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))tflm_pybv11.ld)
# The port's sections, and one object of the module's in sector 0
# (tflm_pybv11_sections.ld), which firmware0.bin then holds too.
LD_FILES = $(TFLM_PYBV11_LD) $(dir $(TFLM_PYBV11_LD))tflm_pybv11_sections.ld
TEXT0_ADDR = 0x08000000
TEXT0_SECTIONS = .isr_vector .isr_extratext .tflm_text0
# firmware1.bin's address (the .dfu, .hex and deploy rules): the start of
# the linker script's FLASH_TEXT region, so the two cannot disagree.
TEXT1_ADDR := $(shell sed -n 's/^ *FLASH_TEXT *([a-z]*) *: *ORIGIN *= *\(0x[0-9A-Fa-f]*\),.*/\1/p' $(TFLM_PYBV11_LD))
ifeq ($(TEXT1_ADDR),)
$(error no FLASH_TEXT region in $(TFLM_PYBV11_LD))
endif

# The pins of the pyboard v1.1 are the port's own board list.
override BOARD_PINS = boards/PYBV11/pins.csv

MICROPY_VFS_LFS2 = 1

# The 576 KiB of firmware text hold MicroPython and every kernel only with
# the kernels that carry the models' time (int8 convolutions, depthwise,
# fully connected, pooling, mul) at -O2 and the rest at
# the firmware's -Os: 23 KB less than all at -O2 (arm-none-eabi-gcc 12,
# Cortex-M4F). SVDF too (keyword_scrambled's time) until the int8
# convolutions' backward order (conv_s8.c) needed its 3.8 KB, the LSTM
# until the patch-based stages' bands of rows (engine/patch.c) needed 1.7 KB,
# and ADD/SUB (2.2 KB at -O2) until bands through residual blocks needed 1 KB.
# CONV_2D's float32 and int16 loops (conv.c: 2.5 KB at -O2; magic_wand's
# time) until the int8 kernels' pipelined loads and gathered windows copied
# row by row (conv_s8.c, mm_s8.h: 0.5 KB) needed the room: magic_wand up to
# 6% slower here (all of these at -Os against all at -O2 on NETDUINOPLUS2:
# +6.0%). SOFTMAX too (0.7 KB) for the pointwise loops' longer turns:
# 18-143 cycles more per shared model with one (NETDUINOPLUS2, the same
# comparison). The pools and MUL (1.5 KB at -O2) until patches keeping
# their halos (engine/patch.c) needed 2.1 KB, with engine/plan_picture.o
# and error.o moved to sector 0 (tflm_pybv11_sections.ld): magic_wand 1% slower (the
# same comparison); DEPTHWISE_CONV_2D's float32 loops at -Os would have
# cost it 19%.
# The files a new /flash gets are the board's (tflm_factory.c: boot.py and
# main.py, not the port's pybcdc.inf and README.txt), 3.2 KB for the engine
# and the kernels; TILE took most of what was left (make firmware prints
# the bytes left); the next change that needs more: fully_connected at -Os
# saves 1.6 KB (ad01_int8's time).
TFLM_KERNEL_OPT_ONLY ?= conv_s8 depthwise_conv depthwise_conv_s8 fully_connected
TFLM_INVOKE_OPT ?=
# and DEPTHWISE_CONV_2D int8's channels path as one function (3.7 KB less;
# its layers 1-12% slower than on the other Cortex-M4 boards).
# (and without the walk of large one-channel windows: micro_speech's 10x8
# layer takes the blocks of listed taps, as before it).
$(BUILD)/micropython_mod/kernels/depthwise_conv_s8.o: CFLAGS += -DTFLM_DW_S8_COMPACT=1 -DTFLM_DW_S8_WALK=0
# Without Interpreter(stage=...) and interp.stage (binding/binding.h's
# TFLM_STAGE_ARG: 0.8 KB, which this flash no longer had).
$(BUILD)/micropython_mod/binding/plan.o $(BUILD)/micropython_mod/binding/interpreter.o: CFLAGS += -DTFLM_STAGE_ARG=0
$(BUILD)/micropython_mod/kernels/fully_connected.o: CFLAGS += -DTFLM_FC_S8_SLICE_QUADS=0 -DTFLM_FC_S8_SHORT=0
# The int8 pointwise convolutions' pairs of channels summed by one loop for
# every k, not by their own for k of 8 to 128 as well (conv_s8.c: 4.8 KB;
# person_detect's pointwise layers about 10% slower than on NETDUINOPLUS2);
# and a patch's overlapped convolutions a band of rows a call (3.2 KB; the
# stages that recompute halos, vww_96_int8's, a few % slower).
$(BUILD)/micropython_mod/kernels/conv_s8.o: CFLAGS += -DTFLM_CONV_S8_QUAD_K=0 -DTFLM_CONV_S8_WINDOW_BANDS=0
# BATCH_MATMUL's pairs of rows through GCC's 2x2 loop (kernels/mm_s8.h), not
# the assembly the convolutions take.
$(BUILD)/micropython_mod/kernels/batch_matmul.o: CFLAGS += -DTFLM_MM_S8_2X2_ASM=0
# The seal's chain word by word (engine/seal.c), not four words a load.
$(BUILD)/micropython_mod/engine/seal.o: CFLAGS += -DTFLM_SEAL_LDM=0
$(BUILD)/micropython_mod/engine/invoke.o: CFLAGS += -DTFLM_INVOKE_FLAT=0
# The output stage's shifts of 25-31 bits out of line (kernels/out_s8.h:
# 1.5 KB less; vww_96_int8's last pointwise layers a few % slower).
$(BUILD)/micropython_mod/kernels/%.o: CFLAGS += -DTFLM_OUT_S8_WIDE_INLINE=0

# EXP without int16 (its table of 513 anchors and their lookup, 0.5 KB;
# TFLM has no int16 EXP either): prepare() refuses it as a type the kernel
# does not take (NotImplementedError). For math_unary.o only: the same
# setting for every object would make the engine check each model's types
# against each kernel's (TFLM_TYPES_LEFT_OUT), 0.8 KB more.
ifeq ($(strip $(TFLM_TYPES)),)
$(BUILD)/micropython_mod/kernels/math_unary.o: CFLAGS += -DTFLM_TYPES_EXP=0+TFLM_T_FLOAT32+TFLM_T_INT8
endif

# The pyboard's frozen modules less the LCD160CR skin's driver (manifest.py).
FROZEN_MANIFEST ?= $(dir $(TFLM_PYBV11_LD))manifest.py

# This port compiles everything with -fsingle-precision-constant (float
# builds), which turns the double constants of the tflm engine's reference
# arithmetic (multiplier derivation, expf, log2) into floats: outputs would
# no longer match TFLM and -Wdouble-promotion stops the build. The module's
# objects get standard C constants back (added last, so it wins).
$(BUILD)/micropython_mod/%.o: CFLAGS += -fno-single-precision-constant
