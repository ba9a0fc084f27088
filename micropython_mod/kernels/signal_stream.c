// The streaming ops of TFLM's signal library, which keep samples between
// invokes: SignalFramer (overlapping frames of a sample stream), SignalDelay
// (each row delayed by a number of samples), SignalStacker (a frame with its
// left and right context) and SignalOverlapAdd (frames added back into a
// stream, int16 saturating or float32). Their state lives in the kernel's
// run-time data in the arena tail, starting as TFLM's does after prepare()
// (zeros; the framer's prefill; the stacker empty). TFLM keeps each row in a
// ring of twice its capacity; a plain buffer that only ever holds less than
// a frame's worth between invokes gives the same samples in half the bytes.
// Parameters come from the FlexBuffer custom options, checked here where
// TFLM's kernels would read or write outside a tensor.
#include "kernels/kernels.h"
#include "kernels/flexbuffer.h"
#include "kernels/signal_common.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_SIGNAL_FRAMER || TFLM_KERNEL_SIGNAL_DELAY
// Rows of the input (all dimensions but the last) and the last dimension.
static tflm_status_t stream_rows(tflm_prepare_t *p, const tflm_tinfo_t *in, uint32_t *rows, uint32_t *inner) {
    if (in->ndims < 1 || in->dims[in->ndims - 1] <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input needs a last dimension of at least 1");
    }
    *inner = (uint32_t)in->dims[in->ndims - 1];
    *rows = in->elements / *inner;
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FRAMER || TFLM_KERNEL_SIGNAL_DELAY || TFLM_KERNEL_SIGNAL_STACKER \
    || TFLM_KERNEL_SIGNAL_OVERLAP_ADD
// Bytes of `count` elements of `size` bytes, refused past 16 MiB (no arena holds them).
static tflm_status_t stream_state_bytes(tflm_prepare_t *p, uint64_t count, uint32_t size, uint32_t head, uint32_t *bytes) {
    uint64_t b = count * size + head;
    if (b > (1u << 24)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "state of %u bytes is too large", (unsigned)(b > UINT32_MAX ? UINT32_MAX : b));
    }
    *bytes = (uint32_t)b;
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FRAMER || TFLM_KERNEL_SIGNAL_STACKER
static tflm_status_t stream_valid_output(tflm_prepare_t *p, tflm_tinfo_t *valid) {
    tflm_status_t st = tflm_prep_output(p, 1, valid);
    if (st || (st = signal_expect(p, valid, "output valid", TFLM_BOOL, 0))) {
        return st;
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FRAMER
// ---------------------------------------------------------------------------
// SignalFramer: each row of [..., n * frame_step] samples appends frame_step
// samples at a time to its buffer; once it holds frame_size samples their
// frame is output and the first frame_step dropped. A frame without enough
// samples is left as it was, and output 1 (bool) is false. With prefill the
// buffers start with frame_size - frame_step zeros.

typedef struct {
    uint32_t rows;
    uint32_t frames;      // frames per row and invoke
    uint32_t size;
    uint32_t step;
    uint32_t cap;         // samples a row's buffer holds: frame_size rounded up to steps
    uint32_t held;        // samples each row holds (the same for all rows)
    uint32_t start;       // held at the start: frame_size - frame_step zeros with prefill
    int16_t buf[];        // rows * cap
} framer_data_t;

// As prepare() leaves it, and TFLM's reset.
static void framer_start(framer_data_t *d) {
    d->held = d->start;
    memset(d->buf, 0, (size_t)d->rows * d->cap * sizeof(int16_t));
}

static void framer_reset(tflm_eval_t *e) {
    framer_start(e->data);
}

tflm_status_t tflm_signal_framer_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 2);
    tflm_tinfo_t in, out, valid;
    tflm_flex_map_t opts;
    int32_t size, step, prefill;
    uint32_t rows = 0, inner = 0, bytes = 0;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, -1)) || (st = stream_valid_output(p, &valid))
        || (st = signal_expect(p, &out, "output", TFLM_INT16, in.ndims + 1))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "frame_size", 1, 1 << 20, &size))
        || (st = tflm_flex_int(p, &opts, "frame_step", 1, 1 << 20, &step))
        || (st = tflm_flex_int(p, &opts, "prefill", 0, 1, &prefill)) || (st = stream_rows(p, &in, &rows, &inner))) {
        return st;
    }
    if (inner < (uint32_t)step || inner % (uint32_t)step) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input rows of %u samples are not whole steps of %d",
            (unsigned)inner, (int)step);
    }
    if (prefill && step > size) {
        // TFLM's prefill writes frame_size - frame_step zeros: a negative count
        return tflm_error(p->err, TFLM_ERR_VALUE, "prefill with frame_step %d above frame_size %d", (int)step, (int)size);
    }
    uint32_t frames = inner / (uint32_t)step;
    if ((uint64_t)out.elements != (uint64_t)rows * frames * (uint32_t)size) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output has %u elements, expected %u frames of %d", (unsigned)out.elements,
            (unsigned)(rows * frames), (int)size);
    }
    uint32_t cap = ((uint32_t)size + (uint32_t)step - 1) / (uint32_t)step * (uint32_t)step;
    if ((st = stream_state_bytes(p, (uint64_t)rows * cap, sizeof(int16_t), sizeof(framer_data_t), &bytes))) {
        return st;
    }
    framer_data_t *d = tflm_prep_alloc_state(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->rows = rows;
    d->frames = frames;
    d->size = (uint32_t)size;
    d->step = (uint32_t)step;
    d->cap = cap;
    d->start = prefill ? (uint32_t)(size - step) : 0;
    framer_start(d);
    return TFLM_OK;
}

