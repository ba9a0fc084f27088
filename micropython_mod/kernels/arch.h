// Which inner loops the kernels build with, chosen at compile time from the
// compiler's own predefined macros, so no build flag is needed:
//
//   TFLM_ARCH_DSP      Armv7E-M and later with the DSP extension (Cortex-M4,
//                      M7, M33, M55): SIMD paths (SMLAD, SXTB16, PKHBT)
//   TFLM_ARCH_THUMB2   Armv7-M without DSP (Cortex-M3): Thumb-2, 64-bit
//                      multiply-accumulate (SMLAL), no SIMD
//   TFLM_ARCH_V6M      Armv6-M (Cortex-M0, M0+: the RP2040): Thumb-1, no
//                      64-bit multiply
//   TFLM_ARCH_XTENSA   Xtensa LX6/LX7 with the windowed ABI (ESP32, -S2,
//                      -S3): zero-overhead loops, 16-bit multiply, SEXT
//   TFLM_ARCH_PORTABLE anything else (RISC-V, the ESP8266's call0 Xtensa,
//                      the host)
//
// Override with -DTFLM_KERNEL_ARCH=TFLM_ARCH_<NAME>. On a target without the
// instructions, TFLM_ARCH_DSP uses the C versions below (the host tests build
// it that way to check the DSP paths' loops under AddressSanitizer), as does
// another family's loop that wants the same arithmetic.
// Every path computes the same bits; only the instruction count differs.
#ifndef TFLM_KERNELS_ARCH_H
#define TFLM_KERNELS_ARCH_H

#include <stdint.h>
#include <string.h>

#define TFLM_ARCH_PORTABLE (0)
#define TFLM_ARCH_V6M (1)
#define TFLM_ARCH_THUMB2 (2)
#define TFLM_ARCH_DSP (3)
#define TFLM_ARCH_XTENSA (4)

#ifndef TFLM_KERNEL_ARCH
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TFLM_KERNEL_ARCH TFLM_ARCH_DSP
#elif defined(__ARM_ARCH_7M__) || (defined(__ARM_ARCH_8M_MAIN__) && !defined(__ARM_FEATURE_DSP))
#define TFLM_KERNEL_ARCH TFLM_ARCH_THUMB2
#elif defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define TFLM_KERNEL_ARCH TFLM_ARCH_V6M
#elif defined(__XTENSA__) && defined(__XTENSA_WINDOWED_ABI__)
#define TFLM_KERNEL_ARCH TFLM_ARCH_XTENSA
#else
#define TFLM_KERNEL_ARCH TFLM_ARCH_PORTABLE
#endif
#endif

// The C stack Interpreter() and invoke() may take on this core family, at
// most: the deepest of every shared model measured on the QEMU boards
// (docs/boards.md) plus a margin for kernels no shared model runs;
// tests/test_stack.py fails when a measurement passes it. The binding
// refuses to start either with less stack left (a RuntimeError rather than
// an overflow into the heap); 0 where it is not measured (no check).
#if defined(__arm__) && (TFLM_KERNEL_ARCH == TFLM_ARCH_DSP || TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2)
#define TFLM_C_STACK_NEEDED (6144)
#elif defined(__arm__) && TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
#define TFLM_C_STACK_NEEDED (5120)
#else
#define TFLM_C_STACK_NEEDED (0)
#endif

// The inner blocks are inlined whatever the compiler's size estimate: a call
// would pass their running sums through memory.
#if defined(__GNUC__)
#define TFLM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TFLM_ALWAYS_INLINE inline
#endif

// Whether Armv6-M's inner loops may be Thumb-1 inline assembly: optimised
// builds for it, position-independent ones too (out_s8.h, mm_s8.h,
// depthwise_conv_s8.c; the host's tests build the same arithmetic in C).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M && defined(__thumb__) && !defined(__thumb2__) && defined(__OPTIMIZE__)
#define TFLM_V6M_ASM (1)
#else
#define TFLM_V6M_ASM (0)
#endif

// Whether the assembly blocks that take every register GCC can give (the
// pointwise quads of the DSP cores, the fully connected units and the
// depthwise rows of the Cortex-M3 and M4, Armv6-M's depthwise taps) are
// built: at -O2 GCC places their operands; at -Os, -Og, -O1 or -O3 it
// keeps a register for itself in some of their callers ("impossible
// constraints") and those builds take the C loops there. GCC names no
// level but -Os (__OPTIMIZE_SIZE__): micropython.mk, micropython.cmake and
// natmod.mk say 0 unless TFLM_KERNEL_OPT's last level is -O2
// (tests/test_build_settings.py compiles the kernels at each level).
#ifndef TFLM_KERNEL_O2
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
#define TFLM_KERNEL_O2 (1)
#else
#define TFLM_KERNEL_O2 (0)
#endif
#endif

// The start of a Thumb-2 assembly loop that takes 2^b steps a turn, its
// count's two bits below tested at once (conv_s8.c, mm_s8.h,
// depthwise_conv_s8.c): LSLS by `sh` moves bit 31 - sh of register `cnt`
// into N and bit 32 - sh into C. `first`, the lower bit's steps, runs if
// N; then `c_branch` tests C (to skip the higher bit's steps, or to enter
// the loop half way). `first` must leave N and C alone (no CMP, TST, IT
// with a compare, no flag-setting ...S form), or set C again itself;
// `label`: a numeric local label free in the block.
#define TFLM_ASM_TWO_BITS(cnt, sh, label, first, c_branch) \
    "lsls " cnt ", " cnt ", #" #sh "\n\t" \
    "bpl " #label "f\n\t" \
    first \
    #label ":\n\t" \
    c_branch

