// The interpreter's seal (see interpreter.h): checksums of the bytes its
// build wrote and that invoke() and the API follow, taken when the build (or
// set_external) finishes and compared before they are followed again.
//
// Contract: the arena is a buffer the user can write (a bytearray given as
// the arena, `Arena.buffer`, another interpreter's misplaced output). What
// the tail holds (subgraph, tensor and node records, index lists, kernel
// data, resource records) is turned into pointers and loop bounds without
// further checks, so it must be exactly what the build wrote. The tail's
// words are hashed in a chain, x = (h ^ word) * M (M odd), then
// h = x ^ (x >> 15): each step is a bijection of h and of the word, so a
// changed word always changes the result. The multiplication carries a
// change only upwards; the shift brings it down again, so that whatever
// byte of a word changed, h differs in bits of three bytes, which a change
// of the next word's bytes cancels only by chance. (h = rotl(h, 5) ^ word,
// then h *= M, left a change of a word's top byte in 8 bits: one time in
// about 2^11 a change of the next word's low byte cancelled it, and the
// engine's fuzzer found such a pair, seed 7, and then followed a corrupted
// index.)
// The words that legitimately change between calls are skipped: variable
// tensors (and outputs kept in a kernel's state), which tensor() views may
// write, and resource variables. Kernel state (tflm_prep_alloc_state) is
// sealed again after each invoke. A prepared model's data read in place
// from bytes that can still change (tflm_model_t.rewritable) has its own
// chain. Not a cryptographic hash: it catches accidental writes, not
// writes crafted to keep it. An arena that nothing given out can reach
// (tflm_arena_t.exposed false: a binding's own buffer, not handed out, and
// no view of a tensor that outlived the layout it was made for) has its
// tails' chains taken as always but not compared: nothing could have
// changed them, and they are right whenever the arena is exposed. (Raw
// memory access, MicroPython's uctypes and machine.mem, is outside this
// contract, as it is for every object.)
//
// Cost: 3 instructions a word on the Cortex-M3/M4 (xor, multiply,
// shift-xor; an LDM loads four words, eight words a step), no memory, per
// invoke: the tail of an
// exposed arena (and the prepared data read in place from a rewritable
// buffer); the ranges skipped are found once, when the seal is taken (a
// pass over the records per range then; per invoke too for a model with
// more than TFLM_SEAL_SKIPS of them).
#include "interpreter.h"

#define SEAL_MUL (0x9e3779b1u) // odd: each step is a bijection

static inline uint32_t seal_step(uint32_t h, uint32_t w) {
    const uint32_t x = (h ^ w) * SEAL_MUL;
    return x ^ (x >> 15);
}

// Whether the chain's loop is in assembly (Thumb-2, M profile, optimised
// builds): four words a load (LDM, 5 cycles on the Cortex-M3 and M4;
// GCC's code loads each word on its own, 2 cycles each, as the next
// instruction needs it), its registers r0-r3 (LDM fills them in order).
// TFLM_SEAL_LDM=0 keeps the C loop (88 B less on the Cortex-M4).
#ifndef TFLM_SEAL_LDM
#define TFLM_SEAL_LDM (1)
#endif
#if TFLM_SEAL_LDM && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' \
    && defined(__OPTIMIZE__)
#define SEAL_LDM (1)
#else
#define SEAL_LDM (0)
#endif

// One word of the chain in assembly: v ^ h, times the multiplier, then
// xor its own bits 15 up.
#define SEAL_ASM_STEP(v) \
    "eor " v ", " v ", %[h]\n\t" \
    "mul " v ", " v ", %[m]\n\t" \
    "eor %[h], " v ", " v ", lsr #15\n\t"

// The chain over n words (4-byte aligned), from h.
uint32_t tflm_seal_words(uint32_t h, const uint8_t *p, uint32_t n) {
    const uint32_t *w = (const uint32_t *)(const void *)p, *end8 = w + (n & ~7u), *end = w + n;
#if SEAL_LDM
    if (w != end8) {
        register uint32_t a __asm__("r0");
        register uint32_t b __asm__("r1");
        register uint32_t c __asm__("r2");
        register uint32_t d __asm__("r3");
        __asm__ volatile(
            "1:\n\t"
            "ldm %[w]!, {%[a], %[b], %[c], %[d]}\n\t"
            SEAL_ASM_STEP("%[a]") SEAL_ASM_STEP("%[b]") SEAL_ASM_STEP("%[c]") SEAL_ASM_STEP("%[d]")
            "ldm %[w]!, {%[a], %[b], %[c], %[d]}\n\t"
            SEAL_ASM_STEP("%[a]") SEAL_ASM_STEP("%[b]") SEAL_ASM_STEP("%[c]") SEAL_ASM_STEP("%[d]")
            "cmp %[w], %[e]\n\t"
            "bne 1b"
            : [h] "+r"(h), [w] "+r"(w), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [d] "=&r"(d)
            : [m] "r"(SEAL_MUL), [e] "r"(end8)
            : "memory", "cc");
    }
#endif
    for (; w != end8; w += 8) {
        h = seal_step(h, w[0]);
        h = seal_step(h, w[1]);
        h = seal_step(h, w[2]);
        h = seal_step(h, w[3]);
        h = seal_step(h, w[4]);
        h = seal_step(h, w[5]);
        h = seal_step(h, w[6]);
        h = seal_step(h, w[7]);
    }
    for (; w != end; ++w) {
        h = seal_step(h, *w);
    }
    return h;
}

