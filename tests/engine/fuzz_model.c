// Mutation fuzzing of the model reader and the interpreter, built with
// AddressSanitizer and UBSan: every mutant of a real model must be rejected
// with an error or run to the end, never read or write out of bounds.
//
// Two kinds of mutants per model:
// - before loading: bytes flipped, words overwritten, the file truncated;
//   tflm_model_init() must reject them or everything after must hold;
// - after loading: the model is read from good bytes, then its buffer is
//   changed in place (a bytearray reused, a ROMFS region rewritten) before or
//   after the interpreter is built, and everything the binding does with a
//   model (tensor info, op names, missing ops, arena size, build, plan
//   picture, invoke) must still stay in bounds.
// Half of the mutations are structure-aware: they hit the words the reader
// follows (vector lengths, shapes, tensor and buffer indices, types, subgraph
// references, metadata) with edge values.
//
// Prepared models (their kernels' data in TflmPreparedData metadata, made by
// gen_models.py) are used in place whenever the bytes stay fixed once loaded
// (mutants before loading, and changes before the build); their entry table
// and data are spots too. Changes after the build use a writable model, as
// the binding marks a bytearray, whose data stays in the tail.
// Patch schedules (TflmPatchSchedule, engine/patch.h) are metadata words
// like the plans' and are mutated the same way.
// A prepared model's mutant is often prepared again in place afterwards
// (reprepare(): its kernel data, index lists and records derived from the
// mutated model by the engine's own export, as tflm-host prepare does, when
// they fit the metadata's bytes), so the checks of the prepared data pass
// and what follows them is fuzzed too; and its bytes are also changed after
// the build while marked rewritable (a ROMFS region rewritten), which the
// interpreter's seal must catch.
// Targeted attacks: operator outputs and subgraph inputs pointed at
// constant tensors, tensors pointed at metadata buffers (writes into the
// model's own bytes); the values of custom options (FlexBuffer maps: the
// signal ops' parameters) are spots too.
//
// For each unmutated model that this build can run, it also checks that the
// arena size is exact: arena_used_bytes works, 16 bytes less fails with a
// MemoryError giving that same number.
//
// Each case (mutant) draws from its own random stream, seeded by SEED and its
// number, so one case can be run alone (-c FIRST with ITERATIONS 1) and a
// long run split into ranges across processes (tests/engine/fuzz.py).
// A WHILE loop that never ends (a mutated count, as TFLM's would run forever)
// is stopped through the interpreter's interrupt hook after it was asked
// 100,000 times (before each operator and at each return from a subgraph),
// as a user's interrupt would stop it (a RuntimeError).
// A case taking longer than -t SECONDS (default 20) is a hang: the process
// says which case and exits with status 3 (the timer is armed per case).
// The case under way is kept in the file FUZZ_PROGRESS names, for the
// driver to name it when a sanitizer stops the process; -w DIR writes each
// case's mutant there (to keep a crasher, replayed with -r).
//   fuzz_model [-q] [-c FIRST] [-t SECONDS] [-w DIR] ITERATIONS SEED MODEL...
//       (-q: one line for all models)
//   fuzz_model -r FILE...   (each file loaded, built and invoked as it is)
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "engine/interpreter.h"
#include "engine/plan_heap.h"
#include "engine/prepared.h"
#include "engine/schema.h"
#include "read_file.h"


static uint64_t rng_state;

// The stream of case `i` of a run seeded with `seed` (splitmix64 of both).
static void rng_case(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + (i + 1) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    rng_state = (z ^ (z >> 31)) | 1; // xorshift needs a nonzero state
}

static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

// ---------------------------------------------------------------------------
// The model's structure: positions of the words the reader follows.

typedef enum { SPOT_U32, SPOT_U8 } spot_kind_t;

typedef struct {
    uint32_t pos;
    uint8_t kind;
} spot_t;

typedef struct {
    uint32_t pos;
    uint32_t value;
} target_t;

typedef struct {
    spot_t *spots;
    uint32_t n, cap;
    // Targeted attacks: a word at `pos` set to `value` (an operator output
    // made a constant, a tensor's buffer made a metadata buffer).
    target_t *targets;
    uint32_t n_targets, targets_cap;
} spots_t;

static void target(spots_t *s, uint32_t pos, uint32_t value) {
    if (pos == 0 || s->n_targets >= 4096) {
        return;
    }
    if (s->n_targets == s->targets_cap) {
        s->targets_cap = s->targets_cap ? 2 * s->targets_cap : 64;
        s->targets = realloc(s->targets, s->targets_cap * sizeof(target_t));
    }
    s->targets[s->n_targets].pos = pos;
    s->targets[s->n_targets].value = value;
    s->n_targets++;
}

static void spot(spots_t *s, uint32_t pos, spot_kind_t kind) {
    if (pos == 0) {
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->spots = realloc(s->spots, s->cap * sizeof(spot_t));
    }
    s->spots[s->n].pos = pos;
    s->spots[s->n].kind = (uint8_t)kind;
    s->n++;
}

