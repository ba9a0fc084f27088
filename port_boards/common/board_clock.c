// Instruction counts on the project's QEMU boards, as qemuboard.icount().
//
// QEMU runs with -icount shift=0: every guest instruction takes one virtual
// nanosecond. SysTick counts the CPU clock in that virtual time, so its
// count, scaled to nanoseconds, is the number of instructions executed:
// repeatable from run to run, whatever the host does. (Instructions, not
// Cortex-M cycles.)
#include "py/runtime.h"

#define SYST_CSR (*(volatile uint32_t *)0xe000e010)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018)
#define SYST_RELOAD (0xffffffu)

static volatile uint32_t tflm_board_wraps;

// The port's own SysTick_Handler is renamed away at link time (--wrap).
void __wrap_SysTick_Handler(void);
void __wrap_SysTick_Handler(void) {
    tflm_board_wraps++;
}

void tflm_board_clock_start(void) {
    SYST_RVR = SYST_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 7; // enable, interrupt on wrap, processor clock
}

static uint64_t systick_count(void) {
    uint32_t wraps, cvr;
    do {
        wraps = tflm_board_wraps;
        cvr = SYST_CVR;
    } while (wraps != tflm_board_wraps);
    return (uint64_t)wraps * (SYST_RELOAD + 1) + (SYST_RELOAD - cvr);
}

static mp_obj_t qemuboard_icount(void) {
    uint64_t ns = systick_count() * 1000000000ull / TFLM_BOARD_CPU_HZ;
    return mp_obj_new_int_from_ull(ns);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemuboard_icount_obj, qemuboard_icount);

static const mp_rom_map_elem_t qemuboard_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_qemuboard) },
    { MP_ROM_QSTR(MP_QSTR_icount), MP_ROM_PTR(&qemuboard_icount_obj) },
    { MP_ROM_QSTR(MP_QSTR_cpu_hz), MP_ROM_INT(TFLM_BOARD_CPU_HZ) },
};
static MP_DEFINE_CONST_DICT(qemuboard_globals, qemuboard_globals_table);

const mp_obj_module_t qemuboard_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&qemuboard_globals,
};

MP_REGISTER_MODULE(MP_QSTR_qemuboard, qemuboard_module);
