// Instruction counts on the ESP32, as esp32board.icount() and
// esp32board.icount_low(): the LX6's own debug counter. ICOUNT adds one
// for each instruction the core executes below the interrupt level in
// ICOUNTLEVEL; with ICOUNTLEVEL 1 that is the
// code of tasks (MicroPython's, pinned to one core), not interrupt
// handlers. The first call starts the counter; each call adds what it
// counted since the last to a 64-bit total and starts it again from 0, so
// it never reaches the wrap to 0 that raises a debug exception (2^32
// instructions between two calls). QEMU's esp32 machine implements the
// counter, which is how the tests and benchmarks count instructions there
// (QEMU's -icount does not run this machine). A debugger that steps with
// ICOUNT (OpenOCD on a real board) takes the counter over.
//
// icount() returns the whole total as a long int (MicroPython's mpz ints
// make one whatever the value), so each call allocates on the GC heap, at a
// cost that follows the heap's state.
// icount_low() returns the same total's low 30 bits, always a small int,
// for timing spans: no allocation, so two calls cost the same wherever the
// heap stands. Take its spans modulo 2^30, (b - a) & 0x3fffffff.
#include "py/runtime.h"

static uint64_t esp32board_total;
static bool esp32board_started;

static uint64_t esp32board_count(void) {
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
    return esp32board_total;
}

static mp_obj_t esp32board_icount(void) {
    return mp_obj_new_int_from_ull(esp32board_count());
}
static MP_DEFINE_CONST_FUN_OBJ_0(esp32board_icount_obj, esp32board_icount);

static mp_obj_t esp32board_icount_low(void) {
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)(esp32board_count() & 0x3fffffffu));
}
static MP_DEFINE_CONST_FUN_OBJ_0(esp32board_icount_low_obj, esp32board_icount_low);

static const mp_rom_map_elem_t esp32board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_esp32board) },
    { MP_ROM_QSTR(MP_QSTR_icount), MP_ROM_PTR(&esp32board_icount_obj) },
    { MP_ROM_QSTR(MP_QSTR_icount_low), MP_ROM_PTR(&esp32board_icount_low_obj) },
};
static MP_DEFINE_CONST_DICT(esp32board_module_globals, esp32board_module_globals_table);

const mp_obj_module_t esp32board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&esp32board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_esp32board, esp32board_module);
