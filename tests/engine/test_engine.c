// Unit tests of the engine on the host: rounding and fixed-point helpers
// against libm and exact arithmetic, the greedy planner against a plain
// list-based first fit written here, the arena's sections, the checked
// FlatBuffers reader on hand-made buffers, and the signal FFTs' twiddles
// against libm.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/arena.h"
#include "engine/flatbuffer.h"
#include "engine/interpreter.h"
#include "engine/planner.h"
#include "engine/quant.h"
#include "engine/schema.h"
#include "kernels/signal_fft.h"

static int failures;

#define CHECK(cond, ...) do { \
        if (!(cond)) { \
            failures++; \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
        } \
} while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double rnd_double(void) {
    // Wide range of magnitudes, both signs, with many exact .5 cases.
    double mag = ldexp((double)(rnd() % 1000000) / 1000.0, (int)(rnd() % 40) - 20);
    if (rnd() % 4 == 0) {
        mag = (double)(rnd() % 2000) / 2.0;
    }
    return rnd() % 2 ? -mag : mag;
}

static void test_rounding(void) {
    for (int i = 0; i < 200000; ++i) {
        double x = rnd_double();
        CHECK(tflm_round(x) == round(x), "round(%.17g): %.17g vs %.17g", x, tflm_round(x), round(x));
        float f = (float)x;
        CHECK(tflm_roundf(f) == roundf(f), "roundf(%.9g)", (double)f);
        int e1, e2;
        double m1 = tflm_frexp(x, &e1), m2 = frexp(x, &e2);
        CHECK(m1 == m2 && e1 == e2, "frexp(%.17g)", x);
    }
    double special[] = { 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 4503599627370495.5, 1e300, 5e-324, -1e-310 };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i) {
        int e1, e2;
        CHECK(tflm_round(special[i]) == round(special[i]), "round special %zu", i);
        CHECK(tflm_frexp(special[i], &e1) == frexp(special[i], &e2) && e1 == e2, "frexp special %zu", i);
    }
}

// The real value a (multiplier, shift) pair stands for.
static double multiplier_value(int32_t m, int32_t shift) {
    return ldexp((double)m, shift - 31);
}

static void test_quantize_multiplier(void) {
    int32_t m, s;
    tflm_quantize_multiplier(0.5, &m, &s);
    CHECK(m == (1 << 30) && s == 0, "0.5 -> %d %d", m, s);
    tflm_quantize_multiplier(1.0, &m, &s);
    CHECK(m == (1 << 30) && s == 1, "1.0 -> %d %d", m, s);
    tflm_quantize_multiplier(0.0, &m, &s);
    CHECK(m == 0 && s == 0, "0 -> %d %d", m, s);
    tflm_quantize_multiplier(1e-12, &m, &s);
    CHECK(m == 0 && s == 0, "tiny multipliers become zero");
    for (int i = 0; i < 100000; ++i) {
        double real = ldexp(0.5 + (double)(rnd() % 1000000) / 2000000.0, (int)(rnd() % 40) - 30);
        tflm_quantize_multiplier(real, &m, &s);
        // Q31 rounding: the pair is within half a unit in the last place.
        double err = fabs(multiplier_value(m, s) - real);
        CHECK(m >= (1 << 30) && err <= ldexp(1.0, s - 32), "multiplier %.17g -> %d %d", real, m, s);
    }
}

