# A Cortex-M0 board, the RP2040's instruction set (ARMv6-M, Thumb-1, no
# divide instruction), as QEMU's `microbit` machine (nRF51) emulates it with
# 1 MiB of flash and 256 KiB of RAM (like the RP2040's 264 KiB; the real
# micro:bit has 16 KiB). Flash holds the firmware (512 KiB, as the Netduino
# boards') and a ROMFS region for models (512 KiB).
QEMU_MACHINE = microbit
TFLM_QEMU_ARGS = -global nrf51-soc.flash-size=1048576 -global nrf51-soc.sram-size=262144
QEMU_EXTRA += $(TFLM_QEMU_ARGS)
TFLM_MCU_NAME = Cortex-M0
CFLAGS += -mcpu=cortex-m0 -mfloat-abi=soft -DQEMU_SOC_NRF51
TFLM_GCHELPER = thumb1
# RAM left after .data, .bss and a 10 KiB stack.
MICROPY_HEAP_SIZE = 229376
TFLM_ROMFS_ADDR = 0x00080000
# QEMU's CPU clock for this machine (SysTick counts it).
TFLM_CPU_HZ = 16000000
include $(BOARD_DIR)/../common/qemu_arm.mk
