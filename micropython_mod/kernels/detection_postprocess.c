// TFLite_Detection_PostProcess (custom op of SSD detectors), as TFLM's kernel:
// box encodings decoded against the anchors, then non-max suppression over
// the class scores, either class-agnostic ("fast": each anchor's best class
// score) or per class ("regular": the best detections of all classes).
//
// Inputs: box encodings float32 [1, N, >= 4] (y, x, h, w first), class
// scores float32 [1, N, C or C + 1 with a background class first], anchors
// float32 [>= N, 4] (y, x, h, w). Outputs, all float32: boxes
// [max_detections, 4] (ymin, xmin, ymax, xmax), classes, scores, count.
// TFLM's kernel takes float32 inputs only (other types fail when it runs);
// they are refused here in prepare().
//
// What TFLM does that this follows:
// - decoding in double (with glibc's exp), each value then rounded to float;
// - every decoded box must have ymin < ymax and xmin < xmax, or the invoke
//   fails (checked before any output is written);
// - scores >= the threshold are kept, sorted by decreasing score (stable:
//   equal scores in anchor order), and a box is dropped when its IoU with a
//   kept higher one is above the IoU threshold;
// - regular: per class, the kept boxes merge with the best so far, the top
//   max_detections remain (equal scores: the earlier ones first); unused
//   rows are zeros;
// - fast: an anchor's score is its first highest class score (NaN never
//   wins), rows past the count are left as they were in TFLM: zeros here.
// Rows past max_detections (outputs larger than TFLM writes) are zeros too.
// TFLM writes outside its outputs when an anchor reports more than one class
// (max_classes_per_detection > 1 with more than one class): refused.
//
// Scratch buffers: the eleven TFLM asks for, in its order and sizes, so the
// head is TFLM's; the regular merge keeps at most max_detections entries in
// them, so none is overrun.
#include "kernels/kernels.h"
#include "kernels/flexbuffer.h"
#include "engine/fmath.h"

#if TFLM_KERNEL_TF_LITE_DETECTION_POST_PROCESS

enum {
    S_ACTIVE,        // N bytes: candidates still in play (NMS)
    S_DECODED,       // N boxes of 4 floats
    S_SCORES,        // N x classes floats (TFLM's dequantized scores; unused for float32)
    S_SCORE_BUFFER,  // N floats: one class's scores, or each anchor's best
    S_KEEP_SCORES,   // N floats
    S_TOP_SCORES,    // max_detections x N floats: the best detections so far (regular)
    S_SORTED_VALUES, // max_detections x N floats: merge output (regular)
    S_KEEP_INDICES,  // N ints, also the sort's work space
    S_SORTED,        // max_detections x N ints: sorted candidates, merge output
    S_BUFFER,        // max(classes, max_detections) x N ints: top entries (regular), best class (fast)
    S_SELECTED,      // min(N, max_detections) x N ints: NMS's selection
    S_COUNT,
};

typedef struct {
    uint32_t n;              // anchors
    uint32_t stride;         // values per box encoding
    uint32_t classes;        // without background
    uint32_t classes_bg;     // per anchor in the scores (classes + 0 or 1)
    uint32_t max_detections;
    uint32_t per_class;      // detections_per_class (regular)
    uint32_t out_rows;       // rows in the boxes, classes and scores outputs
    float score_threshold;
    float iou_threshold;
    float scale[4];          // y, x, h, w
    uint8_t regular;
    uint8_t reserved[3];
} dp_data_t;

