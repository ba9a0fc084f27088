// Mounts the ROMFS image in the board's ROMFS region (its linker script
// gives the bounds) at /rom, and adds /rom to sys.path. Files opened there
// are memory-mapped: memoryview(open('/rom/model.tflite', 'rb')) points into
// flash, so a model is used in place with no copy in RAM.
#include "py/runtime.h"
#include "py/objarray.h"
#include "extmod/vfs.h"
#include "extmod/vfs_rom.h"

extern uint8_t _tflm_romfs_start[];
extern uint8_t _tflm_romfs_end[];

void tflm_board_init(void) {
    tflm_board_clock_start();
    const uint8_t *rom = _tflm_romfs_start;
    // An image starts with the ROMFS record kind, encoded as 0xd2 0xcd 0x31.
    if (rom[0] != 0xd2 || rom[1] != 0xcd || rom[2] != 0x31) {
        return;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t region = mp_obj_new_memoryview('B', _tflm_romfs_end - _tflm_romfs_start, _tflm_romfs_start);
        mp_obj_t fs = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_vfs_rom), region);
        // A str, not a qstr: the qstr "/rom" exists only in builds with ROMFS ioctls.
        mp_obj_t mount_point = mp_obj_new_str("/rom", 4);
        mp_call_function_2(MP_OBJ_FROM_PTR(&mp_vfs_mount_obj), fs, mount_point);
        mp_obj_list_append(mp_sys_path, mount_point);
        nlr_pop();
    } else {
        mp_printf(&mp_plat_print, "ROMFS image is invalid, /rom not mounted\n");
    }
}