// The same for a loop of sixteen steps a turn whose count is a multiple of
// four and at least four (conv_s8.c's pair and quad blocks): LSLS by `sh`
// of `cnt` into scratch register `t` (then `between`, which leaves the
// flags alone), `four` steps once or three times, or twice, as bits 2 and
// 3 ask, each followed by the loop's end test at label `check` (the count
// may end there); with both bits clear the count is sixteen or more, and
// the loop (label `loop`) is entered at once, without that test. `skip`
// and `eight`: two more numeric local labels free in the block.
#define TFLM_ASM_START16(cnt, sh, t, between, four, skip, eight, check, loop) \
    "lsls " t ", " cnt ", #" #sh "\n\t" \
    between \
    "bpl " #skip "f\n\t" \
    four \
    "bcs " #eight "f\n\t" \
    "b " #check "f\n" \
    #skip ":\n\t" \
    "bcc " #loop "f\n" \
    #eight ":\n\t" \
    four four \
    #check ":\n\t"

// 32 bits from any address (the cores with DSP load unaligned words; memcpy
// becomes one LDR there).
static inline uint32_t tflm_ld_u32(const void *p) {
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

// 32 bits from a word-aligned address (one LDR on any core).
static inline uint32_t tflm_ld_u32_aligned(const void *p) {
    uint32_t v;
#if defined(__GNUC__)
    memcpy(&v, __builtin_assume_aligned(p, 4), sizeof(v));
#else
    memcpy(&v, p, sizeof(v));
#endif
    return v;
}

// The DSP instructions the kernels use: the instructions themselves on the
// cores with DSP; elsewhere (the host's builds of the DSP loops, and a loop
// of another core that wants the same arithmetic) the same results in C.
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

// Bytes 0 and 2 of x, sign-extended into the two halfwords.
static inline uint32_t tflm_sxtb16(uint32_t x) {
    return __sxtb16(x);
}
// Bytes 1 and 3: SXTB16 with its rotation, one instruction (GCC 12 keeps
// the rotation of __sxtb16(__ror(x, 8)) a separate ROR).
static inline uint32_t tflm_sxtb16_ror8(uint32_t x) {
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
// acc + a.lo * b.lo + a.hi * b.hi (signed halfwords; the sum wraps).
static inline uint32_t tflm_smlad(uint32_t a, uint32_t b, uint32_t acc) {
    return (uint32_t)__smlad((int16x2_t)a, (int16x2_t)b, (int32_t)acc);
}
// acc's halfwords plus bytes 0 and 2 of x, sign-extended (each wraps).
static inline uint32_t tflm_sxtab16(uint32_t acc, uint32_t x) {
    return __sxtab16(acc, x);
}
// The same with bytes 1 and 3 (one instruction, as tflm_sxtb16_ror8).
static inline uint32_t tflm_sxtab16_ror8(uint32_t acc, uint32_t x) {
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}
// Halfword-wise add (wraps per halfword).
static inline uint32_t tflm_sadd16(uint32_t a, uint32_t b) {
    return (uint32_t)__sadd16((int16x2_t)a, (int16x2_t)b);
}
// acc + a.lo * b.lo and acc + a.hi * b.hi (signed halfwords; the sums
// wrap): one SMLABB, one SMLATT.
static inline uint32_t tflm_smlabb(uint32_t a, uint32_t b, uint32_t acc) {
    return (uint32_t)__smlabb((int32_t)a, (int32_t)b, (int32_t)acc);
}
static inline uint32_t tflm_smlatt(uint32_t a, uint32_t b, uint32_t acc) {
    return (uint32_t)__smlatt((int32_t)a, (int32_t)b, (int32_t)acc);
}
// lo's low halfword and hi's low halfword above it (one PKHBT).
static inline uint32_t tflm_pack16(int32_t lo, int32_t hi) {
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}
#else
static inline uint32_t tflm_pack16(int32_t lo, int32_t hi) {
    return ((uint32_t)hi << 16) | ((uint32_t)lo & 0xffffu);
}
static inline uint32_t tflm_sxtb16(uint32_t x) {
    return tflm_pack16((int8_t)(x & 0xff), (int8_t)((x >> 16) & 0xff));
}
static inline uint32_t tflm_sxtb16_ror8(uint32_t x) {
    return tflm_sxtb16((x >> 8) | (x << 24));
}
static inline uint32_t tflm_smlad(uint32_t a, uint32_t b, uint32_t acc) {
    // (The high halves by arithmetic shifts: one ASR each on the M3.)
    return acc + (uint32_t)((int32_t)(int16_t)a * (int16_t)b) + (uint32_t)(((int32_t)a >> 16) * ((int32_t)b >> 16));
}
static inline uint32_t tflm_sadd16(uint32_t a, uint32_t b) {
    return tflm_pack16((int16_t)(a & 0xffff) + (int16_t)(b & 0xffff), (int16_t)(a >> 16) + (int16_t)(b >> 16));
}
static inline uint32_t tflm_sxtab16(uint32_t acc, uint32_t x) {
    return tflm_sadd16(acc, tflm_sxtb16(x));
}
static inline uint32_t tflm_sxtab16_ror8(uint32_t acc, uint32_t x) {
    return tflm_sadd16(acc, tflm_sxtb16_ror8(x));
}
static inline uint32_t tflm_smlabb(uint32_t a, uint32_t b, uint32_t acc) {
    return acc + (uint32_t)((int16_t)(a & 0xffff) * (int16_t)(b & 0xffff));
}
static inline uint32_t tflm_smlatt(uint32_t a, uint32_t b, uint32_t acc) {
    return acc + (uint32_t)((int16_t)(a >> 16) * (int16_t)(b >> 16));
}
#endif

#endif // TFLM_KERNELS_ARCH_H