// An option TFLM reads with AsInt32 (a float truncates), `dflt` when absent.
static tflm_status_t opt_int(tflm_prepare_t *p, const tflm_flex_map_t *m, const char *key, int32_t dflt,
    int32_t lo, int32_t hi, int32_t *out) {
    // (Set on every path: GCC at -O3 warns of the callers' values otherwise.)
    *out = dflt;
    tflm_flex_value_t v;
    tflm_status_t st = tflm_flex_value(p, m, key, &v);
    if (st) {
        return st;
    }
    double x = !v.present ? dflt : v.is_float ? v.f : (double)v.i;
    if (!(x >= lo && x < (double)hi + 1.0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' out of range (%d to %d)", key, (int)lo, (int)hi);
    }
    *out = (int32_t)x;
    return TFLM_OK;
}

// An option TFLM reads with AsFloat, 0 when absent.
static tflm_status_t opt_float(tflm_prepare_t *p, const tflm_flex_map_t *m, const char *key, float *out) {
    tflm_flex_value_t v;
    tflm_status_t st = tflm_flex_value(p, m, key, &v);
    *out = v.present ? (float)v.f : 0.0f;
    return st;
}

static tflm_status_t read_options(tflm_prepare_t *p, dp_data_t *d, int32_t *per_anchor) {
    tflm_flex_map_t m;
    tflm_status_t st;
    int32_t max_det, per_class, classes;
    tflm_flex_value_t regular;
    if ((st = tflm_flex_map(p, &m))
        // TFLM writes max_detections rows whatever it is: at least one.
        || (st = opt_int(p, &m, "max_detections", 0, 1, 1 << 16, &max_det))
        || (st = opt_int(p, &m, "max_classes_per_detection", 0, INT32_MIN, INT32_MAX, per_anchor))
        || (st = opt_int(p, &m, "detections_per_class", 100, INT32_MIN, INT32_MAX, &per_class))
        || (st = opt_int(p, &m, "num_classes", 0, 1, 1 << 16, &classes))
        || (st = opt_float(p, &m, "nms_score_threshold", &d->score_threshold))
        || (st = opt_float(p, &m, "nms_iou_threshold", &d->iou_threshold))
        || (st = opt_float(p, &m, "y_scale", &d->scale[0])) || (st = opt_float(p, &m, "x_scale", &d->scale[1]))
        || (st = opt_float(p, &m, "h_scale", &d->scale[2])) || (st = opt_float(p, &m, "w_scale", &d->scale[3]))) {
        return st;
    }
    // AsBool: any non-zero number, false when absent.
    if ((st = tflm_flex_value(p, &m, "use_regular_nms", &regular))) {
        return st;
    }
    d->regular = regular.present && (regular.is_float ? regular.f != 0.0 : regular.i != 0);
    // What TFLM checks when it runs, checked here.
    if (!(d->iou_threshold > 0.0f && d->iou_threshold <= 1.0f)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "nms_iou_threshold must be in (0, 1]");
    }
    if (d->regular && per_class <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "detections_per_class must be positive");
    }
    if (!d->regular && *per_anchor <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "max_classes_per_detection must be positive");
    }
    d->max_detections = (uint32_t)max_det;
    d->per_class = d->regular ? (uint32_t)per_class : 0;
    d->classes = (uint32_t)classes;
    return TFLM_OK;
}

static tflm_status_t check_float(tflm_prepare_t *p, const tflm_tinfo_t *t, const char *what) {
    if (t->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s missing", what);
    }
    return t->type == TFLM_FLOAT32 ? TFLM_OK : tflm_prep_unsupported_type(p, what, t->type);
}

