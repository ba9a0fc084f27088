// Brute force for overlapped placement (engine/overlap.h), built with
// ASan/UBSan: a single-op model's output placed at every offset from
// X.off - d - K up to X.off + K (X: its input 0, d: the rule's distance),
// or up to X.off + e + K when the kernel also runs backward (e: the
// backward rule's distance), in steps of the output's element size, run,
// and compared with the output of a run where the two do not overlap.
//   overlap_brute MODEL INPUT.bin K [safe]
// With `safe`, only the distances the rule allows (>= d below, >= e above)
// are tried: the others may make a kernel's memcpy overlap, which ASan stops
// (the tightness run turns ASan's intrinsic checks off).
// Prints "rule D tight T elem E out HEX": T is the smallest distance tried
// from which on every distance gives the non-overlapped output (X.off - T
// is the highest safe start found), HEX that output; before it, for a
// backward kernel, "up U tight V": V the smallest distance above from which
// on every one gives it; "unsafe DELTA" for each allowed distance (DELTA:
// how far below X, negative above) that gave another output; "none" when
// the rule allows no overlap; "error ..." otherwise.
//   overlap_brute MODEL INPUT.bin K patch [safe]
// The overlap inside a patch-based stage's patch buffer (engine/patch.c):
// every buffer of the arena apart, the patch buffer large enough, each op's
// output placed exactly its distance below its input in every patch, then
// op j's nudged from K bytes farther to K bytes nearer (in steps of the
// element size), each run compared with the run as planned (no nudge, the
// engine's own placement), the stage's output also compared with the engine's
// placement's in the larger buffer. Prints "patch op J rule-exact nudge N" for each
// op but the last: N the largest nudge tried up to which every nudge gave
// the planned output (0: the rule is tight); "unsafe op J NUDGE" for a
// nudge <= 0 that gave another output; then "patch ops N elem E out HEX".
#include <stdio.h>
#include <stdlib.h>

#include "engine/interpreter.h"
#include "engine/plan_heap.h"
#include "engine/overlap.h"
#include "engine/patch.h"
#include "engine/planner.h"
#include "read_file.h"

// The variable tensors' bytes after allocation (an LSTM's state), put back
// before every run so that each run starts as the first invoke does.
static uint8_t *variables_save(const tflm_interp_t *ip) {
    size_t total = 0;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        total += tflm_at_variable(r->where) ? r->bytes : 0;
    }
    uint8_t *saved = malloc(total + 1), *p = saved;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (tflm_at_variable(r->where)) {
            memcpy(p, tflm_interp_tensor_data(ip, r), r->bytes);
            p += r->bytes;
        }
    }
    return saved;
}

