// Patch-based execution of a stage of a model (MCUNetV2's idea): operators
// `start` to `split` - 1 of subgraph 0 (the first ones, or those after a
// QUANTIZE of a float input, ...), a chain of operators whose kernels
// can run over part of a map (their window hooks, engine/kernel.h: today
// CONV_2D and DEPTHWISE_CONV_2D in int8 or float32, MAX_POOL_2D and
// AVERAGE_POOL_2D), run patch by patch over a grid of the stage's last output, so their
// intermediate feature maps are never held whole. Each patch computes, op by
// op, the region of each intermediate map it needs (its halo included) into
// one patch buffer; the stage's output is written whole. In the patch buffer
// each op's output may lie over its input by the row rule of whole maps
// (overlap.h) applied to the patch's windows: patch.c places each patch's
// maps in the smallest buffer that holds every patch so (patch_place).
// Outputs are bit-exact: each output element is computed by the same kernels
// with the same arithmetic (the same taps in the same order).
//
// Padding: a patch's buffers hold the part of each window inside the map,
// and each op runs over it as over a small tensor whose padding is what the
// window reaches outside the map (0 inside it): its kernel's run_window hook
// gives a copy of its data (on the stack) that geometry and runs its
// ordinary loops. The kernels skip those taps exactly as they skip padding
// on the whole map, so the ordinary row kernels (fast paths included)
// compute each output element with the same arithmetic as an unpatched run.
//
// In the records the stage is one operator: the intermediate tensors are not
// planned (TFLM_AT_NONE), the stage's last node runs the whole stage in its
// patch buffer (a scratch record of the stage's own, after every node's, so
// that the node records are the same with or without a schedule), its
// other nodes are skipped (tflm_patch_skips, tflm_patch_ends: from `split`,
// not from flags in the records), and the stage's inputs and the patch
// buffer live until its last node. The planners and the host's prediction
// follow. The stage's output may overlap its input when that dies at the
// stage, by a distance of the stage's own (overlap.h, patch.c's
// stage_overlap).
//
// Bands of rows (the schedule's `rows` mode): the grid is one column of
// bands of the stage's last output, and no halo is recomputed. Each op's
// output rows live in a buffer of their own in the patch buffer, which keeps
// the rows the next op's windows still need across bands; each band an op
// computes only its new rows, from the rows kept below them (a line buffer).
// The stage costs no extra MACs; its buffers hold whole rows of each map.
// Op 0 reads the stage's input in place (whole rows), the last op writes the
// stage's output. Bands may end in an op that reduces its whole input (its
// kernel's reduce hook: FULLY_CONNECTED), which takes each band's new rows
// as a slice of its input and keeps its sums after the buffers. In bands an
// op may read the stage's input or any earlier op's output (a residual
// block), and an element-wise op of two such maps may join (its kernel's
// span hook: ADD); each buffer keeps the rows all its readers still need.
//
// Patches keeping their halos (the schedule's `keep` mode): patches as
// above, run in rows of patches, but no op computes an element twice. Each
// patch, op by op, computes only the part of its output no patch before it
// computed; the part of its input window an earlier patch computed comes
// from two caches of that map: the rows the next row of patches shares
// (over the map's whole width) and the columns the next patch in the row
// shares (over the window's height). Each op's window is assembled from the
// caches and the new part into a tile, and the op runs over the tile as in
// patch mode (its kernel's run_window hook). The stage costs no extra MACs;
// its buffers hold each map's shared rows whole, which fine grids make
// cheap (the tiles shrink, the caches do not grow).
//
// Schedule (metadata "TflmPatchSchedule", written by `tflm-host prepare
// --max-extra-macs`, little-endian int32 words): magic "TFPS", version,
// split (the operator after the stage), grid rows, grid columns, start (the
// stage's first operator), mode (0: patches, 1: bands of rows keeping their
// halos, one grid column, 2: patches keeping their halos). The device
// derives everything else from the graph and checks it; a bad schedule is a
// ValueError. A model without one runs every operator whole. A build
// without stages (TFLM_PATCH=0, tflm_config.h) refuses a schedule with
// NotImplementedError.
#ifndef TFLM_ENGINE_PATCH_H
#define TFLM_ENGINE_PATCH_H

#include "kernel.h"

