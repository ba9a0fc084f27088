// Instruction counts on the project's QEMU boards, as qemuboard.icount(),
// and the C stack a call uses (qemuboard.stack_paint/stack_used).
//
// QEMU runs with -icount shift=0: every guest instruction takes one virtual
// nanosecond. SysTick counts the CPU clock in that virtual time, so its
// count, scaled to nanoseconds, is the number of instructions executed:
// repeatable from run to run, whatever the host does. (Instructions, not
// Cortex-M cycles.)
#include "py/runtime.h"
#include "py/mpstate.h"

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

// The C stack a native call uses, as qemuboard.stack_paint() then, after
// the call, qemuboard.stack_used(): the free stack below the caller's frame
// is filled with a pattern, and the deepest word no longer holding it shows
// how far the call reached. Called from the same Python frame as the call
// measured, both native functions start at the same stack pointer.
#define STACK_PATTERN (0xa5c3e10fu)
// Bytes below the painting function's local left alone (its own frame).
#define STACK_PAINT_GAP (64)

static uint32_t *stack_lo, *stack_hi;

static mp_obj_t qemuboard_stack_paint(void) {
    #if MICROPY_STACK_CHECK
    volatile uint32_t here = 0;
    uintptr_t bottom = (uintptr_t)MP_STATE_THREAD(stack_top) - MP_STATE_THREAD(stack_limit);
    stack_lo = (uint32_t *)((bottom + 3) & ~(uintptr_t)3);
    stack_hi = (uint32_t *)(((uintptr_t)&here - STACK_PAINT_GAP) & ~(uintptr_t)3);
    for (volatile uint32_t *w = stack_lo; w < stack_hi; ++w) {
        *w = STACK_PATTERN;
    }
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)((uintptr_t)stack_hi - (uintptr_t)stack_lo));
    #else
    mp_raise_NotImplementedError(MP_ERROR_TEXT("no stack limit on this port"));
    #endif
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemuboard_stack_paint_obj, qemuboard_stack_paint);

static mp_obj_t qemuboard_stack_used(void) {
    if (stack_lo == NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("stack_paint() first"));
    }
    const volatile uint32_t *w = stack_lo;
    while (w < stack_hi && *w == STACK_PATTERN) {
        ++w;
    }
    // Bytes reached below the painted top, plus the gap left above it.
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)((uintptr_t)stack_hi - (uintptr_t)w) + STACK_PAINT_GAP);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemuboard_stack_used_obj, qemuboard_stack_used);

static const mp_rom_map_elem_t qemuboard_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_qemuboard) },
    { MP_ROM_QSTR(MP_QSTR_icount), MP_ROM_PTR(&qemuboard_icount_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_paint), MP_ROM_PTR(&qemuboard_stack_paint_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_used), MP_ROM_PTR(&qemuboard_stack_used_obj) },
    { MP_ROM_QSTR(MP_QSTR_cpu_hz), MP_ROM_INT(TFLM_BOARD_CPU_HZ) },
};
static MP_DEFINE_CONST_DICT(qemuboard_globals, qemuboard_globals_table);

const mp_obj_module_t qemuboard_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&qemuboard_globals,
};

MP_REGISTER_MODULE(MP_QSTR_qemuboard, qemuboard_module);
