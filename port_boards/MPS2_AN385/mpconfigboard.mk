# Arm MPS2 with the AN385 image as QEMU emulates it: Cortex-M3, one 4 MiB
# RAM that holds code and data. The top 1 MiB is the ROMFS region for models.
QEMU_MACHINE = mps2-an385
TFLM_MCU_NAME = Cortex-M3
CFLAGS += -mcpu=cortex-m3 -mfloat-abi=soft -DQEMU_SOC_MPS2
MICROPY_HEAP_SIZE = 524288
TFLM_ROMFS_ADDR = 0x00300000
# The ROMFS region is RAM: `mpremote romfs deploy` can write it (until power-off).
TFLM_ROMFS_WRITABLE = 1
# QEMU's CPU clock for this machine (SysTick counts it).
TFLM_CPU_HZ = 25000000
include $(BOARD_DIR)/../common/qemu_arm.mk
