# Netduino Plus 2 as QEMU emulates it: STM32F405 (Cortex-M4F, hard float),
# the pyboard's microcontroller: 1 MiB flash, 128 KiB of RAM used here (the
# pyboard's main SRAM). Flash holds the firmware (512 KiB) and a ROMFS
# region for models (512 KiB): the M4 build has every DSP path.
QEMU_MACHINE = netduinoplus2
TFLM_MCU_NAME = STM32F405
CFLAGS += -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -DQEMU_SOC_STM32
# RAM left after .data, .bss and a 10 KiB stack.
MICROPY_HEAP_SIZE = 114688
TFLM_ROMFS_ADDR = 0x00080000
TFLM_BOARD_FPU = 1
# QEMU's CPU clock for this machine (SysTick counts it).
TFLM_CPU_HZ = 168000000
include $(BOARD_DIR)/../common/qemu_arm.mk
