# The pyboard v1.1 firmware (port_boards/PYBV11) for QEMU's netduinoplus2,
# which emulates the same STM32F405 (Cortex-M4F, 1 MiB flash, 128 KiB RAM +
# 64 KiB CCM) but not its clock controller nor USB: the real PYBV11 firmware
# stops in SystemClock_Config there. This variant changes only that (see
# mpconfigboard.h), so the stm32 port's code for this chip runs in CI.
# Build: make firmware BOARD=PYBV11_QEMU; run: tflm-host run MODEL --target PYBV11_QEMU.
include $(BOARD_DIR)/../PYBV11/mpconfigboard.mk

# The pyboard's flash map, plus the symbols the project's QEMU runner reads.
LD_FILES = $(BOARD_DIR)/../PYBV11/tflm_pybv11.ld $(BOARD_DIR)/qemu_romfs.ld \
	$(BOARD_DIR)/../PYBV11/tflm_pybv11_sections.ld

QEMU_MACHINE = netduinoplus2

# QEMU's USART keeps its interrupt raised where the chip drops it (board_qemu.c).
LDFLAGS += -Wl,--wrap=uart_irq_handler -Wl,--wrap=uart_rx_char