// A vector's length word and (up to a few of) its int32 elements.
static void spot_vec(spots_t *s, tflm_fb_vec_t v, bool elements) {
    if (v.pos == 0) {
        return;
    }
    spot(s, v.pos - 4, SPOT_U32);
    for (uint32_t i = 0; elements && i < v.count && i < 16; ++i) {
        spot(s, v.pos + 4 * i, SPOT_U32);
    }
}

static void spot_field(spots_t *s, tflm_model_t *m, uint32_t table, unsigned field, spot_kind_t kind) {
    spot(s, tflm_fb_field(&m->fb, table, field, kind == SPOT_U8 ? 1 : 4), kind);
}

// The values of a custom options FlexBuffer map (the root: its byte width
// last, its packed type before it; the values vector's width from that
// type, the entry count in the word before the values, a packed type per
// value after them): the low bytes of each value and each type byte.
static void spot_flex_map(spots_t *s, const uint8_t *buf, tflm_fb_vec_t opts) {
    const uint8_t *p = buf + opts.pos;
    uint32_t len = opts.count;
    if (len < 3) {
        return;
    }
    uint32_t root_width = p[len - 1], width = 1u << (p[len - 2] & 3);
    if ((root_width != 1 && root_width != 2 && root_width != 4) || root_width > len - 2) {
        return;
    }
    uint32_t root = len - 2 - root_width, off = 0;
    for (uint32_t i = 0; i < root_width; ++i) {
        off |= (uint32_t)p[root + i] << (8 * i);
    }
    if (off > root || root - off < 3 * width || width > 4) {
        return;
    }
    uint32_t values = root - off, count = 0;
    for (uint32_t i = 0; i < width; ++i) {
        count |= (uint32_t)p[values - width + i] << (8 * i);
    }
    for (uint32_t i = 0; i < count && i < 16 && values + count * width + count <= len; ++i) {
        spot(s, opts.pos + values + i * width, SPOT_U8);
        if (width > 1) {
            spot(s, opts.pos + values + i * width + 1, SPOT_U8);
        }
        spot(s, opts.pos + values + count * width + i, SPOT_U8); // its packed type
    }
}

// Whether tensor i of a subgraph is a constant (its buffer holds data).
static bool is_constant_tensor(tflm_model_t *m, const tflm_subgraph_t *sg, uint32_t i) {
    tflm_model_tensor_t t;
    uint32_t pos, len;
    return tflm_model_tensor(m, sg, i, &t) && !t.is_variable && tflm_model_buffer(m, t.buffer, &pos, &len) && len;
}

// Targeted attacks on subgraph `sg`: its operators' outputs and its inputs
// made constants (up to a few constants each), its tensors' buffers made
// the metadata's.
static void target_writes(spots_t *s, tflm_model_t *m, const tflm_subgraph_t *sg) {
    uint32_t constants[4], n_const = 0;
    for (uint32_t i = 0; i < sg->tensors.count && n_const < 4; ++i) {
        if (is_constant_tensor(m, sg, i)) {
            constants[n_const++] = i;
        }
    }
    for (uint32_t c = 0; c < n_const; ++c) {
        for (uint32_t k = 0; k < sg->inputs.count && k < 4; ++k) {
            target(s, sg->inputs.pos + 4 * k, constants[c]);
        }
        for (uint32_t i = 0; i < sg->operators.count && i < 64; ++i) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, sg, i, &op)) {
                return;
            }
            for (uint32_t k = 0; k < op.outputs.count && k < 4; ++k) {
                target(s, op.outputs.pos + 4 * k, constants[c]);
            }
        }
    }
    for (uint32_t md = 0; md < m->metadata.count; ++md) {
        uint32_t b = tflm_fb_u32(&m->fb, tflm_fb_vec_table(&m->fb, m->metadata, md), TFLM_METADATA_BUFFER, 0);
        for (uint32_t i = 0; i < sg->tensors.count && i < 64; ++i) {
            tflm_model_tensor_t t;
            if (tflm_model_tensor(m, sg, i, &t)) {
                target(s, tflm_fb_field(&m->fb, t.table, TFLM_TENSOR_BUFFER, 4), b);
            }
        }
    }
}