// A fused activation's bounds as TFLM's reference computes them
// (CalculateActivationRangeQuantized): refused where the output scale puts
// round(bound / scale) past 2^31 or makes it no number (the fuzzer's
// ADD_int8_0 case 284, seed 7, changed after loading, had such a scale); at
// exactly 2^31 (which its check lets through) converted as x86-64 does, to
// INT32_MIN, and the zero point added with wrapping: the bounds then cross,
// and the reference's clamp gives the upper one in the output's type.
static void test_activation_range(void) {
    int32_t lo, hi;
    CHECK(!tflm_activation_range_quantized(TFLM_ACT_RELU6, 1e-12f, -40, -128, 127, &lo, &hi), "RELU6, scale 1e-12");
    CHECK(!tflm_activation_range_quantized(TFLM_ACT_RELU_N1_TO_1, 1e-12f, -40, -128, 127, &lo, &hi),
        "RELU_N1_TO_1, scale 1e-12");
    CHECK(!tflm_activation_range_quantized(TFLM_ACT_RELU_N1_TO_1, 1e-12f, 2147483647, INT32_MIN, INT32_MAX, &lo, &hi),
        "int32 zero point");
    CHECK(!tflm_activation_range_quantized(TFLM_ACT_RELU, 0.0f, 3, -128, 127, &lo, &hi), "RELU, scale 0");
    CHECK(tflm_activation_range_quantized(TFLM_ACT_RELU6, 0.5f, 3, -128, 127, &lo, &hi) && lo == 3 && hi == 15,
        "RELU6, scale 0.5: [%d, %d]", lo, hi);
    // 2^-31: -1 and 1 give -2^31 and 2^31, both INT32_MIN; zero point 0:
    // [max(-128, INT32_MIN), min(127, INT32_MIN)], crossed, the upper bound's
    // low byte 0.
    const float s31 = 4.656612873077393e-10f;
    CHECK(tflm_activation_range_quantized(TFLM_ACT_RELU_N1_TO_1, s31, 0, -128, 127, &lo, &hi) && lo == 0 && hi == 0,
        "RELU_N1_TO_1, scale 2^-31, zero point 0: [%d, %d]", lo, hi);
    // Zero point -40: the lower bound wraps to 2^31 - 40 (the upper one to
    // 2^31 - 40 too, then 127): crossed, 127.
    CHECK(tflm_activation_range_quantized(TFLM_ACT_RELU_N1_TO_1, s31, -40, -128, 127, &lo, &hi) && lo == 127
        && hi == 127, "RELU_N1_TO_1, scale 2^-31, zero point -40: [%d, %d]", lo, hi);
    // int16, zero point 5: [-32768, INT32_MIN + 5], crossed, its low half 5.
    CHECK(tflm_activation_range_quantized(TFLM_ACT_RELU_N1_TO_1, s31, 5, -32768, 32767, &lo, &hi) && lo == 5 && hi == 5,
        "int16, scale 2^-31, zero point 5: [%d, %d]", lo, hi);
}

// The seal's chain (engine/seal.c) tells changed words from the build's:
// every change of a word's top byte together with the next word's low
// byte (a pair the chain's former step let cancel one time in about 2^11:
// the fuzzer's RESIZE_NEAREST_NEIGHBOR_int8_0 case 3496, seed 7, then
// followed a corrupted index), and random changes of one to four bytes.
static void test_seal_chain(void) {
    uint32_t words[32];
    for (int i = 0; i < 32; ++i) {
        words[i] = (uint32_t)rnd();
    }
    uint8_t *b = (uint8_t *)words;
    const uint32_t h0 = tflm_seal_words(0, b, 32);
    int missed = 0;
    for (int i = 0; i < 31; i += 5) {
        for (int d1 = 1; d1 < 256; ++d1) {
            for (int d2 = 1; d2 < 256; ++d2) {
                b[4 * i + 3] ^= (uint8_t)d1;
                b[4 * i + 4] ^= (uint8_t)d2;
                missed += tflm_seal_words(0, b, 32) == h0;
                b[4 * i + 3] ^= (uint8_t)d1;
                b[4 * i + 4] ^= (uint8_t)d2;
            }
        }
    }
    CHECK(missed == 0, "%d changed byte pairs across a word boundary kept the seal", missed);
    missed = 0;
    for (int t = 0; t < 100000; ++t) {
        uint8_t saved[128];
        memcpy(saved, b, sizeof(saved));
        for (int k = 1 + (int)(rnd() % 4); k; --k) {
            b[rnd() % 128] ^= (uint8_t)(1 + rnd() % 255);
        }
        const bool changed = memcmp(saved, b, sizeof(saved)) != 0;
        missed += changed && tflm_seal_words(0, b, 32) == h0;
        memcpy(b, saved, sizeof(saved));
    }
    CHECK(missed == 0, "%d random changes kept the seal", missed);
}

