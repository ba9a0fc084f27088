// Mutation fuzzing of the model reader and the interpreter, built with
// AddressSanitizer and UBSan: every mutant of a real model must be rejected
// with an error or run to the end, never read or write out of bounds.
// For each unmutated model that this build can run, it also checks that the
// arena size is exact: arena_used_bytes works, 16 bytes less fails with a
// MemoryError giving that same number.
//   fuzz_model ITERATIONS SEED MODEL...
#include <stdio.h>
#include <stdlib.h>

#include "engine/interpreter.h"

static uint64_t rng_state;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void mutate(uint8_t *buf, size_t *len) {
    size_t n = *len;
    switch (rnd() % 5) {
        case 0: // flip a few bytes
            for (uint32_t k = 1 + rnd() % 4; k; --k) {
                buf[rnd() % n] ^= (uint8_t)(1 + rnd() % 255);
            }
            break;
        case 1: // truncate
            *len = rnd() % n;
            break;
        case 2: { // random word at an aligned offset: offsets, lengths, indices
            size_t at = (rnd() % (n / 4)) * 4;
            uint32_t v = rnd();
            memcpy(buf + at, &v, 4);
            break;
        }
        case 3: { // an edge value at an aligned offset
            static const uint32_t edges[] = { 0, 1, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0xffffu, 4, 8, 16 };
            size_t at = (rnd() % (n / 4)) * 4;
            uint32_t v = edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
            memcpy(buf + at, &v, 4);
            break;
        }
        default: { // small nudge of a 16-bit value (vtable entries)
            size_t at = (rnd() % (n / 2)) * 2;
            uint16_t v;
            memcpy(&v, buf + at, 2);
            v = (uint16_t)(v + (rnd() % 2 ? 4 : (uint16_t)-4));
            memcpy(buf + at, &v, 2);
            break;
        }
    }
}

static tflm_interp_t ip;

// Loads, allocates (in an arena of exactly arena_len bytes, so ASan sees
// any access past it) and invokes. Returns the status.
static tflm_status_t try_model(const uint8_t *data, size_t len, size_t arena_len, uint32_t *used, uint32_t *needed) {
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data, len);
    uint8_t *arena_buf = malloc(arena_len ? arena_len : 1);
    tflm_error_t err;
    tflm_error_clear(&err);
    tflm_model_t model;
    tflm_status_t st = tflm_model_init(&model, copy, len, &err);
    if (st == TFLM_OK) {
        tflm_arena_t arena;
        tflm_arena_init(&arena, arena_buf, arena_len);
        tflm_config_t cfg = { 0 };  // the default planner: offline plans in the metadata too
        st = tflm_interp_init(&ip, &model, &arena, &cfg);
        if (st == TFLM_OK) {
            *used = tflm_interp_needed_bytes(&ip);
            for (uint32_t i = 0; i < tflm_interp_num_inputs(&ip); ++i) {
                tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_input(&ip, i));
                uint8_t *d = tflm_interp_tensor_data(&ip, r);
                for (uint32_t k = 0; d && k < r->bytes; ++k) {
                    d[k] = (uint8_t)rnd();
                }
            }
            st = tflm_interp_invoke(&ip);
        } else if (st == TFLM_ERR_MEMORY) {
            *needed = ip.err.needed;
        }
    }
    free(arena_buf);
    free(copy);
    return st;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz_model ITERATIONS SEED MODEL...\n");
        return 2;
    }
    long iterations = strtol(argv[1], NULL, 0);
    rng_state = 0x2545f4914f6cdd1dull ^ (uint64_t)strtoull(argv[2], NULL, 0);
    int failures = 0;
    for (int m = 3; m < argc; ++m) {
        size_t len;
        uint8_t *orig = read_file(argv[m], &len);
        if (!orig) {
            fprintf(stderr, "cannot read %s\n", argv[m]);
            return 2;
        }
        const size_t big_arena = 512 * 1024;
        uint32_t used = 0, needed = 0;
        tflm_status_t st = try_model(orig, len, big_arena, &used, &needed);
        const char *name = strrchr(argv[m], '/') ? strrchr(argv[m], '/') + 1 : argv[m];
        if (st == TFLM_OK) {
            // Exactness: the used size works, 16 bytes less reports it.
            uint32_t used2 = 0, needed2 = 0;
            tflm_status_t at_size = try_model(orig, len, used, &used2, &needed2);
            tflm_status_t below = try_model(orig, len, used - 16, &used2, &needed2);
            if (at_size != TFLM_OK || below != TFLM_ERR_MEMORY || needed2 != used) {
                printf("FAIL %s: arena of %u bytes gives %d, %u bytes gives %d needing %u\n",
                    name, used, at_size, used - 16, below, needed2);
                failures++;
            }
        }
        unsigned outcome[5] = { 0 };
        uint8_t *buf = malloc(len);
        for (long i = 0; i < iterations; ++i) {
            size_t n = len;
            memcpy(buf, orig, len);
            mutate(buf, &n);
            uint32_t u, nd;
            tflm_status_t s = try_model(buf, n, 64 * 1024, &u, &nd);
            outcome[s < 5 ? s : 4]++;
        }
        printf("%-32s %s; %ld mutants: %u ran, %u ValueError, %u MemoryError, %u NotImplementedError, %u RuntimeError\n",
            name, st == TFLM_OK ? "runs, arena exact" : "not runnable here", iterations,
            outcome[0], outcome[1], outcome[2], outcome[3], outcome[4]);
        free(buf);
        free(orig);
    }
    return failures ? 1 : 0;
}
