// The interpreter's seal (see interpreter.h): checksums of the bytes its
// build wrote and that invoke() and the API follow, taken when the build (or
// set_external) finishes and compared before they are followed again.
//
// Contract: the arena is a buffer the user can write (a bytearray given as
// the arena, `Arena.buffer`, another interpreter's misplaced output). What
// the tail holds (subgraph, tensor and node records, index lists, kernel
// data, resource records) is turned into pointers and loop bounds without
// further checks, so it must be exactly what the build wrote. The tail's
// words are hashed as a polynomial, h = h * M + word with M odd, so a changed
// word always changes the sum (several changed words cancel out only by
// design), except the bytes that legitimately change between calls:
// variable tensors (and outputs kept in a kernel's state), which tensor()
// views may write, and resource variables, whose terms are taken out again.
// Kernel state (tflm_prep_alloc_state) is sealed again after each invoke. A
// prepared model's data read in place from bytes that can still change
// (tflm_model_t.rewritable) has its own sum. Not a cryptographic hash: it
// catches accidental writes, not writes crafted to keep the sum.
//
// Cost: a multiply-add per word, no memory: about 2 instructions per word
// of the tail (and of the prepared data read in place from a rewritable
// buffer) per invoke, and a few per record to find the bytes left out.
#include "interpreter.h"

#define SEAL_MUL (0x9e3779b1u) // odd: a changed word always changes the sum

// The polynomial of n words (4-byte aligned). Eight words a step, through
// a pointer: about 2.5 instructions a word on the Cortex-M cores.
static uint32_t seal_words(const uint8_t *p, uint32_t n) {
    const uint32_t *w = (const uint32_t *)(const void *)p, *end8 = w + (n & ~7u), *end = w + n;
    uint32_t h = 0;
    for (; w != end8; w += 8) {
        uint32_t a = w[0], b = w[1], c = w[2], d = w[3];
        h = h * SEAL_MUL + a;
        h = h * SEAL_MUL + b;
        h = h * SEAL_MUL + c;
        h = h * SEAL_MUL + d;
        a = w[4], b = w[5], c = w[6], d = w[7];
        h = h * SEAL_MUL + a;
        h = h * SEAL_MUL + b;
        h = h * SEAL_MUL + c;
        h = h * SEAL_MUL + d;
    }
    for (; w != end; ++w) {
        h = h * SEAL_MUL + *w;
    }
    return h;
}

// SEAL_MUL to the power k: the weight of a word followed by k more.
static uint32_t seal_pow(uint32_t k) {
    uint32_t r = 1, b = SEAL_MUL;
    for (; k; k >>= 1, b *= b) {
        r = (k & 1) ? r * b : r;
    }
    return r;
}

// The terms of the words covering bytes [lo, lo + bytes) of the arena,
// clipped to [floor, ceil), in the sum of the words up to `end`.
static uint32_t seal_terms(const uint8_t *base, uint32_t lo, uint32_t bytes, uint32_t floor, uint32_t ceil,
    uint32_t end) {
    uint64_t hi = (uint64_t)lo + bytes;
    lo &= ~3u;
    hi = (hi + 3) & ~(uint64_t)3;
    lo = lo < floor ? floor : lo;
    hi = hi > ceil ? ceil : hi;
    if (lo >= hi) {
        return 0;
    }
    return seal_words(base + lo, (uint32_t)(hi - lo) / 4) * seal_pow((end - (uint32_t)hi) / 4);
}

// The tail's sum without the bytes that may change between calls. Those
// are found from records inside the sum, and only below the node records
// (where the build puts them): a changed record changes the sum whatever
// it now points at.
static uint32_t seal_tail(const tflm_interp_t *ip) {
    const uint8_t *base = ip->arena->base;
    uint32_t floor = ip->tail_at, ceil = ip->nodes_at, end = ip->tail_at + ip->tail_bytes;
    uint32_t h = seal_words(base + ip->tail_at, ip->tail_bytes / 4);
    const tflm_tensor_rec_t *recs = tflm_interp_tensor(ip, 0);
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        if (recs[i].where == TFLM_AT_TAIL) {
            h -= seal_terms(base, recs[i].data, recs[i].bytes, floor, ceil, end);
        }
    }
    const tflm_resource_rec_t *res = (const tflm_resource_rec_t *)(const void *)(base + ip->resources_at);
    for (uint32_t id = 0; id < ip->n_resources; ++id) {
        h -= seal_terms(base, res[id].data, res[id].bytes, floor, ceil, end);
    }
    return h;
}

// The prepared data read in place from a rewritable model buffer (8-byte
// aligned, a multiple of 8 bytes: prepared.c checked both).
static uint32_t seal_model(const tflm_interp_t *ip) {
    return ip->sealed_model_bytes ? seal_words(ip->model->fb.buf + ip->sealed_model_at, ip->sealed_model_bytes / 4) : 0;
}

void tflm_interp_seal(tflm_interp_t *ip) {
    ip->seal_tail = seal_tail(ip);
    ip->seal_model = seal_model(ip);
}

void tflm_interp_seal_state(tflm_interp_t *ip) {
    if (ip->stateful) {
        ip->seal_tail = seal_tail(ip);
    }
}

tflm_status_t tflm_interp_verify(tflm_interp_t *ip) {
    if (!ip->ready) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter is not allocated");
    }
    if (seal_tail(ip) != ip->seal_tail) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "this interpreter's records in the arena were overwritten "
            "since it was built (the arena's bytes are the interpreter's alone: build it again)");
    }
    if (seal_model(ip) != ip->seal_model) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "the prepared data this interpreter reads in place from the "
            "model changed since it was built (a rewritten buffer or ROMFS region: build it again)");
    }
    return TFLM_OK;
}