static void test_fixed_point(void) {
    for (int i = 0; i < 200000; ++i) {
        int32_t x = (int32_t)rnd();
        int32_t e = (int32_t)(rnd() % 32);
        // Rounding divide by 2^e rounds half away from zero.
        double q = ldexp((double)x, -e);
        double want = q < 0 ? -floor(-q + 0.5) : floor(q + 0.5);
        CHECK(tflm_rounding_divide_by_pot(x, e) == (int32_t)want, "rdbpot(%d, %d)", x, e);
        int32_t a = (int32_t)rnd(), b = (int32_t)rnd();
        // a*b/2^31 rounded half away from zero, saturated.
        long double p = (long double)a * (long double)b / 2147483648.0L;
        long double r = p < 0 ? -floorl(-p + 0.5L) : floorl(p + 0.5L);
        if (r > 2147483647.0L) {
            r = 2147483647.0L;
        }
        CHECK(tflm_srdhm(a, b) == (int32_t)r, "srdhm(%d, %d) = %d, want %.0Lf", a, b, tflm_srdhm(a, b), r);
    }
    CHECK(tflm_srdhm(INT32_MIN, INT32_MIN) == INT32_MAX, "srdhm saturates");
    CHECK(tflm_float_to_int32(3e9f) == INT32_MIN && tflm_float_to_int32(NAN) == INT32_MIN, "x86 conversion");
}

// TFLM's greedy first fit with explicit sorted lists, written independently
// of planner_greedy.c, to check that the list-free version places alike.
static uint32_t list_first_fit(tflm_plan_rec_t *recs, uint32_t n, uint32_t *offsets) {
    uint32_t order[256], placed[256];
    uint32_t n_order = 0, n_placed = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (recs[i].where == TFLM_AT_HEAD) {
            order[n_order++] = i;
        }
    }
    // Stable sort: size descending, ties higher index first.
    for (uint32_t i = 1; i < n_order; ++i) {
        for (uint32_t j = i; j > 0; --j) {
            uint32_t a = order[j - 1], b = order[j];
            uint32_t sa = tflm_planned_size(&recs[a]), sb = tflm_planned_size(&recs[b]);
            if (sa < sb || (sa == sb && a < b)) {
                order[j - 1] = b;
                order[j] = a;
            }
        }
    }
    uint32_t head = 0;
    for (uint32_t k = 0; k < n_order; ++k) {
        uint32_t id = order[k];
        uint32_t size = tflm_planned_size(&recs[id]);
        // Live placed buffers sorted by offset, then the first gap that fits.
        uint32_t live[256], n_live = 0;
        for (uint32_t p = 0; p < n_placed; ++p) {
            if (tflm_lifetimes_overlap(&recs[placed[p]], &recs[id])) {
                uint32_t at = n_live++;
                while (at > 0 && offsets[live[at - 1]] > offsets[placed[p]]) {
                    live[at] = live[at - 1];
                    at--;
                }
                live[at] = placed[p];
            }
        }
        uint32_t candidate = 0;
        for (uint32_t p = 0; p < n_live; ++p) {
            uint32_t off = offsets[live[p]];
            if (off >= candidate + size) {
                break;
            }
            uint32_t end = off + tflm_planned_size(&recs[live[p]]);
            candidate = end > candidate ? end : candidate;
        }
        offsets[id] = candidate;
        placed[n_placed++] = id;
        head = candidate + size > head ? candidate + size : head;
    }
    return head;
}

