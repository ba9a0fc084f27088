# The tflm user C module, for MicroPython's make-based ports (unix, qemu, stm32).
# Build with USER_C_MODULES pointing at this project's top folder.
TFLM_MOD_DIR := $(USERMOD_DIR)

# The binding is scanned for qstrs; the engine and kernels are plain C.
SRC_USERMOD_C += $(addprefix $(TFLM_MOD_DIR)/binding/, modtflm.c model.c interpreter.c)
SRC_USERMOD_LIB_C += $(sort $(wildcard $(TFLM_MOD_DIR)/engine/*.c $(TFLM_MOD_DIR)/kernels/*.c))

# No fused multiply-add: results must round as TFLM's reference kernels do.
CFLAGS_USERMOD += -I$(TFLM_MOD_DIR) -ffp-contract=off

# TFLM_OPS="FULLY_CONNECTED QUANTIZE ..." links only those kernels.
ifneq ($(strip $(TFLM_OPS)),)
CFLAGS_USERMOD += -DTFLM_KERNELS_DEFAULT=0 $(foreach op,$(TFLM_OPS),-DTFLM_KERNEL_$(op)=1)
endif
