# Board support for the project's QEMU boards, built like a user C module:
# it mounts the ROMFS region of the board's memory map at /rom on boot and
# counts instructions (qemuboard.icount()).
# Boards turn it on with TFLM_BOARD_GLUE = 1 (see common/qemu_arm.mk).
ifeq ($(TFLM_BOARD_GLUE),1)
SRC_USERMOD_C += $(USERMOD_DIR)/common/board_romfs.c $(USERMOD_DIR)/common/board_clock.c
ifeq ($(TFLM_BOARD_FPU),1)
SRC_USERMOD_C += $(USERMOD_DIR)/common/board_fpu.c
endif
endif