static void test_planners(void) {
    tflm_error_t err;
    for (int trial = 0; trial < 3000; ++trial) {
        tflm_plan_rec_t recs[64];
        uint32_t n = 1 + (uint32_t)(rnd() % 64);
        int16_t steps = (int16_t)(1 + rnd() % 20);
        memset(recs, 0, sizeof(recs));
        for (uint32_t i = 0; i < n; ++i) {
            recs[i].where = rnd() % 8 ? TFLM_AT_HEAD : TFLM_AT_MODEL;
            // Many equal sizes, to exercise the tie order.
            recs[i].bytes = (uint32_t)(rnd() % 4 ? 16 * (1 + rnd() % 8) : 1 + rnd() % 700);
            recs[i].first = (int16_t)(rnd() % (uint64_t)steps);
            recs[i].last = (int16_t)(recs[i].first + (int16_t)(rnd() % 5));
        }
        uint32_t want[64], head_want = list_first_fit(recs, n, want), head = 0;
        // Without a graph (ov NULL) the greedy planner cannot overlap: TFLM's first fit.
        CHECK(tflm_planner_greedy.plan(recs, n, NULL, &head, &err) == TFLM_OK, "greedy plan");
        CHECK(head == head_want, "trial %d: greedy head %u, list first fit %u", trial, head, head_want);
        for (uint32_t i = 0; i < n; ++i) {
            if (recs[i].where != TFLM_AT_HEAD) {
                continue;
            }
            CHECK(recs[i].data == want[i], "trial %d buffer %u: %u vs %u", trial, i, recs[i].data, want[i]);
            CHECK(recs[i].data % TFLM_ALIGN == 0 && recs[i].data + recs[i].bytes <= head, "inside the head");
            for (uint32_t j = 0; j < i; ++j) {
                if (recs[j].where == TFLM_AT_HEAD && tflm_lifetimes_overlap(&recs[i], &recs[j])) {
                    bool apart = recs[i].data + tflm_planned_size(&recs[i]) <= recs[j].data
                        || recs[j].data + tflm_planned_size(&recs[j]) <= recs[i].data;
                    CHECK(apart, "trial %d: buffers %u and %u overlap", trial, i, j);
                }
            }
        }
        uint32_t linear_head = 0, sum = 0;
        uint32_t tflm_head = 0;
        CHECK(tflm_planner_tflm.plan(recs, n, NULL, &tflm_head, &err) == TFLM_OK && tflm_head == head, "tflm plan");
        CHECK(tflm_planner_linear.plan(recs, n, NULL, &linear_head, &err) == TFLM_OK, "linear plan");
        for (uint32_t i = 0; i < n; ++i) {
            if (recs[i].where == TFLM_AT_HEAD) {
                CHECK(recs[i].data == sum, "linear offsets follow index order");
                sum += tflm_planned_size(&recs[i]);
            }
        }
        CHECK(linear_head == sum && linear_head >= head, "linear head %u, greedy %u", linear_head, head);
    }
}

// A tensor record's bytes, the same on every target (a prepared model keeps
// its constants' records): data, then one little-endian word of bytes (bits
// 0-23), type (24-28) and where (29-31).
static void test_record_layout(void) {
    tflm_tensor_rec_t r;
    memset(&r, 0, sizeof(r));
    r.data = 0x04030201u;
    r.bytes = 0xabcdefu;
    r.type = TFLM_INT4;
    r.where = TFLM_AT_STATE;
    const uint8_t want[8] = { 0x01, 0x02, 0x03, 0x04, 0xef, 0xcd, 0xab, (uint8_t)(TFLM_INT4 | TFLM_AT_STATE << 5) };
    uint8_t got[8];
    memcpy(got, &r, sizeof(got));
    CHECK(sizeof(r) == 8 && memcmp(got, want, sizeof(want)) == 0, "record bytes %02x %02x %02x %02x", got[4], got[5],
        got[6], got[7]);
    r.bytes = TFLM_MAX_TENSOR_BYTES;
    r.type = 31;
    r.where = 7;
    memcpy(got, &r, sizeof(got));
    CHECK(got[4] == 0xff && got[5] == 0xff && got[6] == 0xff && got[7] == 0xff, "record fields fill the word");
    r.where = TFLM_AT_HEAD;
    CHECK(r.bytes == TFLM_MAX_TENSOR_BYTES && r.type == 31, "fields apart");
}