static void map_model(tflm_model_t *m, spots_t *s) {
    tflm_fb_t *fb = &m->fb;
    spot_vec(s, m->opcodes, false);
    spot_vec(s, m->subgraphs, true);
    spot_vec(s, m->buffers, false);
    spot_vec(s, m->metadata, true);
    for (uint32_t i = 0; i < m->opcodes.count; ++i) {
        uint32_t t = tflm_fb_vec_table(fb, m->opcodes, i);
        spot_field(s, m, t, TFLM_OPCODE_DEPRECATED_BUILTIN_CODE, SPOT_U8);
        spot_field(s, m, t, TFLM_OPCODE_BUILTIN_CODE, SPOT_U32);
    }
    for (uint32_t i = 0; i < m->buffers.count; ++i) {
        uint32_t b = tflm_fb_vec_table(fb, m->buffers, i);
        spot_vec(s, tflm_fb_vector(fb, b, TFLM_BUFFER_DATA, 1), false);
    }
    for (uint32_t i = 0; i < m->metadata.count; ++i) {
        uint32_t md = tflm_fb_vec_table(fb, m->metadata, i);
        spot_field(s, m, md, TFLM_METADATA_BUFFER, SPOT_U32);
        uint32_t pos, len;
        uint32_t b = tflm_fb_u32(fb, md, TFLM_METADATA_BUFFER, 0);
        if (tflm_model_buffer(m, b, &pos, &len)) {
            for (uint32_t k = 0; k + 4 <= len && k < 64; k += 4) {
                spot(s, pos + k, SPOT_U32); // offline plan header and offsets
            }
            if (tflm_fb_string_eq(fb, md, TFLM_METADATA_NAME, TFLM_PREPARED_METADATA)) {
                // Prepared data: the rest of its entry table, then words of the data.
                uint32_t table_end = len >= 12 ? 4 * TFLM_PREPARED_HEADER_WORDS + 8 * tflm_rd_u32(fb->buf + pos + 8) : 0;
                for (uint32_t k = 64, n = 0; k + 4 <= len && n < 256; k += k < table_end ? 4 : 12, ++n) {
                    spot(s, pos + k, SPOT_U32);
                }
                // Its index lists, entry pairs from the start.
                uint32_t lists = len >= 16 ? tflm_rd_u32(fb->buf + pos + 12) : len;
                for (uint32_t k = lists, n = 0; k < len && len - k >= 4 && n < 64; k += 4, ++n) {
                    spot(s, pos + k, SPOT_U32);
                }
                // Its records map and the constants' records after it.
                uint32_t recs = len >= 20 ? tflm_rd_u32(fb->buf + pos + 16) : len;
                for (uint32_t k = recs, n = 0; k < len && len - k >= 4 && n < 128; k += 4, ++n) {
                    spot(s, pos + k, SPOT_U32);
                }
            }
        }
    }
    for (uint32_t g = 0; g < m->subgraphs.count; ++g) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, g, &sg)) {
            return;
        }
        spot_vec(s, sg.tensors, false);
        spot_vec(s, sg.inputs, true);
        spot_vec(s, sg.outputs, true);
        spot_vec(s, sg.operators, false);
        for (uint32_t i = 0; i < sg.tensors.count; ++i) {
            tflm_model_tensor_t t;
            if (!tflm_model_tensor(m, &sg, i, &t)) {
                return;
            }
            spot_vec(s, t.shape, true);
            spot_field(s, m, t.table, TFLM_TENSOR_TYPE, SPOT_U8);
            spot_field(s, m, t.table, TFLM_TENSOR_BUFFER, SPOT_U32);
            spot_field(s, m, t.table, TFLM_TENSOR_IS_VARIABLE, SPOT_U8);
            spot_vec(s, t.scale, false);
            spot_vec(s, t.zero_point, false);
            uint32_t q = tflm_fb_table(fb, t.table, TFLM_TENSOR_QUANTIZATION);
            spot_field(s, m, q, TFLM_QUANT_QUANTIZED_DIMENSION, SPOT_U32);
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, &sg, i, &op)) {
                return;
            }
            spot_field(s, m, op.table, TFLM_OPERATOR_OPCODE_INDEX, SPOT_U32);
            spot_field(s, m, op.table, TFLM_OPERATOR_BUILTIN_OPTIONS_TYPE, SPOT_U8);
            spot_vec(s, op.inputs, true);
            spot_vec(s, op.outputs, true);
            spot_vec(s, op.intermediates, true);
            spot_flex_map(s, fb->buf, op.custom_options);
            // Options: every scalar field of the table (strides, axes,
            // subgraph indices of control-flow ops, activation codes).
            for (unsigned f = 0; op.options && f < 12; ++f) {
                spot_field(s, m, op.options, f, SPOT_U32);
                spot_vec(s, tflm_fb_vector(fb, op.options, f, 4), true);
            }
        }
        target_writes(s, m, &sg);
    }
}

// ---------------------------------------------------------------------------
// Mutations

static const uint32_t edges[] = {
    0, 1, 2, 3, 4, 7, 8, 9, 16, 64, 200, 255, 256, 0xffffu, 0x10000u, 0x7fffffffu, 0x80000000u, 0xffffffffu,
    0xfffffffeu, 0xffffff00u,
};

static uint32_t edge_value(uint32_t old) {
    switch (rnd() % 4) {
        case 0:
            return old + 1;
        case 1:
            return old - 1;
        case 2:
            return old ^ (1u << (rnd() % 32));
        default:
            return edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
    }
}

// A structure-aware mutation at one of the model's spots.
static void mutate_spot(uint8_t *buf, size_t n, const spots_t *s) {
    const spot_t *sp = &s->spots[rnd() % s->n];
    if (sp->kind == SPOT_U8) {
        if (sp->pos < n) {
            buf[sp->pos] = (uint8_t)edge_value(buf[sp->pos]);
        }
    } else if (sp->pos + 4 <= n) {
        uint32_t v;
        memcpy(&v, buf + sp->pos, 4);
        v = edge_value(v);
        memcpy(buf + sp->pos, &v, 4);
    }
}

