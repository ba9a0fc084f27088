// The board's ROMFS region (its linker script gives the bounds): mounted at
// /rom on boot when it holds an image, with /rom on sys.path, and served to
// vfs.rom_ioctl() so that `mpremote romfs query` and `mpremote romfs deploy`
// work. Files opened there are memory-mapped: tflm.load('/rom/model.tflite')
// uses the model in place, with no copy in RAM.
//
// On boards whose region is RAM (TFLM_ROMFS_WRITABLE) deploy writes it; an
// image written so lasts until QEMU stops. On the others the region is
// flash, which QEMU does not let the program write, and writes raise OSError.
#include "py/mperrno.h"
#include "py/runtime.h"
#include "py/objarray.h"
#include "extmod/vfs.h"
#include "extmod/vfs_rom.h"

extern uint8_t _tflm_romfs_start[];
extern uint8_t _tflm_romfs_end[];

#define ROMFS_SIZE ((size_t)(_tflm_romfs_end - _tflm_romfs_start))

static bool romfs_has_image(void) {
    // An image starts with the ROMFS record kind, encoded as 0xd2 0xcd 0x31.
    const uint8_t *rom = _tflm_romfs_start;
    return rom[0] == 0xd2 && rom[1] == 0xcd && rom[2] == 0x31;
}

static void romfs_mount(void) {
    if (!romfs_has_image()) {
        return;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t region = mp_obj_new_memoryview('B', ROMFS_SIZE, _tflm_romfs_start);
        mp_obj_t fs = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_vfs_rom), region);
        mp_obj_t mount_point = MP_OBJ_NEW_QSTR(MP_QSTR__slash_rom);
        mp_call_function_2(MP_OBJ_FROM_PTR(&mp_vfs_mount_obj), fs, mount_point);
        if (!mp_obj_is_true(mp_binary_op(MP_BINARY_OP_CONTAINS, mp_sys_path, mount_point))) {
            mp_obj_list_append(mp_sys_path, mount_point);
        }
        nlr_pop();
    } else {
        mp_printf(&mp_plat_print, "ROMFS image is invalid, /rom not mounted\n");
    }
}

void tflm_board_init(void) {
    tflm_board_clock_start();
    romfs_mount();
}

#if MICROPY_VFS_ROM_IOCTL

static MP_DEFINE_MEMORYVIEW_OBJ(romfs_region, 'B', 0, 0, NULL);

mp_obj_t mp_vfs_rom_ioctl(size_t n_args, const mp_obj_t *args) {
    mp_int_t cmd = mp_obj_get_int(args[0]);
    if (cmd == MP_VFS_ROM_IOCTL_GET_NUMBER_OF_SEGMENTS) {
        return MP_OBJ_NEW_SMALL_INT(1);
    }
    if (n_args < 2 || mp_obj_get_int(args[1]) != 0) {
        return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
    }
    switch (cmd) {
        case MP_VFS_ROM_IOCTL_GET_SEGMENT:
            romfs_region.items = _tflm_romfs_start;
            romfs_region.len = ROMFS_SIZE;
            return MP_OBJ_FROM_PTR(&romfs_region);
        #if TFLM_ROMFS_WRITABLE
        case MP_VFS_ROM_IOCTL_WRITE_PREPARE: {
            // (id, length) or (id, offset, length): "erase" to 0xff as flash would be.
            mp_int_t offset = n_args > 3 ? mp_obj_get_int(args[2]) : 0;
            mp_int_t len = mp_obj_get_int(args[n_args > 3 ? 3 : 2]);
            if (offset < 0 || len < 0 || (size_t)offset > ROMFS_SIZE || (size_t)len > ROMFS_SIZE - offset) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            memset(_tflm_romfs_start + offset, 0xff, len);
            return MP_OBJ_NEW_SMALL_INT(4); // smallest write
        }
        case MP_VFS_ROM_IOCTL_WRITE: {
            if (n_args < 4) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            mp_int_t offset = mp_obj_get_int(args[2]);
            mp_buffer_info_t bufinfo;
            mp_get_buffer_raise(args[3], &bufinfo, MP_BUFFER_READ);
            if (offset < 0 || (size_t)offset > ROMFS_SIZE || bufinfo.len > ROMFS_SIZE - offset) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            memcpy(_tflm_romfs_start + offset, bufinfo.buf, bufinfo.len);
            return MP_OBJ_NEW_SMALL_INT(0);
        }
        case MP_VFS_ROM_IOCTL_WRITE_COMPLETE:
            // The new image is mounted right away (a soft reset would too).
            romfs_mount();
            return MP_OBJ_NEW_SMALL_INT(0);
        #else
        case MP_VFS_ROM_IOCTL_WRITE_PREPARE:
        case MP_VFS_ROM_IOCTL_WRITE:
        case MP_VFS_ROM_IOCTL_WRITE_COMPLETE:
            // Flash: QEMU gives the program no way to write it.
            mp_raise_OSError(MP_EROFS);
        #endif
        default:
            return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
    }
}

#endif