static void test_arena(void) {
    static uint8_t buf[1024 + 32];
    for (uint32_t shift = 0; shift < 16; ++shift) {
        tflm_arena_t a;
        tflm_arena_init(&a, buf + shift, 1000);
        CHECK(((uintptr_t)a.base % TFLM_ALIGN) == 0, "aligned base");
        CHECK(a.size % TFLM_ALIGN == 0 && a.size + a.align_loss <= 1000 && a.size >= 1000 - 31, "usable size %u", a.size);
        uint32_t x = tflm_arena_alloc_tail(&a, 10, 4);
        CHECK(x != TFLM_ARENA_FAIL && x % 4 == 0 && x + 10 <= a.size, "tail allocation");
        uint32_t before = a.tail;
        CHECK(tflm_arena_alloc_tail(&a, a.size, 4) == TFLM_ARENA_FAIL && a.tail == before, "overfull tail fails cleanly");
        a.head = 64;
        uint32_t t = tflm_arena_alloc_temp(&a, 100, 16);
        CHECK(t == 64 && a.temp == 100, "temporary sits on the head");
        CHECK(tflm_arena_alloc_tail(&a, a.size - a.tail - 64 - 99, 1) == TFLM_ARENA_FAIL, "tail stops at temporaries");
        tflm_arena_reset_temp(&a);
        CHECK(a.temp == 0, "temp reset");
    }
    // A gap between two tails: allocations fill it from its top, stop at
    // its floor, and leave the arena's tail as it was; temporaries still
    // stop at the real tail.
    tflm_arena_t g;
    tflm_arena_init(&g, buf + (TFLM_ALIGN - (uintptr_t)buf % TFLM_ALIGN) % TFLM_ALIGN, 1024);
    uint32_t t1 = tflm_arena_alloc_tail(&g, 96, 16), t2 = tflm_arena_alloc_tail(&g, 96, 16);
    uint32_t t3 = tflm_arena_alloc_tail(&g, 64, 16);
    CHECK(t1 == 1024 - 96 && t2 == t1 - 96 && t3 == t2 - 64 && g.tail == 256 && g.cursor == 256, "three tails");
    tflm_arena_begin_gap(&g, 96, 96); // where the second one was
    uint32_t in = tflm_arena_alloc_tail(&g, 64, 16);
    CHECK(in == t1 - 64 && g.tail == 256, "allocation at the top of the gap");
    CHECK(tflm_arena_alloc_tail(&g, 48, 16) == TFLM_ARENA_FAIL, "the gap's floor stops it");
    CHECK(tflm_arena_alloc_tail(&g, 32, 16) == t2, "the gap filled to its floor");
    CHECK(tflm_arena_alloc_temp(&g, 1024 - 256 + 1, 16) == TFLM_ARENA_FAIL, "temporaries stop at the lowest tail");
    tflm_arena_end_gap(&g);
    CHECK(g.cursor == g.tail && g.tail == 256 && g.gap_floor == 0, "gap ended");
    tflm_arena_t dry;
    tflm_arena_init_dry(&dry);
    CHECK(tflm_arena_is_dry(&dry) && tflm_arena_alloc_tail(&dry, 1000000, 4) != TFLM_ARENA_FAIL, "dry arena counts");
}

