// Instruction counts on the ESP32, as esp32board.icount(): the LX6's own
// debug counter. ICOUNT adds one for each instruction the core executes
// below the interrupt level in ICOUNTLEVEL; with ICOUNTLEVEL 1 that is the
// code of tasks (MicroPython's, pinned to one core), not interrupt
// handlers. The first call starts the counter; each call adds what it
// counted since the last to a 64-bit total and starts it again from 0, so
// it never reaches the wrap to 0 that raises a debug exception (2^32
// instructions between two calls). QEMU's esp32 machine implements the
// counter, which is how the tests and benchmarks count instructions there
// (QEMU's -icount does not run this machine). A debugger that steps with
// ICOUNT (OpenOCD on a real board) takes the counter over.
#include "py/runtime.h"

static uint64_t esp32board_total;
static bool esp32board_started;

static mp_obj_t esp32board_icount(void) {
    uint32_t n = 0;
    if (esp32board_started) {
        __asm__ volatile ("rsr %0, icount" : "=r" (n));
    }
    __asm__ volatile ("wsr %0, icount\n\tisync" : : "r" (0));
    if (!esp32board_started) {
        __asm__ volatile ("wsr %0, icountlevel\n\tisync" : : "r" (1));
        esp32board_started = true;
    }
    esp32board_total += n;
    return mp_obj_new_int_from_ull(esp32board_total);
}
static MP_DEFINE_CONST_FUN_OBJ_0(esp32board_icount_obj, esp32board_icount);

static const mp_rom_map_elem_t esp32board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_esp32board) },
    { MP_ROM_QSTR(MP_QSTR_icount), MP_ROM_PTR(&esp32board_icount_obj) },
};
static MP_DEFINE_CONST_DICT(esp32board_module_globals, esp32board_module_globals_table);

const mp_obj_module_t esp32board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&esp32board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_esp32board, esp32board_module);