tflm_status_t tflm_tf_lite_detection_post_process_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 3, 3, 4);
    if (st) {
        return st;
    }
    tflm_tinfo_t enc, pred, anchors, out[4];
    if ((st = tflm_prep_input(p, 0, &enc)) || (st = tflm_prep_input(p, 1, &pred))
        || (st = tflm_prep_input(p, 2, &anchors)) || (st = check_float(p, &enc, "box encodings"))
        || (st = check_float(p, &pred, "class scores")) || (st = check_float(p, &anchors, "anchors"))) {
        return st;
    }
    for (uint32_t k = 0; k < 4; ++k) {
        if ((st = tflm_prep_output(p, k, &out[k])) || (st = check_float(p, &out[k], "output"))) {
            return st;
        }
    }
    if (enc.ndims != 3 || pred.ndims != 3 || anchors.ndims != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "box encodings and class scores need 3 dimensions, anchors 2");
    }
    dp_data_t d;
    memset(&d, 0, sizeof(d));
    int32_t per_anchor;
    if ((st = read_options(p, &d, &per_anchor))) {
        return st;
    }
    if (!d.regular && per_anchor > 1 && d.classes > 1) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED,
            "max_classes_per_detection > 1: TFLM's kernel writes such detections outside its outputs");
    }
    d.n = (uint32_t)enc.dims[1];
    d.stride = (uint32_t)enc.dims[2];
    d.classes_bg = (uint32_t)pred.dims[2];
    if (enc.dims[0] != 1 || pred.dims[0] != 1 || d.n == 0 || (uint32_t)pred.dims[1] != d.n || d.stride < 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "box encodings must be [1, N, >= 4], class scores [1, N, classes], N > 0");
    }
    if ((uint32_t)anchors.dims[0] < d.n || anchors.dims[1] != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "anchors must be [N, 4]");
    }
    if (d.classes_bg < d.classes || d.classes_bg - d.classes > 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u class scores per anchor for %u classes",
            (unsigned)d.classes_bg, (unsigned)d.classes);
    }
    d.out_rows = out[1].elements;
    if (out[0].elements != 4 * d.out_rows || out[2].elements != d.out_rows || out[1].elements < d.max_detections
        || out[3].elements < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "outputs must hold max_detections (%u) boxes, classes, scores and a count",
            (unsigned)d.max_detections);
    }
    // TFLM's scratch buffers, in its order.
    uint64_t n = d.n, md = d.max_detections;
    uint64_t bytes[S_COUNT] = {
        n, n * 16, (uint64_t)pred.elements * 4, n * 4, n * 4, md * n * 4, md * n * 4, n * 4, md * n * 4,
        (d.classes > md ? d.classes : md) * n * 4, (n < md ? n : md) * n * 4,
    };
    for (uint32_t k = 0; k < S_COUNT; ++k) {
        uint32_t index;
        if (bytes[k] > INT32_MAX) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "too many anchors, classes or detections");
        }
        if ((st = tflm_prep_scratch(p, (uint32_t)bytes[k], &index))) {
            return st;
        }
    }
    dp_data_t *data = tflm_prep_alloc(p, sizeof(dp_data_t));
    if (data == NULL) {
        return tflm_prep_status(p);
    }
    *data = d;
    return TFLM_OK;
}

// std::max / std::min as TFLM calls them (NaN: the first argument).
static inline float max_f(float a, float b) {
    return a < b ? b : a;
}
static inline float min_f(float a, float b) {
    return b < a ? b : a;
}

static float iou(const float *boxes, uint32_t i, uint32_t j) {
    const float *a = boxes + 4 * i, *b = boxes + 4 * j;
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0.0f || area_b <= 0.0f) {
        return 0.0f;
    }
    const float h = max_f(min_f(a[2], b[2]) - max_f(a[0], b[0]), 0.0f);
    const float w = max_f(min_f(a[3], b[3]) - max_f(a[1], b[1]), 0.0f);
    const float inter = h * w;
    return inter / (area_a + area_b - inter);
}

// idx = 0..n-1 sorted by decreasing v[idx], equal values in index order
// (stable); tmp holds n ints. Bottom-up merge sort: no recursion.
static void argsort_decreasing(const float *v, uint32_t n, int32_t *idx, int32_t *tmp) {
    for (uint32_t i = 0; i < n; ++i) {
        idx[i] = (int32_t)i;
    }
    int32_t *src = idx, *dst = tmp;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = mid + width < n ? mid + width : n;
            uint32_t l = lo, r = mid;
            for (uint32_t k = lo; k < hi; ++k) {
                // The right run's element goes first only when strictly greater.
                if (l < mid && !(r < hi && v[src[r]] > v[src[l]])) {
                    dst[k] = src[l++];
                } else {
                    dst[k] = src[r++];
                }
            }
        }
        int32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) {
        memcpy(idx, src, n * sizeof(int32_t));
    }
}

