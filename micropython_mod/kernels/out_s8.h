// The output stage of the int8 convolution and fully connected kernels: an
// int32 sum to an int8 value, bit-exact with TFLM's reference
// (MultiplyByQuantizedMultiplier, plus the output zero point, clamped to the
// activation range), in a handful of instructions.
//
// The reference rounds twice: h = round(acc * M / 2^31) (ties upward), then
// round(h / 2^r) (ties away from zero). Both floors compose, so for r >= 1
// the result is one floor of a 64-bit sum:
//
//   floor((acc * M + 2^30 + 2^31 * k) / 2^(32 + s)),  s = r - 1,
//   k = 2^(r-1) - [acc < 0] + zp * 2^r
//
// ([h < 0] equals [acc < 0] wherever it matters: M >= 2^30, and for acc = -1,
// M = 2^30 both give 0.) The zero point folds into k, so one SMLAL and one
// shift make the value. That holds for 1 <= r <= 24 (the sum stays within
// 63 bits and k within 32), and with M = 0 (TFLM's multiplier for a scale
// below 2^-31) taken as r = 1 it gives the zero point, as the reference
// does. For 25 <= r <= 31 the zero point stays out of k (zp * 2^r would
// take more than 32 bits) and is added after the shift: trained layers have
// many such channels (most of vww_96_int8's last pointwise layers'). Other
// shifts (left shifts, r = 0: rare) take the reference's own steps.
#ifndef TFLM_KERNELS_OUT_S8_H
#define TFLM_KERNELS_OUT_S8_H

#include "engine/quant.h"
#include "kernels/arch.h"

// Whether Armv6-M's output stage is in assembly (Thumb-1, optimised builds,
// position-independent ones too, as mm_s8.h's loops; the host's tests build
// the same arithmetic in C).
#ifndef TFLM_OUT_S8_V6M_ASM
#define TFLM_OUT_S8_V6M_ASM TFLM_V6M_ASM
#endif

// Whether the wide form and multiplier 0 take the fast steps (above); a
// kernel file may say 0 before including this, for constants it sets up and
// uses itself (fully_connected.c on Armv6-M, whose output loop the cases
// cost a register: hello_world_int8 +2.7% on the Cortex-M0+).
#ifndef TFLM_OUT_S8_WIDE
#define TFLM_OUT_S8_WIDE (1)
#endif

// One output channel's constants, set up once per call of a kernel (or,
// later, by the host when it prepares a model).
typedef struct {
    int32_t bias;   // the sum starts here: bias + input offset * sum of the filter
    int32_t mult;   // Q31 multiplier
    int32_t k;      // 2^(r-1) + zp * 2^r (fast); 2^(r-1) (wide); the reference's shift (slow)
    int32_t shift;  // r - 1 (fast); -(r + 1), -26 to -32 (wide); -1: the reference's steps
} tflm_out_s8_t;

// Fills q's multiplier and rounding from TFLM's (multiplier, shift) and the
// output zero point; q->bias is the caller's.
static inline void tflm_out_s8_setup(tflm_out_s8_t *q, int32_t multiplier, int32_t shift, int32_t zero_point) {
    const int32_t r = -shift;
    q->mult = multiplier;
    if (r >= 1 && r <= 24) {
        q->k = (int32_t)(((uint32_t)1 << (r - 1)) + ((uint32_t)zero_point << r));
        q->shift = r - 1;
    } else if (multiplier == 0 && TFLM_OUT_S8_WIDE) {
        // As r = 1: the zero point whatever the sum.
        q->k = (int32_t)(1u + ((uint32_t)zero_point << 1));
        q->shift = 0;
    } else if (r >= 25 && r <= 31 && TFLM_OUT_S8_WIDE) {
        q->k = (int32_t)((uint32_t)1 << (r - 1));
        q->shift = -(r + 1);
    } else {
        q->k = shift;
        q->shift = -1;
    }
}