// A blind mutation; truncation only when `resize`.
static void mutate_blind(uint8_t *buf, size_t *len, bool resize) {
    size_t n = *len;
    if (n < 8) {
        return; // already truncated to nothing
    }
    switch (rnd() % (resize ? 5 : 4)) {
        case 0: // flip a few bytes
            for (uint32_t k = 1 + rnd() % 4; k; --k) {
                buf[rnd() % n] ^= (uint8_t)(1 + rnd() % 255);
            }
            break;
        case 1: { // random word at an aligned offset: offsets, lengths, indices
            size_t at = (rnd() % (n / 4)) * 4;
            uint32_t v = rnd();
            memcpy(buf + at, &v, 4);
            break;
        }
        case 2: { // an edge value at an aligned offset
            size_t at = (rnd() % (n / 4)) * 4;
            uint32_t v = edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
            memcpy(buf + at, &v, 4);
            break;
        }
        case 3: { // small nudge of a 16-bit value (vtable entries)
            size_t at = (rnd() % (n / 2)) * 2;
            uint16_t v;
            memcpy(&v, buf + at, 2);
            v = (uint16_t)(v + (rnd() % 2 ? 4 : (uint16_t)-4));
            memcpy(buf + at, &v, 2);
            break;
        }
        default: // truncate
            *len = rnd() % n;
            break;
    }
}

// A targeted attack (target_t).
static void mutate_target(uint8_t *buf, size_t n, const spots_t *s) {
    const target_t *t = &s->targets[rnd() % s->n_targets];
    if (t->pos + 4 <= n) {
        memcpy(buf + t->pos, &t->value, 4);
    }
}

static void mutate(uint8_t *buf, size_t *len, const spots_t *s, bool resize) {
    for (uint32_t k = 1 + (rnd() % 3 == 0); k; --k) {
        if (s->n_targets && rnd() % 8 == 0) {
            mutate_target(buf, *len, s);
        } else if (s->n && rnd() % 2) {
            mutate_spot(buf, *len, s);
        } else {
            mutate_blind(buf, len, resize);
        }
    }
}

// ---------------------------------------------------------------------------
// Prepared again in place: what tflm-host prepare writes (the engine's own
// writer, engine/prepared.h), derived from the mutant
// by the engine's own export, over the mutant's TflmPreparedData when it
// has exactly that many bytes. The device's checks of it then pass.

typedef struct {
    uint32_t n_nodes;
    uint8_t **blob;      // each node's data (NULL: none or run-time state)
    uint32_t *blob_len;
    uint8_t *lists;      // the index lists, each padded to 4 bytes
    uint32_t lists_len, lists_cap;
} export_t;

static void export_data(void *ctx, uint32_t node, const void *data, uint32_t bytes, bool state) {
    export_t *ex = ctx;
    if (node >= ex->n_nodes || state || ex->blob[node]) {
        return;
    }
    ex->blob[node] = malloc(bytes ? bytes : 1);
    memcpy(ex->blob[node], data, bytes);
    ex->blob_len[node] = bytes;
}

static void export_list(void *ctx, const uint16_t *list, uint32_t n) {
    export_t *ex = ctx;
    uint32_t padded = tflm_prepared_put_list(NULL, list, n);
    if (padded == 0) {
        return;
    }
    if (ex->lists_len + padded > ex->lists_cap) {
        ex->lists_cap = 2 * (ex->lists_len + padded) + 64;
        ex->lists = realloc(ex->lists, ex->lists_cap);
    }
    tflm_prepared_put_list(ex->lists + ex->lists_len, list, n);
    ex->lists_len += padded;
}

static bool reprepare(uint8_t *buf, size_t len) {
    tflm_model_t m;
    tflm_error_t err;
    if (tflm_model_init(&m, buf, len, &err) != TFLM_OK) {
        return false;
    }
    uint32_t mb = tflm_model_metadata(&m, TFLM_PREPARED_METADATA), md_pos, md_len;
    if (mb == UINT32_MAX || !tflm_model_buffer(&m, mb, &md_pos, &md_len) || md_len == 0) {
        return false;
    }
    export_t ex;
    memset(&ex, 0, sizeof(ex));
    for (uint32_t s = 0; s < m.subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(&m, s, &sg)) {
            return false;
        }
        ex.n_nodes += sg.operators.count;
    }
    ex.blob = calloc(ex.n_nodes + 1, sizeof(uint8_t *));
    ex.blob_len = calloc(ex.n_nodes + 1, sizeof(uint32_t));
    tflm_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.plan_memory = tflm_plan_heap;
    cfg.kernel_data = export_data;
    cfg.index_list = export_list;
    cfg.kernel_data_ctx = &ex;
    uint32_t tail, work;
    bool done = false;
    uint8_t *out = NULL;
    if (tflm_interp_tail_size(&m, &cfg, &tail, &work, &err) == TFLM_OK && work < (64u << 20)) {
        size_t work_len = (size_t)work + TFLM_ALIGN;
        uint8_t *w = malloc(work_len);
        static tflm_interp_t measured;
        if (tflm_interp_measure(&m, &cfg, w, work_len, &measured) == TFLM_OK) {
            uint8_t *map = malloc(2 * (size_t)measured.map.n_model + 2);
            uint8_t *recs = malloc((size_t)tflm_prepared_records(&measured, w, work_len, NULL) + 1);
            for (uint32_t i = 0; i < measured.map.n_model; ++i) {
                uint16_t rec = (uint16_t)tflm_interp_rec_of(&measured, i);
                memcpy(map + 2 * i, &rec, 2);
            }
            tflm_prepared_parts_t parts = {
                .n_nodes = ex.n_nodes, .data = (const uint8_t *const *)ex.blob, .data_bytes = ex.blob_len,
                .lists = ex.lists, .lists_bytes = ex.lists_len,
                .map = map, .map_bytes = 2 * measured.map.n_model,
                .consts = (const uint8_t *)measured.consts,
                .consts_bytes = measured.n_const * (uint32_t)sizeof(tflm_tensor_rec_t),
                .records = recs,
                .records_bytes = tflm_prepared_records(&measured, w, work_len, recs),
            };
            uint32_t total = tflm_prepared_size(&parts);
            if (total != 0 && total == md_len) {
                out = malloc(total);
                tflm_prepared_write(&parts, out);
                memcpy(buf + md_pos, out, total);
                done = true;
            }
            free(map);
            free(recs);
        }
        free(w);
    }
    for (uint32_t k = 0; k < ex.n_nodes; ++k) {
        free(ex.blob[k]);
    }
    free(ex.blob);
    free(ex.blob_len);
    free(ex.lists);
    free(out);
    return done;
}

