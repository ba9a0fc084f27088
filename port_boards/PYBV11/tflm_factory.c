// The files the pyboard's factory reset writes into a new /flash (the
// stm32 port calls factory_reset_make_files when it makes the filesystem:
// on first boot, or after the USR switch's reset): boot.py and main.py,
// as the port's own do. Not the port's pybcdc.inf, the USB serial driver
// that Windows 8.1 and older needed (Windows 10 has its own), nor the
// README.txt that points to it: their 3.2 KB of firmware text went to the
// kernels (mpconfigboard.mk).
#include "py/mpconfig.h"

#if MICROPY_HW_ENABLE_STORAGE && MICROPY_VFS_FAT

#include "factoryreset.h"

static const char tflm_boot_py[] =
    "# boot.py: runs at every boot, before main.py\r\n"
    "import pyb\r\n"
    "#pyb.usb_mode('VCP+MSC') # USB serial and this drive (the default)\r\n"
    "#pyb.usb_mode('VCP+HID') # USB serial and a mouse\r\n";

static const char tflm_main_py[] =
    "# main.py: your program. Models belong in the ROMFS region, mounted at\r\n"
    "# /rom (tflm-host deploy writes it); import tflm runs them.\r\n";

typedef struct {
    const char *name;
    const char *text;
    UINT len;
} tflm_factory_file_t;

static const tflm_factory_file_t tflm_factory_files[] = {
    { "boot.py", tflm_boot_py, sizeof(tflm_boot_py) - 1 },
    { "main.py", tflm_main_py, sizeof(tflm_main_py) - 1 },
};

// Replaces the port's weak definition (factoryreset.c), whose files the
// linker then drops with it. A file that cannot be written is left out, as
// the port does: the filesystem is usable without it.
void factory_reset_make_files(FATFS *fatfs) {
    for (size_t i = 0; i < sizeof(tflm_factory_files) / sizeof(tflm_factory_files[0]); ++i) {
        const tflm_factory_file_t *f = &tflm_factory_files[i];
        FIL fp;
        if (f_open(fatfs, &fp, f->name, FA_WRITE | FA_CREATE_ALWAYS) == FR_OK) {
            UINT n;
            f_write(&fp, f->text, f->len, &n);
            f_close(&fp);
        }
    }
}

#endif
