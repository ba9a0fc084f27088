# Settings shared by the project's QEMU Arm boards; a board's
# mpconfigboard.mk sets QEMU_MACHINE, CPU flags, its linker script and the
# ROMFS region, then includes this file.
QEMU_ARCH = arm
TFLM_BOARD_GLUE = 1

CFLAGS += -mthumb -DMICROPY_HW_MCU_NAME='"$(TFLM_MCU_NAME)"'
# Declares the boot hook that mounts /rom (MICROPY_PORT_INIT_FUNC).
CFLAGS += -include $(BOARD_DIR)/../common/board.h

SRC_BOARD_O = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o

# SysTick counts instructions for qemuboard.icount() (board_clock.c).
CFLAGS += -DTFLM_BOARD_CPU_HZ=$(TFLM_CPU_HZ)
LDFLAGS += -Wl,--wrap=SysTick_Handler
