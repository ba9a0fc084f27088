// Instruction counts on the project's QEMU boards, as qemuboard.icount()
// and qemuboard.icount_low(), and the C stack a call uses
// (qemuboard.stack_paint/stack_used).
//
// QEMU runs with -icount shift=0: every guest instruction takes one virtual
// nanosecond. SysTick counts the CPU clock in that virtual time, so its
// count, scaled to nanoseconds, is the number of instructions executed:
// repeatable from run to run, whatever the host does. (Instructions, not
// Cortex-M cycles.)
//
// icount() returns the whole count as a long int (MicroPython's mpz ints
// make one whatever the value): each call allocates on the GC heap, at a
// cost that follows the heap's state. icount_low() returns the same count's
// low 30 bits, always a small int, for timing spans; it allocates nothing
// and takes the same instructions every call (no 64-bit division, whose
// libgcc routine takes more or fewer with the operands), so the pair of
// readings bench speed takes next to an invoke costs what the pair around
// it does. Take its spans modulo 2^30, (b - a) & 0x3fffffff.
#include "py/runtime.h"
#include "py/mpstate.h"

#define SYST_CSR (*(volatile uint32_t *)0xe000e010)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018)
#define SYST_RELOAD (0xffffffu)

// Nanoseconds per tick, 10^9 / TFLM_BOARD_CPU_HZ, in lowest terms
// NS_NUM / NS_DEN: 10^9 is 2^9 5^9, so the common factor is the clock's
// lowest set bit (at most 2^9) times the power of 5 it holds (at most 5^9).
// NS_DEN is small (2 at 16 MHz, 21 at 168 MHz): dividing by it, a constant,
// the compiler multiplies, the same instructions for any count (on the M0+
// only a power of 2 is a shift: the boards' Cortex-M0+ runs at 16 MHz).
enum {
    NS_TWOS = (TFLM_BOARD_CPU_HZ & -TFLM_BOARD_CPU_HZ) < 512 ? (TFLM_BOARD_CPU_HZ & -TFLM_BOARD_CPU_HZ) : 512,
    NS_FIVES = TFLM_BOARD_CPU_HZ % 1953125 == 0 ? 1953125 : TFLM_BOARD_CPU_HZ % 390625 == 0 ? 390625
        : TFLM_BOARD_CPU_HZ % 78125 == 0 ? 78125 : TFLM_BOARD_CPU_HZ % 15625 == 0 ? 15625
        : TFLM_BOARD_CPU_HZ % 3125 == 0 ? 3125 : TFLM_BOARD_CPU_HZ % 625 == 0 ? 625
        : TFLM_BOARD_CPU_HZ % 125 == 0 ? 125 : TFLM_BOARD_CPU_HZ % 25 == 0 ? 25
        : TFLM_BOARD_CPU_HZ % 5 == 0 ? 5 : 1,
    NS_NUM = 1000000000 / (NS_TWOS * NS_FIVES),
    NS_DEN = TFLM_BOARD_CPU_HZ / (NS_TWOS * NS_FIVES),
};
// A wrap's nanoseconds, whole and the remainder in 1/NS_DEN.
#define WRAP_TICKS (SYST_RELOAD + 1ull)
#define WRAP_NS ((uint32_t)(WRAP_TICKS * NS_NUM / NS_DEN))
#define WRAP_REM ((uint32_t)(WRAP_TICKS * NS_NUM % NS_DEN))
// A wrap's ticks times NS_NUM, plus a remainder, fit in 32 bits.
typedef char tflm_board_clock_fits[WRAP_TICKS * NS_NUM + NS_DEN <= 0xffffffffull ? 1 : -1];

static volatile uint32_t tflm_board_wraps;
// At the last wrap: the nanoseconds since the start, modulo 2^32, and the
// fraction left over, in 1/NS_DEN (icount_low's base).
static volatile uint32_t tflm_board_wrap_ns, tflm_board_wrap_rem;

// The port's own SysTick_Handler is renamed away at link time (--wrap).
void __wrap_SysTick_Handler(void);
void __wrap_SysTick_Handler(void) {
    uint32_t ns = tflm_board_wrap_ns + WRAP_NS, rem = tflm_board_wrap_rem + WRAP_REM;
    if (rem >= NS_DEN) {
        rem -= NS_DEN;
        ns++;
    }
    tflm_board_wrap_ns = ns;
    tflm_board_wrap_rem = rem;
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

static uint64_t icount_ns(void) {
    return systick_count() * 1000000000ull / TFLM_BOARD_CPU_HZ;
}

static mp_obj_t qemuboard_icount(void) {
    return mp_obj_new_int_from_ull(icount_ns());
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemuboard_icount_obj, qemuboard_icount);

// icount_ns() modulo 2^30: the nanoseconds at the last wrap and those of
// the ticks since, floor((wrap_rem + ticks * NS_NUM) / NS_DEN), which is
// the same floor as icount_ns()'s whole division.
// The benchmarks' marks for the cycle estimator are at this function's
// entry (bench.py, measure_ours_cycles).
static mp_obj_t qemuboard_icount_low(void) {
    uint32_t wraps, ns, rem, cvr;
    do {
        wraps = tflm_board_wraps;
        ns = tflm_board_wrap_ns;
        rem = tflm_board_wrap_rem;
        cvr = SYST_CVR;
    } while (wraps != tflm_board_wraps);
    ns += (rem + (SYST_RELOAD - cvr) * (uint32_t)NS_NUM) / (uint32_t)NS_DEN;
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)(ns & 0x3fffffffu));
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemuboard_icount_low_obj, qemuboard_icount_low);

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
    { MP_ROM_QSTR(MP_QSTR_icount_low), MP_ROM_PTR(&qemuboard_icount_low_obj) },
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
