// Host runner for the engine (built with ASan/UBSan by tests/engine/Makefile):
// loads a model, allocates, runs it and prints the arena figures and the
// outputs in hex, one line per output per run.
//   tflm_run MODEL [-a ARENA_BYTES] [-p PLANNER] [-P PLAN] [-e TENSOR]... [-r RUNS] [-i INPUT.bin]...
// Input file k holds the raw bytes of input k for each run, one after another.
// -p default: the planner the engine picks; -P: a plan file (tflm-host plan
// --shim-out); -e: tensor TENSOR of the main subgraph pre-allocated in a
// buffer of its own outside the arena.
// Prints "head H tail T needed N", then "out K HEX" lines (run by run), or
// "error STATUS needed N given G: MESSAGE" (allocation; ops and types the
// build lacks named whole) / "error STATUS MESSAGE".
#include <stdio.h>
#include <stdlib.h>

#include "engine/interpreter.h"
#include "engine/plan_heap.h"
#include "read_file.h"

#define MAX_INPUTS (16)


int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tflm_run MODEL [-a ARENA] [-p PLANNER] [-r RUNS] [-i INPUT]...\n");
        return 2;
    }
    size_t arena_len = 1 << 22;
    const char *planner_name = "greedy";
    const char *plan_path = NULL;
    tflm_external_t external[TFLM_MAX_EXTERNAL];
    uint32_t n_external = 0;
    const char *input_paths[MAX_INPUTS];
    int n_inputs = 0;
    long runs = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-a")) {
            arena_len = strtoul(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "-p")) {
            planner_name = argv[i + 1];
        } else if (!strcmp(argv[i], "-P")) {
            plan_path = argv[i + 1];
        } else if (!strcmp(argv[i], "-e") && n_external < TFLM_MAX_EXTERNAL) {
            external[n_external].tensor = (uint32_t)strtoul(argv[i + 1], NULL, 0);
            external[n_external++].data = NULL;
        } else if (!strcmp(argv[i], "-r")) {
            runs = strtol(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "-i") && n_inputs < MAX_INPUTS) {
            input_paths[n_inputs++] = argv[i + 1];
        }
    }
    size_t model_len;
    uint8_t *model_buf = read_file(argv[1], &model_len);
    if (!model_buf) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    uint8_t *inputs[MAX_INPUTS] = { NULL };
    size_t input_lens[MAX_INPUTS] = { 0 };
    for (int k = 0; k < n_inputs; ++k) {
        inputs[k] = read_file(input_paths[k], &input_lens[k]);
        if (!inputs[k]) {
            fprintf(stderr, "cannot read %s\n", input_paths[k]);
            return 2;
        }
    }
    tflm_error_t err;
    tflm_error_clear(&err);
    tflm_model_t model;
    int rc = 1;
    // Exactly arena_len bytes, so AddressSanitizer sees any access past it.
    uint8_t *arena_buf = malloc(arena_len ? arena_len : 1);
    uint8_t *plan_buf = NULL;
    size_t plan_len = 0;
    void *external_bufs[TFLM_MAX_EXTERNAL] = { NULL };
    static tflm_interp_t ip;
    if (tflm_model_init(&model, model_buf, model_len, &err)) {
        printf("error %d %s\n", err.status, err.msg);
        goto done;
    }
    tflm_config_t cfg = { 0 };
    cfg.plan_memory = tflm_plan_heap; // as the binding and the host: not in the arena
    if (strcmp(planner_name, "default") != 0) {
        cfg.planner = tflm_planner_find(planner_name);
        if (cfg.planner == NULL) {
            printf("error 1 unknown planner %s\n", planner_name);
            goto done;
        }
    }
    tflm_plan_t plan;
    if (plan_path) {
        plan_buf = read_file(plan_path, &plan_len);
        if (!plan_buf) {
            fprintf(stderr, "cannot read %s\n", plan_path);
            rc = 2;
            goto done;
        }
        if (tflm_plan_from_words(plan_buf, plan_len, &plan, &err)) {
            printf("error %d %s\n", err.status, err.msg);
            goto done;
        }
        cfg.plan = &plan;
    }
    // Each pre-allocated tensor gets a buffer of exactly its size.
    tflm_subgraph_t sg;
    for (uint32_t k = 0; k < n_external; ++k) {
        tflm_model_tensor_t t;
        uint32_t elements, bytes = 0;
        if (tflm_model_subgraph(&model, 0, &sg) && external[k].tensor < sg.tensors.count
            && tflm_model_tensor(&model, &sg, external[k].tensor, &t)) {
            tflm_model_tensor_size(&model, &t, &elements, &bytes);
        }
        external[k].data = external_bufs[k] = malloc(bytes ? bytes : 1);
        external[k].len = bytes;
    }
    cfg.external = external;
    cfg.n_external = n_external;
    tflm_arena_t arena;
    tflm_arena_init(&arena, arena_buf, arena_len);
    if (tflm_interp_init(&ip, &model, &arena, &cfg)) {
        // Ops and types the build lacks: the whole message, as the binding raises it.
        size_t n = ip.err.status == TFLM_ERR_NOT_IMPLEMENTED ? tflm_interp_missing_ops_message(&model, NULL, 0) : 0;
        char *whole = n ? malloc(n + 1) : NULL;
        if (whole) {
            tflm_interp_missing_ops_message(&model, whole, n + 1);
        }
        printf("error %d needed %u given %u: %s\n", ip.err.status, ip.err.needed, ip.err.given, whole ? whole : ip.err.msg);
        free(whole);
        goto done;
    }
    printf("head %u tail %u needed %u\n", ip.head_bytes, ip.tail_bytes, tflm_interp_needed_bytes(&ip));
    // The head's plan: "buf KIND INDEX OFFSET BYTES FIRST LAST" per head buffer.
    tflm_plan_rec_t *lives = calloc(ip.n_tensors + 1, sizeof(*lives));
    if (lives == NULL || tflm_interp_plan_records(&ip, lives) != TFLM_OK) {
        printf("error: lifetimes\n");
        free(lives);
        goto done;
    }
    for (uint32_t i = 0; i < ip.n_tensors; ++i) {
        const tflm_plan_rec_t *r = &lives[i];
        if (r->where == TFLM_AT_HEAD) {
            bool scratch = i >= ip.map.n_live;
            printf("buf %s %u %u %u %d %d\n", scratch ? "scratch" : "tensor", scratch ? i - ip.map.n_live : tflm_interp_tensor_of(&ip, i),
                r->data, r->bytes, r->first, r->last);
        }
    }
    free(lives);
    for (long run = 0; run < runs; ++run) {
        for (int k = 0; k < n_inputs && (uint32_t)k < tflm_interp_num_inputs(&ip); ++k) {
            const tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_input(&ip, (uint32_t)k));
            size_t at = (size_t)run * r->bytes;
            if (at + r->bytes <= input_lens[k]) {
                memcpy(tflm_interp_tensor_data(&ip, r), inputs[k] + at, r->bytes);
            }
        }
        if (tflm_interp_invoke(&ip)) {
            printf("error %d %s\n", ip.err.status, ip.err.msg);
            goto done;
        }
        for (uint32_t o = 0; o < tflm_interp_num_outputs(&ip); ++o) {
            const tflm_tensor_rec_t *r = tflm_interp_tensor(&ip, tflm_interp_output(&ip, o));
            const uint8_t *d = tflm_interp_tensor_data(&ip, r);
            printf("out %u ", o);
            for (uint32_t k = 0; d && k < r->bytes; ++k) {
                printf("%02x", d[k]);
            }
            printf("\n");
        }
    }
    rc = 0;
done:
    for (int k = 0; k < n_inputs; ++k) {
        free(inputs[k]);
    }
    for (uint32_t k = 0; k < n_external; ++k) {
        free(external_bufs[k]);
    }
    free(plan_buf);
    free(arena_buf);
    free(model_buf);
    return rc;
}