// Non-max suppression on one score per anchor: the anchors it keeps, best
// first, at most `limit`, in `selected`; returns their number.
static uint32_t suppress(const dp_data_t *d, void *const *s, const float *scores, uint32_t limit, int32_t *selected) {
    const float *boxes = s[S_DECODED];
    float *keep_scores = s[S_KEEP_SCORES];
    int32_t *keep = s[S_KEEP_INDICES], *sorted = s[S_SORTED];
    uint8_t *active = s[S_ACTIVE];
    uint32_t kept = 0;
    for (uint32_t i = 0; i < d->n; ++i) {
        if (scores[i] >= d->score_threshold) {
            keep_scores[kept++] = scores[i];
        }
    }
    argsort_decreasing(keep_scores, kept, sorted, keep);
    kept = 0;
    for (uint32_t i = 0; i < d->n; ++i) {
        if (scores[i] >= d->score_threshold) {
            keep[kept++] = (int32_t)i;
        }
    }
    uint32_t out_size = kept < limit ? kept : limit, count = 0, n_active = kept;
    memset(active, 1, kept);
    for (uint32_t i = 0; i < kept && n_active != 0 && count < out_size; ++i) {
        if (!active[i]) {
            continue;
        }
        uint32_t box = (uint32_t)keep[sorted[i]];
        selected[count++] = (int32_t)box;
        active[i] = 0;
        n_active--;
        for (uint32_t j = i + 1; j < kept; ++j) {
            if (active[j] && iou(boxes, box, (uint32_t)keep[sorted[j]]) > d->iou_threshold) {
                active[j] = 0;
                n_active--;
            }
        }
    }
    return count;
}

static void write_row(const dp_data_t *d, void *const *s, void *const *out, uint32_t row, uint32_t anchor,
    float class_index, float score) {
    memcpy((float *)out[0] + 4 * row, (const float *)s[S_DECODED] + 4 * anchor, 4 * sizeof(float));
    ((float *)out[1])[row] = class_index;
    ((float *)out[2])[row] = score;
    (void)d;
}

// Rows from `from` on: zeros.
static void clear_rows(const dp_data_t *d, void *const *out, uint32_t from) {
    if (from < d->out_rows) {
        memset((float *)out[0] + 4 * from, 0, 16 * (size_t)(d->out_rows - from));
        memset((float *)out[1] + from, 0, 4 * (size_t)(d->out_rows - from));
        memset((float *)out[2] + from, 0, 4 * (size_t)(d->out_rows - from));
    }
}

// Per class: NMS, then the best max_detections of those and of the earlier
// classes' (both lists best first; equal scores: the earlier list's first).
static uint32_t regular_nms(const dp_data_t *d, void *const *s, const float *pred, void *const *out) {
    const uint32_t offset = d->classes_bg - d->classes;
    float *class_scores = s[S_SCORE_BUFFER], *top_scores = s[S_TOP_SCORES], *merged_scores = s[S_SORTED_VALUES];
    int32_t *top = s[S_BUFFER], *merged = s[S_SORTED], *selected = s[S_SELECTED];
    uint32_t n_top = 0;
    for (uint32_t c = 0; c < d->classes; ++c) {
        const float *col = pred + c + offset;
        for (uint32_t row = 0; row < d->n; ++row) {
            class_scores[row] = col[(size_t)row * d->classes_bg];
        }
        uint32_t n_sel = suppress(d, s, class_scores, d->per_class, selected);
        uint32_t total = n_top + n_sel, k = total < d->max_detections ? total : d->max_detections;
        uint32_t a = 0, b = 0;
        for (uint32_t i = 0; i < k; ++i) {
            float sb = b < n_sel ? class_scores[selected[b]] : 0.0f;
            if (a < n_top && (b >= n_sel || top_scores[a] >= sb)) {
                merged[i] = top[a];
                merged_scores[i] = top_scores[a++];
            } else {
                merged[i] = (int32_t)((uint32_t)selected[b] * d->classes_bg + c + offset);
                merged_scores[i] = sb;
                b++;
            }
        }
        memcpy(top, merged, k * sizeof(int32_t));
        memcpy(top_scores, merged_scores, k * sizeof(float));
        n_top = k;
    }
    for (uint32_t i = 0; i < n_top; ++i) {
        uint32_t anchor = (uint32_t)top[i] / d->classes_bg;
        write_row(d, s, out, i, anchor, (float)((uint32_t)top[i] - anchor * d->classes_bg - offset), top_scores[i]);
    }
    clear_rows(d, out, n_top);
    return n_top;
}