// Bytes [data, data + bytes) as whole words, clipped to [floor, ceil), as a
// range [*lo, *hi) when it ends above `at`; false otherwise.
static bool seal_range(uint32_t data, uint32_t bytes, uint32_t floor, uint32_t ceil, uint32_t at, uint32_t *lo,
    uint32_t *hi) {
    uint64_t end = ((uint64_t)data + bytes + 3) & ~(uint64_t)3;
    uint32_t a = data & ~3u, b = end > ceil ? ceil : (uint32_t)end;
    a = a < floor ? floor : a;
    a = a < at ? at : a;
    if (a >= b) {
        return false;
    }
    *lo = a;
    *hi = b;
    return true;
}

// The lowest range of bytes that may change between calls ending above
// `at` (variable tensors and outputs in kernel state, from their records;
// resource variables): [*lo, *hi), or *lo = *hi = `end` when none is left.
// Only below the node records, where the build puts them: a changed record
// changes the chain whatever it now points at.
static void seal_next_skip(const tflm_interp_t *ip, uint32_t at, uint32_t end, uint32_t *lo, uint32_t *hi) {
    const uint8_t *base = ip->arena->base;
    uint32_t floor = ip->tail_at, ceil = ip->nodes_at, a, b;
    *lo = *hi = end;
    const tflm_tensor_rec_t *recs = tflm_interp_tensor(ip, 0);
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        if (tflm_at_tail(recs[i].where) && seal_range(recs[i].data, recs[i].bytes, floor, ceil, at, &a, &b)
            && a < *lo) {
            *lo = a;
            *hi = b;
        }
    }
    const tflm_resource_rec_t *res = (const tflm_resource_rec_t *)(const void *)(base + ip->resources_at);
    for (uint32_t id = 0; id < ip->n_resources; ++id) {
        if (seal_range(res[id].data, res[id].bytes, floor, ceil, at, &a, &b) && a < *lo) {
            *lo = a;
            *hi = b;
        }
    }
}

// The skipped ranges, in order, as seal_next_skip() finds them in the
// records now (adjacent ones joined: the chain steps over both at once),
// found once when the seal is taken (the build's records) and kept in the
// interpreter, out of the user's reach, rather than searched through all
// records at every invoke. More than the interpreter holds: TFLM_SEAL_SKIPS
// + 1, searched each time.
static void seal_find_skips(tflm_interp_t *ip) {
    uint32_t at = ip->tail_at, end = ip->tail_at + ip->tail_bytes, n = 0, lo, hi;
    for (;;) {
        seal_next_skip(ip, at, end, &lo, &hi);
        if (lo == end) {
            break;
        }
        if (n > 0 && lo == ip->seal_skip[n - 1][1]) {
            ip->seal_skip[n - 1][1] = hi;
        } else if (n == TFLM_SEAL_SKIPS) {
            n++;
            break;
        } else {
            ip->seal_skip[n][0] = lo;
            ip->seal_skip[n][1] = hi;
            n++;
        }
        at = hi;
    }
    ip->n_seal_skips = (uint8_t)n;
}

// The tail's chain, upwards, skipping the bytes that may change between calls.
static uint32_t seal_tail(const tflm_interp_t *ip) {
    const uint8_t *base = ip->arena->base;
    uint32_t at = ip->tail_at, end = ip->tail_at + ip->tail_bytes, h = 0;
    for (uint32_t i = 0;; ++i) {
        uint32_t lo = end, hi = end;
        if (ip->n_seal_skips > TFLM_SEAL_SKIPS) {
            seal_next_skip(ip, at, end, &lo, &hi);
        } else if (i < ip->n_seal_skips) {
            lo = ip->seal_skip[i][0];
            hi = ip->seal_skip[i][1];
        }
        h = tflm_seal_words(h, base + at, (lo - at) / 4);
        if (lo == end) {
            return h;
        }
        h = seal_step(h, hi - lo); // where the chain skips, and how far
        at = hi;
    }
}

// The prepared data read in place from a rewritable model buffer (8-byte
// aligned, a multiple of 8 bytes: prepared.c checked both).
static uint32_t seal_model(const tflm_interp_t *ip) {
    return tflm_seal_words(0, ip->model->fb.buf + ip->sealed_model_at, ip->sealed_model_bytes / 4);
}

void tflm_interp_seal(tflm_interp_t *ip) {
    seal_find_skips(ip);
    ip->seal_tail = seal_tail(ip);
    ip->seal_model = seal_model(ip);
}

void tflm_interp_seal_tail(tflm_interp_t *ip) {
    ip->seal_tail = seal_tail(ip);
}

tflm_status_t tflm_interp_compare_seals(tflm_interp_t *ip) {
    if (!ip->ready) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter is not allocated");
    }
    if (ip->arena->exposed && seal_tail(ip) != ip->seal_tail) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "this interpreter's records in the arena were overwritten "
            "since it was built (the arena's bytes are the interpreter's alone: build it again)");
    }
    if (ip->sealed_model_bytes != 0 && seal_model(ip) != ip->seal_model) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "the prepared data this interpreter reads in place from the "
            "model changed since it was built (a rewritten buffer or ROMFS region: build it again)");
    }
    return TFLM_OK;
}
