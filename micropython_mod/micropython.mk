# The tflm user C module, for MicroPython's make-based ports (unix, qemu, stm32).
# Build with USER_C_MODULES pointing at this project's top folder.
TFLM_MOD_DIR := $(USERMOD_DIR)

# The binding is scanned for qstrs; the engine and kernels are plain C.
SRC_USERMOD_C += $(addprefix $(TFLM_MOD_DIR)/binding/, modtflm.c model.c interpreter.c plan.c predict.c)
SRC_USERMOD_LIB_C += $(sort $(wildcard $(TFLM_MOD_DIR)/engine/*.c $(TFLM_MOD_DIR)/kernels/*.c))

# No fused multiply-add: results must round as TFLM's reference kernels do.
CFLAGS_USERMOD += -I$(TFLM_MOD_DIR) -ffp-contract=off
# Ports that build with -fsingle-precision-constant (stm32, nrf, samd, ...)
# would turn the engine's double constants into floats: off for the module.
# (GCC's option: clang, which the unix port builds with on macOS, has
# neither, and refuses it.)
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1)),)
$(patsubst $(USER_C_MODULES)/%,$(BUILD)/%,$(TFLM_MOD_DIR))/%.o: CFLAGS += -fno-single-precision-constant
endif

# Optimization of the kernel objects, which hold the loops invoke() spends its
# time in: added after the port's own flags (-Os), so it wins for them only.
# On the Cortex-M3 boards the conv models run 15-30% fewer instructions than
# at -Os, for about 20 KB more code; TFLM_KERNEL_OPT= builds the kernels like
# the rest of the firmware. (MicroPython's make does not rebuild objects when
# flags change: the project's make firmware gives a build with either knob
# a folder of its own; outside it, use a fresh BUILD folder when switching.)
# TFLM_KERNEL_OPT_ONLY="conv fully_connected ..." (a board short of flash)
# gives TFLM_KERNEL_OPT to those kernel files only, the rest built as the
# firmware is.
# TFLM_KERNEL_ALIGN, set for the QEMU Cortex-M3 and M4 boards
# (port_boards/common/qemu_arm.mk: -falign-loops=4): loop heads on word
# boundaries, as a taken branch to a 32-bit instruction that straddles one
# costs the core a cycle more (TRM r2p1, 3.3.1); TFLM_KERNEL_ALIGN_EXCEPT
# names the kernel files left unaligned.
TFLM_KERNEL_OPT ?= -O2
TFLM_KERNEL_OPT_ONLY ?=
TFLM_KERNEL_ALIGN ?=
TFLM_KERNEL_ALIGN_EXCEPT ?=
# Unless the last level TFLM_KERNEL_OPT names is -O2, the assembly blocks
# that take every register are left out (kernels/arch.h, TFLM_KERNEL_O2;
# natmod.mk has the same line; tests/test_build_settings.py).
TFLM_KERNEL_OPT_DEFS := $(if $(filter -O2,$(lastword $(filter -O%,$(TFLM_KERNEL_OPT)))),,-DTFLM_KERNEL_O2=0)
TFLM_KERNEL_OBJ_DIR := $(patsubst $(USER_C_MODULES)/%,$(BUILD)/%,$(TFLM_MOD_DIR))/kernels
TFLM_KERNEL_OPT_FILES := $(if $(strip $(TFLM_KERNEL_OPT_ONLY)),$(TFLM_KERNEL_OPT_ONLY),$(basename $(notdir \
    $(wildcard $(TFLM_MOD_DIR)/kernels/*.c))))
$(addprefix $(TFLM_KERNEL_OBJ_DIR)/,$(addsuffix .o,$(filter-out $(TFLM_KERNEL_ALIGN_EXCEPT),$(TFLM_KERNEL_OPT_FILES)))): \
    CFLAGS += $(TFLM_KERNEL_OPT) $(TFLM_KERNEL_OPT_DEFS) $(TFLM_KERNEL_ALIGN)
$(addprefix $(TFLM_KERNEL_OBJ_DIR)/,$(addsuffix .o,$(filter $(TFLM_KERNEL_ALIGN_EXCEPT),$(TFLM_KERNEL_OPT_FILES)))): \
    CFLAGS += $(TFLM_KERNEL_OPT) $(TFLM_KERNEL_OPT_DEFS)

# The engine's dispatch loop too (invoke.c), between the operators: on the
# Cortex-M4 hello_world_int8 runs 3% fewer cycles for about 250 B more. And
# the patch-based stages (patch.c), whose copies and tile loops run between
# a stage's kernel calls: person_detect's 12x7 stage 1.1% fewer cycles on
# the Cortex-M4 for about 2.4 KB more. TFLM_INVOKE_OPT= (PYBV11, short of
# flash) builds both as the firmware is.
TFLM_INVOKE_OPT ?= $(TFLM_KERNEL_OPT)
$(patsubst $(USER_C_MODULES)/%,$(BUILD)/%,$(TFLM_MOD_DIR))/engine/invoke.o: CFLAGS += $(TFLM_INVOKE_OPT)
$(patsubst $(USER_C_MODULES)/%,$(BUILD)/%,$(TFLM_MOD_DIR))/engine/patch.o: CFLAGS += $(TFLM_INVOKE_OPT)

# TFLM_OPS="FULLY_CONNECTED QUANTIZE ..." links only those kernels.
ifneq ($(strip $(TFLM_OPS)),)
CFLAGS_USERMOD += -DTFLM_KERNELS_DEFAULT=0 $(foreach op,$(TFLM_OPS),-DTFLM_KERNEL_$(op)=1)
endif

# TFLM_TYPES="CONV_2D:int32,int8 SOFTMAX:int8 ..." builds those kernels for
# those tensor types only, leaving out the code of the others (bare types,
# "int8 int32", for every op without an entry); a model that needs a type
# left out is refused when an interpreter is built. `tflm-host ops MODEL...`
# prints the setting a set of models needs.
include $(TFLM_MOD_DIR)/tflm_types.mk
TFLM_TYPES_CFLAGS := $(call tflm_types_cflags,$(TFLM_TYPES))
CFLAGS_USERMOD += $(TFLM_TYPES_CFLAGS)

# TFLM_PATCH=0 leaves patch-based stages out (tflm_config.h).
ifneq ($(strip $(TFLM_PATCH)),)
CFLAGS_USERMOD += -DTFLM_PATCH=$(strip $(TFLM_PATCH))
endif

# TFLM_PLANNERS="offline" links only those memory planners (greedy, linear,
# offline); without the greedy one, models need complete offline plans.
ifneq ($(strip $(TFLM_PLANNERS)),)
TFLM_PLANNERS_UPPER := $(shell echo $(TFLM_PLANNERS) | tr a-z A-Z)
CFLAGS_USERMOD += $(foreach p,GREEDY LINEAR OFFLINE,-DTFLM_PLANNER_$(p)=$(if $(filter $(p),$(TFLM_PLANNERS_UPPER)),1,0))
endif

# TFLM_PLAN=plan.h (from `tflm-host plan --c-header`) compiles a plan into the
# firmware as tflm.builtin_plan.
ifneq ($(strip $(TFLM_PLAN)),)
CFLAGS_USERMOD += -DTFLM_BUILTIN_PLAN_HEADER='"$(abspath $(TFLM_PLAN))"'
endif
