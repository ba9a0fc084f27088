# The tflm module as a dynamic native module, tflm.mpy, for stock MicroPython
# firmware (MicroPython's py/dynruntime.mk and tools/mpy_ld.py). The
# project's `make natmod ARCH=...` runs it in build/natmod/<ARCH>, where
# `src` links to this folder:
#   make -C build/natmod/x64 -f <this file> MPY_DIR=... ARCH=x64 PYTHON=.venv/bin/python
# Same engine, kernels and binding as the built-in module; binding/natmod.c
# is the entry point and binding/natmod.h maps the API (TFLM_NATMOD=1).
MOD = tflm
ARCH ?= x64
BUILD = obj

SRC := src/binding/natmod.c $(addprefix src/binding/, modtflm.c model.c interpreter.c plan.c predict.c) \
	$(sort $(wildcard src/engine/*.c src/kernels/*.c))

# The runtime libraries (libgcc's soft float and division on Cortex-M0,
# libm's floor and sqrt) are linked in by mpy_ld.
LINK_RUNTIME = 1

# Floats through mp_fun_table's float entries (every firmware the tests use
# has them); memoryview and array as the firmware lays them out.
ifneq ($(filter armv6m armv7m,$(ARCH)),)
MICROPY_FLOAT_IMPL = float
endif
# Cortex-M4: position-independent code needs a register for the GOT's
# address, and the DSP loops of kernels/mm_s8.h take every one: their C
# loops instead (fully_connected.c's, which reads its loop's end from memory
# there, runs). (The Cortex-M3's loops leave it one: ad01_int8 runs in
# 1.16 M cycles with them, 1.52 M with the C loops.)
ifeq ($(ARCH),armv7emsp)
$(filter-out %/fully_connected.o,$(patsubst %.c,$(BUILD)/%.o,$(filter src/kernels/%,$(SRC)))): \
	CFLAGS += -DTFLM_MM_S8_LANES_ASM=0
endif

# The kernels that hold the loops of most models at -O2 (convolutions,
# fully connected, elementwise, pooling, SVDF and LSTM layers, the audio
# front end's signal processing), the rest at -Os (dynruntime.mk's), as the
# built-in module builds them: micropython.mk's TFLM_KERNEL_OPT and
# TFLM_KERNEL_OPT_ONLY, the same knobs with the same meaning here
# (TFLM_KERNEL_OPT= builds every kernel at -Os, TFLM_KERNEL_OPT_ONLY= every
# kernel at TFLM_KERNEL_OPT). At -Os GCC leaves the output stage and other
# helpers of those loops as calls. A native module's code is loaded into
# RAM: what each choice costs in bytes and cycles is docs/natmod.md's
# "The RAM it takes".
TFLM_KERNEL_OPT ?= -O2
TFLM_KERNEL_OPT_ONLY ?= conv_s8 depthwise_conv_s8 fully_connected add_sub mul pooling svdf lstm signal signal_fft \
	signal_rfft signal_irfft signal_stream
NATMOD_OPT_FILES := $(if $(strip $(TFLM_KERNEL_OPT_ONLY)),$(TFLM_KERNEL_OPT_ONLY),$(basename $(notdir \
	$(wildcard src/kernels/*.c))))
# Unless the last level TFLM_KERNEL_OPT names is -O2, the assembly blocks
# that take every register are left out (micropython.mk's line).
TFLM_KERNEL_OPT_DEFS := $(if $(filter -O2,$(lastword $(filter -O%,$(TFLM_KERNEL_OPT)))),,-DTFLM_KERNEL_O2=0)
$(addprefix $(BUILD)/src/kernels/,$(addsuffix .o,$(NATMOD_OPT_FILES))): CFLAGS += $(TFLM_KERNEL_OPT) $(TFLM_KERNEL_OPT_DEFS)

# A patch's overlapped convolutions a band of rows a call, as PYBV11 runs
# them (kernels/conv_s8.c's TFLM_CONV_S8_WINDOW_BANDS): their one-call path
# is 3.6 KB of code on the Cortex-M3, RAM here; it speeds only the stages
# that recompute halos (vww_96_int8's chosen one: 2.8% fewer cycles on the
# M3 built in).
$(BUILD)/src/kernels/conv_s8.o: CFLAGS += -DTFLM_CONV_S8_WINDOW_BANDS=0

# No fused multiply-add: results must round as TFLM's reference kernels do.
# No loops turned into calls of memset, strlen...: natmod.c defines those.
CFLAGS_EXTRA += -Isrc -DTFLM_NATMOD=1 -ffp-contract=off -fno-math-errno \
	-fno-tree-loop-distribute-patterns \
	-DMICROPY_PY_BUILTINS_MEMORYVIEW=1 -DMICROPY_PY_ARRAY=1

# TFLM_OPS="FULLY_CONNECTED QUANTIZE ..." links only those kernels;
# TFLM_TYPES as for the built-in module (micropython.mk).
ifneq ($(strip $(TFLM_OPS)),)
CFLAGS_EXTRA += -DTFLM_KERNELS_DEFAULT=0 $(foreach op,$(TFLM_OPS),-DTFLM_KERNEL_$(op)=1)
endif
include src/tflm_types.mk
CFLAGS_EXTRA += $(call tflm_types_cflags,$(TFLM_TYPES))
# TFLM_PATCH=0 leaves patch-based stages out (tflm_config.h).
ifneq ($(strip $(TFLM_PATCH)),)
CFLAGS_EXTRA += -DTFLM_PATCH=$(strip $(TFLM_PATCH))
endif

# Xtensa: mpy_ld links every object file it is given, whole; from an
# archive it takes only the members that define what the others need. The
# entry point alone is linked as a file, the rest from libtflm.a (below).
ifeq ($(ARCH),xtensawin)
NATMOD_LIB_SRC := $(filter-out src/binding/natmod.c,$(SRC))
SRC := src/binding/natmod.c
endif

include $(MPY_DIR)/py/dynruntime.mk

# Xtensa (ESP32, ESP32-S3): mpy_ld names a literal that points into a
# section by the section's name and offset alone ("name+0x10"), not by its
# object file, and takes one entry for every literal of that name: a string
# of one file came out as another's. Each object's sections get its own
# suffix (objcopy, after the compile), so that no two files share a name.
# GCC's switch tables are R_XTENSA_NDIFF32 relocations, which mpy_ld does
# not take: none.
ifeq ($(ARCH),xtensawin)
CFLAGS += -fno-jump-tables
# The ESP32 holds the code in executable RAM, a few KB of which decide
# whether a model's build loads (below): the depthwise kernel's compact
# windows, as on Armv6-M (kernels/depthwise_conv_s8.c: 4.6 KB less here).
$(BUILD)/src/kernels/depthwise_conv_s8.o: CFLAGS += -DTFLM_DW_S8_COMPACT=1
$(BUILD)/%.o: %.c $(CONFIG_H) Makefile
	$(ECHO) "CC $<"
	$(Q)$(CROSS)gcc $(CFLAGS) -o $@ -c $<
	$(Q)$(CROSS)objcopy $$($(CROSS)objdump -h $@ | awk -v t=".$(subst /,.,$*)" \
		'$$2 ~ /^\.(text|rodata|data|bss)/ { printf " --rename-section %s=%s%s", $$2, $$2, t }') $@

# The ESP32 loads the code into executable RAM in one block, where a few KB
# decide whether a model's build loads: linked from an archive, the files
# nothing reaches from mpy_init stay out (hello_world's build: 72,662 bytes
# of text, 83,198 with every file). Its members are named by their paths
# (mpy_ld's archive reader keys them by name: engine/model.o and
# binding/model.o would be one). The entry point's object is made again when
# the archive changes, so that the module is linked again.
NATMOD_LIB := $(BUILD)/libtflm.a
NATMOD_LIB_O := $(addprefix $(BUILD)/,$(NATMOD_LIB_SRC:.c=.o))
$(CONFIG_H): $(NATMOD_LIB_SRC)
$(NATMOD_LIB_O): | $(BUILD)/.lib-dirs
$(BUILD)/.lib-dirs:
	$(Q)mkdir -p $(sort $(dir $(NATMOD_LIB_O))) && touch $@
$(NATMOD_LIB): $(NATMOD_LIB_O)
	$(ECHO) "AR $@"
	$(Q)rm -rf $@ $(BUILD)/lib && mkdir -p $(BUILD)/lib
	$(Q)for o in $^; do m=$${o#$(BUILD)/src/}; cp $$o $(BUILD)/lib/$$(echo $$m | tr / _); done
	$(Q)$(CROSS)ar rcs $@ $(BUILD)/lib/*.o
$(BUILD)/src/binding/natmod.o: $(NATMOD_LIB)
MPY_LD_FLAGS += -l $(CURDIR)/$(NATMOD_LIB)
endif

# Cortex-M0: libgcc's float and double division read a table by absolute address,
# which mpy_ld cannot relocate; binding/natmod.c has its own, and the link
# takes libgcc without that member.
ifeq ($(ARCH),armv6m)
LIBGCC_FULL := $(LIBGCC_PATH)
LIBGCC_PATH := $(CURDIR)/$(BUILD)/libgcc.a
$(BUILD)/libgcc.a: | $(BUILD_DIRS)
	cp $(LIBGCC_FULL) $@ && $(CROSS)ar d $@ divdf3.o divsf3.o
$(BUILD)/$(MOD).native.mpy: | $(BUILD)/libgcc.a
endif

# dynruntime.mk's objects depend on their own source and this file alone:
# every header of the module too, so that an edit of one rebuilds them.
$(SRC_O) $(NATMOD_LIB_O): $(wildcard src/*.h src/*/*.h)
