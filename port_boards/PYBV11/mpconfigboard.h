// pyboard v1.1 with the tflm module: the stm32 port's own PYBV11 definitions
// (pins, clocks, peripherals), plus a ROMFS region in the internal flash.
#include "boards/PYBV11/mpconfigboard.h"

#undef MICROPY_HW_BOARD_NAME
#define MICROPY_HW_BOARD_NAME "PYBv1.1 with tflm"

// ROMFS partition 0 is the FLASH_ROMFS region of tflm_pybv11.ld (its linker
// symbols give start and size); it is mounted at /rom on boot and
// `mpremote romfs deploy` can rewrite it through vfs.rom_ioctl.
#define MICROPY_HW_ROMFS_ENABLE_INTERNAL_FLASH (1)
#define MICROPY_HW_ROMFS_ENABLE_PART0 (1)

// The MicroPython heap (RAM between static data and the stack): at least
// that many bytes, whole KiB below the ELF's figure (docs/boards.md;
// tests/test_board_figures.py holds it within 2 KiB of the built firmware's),
// for `tflm-host arena --board` without a build (with one, the ELF's own).
#define TFLM_HEAP_BYTES (105472)