// ---------------------------------------------------------------------------
// What the binding does with a model, in order.

static tflm_interp_t ip;

static void plan_line(void *ctx, const char *text, size_t len) {
    size_t *total = ctx;
    *total += len + (text[0] == '\0'); // reads the whole line
}

// Reads every tensor of subgraph 0 as Model.tensor() does, and the op names.
static void read_model_info(tflm_model_t *m) {
    tflm_subgraph_t sg;
    if (!tflm_model_subgraph(m, 0, &sg)) {
        return;
    }
    volatile uint64_t sink = 0;
    for (uint32_t i = 0; i < sg.tensors.count; ++i) {
        tflm_model_tensor_t t;
        if (!tflm_model_tensor(m, &sg, i, &t)) {
            return;
        }
        int32_t dims[TFLM_MAX_DIMS];
        for (uint32_t d = 0; d < t.shape.count; ++d) {
            dims[d] = tflm_fb_vec_i32(&m->fb, t.shape, d);
            sink += (uint64_t)dims[d];
        }
        sink += t.scale.count ? (uint64_t)(tflm_fb_vec_f32(&m->fb, t.scale, 0) != 0.0f) : 0;
        sink += t.zero_point.count ? (uint64_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0) : 0;
        for (uint32_t k = 0; k < t.name.count; ++k) {
            sink += m->fb.buf[t.name.pos + k];
        }
    }
    for (uint32_t i = 0; i < sg.operators.count; ++i) {
        tflm_model_op_t op;
        tflm_fb_vec_t custom = { 0, 0 };
        if (!tflm_model_op(m, &sg, i, &op)) {
            return;
        }
        tflm_model_opcode(m, op.opcode_index, &custom);
        for (uint32_t k = 0; k < custom.count; ++k) {
            sink += m->fb.buf[custom.pos + k];
        }
    }
    char name[72];
    for (uint32_t n = 0; tflm_interp_missing_op(m, n, name, sizeof(name)); ++n) {
        sink += (uint64_t)name[0];
    }
    (void)sink;
}

// A mutant's WHILE loop may never end (TFLM's would not either): an invoke
// stops after this many returns from subgraphs.
#define SUBGRAPH_RETURNS (100000u)
static uint32_t subgraph_returns;

static bool loop_budget(void *ctx) {
    (void)ctx;
    return ++subgraph_returns > SUBGRAPH_RETURNS;
}

// Fills the inputs, invokes and reads the outputs and the plan picture, as
// predict() does: the seal checked before any record is followed.
static tflm_status_t run(tflm_interp_t *p) {
    subgraph_returns = 0;
    p->interrupt = loop_budget;
    tflm_status_t st = tflm_interp_verify(p);
    if (st != TFLM_OK) {
        return st;
    }
    for (uint32_t i = 0; i < tflm_interp_num_inputs(p); ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(p, tflm_interp_input(p, i));
        uint8_t *d = tflm_interp_tensor_data(p, r);
        for (uint32_t k = 0; d && k < r->bytes; ++k) {
            d[k] = (uint8_t)rnd();
        }
    }
    st = tflm_interp_run(p);
    volatile uint32_t sink = 0;
    for (uint32_t o = 0; o < tflm_interp_num_outputs(p); ++o) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(p, tflm_interp_output(p, o));
        const uint8_t *d = tflm_interp_tensor_data(p, r);
        for (uint32_t k = 0; d && k < r->bytes; ++k) {
            sink += d[k];
        }
    }
    size_t total = 0;
    tflm_plan_rec_t *lives = calloc(p->n_tensors + 1, sizeof(*lives));
    if (lives != NULL && tflm_interp_plan_records(p, lives) == TFLM_OK) {
        tflm_interp_memory_plan(p, lives, 80, plan_line, &total);
    }
    free(lives);
    (void)sink;
    return st;
}

