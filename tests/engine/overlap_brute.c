// Brute force for overlapped placement (engine/overlap.h), built with
// ASan/UBSan: a single-op model's output placed at every offset from
// X.off - d - K up to X.off + K (X: its input 0, d: the rule's distance),
// in steps of the output's element size, run, and compared with the output
// of a run where the two do not overlap.
//   overlap_brute MODEL INPUT.bin K [safe]
// With `safe`, only the distances the rule allows (>= d) are tried: the
// others may make a kernel's memcpy overlap, which ASan stops (the tightness
// run turns ASan's intrinsic checks off).
// Prints "rule D tight T elem E out HEX": T is the smallest distance tried
// from which on every distance gives the non-overlapped output (X.off - T
// is the highest safe start found), HEX that output; "unsafe DELTA" for
// each distance >= D that gave another output; "none" when the rule allows
// no overlap; "error ..." otherwise.
#include <stdio.h>
#include <stdlib.h>

#include "engine/interpreter.h"
#include "engine/overlap.h"
#include "read_file.h"

// The variable tensors' bytes after allocation (an LSTM's state), put back
// before every run so that each run starts as the first invoke does.
static uint8_t *variables_save(const tflm_interp_t *ip) {
    size_t total = 0;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        total += (r->flags & TFLM_TENSOR_VARIABLE) ? r->bytes : 0;
    }
    uint8_t *saved = malloc(total + 1), *p = saved;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (r->flags & TFLM_TENSOR_VARIABLE) {
            memcpy(p, tflm_interp_tensor_data(ip, r), r->bytes);
            p += r->bytes;
        }
    }
    return saved;
}

static void variables_restore(const tflm_interp_t *ip, const uint8_t *saved) {
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (r->flags & TFLM_TENSOR_VARIABLE) {
            memcpy(tflm_interp_tensor_data(ip, r), saved, r->bytes);
            saved += r->bytes;
        }
    }
}

static uint8_t *saved_variables;

// Places X at x_off and Y at y_off (scratch buffers above both), fills the
// rest of the head with a pattern, copies the input and runs.
static bool run_at(tflm_interp_t *ip, uint32_t x, uint32_t y, uint32_t x_off, uint32_t y_off, const uint8_t *input,
    uint32_t top) {
    tflm_tensor_rec_t *rx = tflm_interp_tensor_mut(ip, x), *ry = tflm_interp_tensor_mut(ip, y);
    variables_restore(ip, saved_variables);
    memset(ip->arena->base, 0xa5, top);
    rx->data = x_off;
    ry->data = y_off;
    memcpy(tflm_interp_tensor_data(ip, rx), input, rx->bytes);
    // The records moved since the build: seal them again, as a build would.
    tflm_interp_seal(ip);
    return tflm_interp_invoke(ip) == TFLM_OK;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: overlap_brute MODEL INPUT.bin K [safe]\n");
        return 2;
    }
    size_t model_len, input_len;
    uint8_t *model_buf = read_file(argv[1], &model_len);
    uint8_t *input = read_file(argv[2], &input_len);
    int32_t k = (int32_t)strtol(argv[3], NULL, 0);
    if (!model_buf || !input) {
        fprintf(stderr, "cannot read the model or the input\n");
        return 2;
    }
    const size_t arena_len = 1 << 22;
    uint8_t *arena_buf = malloc(arena_len);
    static tflm_interp_t ip;
    tflm_model_t model;
    tflm_error_t err;
    tflm_error_clear(&err);
    int rc = 1;
    tflm_config_t cfg = { 0 };
    cfg.planner = tflm_planner_find("tflm");
    tflm_arena_t arena;
    tflm_arena_init(&arena, arena_buf, arena_len);
    if (tflm_model_init(&model, model_buf, model_len, &err) || tflm_interp_init(&ip, &model, &arena, &cfg)) {
        printf("error %s %s\n", err.msg, ip.err.msg);
        goto done;
    }
    uint32_t x = tflm_interp_input(&ip, 0), y = tflm_interp_output(&ip, 0);
    tflm_tensor_rec_t *rx = tflm_interp_tensor_mut(&ip, x), *ry = tflm_interp_tensor_mut(&ip, y);
    if (input_len != rx->bytes || rx->where != TFLM_AT_HEAD || ry->where != TFLM_AT_HEAD) {
        printf("error input of %u bytes for %u\n", (unsigned)input_len, (unsigned)rx->bytes);
        goto done;
    }
    tflm_plan_view_t v = tflm_interp_plan_view(&ip);
    uint32_t d;
    if (!tflm_overlap_distance(&v, y, x, &d)) {
        printf("none\n");
        rc = 0;
        goto done;
    }
    uint32_t elem = tflm_type_size(ry->type);
    uint32_t size_x = tflm_planned_size(rx), size_y = tflm_planned_size(ry);
    // X high enough for Y to start d + k below it; both below the other buffers.
    uint32_t x_off = tflm_align_up(d + (uint32_t)k + size_y, TFLM_ALIGN);
    uint32_t scratch_at = tflm_align_up(x_off + size_x + size_y + (uint32_t)k, TFLM_ALIGN);
    uint32_t top = scratch_at;
    // Every other head buffer (scratch, other inputs) above both.
    for (uint32_t i = 0; i < ip.n_tensors; ++i) {
        tflm_tensor_rec_t *r = tflm_interp_tensor_mut(&ip, i);
        if (r->where == TFLM_AT_HEAD && i != x && i != y) {
            r->data = top;
            top += tflm_planned_size(r);
        }
    }
    if (top + ip.tail_bytes + 64 > arena_len) {
        printf("error too large\n");
        goto done;
    }
    saved_variables = variables_save(&ip);
    uint8_t *want = malloc(ry->bytes);
    // Apart: Y above X's end.
    if (!run_at(&ip, x, y, x_off, x_off + size_x, input, top)) {
        printf("error %s\n", ip.err.msg);
        free(want);
        goto done;
    }
    memcpy(want, tflm_interp_tensor_data(&ip, ry), ry->bytes);
    int32_t tight = -k;
    const bool safe_only = argc == 5 && strcmp(argv[4], "safe") == 0;
    bool failed = false;
    // From X.off + k down to X.off - d - k: Y starts delta below X.
    for (int32_t delta = -(k / (int32_t)elem) * (int32_t)elem; delta <= (int32_t)d + k; delta += (int32_t)elem) {
        if (safe_only && delta < (int32_t)d) {
            continue;
        }
        if (!run_at(&ip, x, y, x_off, (uint32_t)((int32_t)x_off - delta), input, top)) {
            printf("error %s\n", ip.err.msg);
            failed = true;
            break;
        }
        if (memcmp(want, tflm_interp_tensor_data(&ip, ry), ry->bytes) != 0) {
            tight = delta + (int32_t)elem;
            if (delta >= (int32_t)d) {
                printf("unsafe %d\n", (int)delta);
                failed = true;
            }
        }
    }
    printf("rule %u tight %d elem %u out ", (unsigned)d, (int)tight, (unsigned)elem);
    for (uint32_t i = 0; i < ry->bytes; ++i) {
        printf("%02x", want[i]);
    }
    printf("\n");
    free(want);
    rc = failed ? 1 : 0;
done:
    free(saved_variables);
    free(arena_buf);
    free(model_buf);
    free(input);
    return rc;
}