// q's constants, set up in the fast form, in the wide one (the zero point
// left out of k, added after the shift): a kernel that runs a chunk of
// channels in one form (conv_s8.c's assembly) widens the fast ones.
static inline void tflm_out_s8_widen(tflm_out_s8_t *q) {
    if (q->shift >= 0) {
        q->k = (int32_t)((uint32_t)1 << q->shift);
        q->shift = -2 - q->shift;
    }
}

// acc * M * 2^shift, rounded as the reference, plus the zero point, for the
// fast case (q->shift >= 0).
static inline int32_t tflm_out_s8_scale(int32_t acc, int32_t mult, int32_t k, int32_t shift) {
#if TFLM_OUT_S8_V6M_ASM
    int32_t kk = k;  // k + (acc >> 31), in the assembly
#else
    const int32_t kk = k + (acc >> 31);
#endif
    // c = 2^30 + 2^31 * kk as a 64-bit value: its high word kk >> 1, its low
    // word 2^30 plus kk's lowest bit at the top.
#if TFLM_OUT_S8_V6M_ASM
    // The C below in Thumb-1 assembly: 26 instructions in seven low registers
    // (GCC's own code for it moves values through high registers in the
    // kernels' loops). c's low word over 2^16, 2^14 + kk's lowest bit * 2^15,
    // is (2 * kk + 1)'s two lowest bits at bit 14.
    int32_t a = acc, m = mult;
    uint32_t al, ml, z, t;
    __asm__(
        ".syntax unified\n\t"
        "asrs %[t], %[a], #31\n\t"
        "adds %[kk], %[kk], %[t]\n\t"
        "uxth %[al], %[a]\n\t"
        "asrs %[a], %[a], #16\n\t"
        "uxth %[ml], %[m]\n\t"
        "asrs %[m], %[m], #16\n\t"
        "movs %[z], %[al]\n\t"
        "muls %[z], %[ml]\n\t"
        "lsrs %[z], %[z], #16\n\t"
        "muls %[al], %[m]\n\t"
        "adds %[z], %[z], %[al]\n\t"
        "lsls %[t], %[kk], #1\n\t"
        "adds %[t], %[t], #1\n\t"
        "lsls %[t], %[t], #30\n\t"
        "lsrs %[t], %[t], #16\n\t"
        "adds %[z], %[z], %[t]\n\t"
        "uxth %[t], %[z]\n\t"
        "muls %[ml], %[a]\n\t"
        "adds %[ml], %[ml], %[t]\n\t"
        "asrs %[ml], %[ml], #16\n\t"
        "muls %[a], %[m]\n\t"
        "adds %[a], %[a], %[ml]\n\t"
        "asrs %[kk], %[kk], #1\n\t"
        "adds %[a], %[a], %[kk]\n\t"
        "lsrs %[z], %[z], #16\n\t"
        "adds %[a], %[a], %[z]"
        : [a] "+l"(a), [m] "+l"(m), [kk] "+l"(kk), [al] "=&l"(al), [ml] "=&l"(ml), [z] "=&l"(z), [t] "=&l"(t)
        :
        : "cc");
    return a >> shift;
#elif TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // No 32x32->64 multiply on Armv6-M: four 16-bit products, exact, with
    // acc = ah * 2^16 + al and mult = mh * 2^16 + ml (al, ml unsigned). c's
    // low 16 bits are zero, so below bit 32 only two sums of 16-bit steps
    // carry, each within 32 bits (no carry flag to test).
    const uint32_t al = (uint32_t)acc & 0xffffu, ml = (uint32_t)mult & 0xffffu;
    const int32_t ah = acc >> 16, mh = mult >> 16;  // mult > 0: mh < 2^15
    // Bits 16 and up of al * mult plus c's low word: below 2^31 + 2^17.
    const uint32_t z = al * (uint32_t)mh + ((al * ml) >> 16) + (((uint32_t)kk << 31) >> 16) + 0x4000u;
    // ah * ml plus z's low half: within (-2^31, 2^31 - 2^15].
    const int32_t y = ah * (int32_t)ml + (int32_t)(z & 0xffffu);
    // The high word fits 32 bits; its parts are added modulo 2^32.
    const uint32_t hi = (uint32_t)(ah * mh) + (uint32_t)(kk >> 1) + (uint32_t)(y >> 16) + (z >> 16);
    return (int32_t)hi >> shift;
#else
    const uint64_t c = ((uint64_t)(int64_t)(kk >> 1) << 32) | (0x40000000u | ((uint32_t)kk << 31));
    const uint64_t v = c + (uint64_t)((int64_t)acc * mult);
    return (int32_t)(uint32_t)(v >> 32) >> shift;
#endif
}