// Builds an interpreter as tflm.Interpreter(model) does: measured first in a
// buffer of the tail's size, then in an arena of exactly the needed bytes
// (capped by `arena_len`), so AddressSanitizer sees any access past either.
// One build in eight is given a stage of its own (tflm.Interpreter's
// stage=) instead of the model's schedule, over the first operators of any
// model: most such stages are refused, some run.
static tflm_status_t build(tflm_model_t *m, size_t arena_len, uint8_t **arena_buf, uint32_t *needed) {
    tflm_config_t cfg = { 0 };  // the default planner: offline plans in the metadata too
    cfg.plan_memory = tflm_plan_heap;
    tflm_schedule_t stage;
    if (rnd() % 8 == 0) {
        stage.start = rnd() % 6;
        stage.split = rnd() % 8 == 0 ? 0 : stage.start + 1 + rnd() % 8;
        stage.mode = rnd() % 3;
        stage.grid_h = 1 + rnd() % 12;
        stage.grid_w = stage.mode == TFLM_PATCH_MODE_ROWS && rnd() % 4 ? 1 : 1 + rnd() % 12;
        cfg.stage = &stage;
    }
    tflm_error_t err;
    tflm_error_clear(&err);
    uint32_t tail_bytes, work_bytes;
    tflm_status_t st = tflm_interp_tail_size(m, &cfg, &tail_bytes, &work_bytes, &err);
    if (st == TFLM_OK && work_bytes < arena_len) {
        size_t work_len = work_bytes + TFLM_ALIGN;
        uint8_t *work = malloc(work_len);
        static tflm_interp_t measured;
        st = tflm_interp_measure(m, &cfg, work, work_len, &measured);
        free(work);
        if (st == TFLM_OK && tflm_interp_needed_bytes(&measured) < arena_len) {
            arena_len = tflm_interp_needed_bytes(&measured) + TFLM_ALIGN;
        }
    }
    *arena_buf = malloc(arena_len ? arena_len : 1);
    tflm_arena_t *arena = malloc(sizeof(tflm_arena_t));
    tflm_arena_init(arena, *arena_buf, arena_len);
    st = tflm_interp_init(&ip, m, arena, &cfg);
    if (st == TFLM_OK) {
        *needed = tflm_interp_needed_bytes(&ip);
    } else {
        free(arena);
        if (st == TFLM_ERR_MEMORY) {
            *needed = ip.err.needed;
        }
    }
    return st;
}

static void unbuild(uint8_t *arena_buf) {
    if (ip.ready) {
        free(ip.arena);
        ip.ready = false;
    }
    free(arena_buf);
}

// Loads, allocates (in an arena of at most arena_len bytes) and invokes.
static tflm_status_t try_model(const uint8_t *data, size_t len, size_t arena_len, uint32_t *needed) {
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data, len);
    tflm_error_t err;
    tflm_error_clear(&err);
    tflm_model_t model;
    tflm_status_t st = tflm_model_init(&model, copy, len, &err);
    model.immutable = true; // bytes that stay as they were loaded: prepared data in place
    model.rewritable = rnd() % 2; // checked before each invoke (a ROMFS file), or not (bytes)
    if (st == TFLM_OK) {
        read_model_info(&model);
        uint8_t *arena_buf;
        st = build(&model, arena_len, &arena_buf, needed);
        if (st == TFLM_OK) {
            st = run(&ip);
        }
        unbuild(arena_buf);
    }
    free(copy);
    return st;
}

// Exactness of the arena size: an arena of exactly `used` bytes works, 16
// bytes less fails asking for `used`.
static bool arena_exact(const uint8_t *data, size_t len, uint32_t used) {
    tflm_status_t st[2];
    uint32_t needed[2] = { 0, 0 };
    for (int k = 0; k < 2; ++k) {
        uint8_t *copy = malloc(len);
        memcpy(copy, data, len);
        tflm_error_t err;
        tflm_model_t model;
        tflm_model_init(&model, copy, len, &err);
        model.immutable = true;
        size_t arena_len = used - 16u * (uint32_t)k;
        uint8_t *arena_buf = malloc(arena_len);
        tflm_arena_t arena;
        tflm_arena_init(&arena, arena_buf, arena_len);
        tflm_config_t cfg = { 0 };
        cfg.plan_memory = tflm_plan_heap;
        st[k] = tflm_interp_init(&ip, &model, &arena, &cfg);
        needed[k] = ip.err.needed;
        if (st[k] == TFLM_ERR_MEMORY && needed[k] == 0) {
            // As the binding does when prepare()'s temporaries did not fit:
            // the model measured in a buffer of its own.
            uint32_t tail, work;
            tflm_error_t e2;
            if (tflm_interp_tail_size(&model, &cfg, &tail, &work, &e2) == TFLM_OK) {
                uint8_t *w = malloc(work + TFLM_ALIGN);
                static tflm_interp_t measured;
                if (tflm_interp_measure(&model, &cfg, w, work + TFLM_ALIGN, &measured) == TFLM_OK) {
                    needed[k] = tflm_interp_needed_bytes(&measured);
                }
                free(w);
            }
        }
        ip.ready = false;
        free(arena_buf);
        free(copy);
    }
    return st[0] == TFLM_OK && st[1] == TFLM_ERR_MEMORY && needed[1] == used;
}

