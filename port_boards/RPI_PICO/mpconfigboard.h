// Raspberry Pi Pico with the tflm module.
#define MICROPY_HW_BOARD_NAME "Raspberry Pi Pico with tflm"

// The 2 MiB flash (XIP at 0x10000000), from the bottom up:
//   0x10000000  1024 KiB  firmware (code and constants)
//   0x10100000   640 KiB  ROMFS: models, mounted at /rom on boot, used in place
//   0x101A0000   384 KiB  filesystem (littlefs, /)
// The port puts the filesystem at the top of the flash and ROMFS right below
// it. The firmware must end below 0x10100000: `make firmware BOARD=RPI_PICO`
// checks it after linking.
#define MICROPY_HW_FLASH_STORAGE_BYTES (384 * 1024)
#define MICROPY_HW_ROMFS_BYTES (640 * 1024)

// The MicroPython heap, where tflm arenas are allocated, is all the RAM the
// firmware does not use statically (the port's linker script). TFLM_HEAP_BYTES:
// at least that many bytes, whole KiB below the ELF's figure (docs/boards.md;
// tests/test_board_figures.py holds it within 2 KiB of the built firmware's),
// for `tflm-host arena --board` without a build (with one, the ELF's own).
#define TFLM_HEAP_BYTES (250880)