// v clamped to int8, for an activation whose range is all of int8 (none):
// one SSAT on the cores that have it.
static inline int32_t tflm_out_s8_sat(int32_t v) {
#if defined(__GNUC__) && defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
    __asm__("ssat %0, #8, %1" : "=r"(v) : "r"(v));
    return v;
#else
    return tflm_clamp(v, -128, 127);
#endif
}

// tflm_out_s8_scale and the clamp in Thumb-2 assembly: the one copy of the
// steps for the assembly blocks of conv_s8.c and depthwise_conv_s8.c. A
// value's registers are a tuple R = (v, m, k, sh, t, u, c30): the sum in
// v, the multiplier in m, k in k, the shift in sh; u takes kk = k + [v < 0]
// (as above), then c's high word kk >> 1, then the result; t c's low word
// (kk << 31) + 2^30, to which SMLAL adds v * m. c30: a register holding
// 2^30, for blocks with one to spare (the low word in one ORR, not two
// instructions; unused by TFLM_OUT_S8_ASM_LO_IMM). Each step is a macro
// of R's seven names: `lo` makes the low word (TFLM_OUT_S8_ASM_LO_IMM or
// _LO_REG), `post` follows the shift (the wide form's zero point; else
// TFLM_OUT_S8_ASM_NONE), `clamp` is last (TFLM_OUT_S8_ASM_SSAT or _CLAMP).
// No step sets the flags but _CLAMP's compares and the flag-setting forms
// of the two shifts (_HIS, _SHIFTS: 16 bits in low registers, for blocks
// whose flags are free there).
#define TFLM_OUT_S8_ASM_KK(v, m, k, sh, t, u, c30) "add " u ", " k ", " v ", asr #31\n\t"
#define TFLM_OUT_S8_ASM_LO_IMM(v, m, k, sh, t, u, c30) \
    "lsl " t ", " u ", #31\n\t" \
    "orr " t ", " t ", #0x40000000\n\t"
#define TFLM_OUT_S8_ASM_LO_REG(v, m, k, sh, t, u, c30) "orr " t ", " c30 ", " u ", lsl #31\n\t"
#define TFLM_OUT_S8_ASM_HI(v, m, k, sh, t, u, c30) "asr " u ", " u ", #1\n\t"
#define TFLM_OUT_S8_ASM_MUL(v, m, k, sh, t, u, c30) "smlal " t ", " u ", " v ", " m "\n\t"
#define TFLM_OUT_S8_ASM_SHIFT(v, m, k, sh, t, u, c30) "asr " u ", " u ", " sh "\n\t"
#define TFLM_OUT_S8_ASM_HIS(v, m, k, sh, t, u, c30) "asrs " u ", " u ", #1\n\t"
#define TFLM_OUT_S8_ASM_SHIFTS(v, m, k, sh, t, u, c30) "asrs " u ", " u ", " sh "\n\t"
#define TFLM_OUT_S8_ASM_NONE(v, m, k, sh, t, u, c30) ""
// The range all of int8: one SSAT. Else clamped to the block's operands
// named lo and hi (two compares, each with a conditional move).
#define TFLM_OUT_S8_ASM_SSAT(v, m, k, sh, t, u, c30) "ssat " u ", #8, " u "\n\t"
#define TFLM_OUT_S8_ASM_CLAMP(v, m, k, sh, t, u, c30) TFLM_OUT_S8_ASM_CLAMP_TO(u, "%[lo]", "%[hi]")
// u clamped to the registers lo and hi.
#define TFLM_OUT_S8_ASM_CLAMP_TO(u, lo, hi) \
    "cmp " u ", " lo "\n\t" \
    "it lt\n\t" \
    "movlt " u ", " lo "\n\t" \
    "cmp " u ", " hi "\n\t" \
    "it gt\n\t" \
    "movgt " u ", " hi "\n\t"
