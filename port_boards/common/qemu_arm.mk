# Settings shared by the project's QEMU Arm boards; a board's
# mpconfigboard.mk sets QEMU_MACHINE, CPU flags and the ROMFS region, then
# includes this file.
QEMU_ARCH = arm
TFLM_BOARD_GLUE = 1

# The board's one linker script, beside its mpconfigboard.mk.
LDSCRIPT = $(wildcard $(BOARD_DIR)/*.ld)
# mpy-cross's architecture: the core that CFLAGS' -mcpu names (the M4 with
# its single-precision FPU).
MPY_CROSS_ARCH = $(if $(filter -mcpu=cortex-m0,$(CFLAGS)),armv6m)$(if $(filter -mcpu=cortex-m3,$(CFLAGS)),armv7m)$(if \
    $(filter -mcpu=cortex-m4,$(CFLAGS)),armv7emsp)
MPY_CROSS_FLAGS += -march=$(MPY_CROSS_ARCH)

CFLAGS += -mthumb -DMICROPY_HW_MCU_NAME='"$(TFLM_MCU_NAME)"'
# Declares the boot hook that mounts /rom (MICROPY_PORT_INIT_FUNC).
CFLAGS += -include $(BOARD_DIR)/../common/board.h
# The port's configuration with vfs.rom_ioctl() (mpremote romfs deploy).
CFLAGS += -DMP_CONFIGFILE='"$(BOARD_DIR)/../common/mpconfigport_tflm.h"'
# Boards whose ROMFS region is RAM can be written (deployed to) at run time.
ifeq ($(TFLM_ROMFS_WRITABLE),1)
CFLAGS += -DTFLM_ROMFS_WRITABLE=1
endif

# Thumb-2 cores; the Cortex-M0 board sets TFLM_GCHELPER = thumb1.
TFLM_GCHELPER ?= thumb2
# The kernels' loop heads on word boundaries on the Cortex-M3
# (micropython_mod/micropython.mk): by the cycle estimator, up to 4% fewer
# cycles per shared model (trained_lstm 0.03% more). On the M4 too, but for
# the float convolution and pooling kernels, whose inner loops then run the
# padding's NOPs (magic_wand +0.11%): person_detect -0.67%, vww_96_int8
# -0.55%, test_conv_model -0.62%, pretrainedResnet_quant -0.42%, kws_ref_model
# -0.27% (the vision and keyword models took 0.5% more before their loops
# went into assembly blocks that align their own heads). Without it a change
# anywhere in the code before a loop moves its head and its cycles by up to
# 0.1%. (PYBV11, short of flash, does not align.)
ifneq ($(filter -mcpu=cortex-m3,$(CFLAGS)),)
TFLM_KERNEL_ALIGN = -falign-loops=4
endif
ifneq ($(filter -mcpu=cortex-m4,$(CFLAGS)),)
TFLM_KERNEL_ALIGN = -falign-loops=4
TFLM_KERNEL_ALIGN_EXCEPT = conv pooling
endif
SRC_BOARD_O = shared/runtime/gchelper_native.o shared/runtime/gchelper_$(TFLM_GCHELPER).o

# Cores with an FPU: the FPU is switched on before any other code runs
# (board_fpu.c puts a vector table in front of the port's).
ifeq ($(TFLM_BOARD_FPU),1)
CFLAGS += -DTFLM_BOARD_FPU=1
endif

# SysTick counts instructions for qemuboard.icount() (board_clock.c).
CFLAGS += -DTFLM_BOARD_CPU_HZ=$(TFLM_CPU_HZ)
LDFLAGS += -Wl,--wrap=SysTick_Handler
