// Host runner for the engine: loads a model, allocates, runs it on raw
// input files and prints the arena figures and the outputs in hex.
//   tflm_run MODEL [-a ARENA_BYTES] [-p PLANNER] [-i INPUT.bin]...
#include <stdio.h>
#include <stdlib.h>

#include "engine/interpreter.h"

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tflm_run MODEL [-a ARENA] [-p PLANNER] [-i INPUT]...\n");
        return 2;
    }
    size_t arena_len = 1 << 20;
    const char *planner_name = "greedy";
    const char *inputs[16];
    int n_inputs = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-a")) {
            arena_len = strtoul(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "-p")) {
            planner_name = argv[i + 1];
        } else if (!strcmp(argv[i], "-i") && n_inputs < 16) {
            inputs[n_inputs++] = argv[i + 1];
        }
    }
    size_t model_len;
    uint8_t *model_buf = read_file(argv[1], &model_len);
    if (!model_buf) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    tflm_error_t err;
    tflm_error_clear(&err);
    tflm_model_t model;
    int rc = 1;
    uint8_t *arena_buf = malloc(arena_len ? arena_len : 1);
    if (tflm_model_init(&model, model_buf, model_len, &err)) {
        printf("error %d %s\n", err.status, err.msg);
        goto done;
    }
    const tflm_planner_t *planner = tflm_planner_find(planner_name);
    tflm_arena_t arena;
    tflm_arena_init(&arena, arena_buf, arena_len);
    static tflm_interp_t ip;
    if (tflm_interp_init(&ip, &model, &arena, planner)) {
        printf("error %d needed %u given %u: %s\n", ip.err.status, ip.err.needed, ip.err.given, ip.err.msg);
        goto done;
    }
    printf("head %u tail %u needed %u\n", ip.head_bytes, ip.tail_bytes, tflm_interp_needed_bytes(&ip));
    for (int i = 0; i < n_inputs && (uint32_t)i < tflm_interp_num_inputs(&ip); ++i) {
        tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_input(&ip, (uint32_t)i));
        size_t len;
        uint8_t *data = read_file(inputs[i], &len);
        memcpy(tflm_interp_tensor_data(&ip, r), data, len < r->bytes ? len : r->bytes);
        free(data);
    }
    if (tflm_interp_invoke(&ip)) {
        printf("error %d %s\n", ip.err.status, ip.err.msg);
        goto done;
    }
    for (uint32_t o = 0; o < tflm_interp_num_outputs(&ip); ++o) {
        tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_output(&ip, o));
        const uint8_t *d = tflm_interp_tensor_data(&ip, r);
        printf("out %u ", o);
        for (uint32_t k = 0; k < r->bytes; ++k) {
            printf("%02x", d[k]);
        }
        printf("\n");
    }
    rc = 0;
done:
    free(arena_buf);
    free(model_buf);
    return rc;
}