// Flips a few bytes of the interpreter's tail in the arena (a write to
// Arena.buffer between calls).
static void scribble_tail(const tflm_interp_t *p) {
    if (!p->ready || p->tail_bytes == 0) {
        return;
    }
    uint8_t *tail = p->arena->base + p->tail_at;
    for (uint32_t k = 1 + rnd() % 4; k; --k) {
        tail[rnd() % p->tail_bytes] ^= (uint8_t)(1 + rnd() % 255);
    }
}

// The model read from good bytes, then changed: before the interpreter is
// built (`when` 0), or after it (1: invoke the old interpreter, then build a
// new one from the changed bytes), or the interpreter's records in the arena
// changed after it was built (2).
static tflm_status_t try_after_load(const uint8_t *orig, size_t len, const spots_t *s, int when) {
    uint8_t *buf = malloc(len);
    memcpy(buf, orig, len);
    tflm_error_t err;
    tflm_model_t model;
    tflm_status_t st = tflm_model_init(&model, buf, len, &err);
    // Bytes changed after the build: a writable buffer, or a read-only one
    // that can still change (a ROMFS region rewritten: prepared data in
    // place, sealed).
    model.immutable = when != 1 || rnd() % 2;
    model.rewritable = when == 1 && model.immutable;
    size_t n = len;
    uint32_t needed = 0;
    if (st == TFLM_OK && when == 0) {
        mutate(buf, &n, s, false);
        read_model_info(&model);
        uint8_t *arena_buf;
        st = build(&model, 256 * 1024, &arena_buf, &needed);
        if (st == TFLM_OK) {
            st = run(&ip);
        }
        unbuild(arena_buf);
    } else if (st == TFLM_OK && when == 2) {
        uint8_t *arena_buf;
        st = build(&model, 256 * 1024, &arena_buf, &needed);
        if (st == TFLM_OK) {
            run(&ip);
            scribble_tail(&ip);
            st = run(&ip);
            run(&ip); // refuses again, or runs
        }
        unbuild(arena_buf);
    } else if (st == TFLM_OK) {
        uint8_t *arena_buf;
        st = build(&model, 256 * 1024, &arena_buf, &needed);
        mutate(buf, &n, s, false);
        if (st == TFLM_OK) {
            st = run(&ip);
        }
        unbuild(arena_buf);
        read_model_info(&model);
        st = build(&model, 256 * 1024, &arena_buf, &needed);
        if (st == TFLM_OK) {
            st = run(&ip);
        }
        unbuild(arena_buf);
    }
    free(buf);
    return st;
}

// ---------------------------------------------------------------------------
// The case under way: kept in the file named by FUZZ_PROGRESS (for
// tests/engine/fuzz.py to name the case when a sanitizer stops the process),
// named on stderr when it hangs.

static const char *case_model = "";
static long case_index = -1;
static unsigned long long case_seed;
static bool case_after_load; // the good bytes loaded, then changed
static int progress_fd = -1;
static const char *write_dir; // -w: each case's mutant written there

static void case_begin(long i, bool after_load) {
    case_index = i;
    case_after_load = after_load;
    if (progress_fd >= 0) {
        char line[300];
        int n = snprintf(line, sizeof(line), "%s %ld %d\n", case_model, i, after_load ? 1 : 0);
        memset(line + n, ' ', sizeof(line) - (size_t)n); // overwrites a longer line before
        if (pwrite(progress_fd, line, sizeof(line), 0) < 0) {
            progress_fd = -1;
        }
    }
}

static void write_case(const uint8_t *bytes, size_t len) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s-%ld.tflite", write_dir, case_model, case_index);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(bytes, 1, len, f);
        fclose(f);
    }
}

static void on_alarm(int sig) {
    (void)sig;
    char line[512];
    int n = snprintf(line, sizeof(line), "@HANG %s case %ld%s (again: fuzz_model -c %ld 1 %llu MODEL)\n", case_model,
                     case_index, case_after_load ? " changed after loading" : "", case_index, case_seed);
    if (write(2, line, (size_t)n) < 0) {
        _exit(4);
    }
    _exit(3);
}

static unsigned case_timeout = 20;

static void arm_timer(unsigned seconds) {
    struct itimerval t = { { 0, 0 }, { (time_t)seconds, 0 } };
    setitimer(ITIMER_REAL, &t, NULL);
}