// The steps in order, each through `each` (one value, or two side by side),
// the shifts `hi` and `shift` (TFLM_OUT_S8_ASM_HI and _SHIFT, or the _HIS
// and _SHIFTS forms).
#define TFLM_OUT_S8_ASM_STEPS_ASR(each, A, B, lo, hi, shift, post, clamp) \
    each(TFLM_OUT_S8_ASM_KK, A, B) each(lo, A, B) each(hi, A, B) each(TFLM_OUT_S8_ASM_MUL, A, B) \
    each(shift, A, B) each(post, A, B) each(clamp, A, B)
#define TFLM_OUT_S8_ASM_STEPS(each, A, B, lo, post, clamp) \
    TFLM_OUT_S8_ASM_STEPS_ASR(each, A, B, lo, TFLM_OUT_S8_ASM_HI, TFLM_OUT_S8_ASM_SHIFT, post, clamp)
#define TFLM_OUT_S8_ASM_ON_A(step, A, B) step A
#define TFLM_OUT_S8_ASM_ON_AB(step, A, B) step A step B
// One value (registers A), result in A's u.
#define TFLM_OUT_S8_ASM(A, lo, post, clamp) TFLM_OUT_S8_ASM_STEPS(TFLM_OUT_S8_ASM_ON_A, A, A, lo, post, clamp)
// Two values (A, B), interleaved step by step: each hides the other's
// latencies.
#define TFLM_OUT_S8_ASM2(A, B, lo, post, clamp) TFLM_OUT_S8_ASM_STEPS(TFLM_OUT_S8_ASM_ON_AB, A, B, lo, post, clamp)
// One value with the flag-setting shifts.
#define TFLM_OUT_S8_ASM_S(A, lo, post, clamp) \
    TFLM_OUT_S8_ASM_STEPS_ASR(TFLM_OUT_S8_ASM_ON_A, A, A, lo, TFLM_OUT_S8_ASM_HIS, TFLM_OUT_S8_ASM_SHIFTS, post, clamp)