// Each anchor scores with its best class (the first of equal ones; NaN never
// replaces and is never replaced), then one NMS over the anchors.
static uint32_t fast_nms(const dp_data_t *d, void *const *s, const float *pred, void *const *out) {
    const uint32_t offset = d->classes_bg - d->classes;
    float *best_scores = s[S_SCORE_BUFFER];
    int32_t *best_class = s[S_BUFFER], *selected = s[S_SELECTED];
    for (uint32_t row = 0; row < d->n; ++row) {
        const float *v = pred + (size_t)row * d->classes_bg + offset;
        uint32_t best = 0;
        for (uint32_t c = 1; c < d->classes; ++c) {
            if (v[best] < v[c]) {
                best = c;
            }
        }
        best_class[row] = (int32_t)best;
        best_scores[row] = v[best];
    }
    uint32_t n_sel = suppress(d, s, best_scores, d->max_detections, selected);
    for (uint32_t i = 0; i < n_sel; ++i) {
        uint32_t anchor = (uint32_t)selected[i];
        write_row(d, s, out, i, anchor, (float)best_class[anchor], best_scores[anchor]);
    }
    clear_rows(d, out, n_sel);
    return n_sel;
}

tflm_status_t tflm_tf_lite_detection_post_process_eval(tflm_eval_t *e) {
    const dp_data_t *d = e->data;
    const float *enc = e->in[0], *anchors = e->in[2];
    float *boxes = e->scratch[S_DECODED];
    const double sy = (double)d->scale[0], sx = (double)d->scale[1], sh = (double)d->scale[2],
                 sw = (double)d->scale[3];
    for (uint32_t i = 0; i < d->n; ++i) {
        const float *b = enc + (size_t)i * d->stride, *a = anchors + 4 * (size_t)i;
        // anchor: y, x, h, w; all in double, each result rounded to float.
        const float yc = (float)((double)b[0] / sy * (double)a[2] + (double)a[0]);
        const float xc = (float)((double)b[1] / sx * (double)a[3] + (double)a[1]);
        const float half_h = (float)(0.5 * tflm_exp((double)b[2] / sh) * (double)a[2]);
        const float half_w = (float)(0.5 * tflm_exp((double)b[3] / sw) * (double)a[3]);
        float *box = boxes + 4 * (size_t)i;
        box[0] = yc - half_h;
        box[1] = xc - half_w;
        box[2] = yc + half_h;
        box[3] = xc + half_w;
    }
    for (uint32_t i = 0; i < d->n; ++i) {
        const float *box = boxes + 4 * (size_t)i;
        if (box[0] >= box[2] || box[1] >= box[3]) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "decoded box %u is empty (ymin >= ymax or xmin >= xmax)",
                (unsigned)i);
        }
    }
    uint32_t count = d->regular ? regular_nms(d, e->scratch, e->in[1], e->out)
                                : fast_nms(d, e->scratch, e->in[1], e->out);
    ((float *)e->out[3])[0] = (float)count;
    return TFLM_OK;
}

#endif
