# Netduino 2 as QEMU emulates it: STM32F205 (Cortex-M3, no FPU),
# 1 MiB flash, 128 KiB RAM. Flash holds the firmware (512 KiB) and a
# ROMFS region for models (512 KiB).
QEMU_MACHINE = netduino2
TFLM_MCU_NAME = STM32F205
CFLAGS += -mcpu=cortex-m3 -mfloat-abi=soft -DQEMU_SOC_STM32
# RAM left after .data, .bss and a 10 KiB stack.
MICROPY_HEAP_SIZE = 114688
TFLM_ROMFS_ADDR = 0x00080000
# QEMU's CPU clock for this machine (SysTick counts it).
TFLM_CPU_HZ = 120000000
include $(BOARD_DIR)/../common/qemu_arm.mk
