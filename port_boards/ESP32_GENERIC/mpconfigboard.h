// A generic ESP32 module with the tflm module.
#ifndef MICROPY_HW_BOARD_NAME
#define MICROPY_HW_BOARD_NAME "Generic ESP32 module with tflm"
#endif
#define MICROPY_HW_MCU_NAME "ESP32"

// ROMFS: the port's vfs.rom_ioctl serves the data partition named "romfs"
// (partitions-tflm-4MiB.csv), memory-mapped, and MicroPython mounts it at
// /rom on boot. The port leaves ROMFS off unless a board turns it on.
#define MICROPY_VFS_ROM (1)

// The MicroPython heap starts at 56 KiB and grows in new areas taken from
// ESP-IDF's heap as the program needs them (MICROPY_GC_SPLIT_HEAP_AUTO), so an
// arena of up to about 100 KiB can be allocated in one piece. TFLM_HEAP_BYTES:
// ESP-IDF's largest free block after boot as `make boards-report` measured it
// (docs/boards.md), the largest arena `tflm-host arena --board` counts on.
#define TFLM_HEAP_BYTES (110592)