// The same value with the DSP cores' SMMLAR (one cycle on the Cortex-M4;
// the Cortex-M3 has none), which adds a * 2^32 and rounds by 2^31 itself:
// SMMLAR(x, M, a) = floor((a * 2^32 + x * M + 2^31) / 2^32). With x = 2 acc
// and a = kk (above), the floors compose again:
//
//   floor((acc * M + 2^30 + 2^31 * kk) / 2^(32 + s)) = SMMLAR(2 acc, M, kk) >> r
//
// (r = s + 1: the wide form's r too, its zero point added after). Four
// instructions a value (ADD for kk, SMMLAR, ASR, SSAT) where the 64-bit
// constant took seven, exact while 2 acc and SMMLAR's result fit 32 bits:
// |acc| < 2^30 and -2^30 <= k <= 2^30. A kernel whose sums are a bias plus
// at most 2^22 in magnitude (the lanes, mm_s8.h) checks the bias and k
// once per channel (tflm_out_s8_mmr_fits; the wide form's k, at most
// 2^30, always fits).
// (Without branches: the depthwise kernel's set-up checks every channel of
// a chunk at each call.)
static inline bool tflm_out_s8_mmr_bias_fits(int32_t bias) {
    return (uint32_t)bias + ((1u << 29) - 1u) <= (1u << 30) - 2u; // -2^29 < bias < 2^29
}
static inline bool tflm_out_s8_mmr_k_fits(int32_t k) {
    return (uint32_t)k + (1u << 30) <= (1u << 31); // -2^30 <= k <= 2^30
}
// (The reference's own steps, shift -1, never fit.)
static inline bool tflm_out_s8_mmr_fits(const tflm_out_s8_t *q) {
    // (Bitwise on purpose: no branches. As unsigned, which clang does not
    // take for a mistyped && or ||.)
    return (unsigned)tflm_out_s8_mmr_bias_fits(q->bias)
        & ((unsigned)(q->shift < -1) | ((unsigned)(q->shift >= 0) & (unsigned)tflm_out_s8_mmr_k_fits(q->k)));
}
// SMMLAR in C, modulo 2^64 as the instruction (the host's check of the
// form, test_speed_paths).
static inline int32_t tflm_out_s8_smmlar(int32_t x, int32_t m, int32_t a) {
    const uint64_t v = ((uint64_t)(uint32_t)a << 32) + (uint64_t)((int64_t)x * m) + 0x80000000u;
    return (int32_t)(uint32_t)(v >> 32);
}
// The form's steps on the doubled sum v2 (register names, as the steps
// above): kk into u, SMMLAR, the shift by r in register r; `post` (the wide
// form's zero point) and `clamp` (a step above: TFLM_OUT_S8_ASM_SSAT,
// _CLAMP) follow.
#define TFLM_OUT_S8_ASM_MMR(v2, m, k, r, u, post, clamp) \
    "add " u ", " k ", " v2 ", asr #31\n\t" \
    "smmlar " u ", " v2 ", " m ", " u "\n\t" \
    "asr " u ", " u ", " r "\n\t" \
    post \
    clamp(v2, m, k, r, "", u, "")

// The value before the clamp for the cases other than the fast one (wide
// shifts, the reference's steps). Out of line on Armv6-M: the kernels'
// loops inline tflm_out_s8, and a second copy of the scaling in them cost
// the Cortex-M0+ 5-12% on the shared models (its eight low registers);
// inline elsewhere, where the wide case then runs at the fast one's speed
// in the C loops (vww_96_int8 2.3% faster on the Cortex-M4 than out of
// line, measured before conv_s8.c's assembly blocks took its wide chunks),
// unless a board short of flash says TFLM_OUT_S8_WIDE_INLINE=0 (PYBV11:
// 1.5 KB).
#ifndef TFLM_OUT_S8_WIDE_INLINE
#define TFLM_OUT_S8_WIDE_INLINE (TFLM_KERNEL_ARCH != TFLM_ARCH_V6M)
#endif
#if TFLM_OUT_S8_WIDE_INLINE || !TFLM_OUT_S8_WIDE
#define TFLM_OUT_S8_OTHER_INLINE TFLM_ALWAYS_INLINE
#else
#define TFLM_OUT_S8_OTHER_INLINE __attribute__((noinline, unused))
#endif
static TFLM_OUT_S8_OTHER_INLINE int32_t tflm_out_s8_other(int32_t acc, const tflm_out_s8_t *q,
    int32_t zero_point) {
    if (TFLM_OUT_S8_WIDE && q->shift < -1) {
        return tflm_out_s8_scale(acc, q->mult, q->k, -2 - q->shift) + zero_point;
    }
    return tflm_wrap_add(tflm_mul_by_quantized_mul(acc, q->mult, q->k), zero_point);
}

// The whole stage for one value: the sum, the channel's constants, the clamp.
static inline int8_t tflm_out_s8(int32_t acc, const tflm_out_s8_t *q, int32_t zero_point, int32_t act_min,
    int32_t act_max) {
    const int32_t v = q->shift >= 0 ? tflm_out_s8_scale(acc, q->mult, q->k, q->shift)
                                    : tflm_out_s8_other(acc, q, zero_point);
    return (int8_t)tflm_clamp(v, act_min, act_max);
}

#endif // TFLM_KERNELS_OUT_S8_H