static void print_outcomes(const unsigned *n) {
    printf("%u ran, %u ValueError, %u MemoryError, %u NotImplementedError, %u RuntimeError", n[0], n[1], n[2], n[3], n[4]);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// -r: every file as it is (the regression cases under tests/fuzz/crashers).
static int replay(int argc, char **argv) {
    unsigned outcomes[5] = { 0 };
    for (int i = 0; i < argc; ++i) {
        size_t len;
        uint8_t *data = read_file(argv[i], &len);
        if (!data) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        case_model = argv[i];
        case_begin(0, false);
        rng_case(1, 0);
        arm_timer(case_timeout);
        uint32_t needed;
        tflm_status_t st = try_model(data, len, 1u << 20, &needed);
        arm_timer(0);
        outcomes[st < 5 ? st : 4]++;
        free(data);
    }
    printf("%d files replayed: ", argc);
    print_outcomes(outcomes);
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    if (getenv("FUZZ_PROGRESS")) {
        progress_fd = open(getenv("FUZZ_PROGRESS"), O_WRONLY | O_CREAT, 0644);
    }
    bool quiet = false;
    long first = 0;
    while (argc > 1 && argv[1][0] == '-') {
        if (strcmp(argv[1], "-q") == 0) {
            quiet = true;
        } else if (strcmp(argv[1], "-c") == 0 && argc > 2) {
            first = strtol(argv[2], NULL, 0);
            argv++, argc--;
        } else if (strcmp(argv[1], "-t") == 0 && argc > 2) {
            case_timeout = (unsigned)strtoul(argv[2], NULL, 0);
            argv++, argc--;
        } else if (strcmp(argv[1], "-w") == 0 && argc > 2) {
            write_dir = argv[2];
            argv++, argc--;
        } else if (strcmp(argv[1], "-r") == 0) {
            return replay(argc - 2, argv + 2);
        } else {
            break;
        }
        argv++, argc--;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz_model [-q] [-c FIRST] [-t SECONDS] ITERATIONS SEED MODEL...\n"
                        "       fuzz_model [-t SECONDS] -r FILE...\n");
        return 2;
    }
    long iterations = strtol(argv[1], NULL, 0);
    uint64_t seed = (uint64_t)strtoull(argv[2], NULL, 0);
    rng_case(seed, (uint64_t)-1);
    case_seed = seed;
    int failures = 0;
    double slowest = 0;
    const char *slowest_model = "";
    unsigned total[2][5] = { { 0 } };
    for (int mi = 3; mi < argc; ++mi) {
        size_t len;
        uint8_t *orig = read_file(argv[mi], &len);
        if (!orig) {
            fprintf(stderr, "cannot read %s\n", argv[mi]);
            return 2;
        }
        const char *name = strrchr(argv[mi], '/') ? strrchr(argv[mi], '/') + 1 : argv[mi];
        uint32_t used = 0;
        case_model = name;
        case_begin(-1, false); // the model as it is
        arm_timer(case_timeout);
        tflm_status_t st = try_model(orig, len, 1u << 20, &used);
        if (st == TFLM_OK && !arena_exact(orig, len, used)) {
            printf("FAIL %s: the arena of %u bytes it needs is not exact\n", name, used);
            failures++;
        }
        spots_t spots;
        memset(&spots, 0, sizeof(spots));
        tflm_model_t model;
        tflm_error_t err;
        bool loads = tflm_model_init(&model, orig, len, &err) == TFLM_OK;
        bool prepared = loads && tflm_model_metadata(&model, TFLM_PREPARED_METADATA) != UINT32_MAX;
        if (loads) {
            map_model(&model, &spots);
        }
        unsigned before[5] = { 0 }, after[5] = { 0 };
        uint8_t *buf = malloc(len);
        arm_timer(0);
        for (long i = first; i < first + iterations; ++i) {
            size_t n = len;
            memcpy(buf, orig, len);
            rng_case(seed, (uint64_t)i);
            case_begin(i, false);
            mutate(buf, &n, &spots, true);
            if (prepared && rnd() % 2) {
                // The prepared data made consistent with the mutant again.
                reprepare(buf, n);
            }
            uint32_t needed;
            if (write_dir) {
                write_case(buf, n);
            }
            arm_timer(case_timeout);
            double t0 = now();
            tflm_status_t s = try_model(buf, n, 64 * 1024, &needed);
            before[s < 5 ? s : 4]++;
            if (loads && i % 2 == 0) {
                case_begin(i, true);
                s = try_after_load(orig, len, &spots, (int)((i / 2) % 3));
                after[s < 5 ? s : 4]++;
            }
            double dt = now() - t0;
            arm_timer(0);
            if (dt > slowest) {
                slowest = dt;
                slowest_model = name;
            }
        }
        for (int k = 0; k < 5; ++k) {
            total[0][k] += before[k];
            total[1][k] += after[k];
        }
        if (!quiet) {
            printf("%-32s %s; %ld mutants: ", name, st == TFLM_OK ? "runs, arena exact" : "not runnable here", iterations);
            print_outcomes(before);
            if (loads) {
                printf("; %ld changed after loading: ", (iterations + 1) / 2);
                print_outcomes(after);
            }
            printf("\n");
        }
        free(spots.spots);
        free(spots.targets);
        free(buf);
        free(orig);
    }
    if (quiet) {
        printf("%d models, %ld mutants each: ", argc - 3, iterations);
        print_outcomes(total[0]);
        printf("; changed after loading: ");
        print_outcomes(total[1]);
        printf("\n");
    }
    printf("slowest mutant: %.3f s (%s)\n", slowest, slowest_model);
    unsigned long cases[2] = { 0, 0 };
    for (int k = 0; k < 5; ++k) {
        cases[0] += total[0][k];
        cases[1] += total[1][k];
    }
    printf("@CASES %lu %lu %.6f\n", cases[0], cases[1], slowest); // for tests/engine/fuzz.py
    return failures ? 1 : 0;
}