tflm_status_t tflm_signal_framer_eval(tflm_eval_t *e) {
    framer_data_t *d = e->data;
    const int16_t *in = e->in[0];
    int16_t *out = e->out[0];
    bool valid = true;
    // Frame by frame, every row at once: the rows' buffers fill alike.
    // Between frames a buffer holds less than frame_size samples, so one
    // more step always fits in its cap.
    for (uint32_t f = 0; f < d->frames; ++f) {
        for (uint32_t r = 0; r < d->rows; ++r) {
            memcpy(d->buf + r * d->cap + d->held, in + (r * d->frames + f) * d->step, d->step * sizeof(int16_t));
        }
        d->held += d->step;
        if (d->held < d->size) {
            valid = false;
            continue;
        }
        for (uint32_t r = 0; r < d->rows; ++r) {
            int16_t *b = d->buf + r * d->cap;
            memcpy(out + (r * d->frames + f) * d->size, b, d->size * sizeof(int16_t));
            memmove(b, b + d->step, (d->held - d->step) * sizeof(int16_t));
        }
        d->held -= d->step;
    }
    *(uint8_t *)e->out[1] = valid;
    return TFLM_OK;
}

const tflm_kernel_hooks_t tflm_signal_framer_hooks = { .reset = framer_reset };
#endif

#if TFLM_KERNEL_SIGNAL_DELAY
// ---------------------------------------------------------------------------
// SignalDelay: each row of the input comes out delay_length samples later,
// the first ones zeros. A row's state holds its last delay_length samples.

typedef struct {
    uint32_t rows;
    uint32_t frame;       // samples per row
    uint32_t delay;
    int16_t held[];       // rows * delay
} delay_data_t;

static void delay_start(delay_data_t *d) {
    memset(d->held, 0, (size_t)d->rows * d->delay * sizeof(int16_t));
}

static void delay_reset(tflm_eval_t *e) {
    delay_start(e->data);
}

tflm_status_t tflm_signal_delay_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    tflm_flex_map_t opts;
    int32_t delay;
    uint32_t rows = 0, inner = 0, bytes = 0;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, -1)) || (st = signal_expect(p, &out, "output", TFLM_INT16, -1))
        || (st = signal_same_count(p, &in, &out, "output")) || (st = tflm_flex_map(p, &opts))
        || (st = tflm_flex_int(p, &opts, "delay_length", 0, 1 << 20, &delay)) || (st = stream_rows(p, &in, &rows, &inner))
        || (st = stream_state_bytes(p, (uint64_t)rows * (uint32_t)delay, sizeof(int16_t), sizeof(delay_data_t), &bytes))) {
        return st;
    }
    delay_data_t *d = tflm_prep_alloc_state(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->rows = rows;
    d->frame = inner;
    d->delay = (uint32_t)delay;
    delay_start(d);
    return TFLM_OK;
}

tflm_status_t tflm_signal_delay_eval(tflm_eval_t *e) {
    delay_data_t *d = e->data;
    const int16_t *in = e->in[0];
    int16_t *out = e->out[0];
    const uint32_t n = d->frame, k = d->delay;
    for (uint32_t r = 0; r < d->rows; ++r) {
        const int16_t *x = in + r * n;
        int16_t *y = out + r * n;
        int16_t *h = d->held + r * k;
        // out = the first n of (held, x); held = the last k of them
        if (k >= n) {
            memcpy(y, h, n * sizeof(int16_t));
            memmove(h, h + n, (k - n) * sizeof(int16_t));
            memcpy(h + k - n, x, n * sizeof(int16_t));
        } else {
            memcpy(y, h, k * sizeof(int16_t));
            memcpy(y + k, x, (n - k) * sizeof(int16_t));
            memcpy(h, x + n - k, k * sizeof(int16_t));
        }
    }
    return TFLM_OK;
}

