// The engine alone, bare metal, for the cycle estimator's check against the
// RP2040 emulator (tests/test_cycles.py, tflm-host bench cycles-check): the
// same object code (ARMv6-M, the RPI_PICO firmware's flags) linked once for
// QEMU's microbit and once for the RP2040, a model linked in (model_start to
// model_end, in flash). main() prepares the model, invokes it once, then
// invokes it again between two calls of bench_mark(), whose address is the
// estimator's and the emulator's mark, and prints the first output bytes.
// Inputs are all zero before each invoke.
#include <stdint.h>
#include <string.h>

#include "engine/interpreter.h"

#ifndef ARENA_BYTES
#define ARENA_BYTES (160 * 1024)
#endif

extern const uint8_t model_start[], model_end[];
extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];

static uint8_t arena_buf[ARENA_BYTES] __attribute__((aligned(16)));
static tflm_interp_t ip;

// The planners' records while the head is planned (tflm_config_t.plan_memory):
// one block at a time, from a buffer of its own (no heap here).
static uint32_t plan_buf[2048];

static void *plan_memory(void *old, uint32_t bytes) {
    if (old != NULL || bytes > sizeof plan_buf) {
        return NULL;
    }
    return plan_buf;
}

static int semihost(int op, const void *arg) {
    register int r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void say(const char *s) {
    semihost(0x04, s);
}

static void say_int(int32_t v) {
    char buf[16];
    int i = sizeof buf - 1;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) {
        buf[--i] = '-';
    }
    say(buf + i);
}

static void __attribute__((noreturn)) leave(void) {
    semihost(0x18, (const void *)0x20026);
    for (;;) {
    }
}

// The mark: its first instruction's address is given to both emulators.
void __attribute__((noinline)) bench_mark(void) {
    __asm volatile("" ::: "memory");
}

static void zero_inputs(void) {
    for (uint32_t k = 0; k < tflm_interp_num_inputs(&ip); ++k) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_input(&ip, k));
        memset(tflm_interp_tensor_data(&ip, r), 0, r->bytes);
    }
}

static void fail(const char *what, const char *msg) {
    say("error ");
    say(what);
    say(": ");
    say(msg);
    say("\n");
    leave();
}

int main(void) {
    tflm_error_t err;
    tflm_error_clear(&err);
    static tflm_model_t model;
    if (tflm_model_init(&model, model_start, (size_t)(model_end - model_start), &err)) {
        fail("model", err.msg);
    }
    tflm_config_t cfg = { 0 };
    cfg.plan_memory = plan_memory;
    tflm_arena_t arena;
    tflm_arena_init(&arena, arena_buf, sizeof arena_buf);
    if (tflm_interp_init(&ip, &model, &arena, &cfg)) {
        fail("interpreter", ip.err.msg);
    }
    zero_inputs();
    if (tflm_interp_invoke(&ip)) {
        fail("invoke", ip.err.msg);
    }
    zero_inputs();
    bench_mark();
    tflm_status_t st = tflm_interp_invoke(&ip);
    bench_mark();
    if (st) {
        fail("invoke", ip.err.msg);
    }
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_output(&ip, 0));
    const uint8_t *d = tflm_interp_tensor_data(&ip, r);
    say("output");
    for (uint32_t k = 0; k < r->bytes && k < 16; ++k) {
        say(" ");
        say_int(d[k]);
    }
    say("\n");
    leave();
}

void Reset_Handler(void) {
    for (uint32_t *s = _sidata, *d = _sdata; d < _edata;) {
        *d++ = *s++;
    }
    for (uint32_t *d = _sbss; d < _ebss;) {
        *d++ = 0;
    }
    main();
}

static void Fault_Handler(void) {
    fail("fault", "an exception");
}

__attribute__((section(".isr_vector"), used)) const void *const vectors[16] = {
    _estack, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0,
    Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