#define TFLM_PATCH_METADATA "TflmPatchSchedule"
#define TFLM_PATCH_MAGIC (0x53504654u) // "TFPS"
// 3: the mode word (2: patches only; 1: the stage from operator 0). Mode
// 2 came later within version 3: a firmware without it refuses the mode
// by its number (a ValueError), as it would a version it does not know.
#define TFLM_PATCH_VERSION (3)
#define TFLM_PATCH_WORDS (7)
#define TFLM_PATCH_MODE_PATCHES (0)
#define TFLM_PATCH_MODE_ROWS (1)
#define TFLM_PATCH_MODE_KEEP (2)
// At most this many operators in a stage, and patches along a side.
#define TFLM_PATCH_MAX_OPS (16)
#define TFLM_PATCH_MAX_GRID (64)
// At most this many rows in a map, and in a window, of a stage in bands of
// rows; rows and columns of a stage in patches keeping their halos.
#define TFLM_PATCH_MAX_ROWS (16383)
// A schedule's words after its magic and version, in the metadata's order.
// One given to the interpreter (tflm_config_t.stage: tflm.Interpreter's
// stage=) takes the place of the model's metadata, split 0 for no stage,
// and is checked as the metadata's is.
typedef struct {
    uint32_t split, grid_h, grid_w, start, mode;
} tflm_schedule_t;

typedef struct _tflm_patch_t {
    uint16_t start;      // the stage's first operator
    uint16_t split;      // the operator after the stage's last, 0: no stage
    uint16_t grid_h;     // patches along the rows and columns of the stage's output
    uint16_t grid_w;
    uint16_t scratch;    // record of its patch buffer (its only scratch buffer)
    uint8_t mode;        // TFLM_PATCH_MODE_PATCHES, _ROWS (bands of rows) or _KEEP (patches keeping their halos)
    bool given;          // the schedule is the caller's (tflm_config_t.stage), not the model's
    uint64_t macs;       // multiply-accumulates of the stage run by patches
    uint64_t whole_macs; // the same operators run whole
    // Overlapped placement (overlap.h) of the stage's output over its input
    // (record `input`), when that dies at the stage: the output may start
    // `overlap` bytes or more below it; set by tflm_patch_finish.
    bool overlaps;
    uint16_t input;
    uint32_t overlap;
    // Rows mode: where each op's buffer starts in the patch buffer (the
    // last op's: its sums, if it reduces), in TFLM_ALIGN units (so the
    // buffers before the last start within 1 MB: the build refuses more);
    // set by tflm_patch_finish, so that invoke() does not walk the bands to
    // size them again.
    uint16_t band_at[TFLM_PATCH_MAX_OPS];
#if TFLM_TEST_KERNELS
    // tests/engine/overlap_brute.c: each op's output exactly its distance
    // below its input in the patch buffer (op test_op's test_nudge bytes
    // nearer), the last op's input at test_base.
    bool test_exact;
    uint16_t test_op;
    int32_t test_nudge;
    uint32_t test_base;
#endif
} tflm_patch_t;

struct _tflm_interp_t;

// Reads the schedule of a model whose subgraph 0 has n_nodes operators, or
// takes `given` instead when not NULL: split 0 when there is none,
// ValueError when it is malformed.
tflm_status_t tflm_patch_find(tflm_model_t *m, uint32_t n_nodes, const tflm_schedule_t *given, tflm_patch_t *patch,
    tflm_error_t *err);

// What a stage's errors name: the model's metadata or the caller's stage.
static inline const char *tflm_patch_source(const tflm_patch_t *pt) {
    return pt->given ? "stage" : TFLM_PATCH_METADATA " metadata";
}

// Node `node` (numbered over all subgraphs: subgraph 0's come first) is one
// the stage runs at its last node, and is skipped by invoke(); or it is
// that last node, which runs the stage.
static inline bool tflm_patch_skips(const tflm_patch_t *pt, uint32_t node) {
    return TFLM_PATCH && node >= pt->start && node + 1u < pt->split;
}
static inline bool tflm_patch_ends(const tflm_patch_t *pt, uint32_t node) {
    return TFLM_PATCH && pt->split != 0 && node + 1u == pt->split;
}

#if TFLM_PATCH
// Real pass, all nodes built (the build reserved the patch buffer's record
// at `scratch`): checks the stage against the records and the kernels'
// data, sizes the patch buffer, unplans the intermediate tensors and sets
// the overlap distance of its output.
tflm_status_t tflm_patch_finish(struct _tflm_interp_t *ip);

// Runs the stage (invoke, at its last node, with that node's pointers).
tflm_status_t tflm_patch_run(struct _tflm_interp_t *ip, const tflm_eval_t *e);
#else
// A build without stages (TFLM_PATCH=0): tflm_patch_find() refuses every
// schedule, so split is always 0 and these are never called.
static inline tflm_status_t tflm_patch_finish(struct _tflm_interp_t *ip) {
    (void)ip;
    return TFLM_ERR_RUNTIME;
}
static inline tflm_status_t tflm_patch_run(struct _tflm_interp_t *ip, const tflm_eval_t *e) {
    (void)ip;
    (void)e;
    return TFLM_ERR_RUNTIME;
}
#endif

#endif // TFLM_ENGINE_PATCH_H