const tflm_kernel_hooks_t tflm_signal_delay_hooks = { .reset = delay_reset };
#endif

#if TFLM_KERNEL_SIGNAL_STACKER
// ---------------------------------------------------------------------------
// SignalStacker: each invoke appends num_channels values; once the buffer
// holds left context + 1 + right context frames they are output (output 1
// true) and the first stacker_step frames dropped. The first frame is
// repeated left-context times, as padding.

typedef struct {
    uint32_t channels;
    uint32_t left;
    uint32_t total;       // values output: channels * (left + right + 1)
    uint32_t drop;        // values dropped after an output: channels * step
    uint32_t held;
    uint32_t started;     // the first frame has come
    int16_t buf[];        // total
} stacker_data_t;

static void stacker_start(stacker_data_t *d) {
    d->held = 0;
    d->started = 0;
    memset(d->buf, 0, d->total * sizeof(int16_t));
}

static void stacker_reset(tflm_eval_t *e) {
    stacker_start(e->data);
}

tflm_status_t tflm_signal_stacker_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 2);
    tflm_tinfo_t in, out, valid;
    tflm_flex_map_t opts;
    int32_t channels, left, right, step;
    uint32_t bytes = 0;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, 1)) || (st = signal_expect(p, &out, "output", TFLM_INT16, 1))
        || (st = stream_valid_output(p, &valid)) || (st = tflm_flex_map(p, &opts))
        || (st = tflm_flex_int(p, &opts, "num_channels", 1, 1 << 16, &channels))
        || (st = tflm_flex_int(p, &opts, "stacker_left_context", 0, 1 << 12, &left))
        || (st = tflm_flex_int(p, &opts, "stacker_right_context", 0, 1 << 12, &right))
        || (st = tflm_flex_int(p, &opts, "stacker_step", 1, 1 << 13, &step))) {
        return st;
    }
    uint32_t frames = (uint32_t)(left + right + 1);
    if ((uint32_t)step > frames) {
        // TFLM would drop more frames than it holds
        return tflm_error(p->err, TFLM_ERR_VALUE, "stacker_step %d above the %u frames stacked", (int)step, (unsigned)frames);
    }
    uint32_t total = (uint32_t)channels * frames;
    if (in.elements < (uint32_t)channels || out.elements != total) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input of %u and output of %u elements for %d channels of %u frames",
            (unsigned)in.elements, (unsigned)out.elements, (int)channels, (unsigned)frames);
    }
    if ((st = stream_state_bytes(p, total, sizeof(int16_t), sizeof(stacker_data_t), &bytes))) {
        return st;
    }
    stacker_data_t *d = tflm_prep_alloc_state(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->channels = (uint32_t)channels;
    d->left = (uint32_t)left;
    d->total = total;
    d->drop = (uint32_t)channels * (uint32_t)step;
    stacker_start(d);
    return TFLM_OK;
}

tflm_status_t tflm_signal_stacker_eval(tflm_eval_t *e) {
    stacker_data_t *d = e->data;
    const uint32_t c = d->channels;
    // The buffer holds less than `total` values here (a full one was
    // output and cut by at least one frame), so a frame fits; the first
    // frame and its copies fill left + 1 of left + right + 1 frames.
    memcpy(d->buf + d->held, e->in[0], c * sizeof(int16_t));
    d->held += c;
    if (!d->started) {
        for (uint32_t i = 0; i < d->left; ++i) {
            memcpy(d->buf + d->held, d->buf + d->held - c, c * sizeof(int16_t));
            d->held += c;
        }
        d->started = 1;
    }
    bool full = d->held >= d->total;
    if (full) {
        memcpy(e->out[0], d->buf, d->total * sizeof(int16_t));
        memmove(d->buf, d->buf + d->drop, (d->held - d->drop) * sizeof(int16_t));
        d->held -= d->drop;
    }
    *(uint8_t *)e->out[1] = full;
    return TFLM_OK;
}

const tflm_kernel_hooks_t tflm_signal_stacker_hooks = { .reset = stacker_reset };
#endif

#if TFLM_KERNEL_SIGNAL_OVERLAP_ADD
// ---------------------------------------------------------------------------
// SignalOverlapAdd: frames [..., n, frame_size] added into a per-row buffer
// of frame_size; after each frame its first frame_step values are output
// and the buffer shifts by frame_step, zeros coming in. int16 sums saturate.