static void test_flatbuffer(void) {
    // A table at 8 with a vtable at 0: one int32 field (id 1) holding 42,
    // field 0 absent; root offset replaced below.
    uint8_t buf[32] = { 0 };
    // vtable at 4: vsize 8, tsize 8, field0 at 0 (absent), field1 at offset 4
    buf[4] = 8; buf[6] = 8; buf[8] = 0; buf[10] = 4;
    // table at 12: soffset to vtable = 12 - 4 = 8, then the int32
    buf[12] = 8; buf[16] = 42;
    buf[0] = 12; // root offset
    tflm_fb_t fb;
    tflm_fb_init(&fb, buf, sizeof(buf));
    uint32_t root = tflm_fb_root(&fb);
    CHECK(root == 12 && !fb.bad, "root at 12");
    CHECK(tflm_fb_i32(&fb, root, 1, -1) == 42, "field 1");
    CHECK(tflm_fb_i32(&fb, root, 0, -7) == -7, "absent field gives default");
    CHECK(tflm_fb_i32(&fb, root, 9, -9) == -9 && !fb.bad, "field past the vtable is absent");
    // A field whose offset leaves the table is an error.
    buf[10] = 6;
    tflm_fb_init(&fb, buf, sizeof(buf));
    tflm_fb_i32(&fb, tflm_fb_root(&fb), 1, 0);
    CHECK(fb.bad != NULL, "field outside its table is caught");
    buf[10] = 4;
    // Root offset past the end; vtable offset pointing before the buffer.
    buf[0] = 200;
    tflm_fb_init(&fb, buf, sizeof(buf));
    CHECK(tflm_fb_root(&fb) == 0 && fb.bad, "root outside the buffer");
    buf[0] = 12;
    buf[12] = 100;
    tflm_fb_init(&fb, buf, sizeof(buf));
    CHECK(tflm_fb_root(&fb) == 0 && fb.bad, "vtable outside the buffer");
    buf[12] = 8;
    // A vector whose length runs past the end.
    buf[10] = 4; buf[16] = 4; // field 1 now an offset to a vector at 20
    buf[20] = 0xff; buf[21] = 0xff;
    tflm_fb_init(&fb, buf, sizeof(buf));
    tflm_fb_vec_t v = tflm_fb_vector(&fb, tflm_fb_root(&fb), 1, 4);
    CHECK(v.count == 0 && fb.bad, "long vector is caught");
    buf[20] = 2; buf[21] = 0;
    tflm_fb_init(&fb, buf, sizeof(buf));
    v = tflm_fb_vector(&fb, tflm_fb_root(&fb), 1, 4);
    CHECK(v.count == 2 && v.pos == 24 && !fb.bad, "vector of two");
}

// The signal library FFTs' twiddles as KISS FFT computes them with libm
// (the phase in double, then cos and sin, rounded to Q15, Q31 and float),
// for every length SignalRfft and SignalIrfft take, both directions.
static void test_fft_twiddles(void) {
    static signal_c16_t q15[3 * SIGNAL_FFT_MAX_LENGTH / 4];
    static signal_c32_t q31[3 * SIGNAL_FFT_MAX_LENGTH / 4];
    static signal_cf_t f32[3 * SIGNAL_FFT_MAX_LENGTH / 4];
    const double pi = 3.14159265358979323846264338327;
    uint32_t checked = 0;
    for (uint32_t length = SIGNAL_FFT_MIN_LENGTH; length <= SIGNAL_FFT_MAX_LENGTH; length *= 2) {
        for (int inverse = 0; inverse < 2; ++inverse) {
            signal_fft_t f;
            signal_fft_init(&f, length, inverse, TFLM_INT16, q15);
            signal_fft_init(&f, length, inverse, TFLM_INT32, q31);
            signal_fft_init(&f, length, inverse, TFLM_FLOAT32, f32);
            const uint32_t half = length / 2;
            for (uint32_t i = 0; i < half + half / 2; ++i) {
                double phase = i < half ? -2 * pi * i / half : -pi * ((double)(i - half + 1) / half + .5);
                if (inverse) {
                    phase *= -1;
                }
                double c = cos(phase), s = sin(phase);
                int ok = q15[i].r == (int16_t)floor(.5 + 32767 * c) && q15[i].i == (int16_t)floor(.5 + 32767 * s)
                    && q31[i].r == (int32_t)floor(.5 + 2147483647 * c) && q31[i].i == (int32_t)floor(.5 + 2147483647 * s)
                    && f32[i].r == (float)c && f32[i].i == (float)s;
                CHECK(ok, "twiddle %u of length %u (inverse %d)", (unsigned)i, (unsigned)length, inverse);
                checked++;
            }
        }
    }
    CHECK(checked == 98298, "%u twiddles", (unsigned)checked);
}

int main(void) {
    test_rounding();
    test_quantize_multiplier();
    test_activation_range();
    test_seal_chain();
    test_fixed_point();
    test_planners();
    test_record_layout();
    test_arena();
    test_flatbuffer();
    test_fft_twiddles();
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("engine unit tests passed\n");
    return 0;
}
