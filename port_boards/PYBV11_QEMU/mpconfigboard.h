// The pyboard v1.1 with the tflm module (port_boards/PYBV11), changed where
// QEMU's netduinoplus2 cannot run it. Everything else (pins, peripherals,
// flash map, ROMFS partition, heap) is the real board's.
#include "../PYBV11/mpconfigboard.h"

#undef MICROPY_HW_BOARD_NAME
#define MICROPY_HW_BOARD_NAME "PYBv1.1 with tflm (QEMU)"

// The REPL on UART1 (QEMU's first serial port) instead of USB, which QEMU
// does not emulate for this chip.
#undef MICROPY_HW_ENABLE_USB
#define MICROPY_HW_ENABLE_USB (0)
#define MICROPY_HW_UART_REPL (PYB_UART_1)
#define MICROPY_HW_UART_REPL_BAUD (115200)

// QEMU has no GPIO model for this chip: every pin reads 0, which is the USR
// switch held down, and boot would wait forever for its release.
#undef MICROPY_HW_HAS_SWITCH
#define MICROPY_HW_HAS_SWITCH (0)

// No internal flash filesystem (/flash): its sector cache is in the 64 KiB
// CCM RAM, which QEMU's STM32F405 lacks, and QEMU cannot program flash.
#undef MICROPY_HW_ENABLE_INTERNAL_FLASH_STORAGE
#define MICROPY_HW_ENABLE_INTERNAL_FLASH_STORAGE (0)
#undef MICROPY_HW_HAS_FLASH
#define MICROPY_HW_HAS_FLASH (0)

// Fault debugging on from boot (board_qemu.c).
#undef MICROPY_BOARD_EARLY_INIT
#define MICROPY_BOARD_EARLY_INIT tflm_qemu_board_early_init
void tflm_qemu_board_early_init(void);

// No SD card slot, and no RTC: QEMU has neither (the RTC's oscillators
// would never report ready).
#undef MICROPY_HW_ENABLE_SDCARD
#define MICROPY_HW_ENABLE_SDCARD (0)
#undef MICROPY_HW_ENABLE_RTC
#define MICROPY_HW_ENABLE_RTC (0)

// The MicroPython heap (RAM between static data and the stack): at least
// that many bytes, whole KiB below the ELF's figure (docs/boards.md;
// tests/test_board_figures.py holds it within 2 KiB of the built firmware's),
// for `tflm-host arena --board` without a build (with one, the ELF's own).
#undef TFLM_HEAP_BYTES
#define TFLM_HEAP_BYTES (110592)