typedef struct {
    uint32_t type;
    uint32_t rows;
    uint32_t frames;
    uint32_t size;
    uint32_t step;
    uint32_t pad;         // keeps acc 8-byte aligned
    uint8_t acc[];        // rows * size values of the type
} overlap_add_data_t;

static void overlap_add_start(overlap_add_data_t *d) {
    // all-zero bits are 0.0f too
    memset(d->acc, 0, (size_t)d->rows * d->size * (d->type == TFLM_INT16 ? 2u : 4u));
}

static void overlap_add_reset(tflm_eval_t *e) {
    overlap_add_start(e->data);
}

tflm_status_t tflm_signal_overlap_add_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    tflm_flex_map_t opts;
    int32_t type, step;
    uint32_t bytes = 0;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "T", 0, 255, &type))
        || (st = tflm_flex_int(p, &opts, "frame_step", 1, 1 << 20, &step))) {
        return st;
    }
    if (type != TFLM_INT16 && type != TFLM_FLOAT32) {
        return tflm_prep_unsupported_type(p, "SignalOverlapAdd", (unsigned)type);
    }
    if ((st = signal_expect(p, &in, "input", (unsigned)type, -1)) || (st = signal_expect(p, &out, "output", (unsigned)type, -1))) {
        return st;
    }
    if (in.ndims < 2 || in.ndims != out.ndims + 1 || in.dims[in.ndims - 1] <= 0 || in.dims[in.ndims - 2] <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input must be frames [..., n, frame_size] and the output one dimension less");
    }
    uint32_t size = (uint32_t)in.dims[in.ndims - 1];
    uint32_t frames = (uint32_t)in.dims[in.ndims - 2];
    uint32_t rows = in.elements / (size * frames);
    if ((uint32_t)step > size) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "frame_step %d above frame_size %u", (int)step, (unsigned)size);
    }
    if ((uint64_t)out.elements != (uint64_t)rows * frames * (uint32_t)step) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output has %u elements, expected %u steps of %d",
            (unsigned)out.elements, (unsigned)(rows * frames), (int)step);
    }
    uint32_t esize = type == TFLM_INT16 ? 2 : 4;
    if ((st = stream_state_bytes(p, (uint64_t)rows * size, esize, sizeof(overlap_add_data_t), &bytes))) {
        return st;
    }
    overlap_add_data_t *d = tflm_prep_alloc_state(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->type = (uint32_t)type;
    d->rows = rows;
    d->frames = frames;
    d->size = size;
    d->step = (uint32_t)step;
    d->pad = 0;
    overlap_add_start(d);
    return TFLM_OK;
}

static void overlap_add_int16(const overlap_add_data_t *d, int16_t *acc, const int16_t *in, int16_t *out) {
    for (uint32_t i = 0; i < d->size; ++i) {
        acc[i] = (int16_t)tflm_clamp((int32_t)acc[i] + in[i], INT16_MIN, INT16_MAX);
    }
    memcpy(out, acc, d->step * sizeof(int16_t));
    memmove(acc, acc + d->step, (d->size - d->step) * sizeof(int16_t));
    memset(acc + d->size - d->step, 0, d->step * sizeof(int16_t));
}

static void overlap_add_float(const overlap_add_data_t *d, float *acc, const float *in, float *out) {
    for (uint32_t i = 0; i < d->size; ++i) {
        float s = acc[i] + in[i];
        // a NaN sum as x86's (TFLM's reference): the processor's choice otherwise
        acc[i] = s == s ? s : tflm_x86_nan(acc[i], in[i]);
    }
    memcpy(out, acc, d->step * sizeof(float));
    memmove(acc, acc + d->step, (d->size - d->step) * sizeof(float));
    memset(acc + d->size - d->step, 0, d->step * sizeof(float));
}

tflm_status_t tflm_signal_overlap_add_eval(tflm_eval_t *e) {
    overlap_add_data_t *d = e->data;
    for (uint32_t r = 0; r < d->rows; ++r) {
        for (uint32_t f = 0; f < d->frames; ++f) {
            uint32_t frame = r * d->frames + f;
            if (d->type == TFLM_INT16) {
                overlap_add_int16(d, (int16_t *)d->acc + r * d->size, (const int16_t *)e->in[0] + frame * d->size,
                    (int16_t *)e->out[0] + frame * d->step);
            } else {
                overlap_add_float(d, (float *)d->acc + r * d->size, (const float *)e->in[0] + frame * d->size,
                    (float *)e->out[0] + frame * d->step);
            }
        }
    }
    return TFLM_OK;
}

const tflm_kernel_hooks_t tflm_signal_overlap_add_hooks = { .reset = overlap_add_reset };
#endif