static void variables_restore(const tflm_interp_t *ip, const uint8_t *saved) {
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (tflm_at_variable(r->where)) {
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

// Runs with every head buffer where it is (the stage's buffers placed as
// set), the input copied in first; false on an error.
static bool run_as_placed(tflm_interp_t *ip, uint32_t x, const uint8_t *input, uint32_t top) {
    variables_restore(ip, saved_variables);
    memset(ip->arena->base, 0xa5, top);
    const tflm_tensor_rec_t *rx = tflm_interp_tensor(ip, x);
    memcpy(tflm_interp_tensor_data(ip, rx), input, rx->bytes);
    return tflm_interp_invoke(ip) == TFLM_OK;
}

// The patch mode (see the top): 0 when every nudge <= 0 gave the planned output.
static int patch_brute(tflm_interp_t *ip, const uint8_t *input, size_t input_len, int32_t k, bool safe_only,
    size_t arena_len) {
    tflm_patch_t *pt = &ip->patch;
    uint32_t x = tflm_interp_input(ip, 0), y = tflm_interp_output(ip, 0);
    const tflm_tensor_rec_t *rx = tflm_interp_tensor(ip, x), *ry = tflm_interp_tensor(ip, y);
    const uint32_t n_ops = (uint32_t)pt->split - pt->start; // the stage's operators
    if (pt->split == 0 || n_ops < 2 || input_len != rx->bytes || rx->where != TFLM_AT_HEAD) {
        printf("none\n");
        return 0;
    }
    const tflm_node_rec_t *end = tflm_interp_node(ip, pt->split - 1u); // subgraph 0's nodes come first
    tflm_tensor_rec_t *rb = tflm_interp_tensor_mut(ip, pt->scratch);
    const uint32_t elem = tflm_type_size(ry->type), planned = rb->bytes;
    saved_variables = variables_save(ip);
    // As planned: the engine's placement and buffers.
    uint8_t *want = malloc(ry->bytes);
    if (!run_as_placed(ip, x, input, ip->head_bytes)) {
        printf("error %s\n", ip->err.msg);
        free(want);
        return 1;
    }
    memcpy(want, tflm_interp_tensor_data(ip, ry), ry->bytes);
    // Every head buffer apart; the patch buffer room for the chain of maps
    // each below the one before, K bytes either way.
    rb->bytes = tflm_align_up((uint32_t)k, TFLM_ALIGN) + (n_ops + 1u) * (planned + (uint32_t)k) + TFLM_ALIGN;
    uint32_t top = 0;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, i);
        if (r->where == TFLM_AT_HEAD) {
            r->data = top;
            top += tflm_align_up(r->bytes, TFLM_ALIGN);
        }
    }
    if (top + ip->tail_bytes + 64 > arena_len) {
        printf("error too large\n");
        free(want);
        return 1;
    }
    tflm_interp_seal(ip);
    // The stage's output, where nothing overwrites it now: the engine's
    // placement in the larger buffer first.
    const tflm_tensor_rec_t *rs = tflm_interp_tensor(ip, tflm_interp_io(ip, end->io)[end->n_inputs]);
    uint8_t *stage = malloc(rs->bytes);
    if (!run_as_placed(ip, x, input, top) || memcmp(want, tflm_interp_tensor_data(ip, ry), ry->bytes) != 0) {
        printf("error the larger patch buffer changed the output %s\n", ip->err.msg);
        free(want);
        free(stage);
        return 1;
    }
    memcpy(stage, tflm_interp_tensor_data(ip, rs), rs->bytes);
    pt->test_exact = true;
    pt->test_base = tflm_align_up((uint32_t)k, TFLM_ALIGN);
    bool failed = false;
    for (uint32_t j = 0; j + 1 < n_ops && !failed; ++j) {
        int32_t clean = -k - (int32_t)elem;  // nudges up to this one all gave `want`
        bool broken = false;
        for (int32_t nudge = -(k / (int32_t)elem) * (int32_t)elem; nudge <= k; nudge += (int32_t)elem) {
            if (safe_only && nudge > 0) {
                break;
            }
            pt->test_op = (uint16_t)j;
            pt->test_nudge = nudge;
            if (!run_as_placed(ip, x, input, top)) {
                printf("error %s\n", ip->err.msg);
                failed = true;
                break;
            }
            bool same = memcmp(want, tflm_interp_tensor_data(ip, ry), ry->bytes) == 0
                && memcmp(stage, tflm_interp_tensor_data(ip, rs), rs->bytes) == 0;
            if (!same && nudge <= 0) {
                printf("unsafe op %u %d\n", (unsigned)j, (int)nudge);
                failed = true;
            }
            broken = broken || !same;
            clean = broken ? clean : nudge;
        }
        printf("patch op %u rule-exact nudge %d\n", (unsigned)j, (int)clean);
    }
    printf("patch ops %u elem %u out ", (unsigned)n_ops, (unsigned)elem);
    for (uint32_t i = 0; i < ry->bytes; ++i) {
        printf("%02x", want[i]);
    }
    printf("\n");
    free(want);
    free(stage);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    const bool patch = argc >= 5 && strcmp(argv[4], "patch") == 0;
    if (argc != 4 + patch && argc != 5 + patch) {
        fprintf(stderr, "usage: overlap_brute MODEL INPUT.bin K [patch] [safe]\n");
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
    cfg.plan_memory = tflm_plan_heap;
    tflm_arena_t arena;
    tflm_arena_init(&arena, arena_buf, arena_len);
    if (tflm_model_init(&model, model_buf, model_len, &err) || tflm_interp_init(&ip, &model, &arena, &cfg)) {
        printf("error %s %s\n", err.msg, ip.err.msg);
        goto done;
    }
    if (patch) {
        rc = patch_brute(&ip, input, input_len, k, argc == 6 && strcmp(argv[5], "safe") == 0, arena_len);
        goto done;
    }
    uint32_t x = tflm_interp_input(&ip, 0), y = tflm_interp_output(&ip, 0);
    tflm_tensor_rec_t *rx = tflm_interp_tensor_mut(&ip, x), *ry = tflm_interp_tensor_mut(&ip, y);
    if (input_len != rx->bytes || rx->where != TFLM_AT_HEAD || ry->where != TFLM_AT_HEAD) {
        printf("error input of %u bytes for %u\n", (unsigned)input_len, (unsigned)rx->bytes);
        goto done;
    }
    tflm_plan_rec_t *lives = calloc(ip.n_tensors + 1, sizeof(*lives));
    if (lives == NULL || tflm_interp_plan_records(&ip, lives) != TFLM_OK) {
        printf("error lifetimes %s\n", ip.err.msg);
        free(lives);
        goto done;
    }
    tflm_plan_view_t v = tflm_interp_plan_view(&ip, lives);
    tflm_overlap_t o;
    bool overlaps = tflm_overlap_distance(&v, y, x, &o);
    const uint32_t d = o.below;
    const int32_t up = o.up == TFLM_OVERLAP_NO_UP ? -1 : (int32_t)o.up;
    free(lives);
    if (!overlaps) {
        printf("none\n");
        rc = 0;
        goto done;
    }
    uint32_t elem = tflm_type_size(ry->type);
    uint32_t size_x = tflm_align_up(rx->bytes, TFLM_ALIGN), size_y = tflm_align_up(ry->bytes, TFLM_ALIGN);
    // X high enough for Y to start d + k below it; both below the other
    // buffers, with room for Y to start up to k above X (e + k backward).
    const uint32_t above = (uint32_t)k + (up >= 0 ? (uint32_t)up : 0u);
    uint32_t x_off = tflm_align_up(d + (uint32_t)k + size_y, TFLM_ALIGN);
    uint32_t scratch_at = tflm_align_up(x_off + size_x + size_y + above, TFLM_ALIGN);
    uint32_t top = scratch_at;
    // Every other head buffer (scratch, other inputs) above both.
    for (uint32_t i = 0; i < ip.n_tensors; ++i) {
        tflm_tensor_rec_t *r = tflm_interp_tensor_mut(&ip, i);
        if (r->where == TFLM_AT_HEAD && i != x && i != y) {
            r->data = top;
            top += tflm_align_up(r->bytes, TFLM_ALIGN);
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
    // Backward: from X.off + e + k down to X.off (Y starts -delta above X).
    if (up >= 0) {
        const int32_t farthest = (up + k) / (int32_t)elem * (int32_t)elem;
        int32_t tight_up = farthest + (int32_t)elem;  // every distance from it on gave `want`
        for (int32_t delta = -farthest; delta < 0; delta += (int32_t)elem) {
            if (safe_only && -delta < up) {
                break;
            }
            if (!run_at(&ip, x, y, x_off, (uint32_t)((int32_t)x_off - delta), input, top)) {
                printf("error %s\n", ip.err.msg);
                failed = true;
                break;
            }
            if (memcmp(want, tflm_interp_tensor_data(&ip, ry), ry->bytes) != 0) {
                if (-delta >= up) {
                    printf("unsafe %d\n", (int)delta);
                    failed = true;
                }
            } else if (tight_up == -delta + (int32_t)elem) {
                tight_up = -delta;
            }
        }
        printf("up %d tight %d\n", (int)up, (int)tight_up);
    }
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
