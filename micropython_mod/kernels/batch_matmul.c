// BATCH_MATMUL: float32, int8 and int16 (zero points 0) operands of 2 to 5
// dimensions, adj_x / adj_y, batch dimensions broadcast, bit-exact with
// TFLM's reference.
//
// Every output value is a row of the left matrix (M x K) against a row of
// the right matrix transposed (N x K), summed in TFLM's order. Operands
// stored the other way round are transposed into scratch buffers at each
// invoke; a constant right operand is transposed once, by prepare(), into
// the kernel data (which a prepared model keeps in flash; TFLM keeps such a
// copy too). int8 sums multiply the values as they are: the zero points go
// into each column's and each row's starting sum,
// sum (r + c)(l + a) = r.l + a sum(r) + c sum(l) + K a c, the columns' part
// worked out by prepare() for a constant operand (all modulo 2^32, as
// TFLM's int32 sums wrap). The loops take two rows and two columns at a
// time (kernels/mm_s8.h).
#include "kernels/loop_opt.h"
#include "kernels/kernels.h"
#include "kernels/dot.h"
#include "kernels/mm_s8.h"
#include "kernels/out_s8.h"
#include "engine/quant.h"

#if TFLM_KERNEL_BATCH_MATMUL

#define BMM_MAX_DIMS (5)
#define BMM_BATCH_DIMS (3)
#define BMM_NO_SCRATCH (0xff)

enum { BMM_FLOAT32, BMM_INT8, BMM_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t adj_x;          // the left operand is stored K x M
    uint8_t rhs_stored;     // 1: the transposed right operand is in the kernel data
    uint8_t rhs_folded;     // int8: the columns' starting sums are in the kernel data
    uint8_t lhs_scratch;    // scratch buffer of the transposed left operand
    uint8_t rhs_scratch;    // of the transposed right operand (computed, not adj_y)
    uint8_t sums_scratch;   // of the columns' starting sums (int8, computed right operand)
    uint8_t rhs_transpose;  // the right operand is stored K x N
    int32_t rows;           // M
    int32_t depth;          // K
    int32_t cols;           // N
    int32_t batch[BMM_BATCH_DIMS];     // output batch dimensions, 1 in front
    uint32_t lhs_step[BMM_BATCH_DIMS]; // matrices per step along each (0: broadcast)
    uint32_t rhs_step[BMM_BATCH_DIMS];
    uint32_t lhs_matrices;
    uint32_t rhs_matrices;
    int32_t lhs_offset;     // -zero point
    int32_t rhs_offset;
    int32_t out_zp;
    int32_t multiplier;
    int32_t shift;
    // streamed words: the transposed right operand (rhs_stored), then int8
    // columns' starting sums (rhs_folded), rhs_matrices x N
} bmm_data_t;

static const uint8_t *bmm_words(const bmm_data_t *d) {
    return (const uint8_t *)d + tflm_align_up(sizeof(bmm_data_t), 4);
}

// Matrices [rows][cols] of `es`-byte values to [cols][rows], each of `count`.
static void bmm_transpose(const uint8_t *in, uint8_t *out, uint32_t count, int32_t rows, int32_t cols, uint32_t es) {
    const size_t n = (size_t)rows * (size_t)cols * es;
    for (uint32_t m = 0; m < count; ++m, in += n) {
        // `out` moves on as it is written, matrix after matrix.
        for (int32_t c = 0; c < cols; ++c) {
            const uint8_t *src = in + (size_t)c * es;
            switch (es) {
                case 1:
                    for (int32_t r = 0; r < rows; ++r, src += cols) {
                        *out++ = *src;
                    }
                    break;
                case 2:
                    for (int32_t r = 0; r < rows; ++r, src += 2 * (size_t)cols, out += 2) {
                        memcpy(out, src, 2);
                    }
                    break;
                default:
                    for (int32_t r = 0; r < rows; ++r, src += 4 * (size_t)cols, out += 4) {
                        memcpy(out, src, 4);
                    }
                    break;
            }
        }
    }
}

// The right operand's matrices as the loops read them, N rows of K values,
// streamed to the kernel data word by word from the model's constant
// (stored K x N: gathered column by column), without a copy in memory.
static void bmm_put_rows(tflm_prepare_t *p, const uint8_t *src, uint32_t count, int32_t depth, int32_t cols,
    uint32_t es) {
    uint32_t word = 0, filled = 0;
    uint8_t b[4];
    for (uint32_t m = 0; m < count; ++m) {
        const uint8_t *mat = src + (size_t)m * (size_t)depth * (size_t)cols * es;
        for (int32_t j = 0; j < cols; ++j) {
            for (int32_t k = 0; k < depth; ++k) {
                const uint8_t *v = mat + ((size_t)k * (size_t)cols + (size_t)j) * es;
                for (uint32_t i = 0; i < es; ++i) {
                    b[filled++] = v[i];
                    if (filled == 4) {
                        tflm_prep_put_u32(p, word++, tflm_rd_u32(b));
                        filled = 0;
                    }
                }
            }
        }
    }
    if (filled) {
        memset(b + filled, 0, 4 - filled);
        tflm_prep_put_u32(p, word, tflm_rd_u32(b));
    }
}

// Each column's starting sum: a * (sum of its K values, `step` bytes
// apart) + K * a * c, modulo 2^32.
static int32_t bmm_col_sum(const int8_t *r, int32_t depth, size_t step, int32_t a, int32_t c) {
    uint32_t sum = 0;
    for (int32_t k = 0; k < depth; ++k, r += step) {
        sum += (uint32_t)(int32_t)*r;
    }
    return (int32_t)(sum * (uint32_t)a + (uint32_t)depth * (uint32_t)a * (uint32_t)c);
}

// The same for every row of a transposed matrix (N rows of K).
static void bmm_col_sums(const int8_t *rt, int32_t cols, int32_t depth, int32_t a, int32_t c, int32_t *sums) {
    const uint32_t base = (uint32_t)depth * (uint32_t)a * (uint32_t)c;
    for (int32_t j = 0; j < cols; ++j, rt += depth) {
        sums[j] = (int32_t)(tflm_sum_s8(rt, depth) * (uint32_t)a + base);
    }
}

tflm_status_t tflm_batch_matmul_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t lhs, rhs, out;
    if ((st = tflm_prep_input(p, 0, &lhs)) || (st = tflm_prep_input(p, 1, &rhs))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (lhs.index < 0 || rhs.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an operand is missing");
    }
    uint8_t kind;
    switch (lhs.type) {
        case TFLM_FLOAT32:
            kind = BMM_FLOAT32;
            break;
        case TFLM_INT8:
            kind = BMM_INT8;
            break;
        case TFLM_INT16:
            kind = BMM_INT16;
            break;
        default:
            return tflm_prep_unsupported_type(p, "input", lhs.type);
    }
    if (rhs.type != lhs.type || out.type != lhs.type) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s x %s to %s is not supported",
            tflm_type_name(lhs.type), tflm_type_name(rhs.type), tflm_type_name(out.type));
    }
    if (lhs.ndims < 2 || rhs.ndims < 2 || lhs.ndims > BMM_MAX_DIMS || rhs.ndims > BMM_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "operands of %u and %u dimensions are not supported (2 to 5)",
            (unsigned)lhs.ndims, (unsigned)rhs.ndims);
    }
    const bool adj_x = tflm_prep_opt_u8(p, TFLM_OPT_BATCH_MAT_MUL_ADJ_X, 0);
    const bool adj_y = tflm_prep_opt_u8(p, TFLM_OPT_BATCH_MAT_MUL_ADJ_Y, 0);
    const uint32_t rank = TFLM_MAX(lhs.ndims, rhs.ndims);
    int32_t ld[BMM_MAX_DIMS], rd[BMM_MAX_DIMS];
    for (uint32_t i = 0; i < BMM_MAX_DIMS; ++i) {
        uint32_t lp = BMM_MAX_DIMS - lhs.ndims, rp = BMM_MAX_DIMS - rhs.ndims;
        ld[i] = i < lp ? 1 : lhs.dims[i - lp];
        rd[i] = i < rp ? 1 : rhs.dims[i - rp];
    }
    const int32_t rows = adj_x ? ld[4] : ld[3], depth = adj_x ? ld[3] : ld[4];
    const int32_t cols = adj_y ? rd[3] : rd[4], rdepth = adj_y ? rd[4] : rd[3];
    if (depth != rdepth) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "operands multiply %d by %d values", (int)depth, (int)rdepth);
    }
    // Batch dimensions broadcast; the output's shape is TFLM's: at least as
    // many dimensions, the same element count.
    uint64_t count = (uint64_t)rows * (uint64_t)cols;
    int32_t batch[BMM_BATCH_DIMS];
    uint32_t lstep[BMM_BATCH_DIMS], rstep[BMM_BATCH_DIMS];
    uint32_t lsize = 1, rsize = 1;
    for (int32_t i = BMM_BATCH_DIMS - 1; i >= 0; --i) {
        if (ld[i] != rd[i] && ld[i] != 1 && rd[i] != 1) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "batch dimensions %d and %d do not broadcast", (int)ld[i], (int)rd[i]);
        }
        batch[i] = ld[i] == 1 ? rd[i] : ld[i];
        lstep[i] = ld[i] == 1 ? 0 : lsize;
        rstep[i] = rd[i] == 1 ? 0 : rsize;
        lsize *= (uint32_t)ld[i];
        rsize *= (uint32_t)rd[i];
        count *= (uint64_t)batch[i];
    }
    if (out.ndims < rank || count != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output holds %u values, the product %u",
            (unsigned)out.elements, (unsigned)TFLM_MIN(count, UINT32_MAX));
    }
    int32_t multiplier = 0, shift = 0;
    if (kind != BMM_FLOAT32) {
        if (lhs.n_scales == 0 || rhs.n_scales == 0 || out.n_scales == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized operands and output need scales");
        }
        if (kind == BMM_INT16 && (lhs.zero_point != 0 || rhs.zero_point != 0 || out.zero_point != 0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int16 zero points must be 0");
        }
        // TFLM takes the first scale of a per-channel operand.
        double real = (double)lhs.scale * (double)rhs.scale / (double)out.scale;
        if ((st = tflm_prep_multiplier(p, real, kind == BMM_INT8 ? 31 : 7, &multiplier, &shift))) {
            return st;
        }
    }
    const uint32_t es = (uint32_t)tflm_type_size(lhs.type);
    const bool transpose = !adj_y;
    const bool stored = transpose && rhs.is_const;
    const bool folded = kind == BMM_INT8 && rhs.is_const;
    uint32_t lhs_scratch = BMM_NO_SCRATCH, rhs_scratch = BMM_NO_SCRATCH, sums_scratch = BMM_NO_SCRATCH;
    if (adj_x && (st = tflm_prep_scratch(p, lhs.bytes, &lhs_scratch))) {
        return st;
    }
    if (transpose && !stored && (st = tflm_prep_scratch(p, rhs.bytes, &rhs_scratch))) {
        return st;
    }
    if (kind == BMM_INT8 && !folded && (st = tflm_prep_scratch(p, 4u * (uint32_t)cols, &sums_scratch))) {
        return st;
    }
    const uint32_t rhs_words = stored ? (rhs.bytes + 3u) / 4u : 0u;
    const uint64_t sum_words = folded ? (uint64_t)rsize * (uint64_t)cols : 0u;
    if (sum_words > UINT32_MAX / 8u - rhs_words) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "right operand is too large");
    }
    bmm_data_t *d = tflm_prep_alloc_streamed(p, sizeof(bmm_data_t), rhs_words + (uint32_t)sum_words);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->adj_x = adj_x;
    d->rhs_stored = stored;
    d->rhs_folded = folded;
    d->rhs_transpose = transpose;
    d->lhs_scratch = (uint8_t)lhs_scratch;
    d->rhs_scratch = (uint8_t)rhs_scratch;
    d->sums_scratch = (uint8_t)sums_scratch;
    d->rows = rows;
    d->depth = depth;
    d->cols = cols;
    for (uint32_t i = 0; i < BMM_BATCH_DIMS; ++i) {
        d->batch[i] = batch[i];
        d->lhs_step[i] = lstep[i];
        d->rhs_step[i] = rstep[i];
    }
    d->lhs_matrices = lsize;
    d->rhs_matrices = rsize;
    d->lhs_offset = -lhs.zero_point;
    d->rhs_offset = -rhs.zero_point;
    d->out_zp = out.zero_point;
    d->multiplier = multiplier;
    d->shift = shift;
    if (stored) {
        bmm_put_rows(p, rhs.data, rsize, depth, cols, es);
    }
    if (folded) {
        // Column j of matrix m: K values N apart (stored K x N) or in a row.
        const size_t matrix = (size_t)cols * (size_t)depth;
        const size_t step = transpose ? (size_t)cols : 1u, next = transpose ? 1u : (size_t)depth;
        for (uint32_t m = 0; m < rsize; ++m) {
            const int8_t *r = (const int8_t *)rhs.data + m * matrix;
            for (int32_t j = 0; j < cols; ++j, r += next) {
                tflm_prep_put_u32(p, rhs_words + m * (uint32_t)cols + (uint32_t)j,
                    (uint32_t)bmm_col_sum(r, depth, step, d->lhs_offset, d->rhs_offset));
            }
        }
    }
    return TFLM_OK;
}

// What the loops read, copied out of the kernel data (stores through the
// output could alias it).
typedef struct {
    int32_t rows, depth, cols;
    int32_t lhs_offset, rhs_offset;
    int32_t out_zp;
    tflm_out_s8_t q;
} bmm_s8_t;

// The output stage of n (1 or 2) sums for row 0 (acc[0 .. n)) and, when o1
// is given, n for row 1 after them. On the Cortex-M0, whose rescaling is a
// long sequence, one copy in a loop serves every block shape (a call per
// block of 2 x 2 x K multiply-accumulates); elsewhere it is a few
// instructions, written out and inlined into each block (a call costs 5-14%
// on the M3).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
__attribute__((noinline)) static void bmm_s8_store(const bmm_s8_t *k, const uint32_t *acc, int32_t n, int8_t *o0,
    int8_t *o1) {
    for (int32_t i = 0; i < 2 * n; ++i) {
        int8_t *o = i < n ? o0 + i : o1 ? o1 + i - n : NULL;
        if (o) {
            *o = tflm_out_s8((int32_t)acc[i], &k->q, k->out_zp, -128, 127);
        }
    }
}
#else
static TFLM_ALWAYS_INLINE void bmm_s8_store(const bmm_s8_t *k, const uint32_t *acc, int32_t n, int8_t *o0,
    int8_t *o1) {
    const int32_t zp = k->out_zp;
    o0[0] = tflm_out_s8((int32_t)acc[0], &k->q, zp, -128, 127);
    if (n == 2) {
        o0[1] = tflm_out_s8((int32_t)acc[1], &k->q, zp, -128, 127);
    }
    if (o1) {
        o1[0] = tflm_out_s8((int32_t)acc[n], &k->q, zp, -128, 127);
        if (n == 2) {
            o1[1] = tflm_out_s8((int32_t)acc[3], &k->q, zp, -128, 127);
        }
    }
}
#endif

// Rows i and i + 1 of the left matrix against every column, two by two.
static void bmm_s8_two_rows(const bmm_s8_t *k, const int8_t *l0, const int8_t *rt, const int32_t *sums,
    int8_t *o0) {
    const int32_t depth = k->depth, cols = k->cols;
    const int8_t *l1 = l0 + depth;
    int8_t *o1 = o0 + cols;
    const uint32_t t0 = k->rhs_offset ? tflm_sum_s8(l0, depth) * (uint32_t)k->rhs_offset : 0u;
    const uint32_t t1 = k->rhs_offset ? tflm_sum_s8(l1, depth) * (uint32_t)k->rhs_offset : 0u;
    int32_t j = 0;
    for (; j + 2 <= cols; j += 2, rt += 2 * depth) {
        // Row 0's two columns, then row 1's.
        uint32_t a[4] = { (uint32_t)sums[j] + t0, (uint32_t)sums[j + 1] + t0, (uint32_t)sums[j] + t1,
                          (uint32_t)sums[j + 1] + t1 };
        tflm_mm_s8_2x2(l0, l1, rt, rt + depth, depth, a);
        bmm_s8_store(k, a, 2, o0 + j, o1 + j);
    }
    if (j < cols) {
        // One column against both rows.
        uint32_t a[2] = { (uint32_t)sums[j] + t0, (uint32_t)sums[j] + t1 };
        tflm_mm_s8_1x2(rt, l0, l1, depth, a);
        bmm_s8_store(k, a, 1, o0 + j, o1 + j);
    }
}

// The last row of an odd count.
static void bmm_s8_one_row(const bmm_s8_t *k, const int8_t *l0, const int8_t *rt, const int32_t *sums, int8_t *o0) {
    const int32_t depth = k->depth, cols = k->cols;
    const uint32_t t0 = k->rhs_offset ? tflm_sum_s8(l0, depth) * (uint32_t)k->rhs_offset : 0u;
    int32_t j = 0;
    for (; j + 2 <= cols; j += 2, rt += 2 * depth) {
        uint32_t a[2] = { (uint32_t)sums[j] + t0, (uint32_t)sums[j + 1] + t0 };
        tflm_mm_s8_1x2(l0, rt, rt + depth, depth, a);
        bmm_s8_store(k, a, 2, o0 + j, NULL);
    }
    if (j < cols) {
        uint32_t a[1] = { (uint32_t)sums[j] + t0 + tflm_dot_s8(rt, l0, depth, 0) };
        bmm_s8_store(k, a, 1, o0 + j, NULL);
    }
}

static void bmm_s8_matrix(const bmm_s8_t *k, const int8_t *lhs, const int8_t *rt, const int32_t *sums, int8_t *out) {
    const int32_t rows = k->rows, depth = k->depth, cols = k->cols;
    int32_t i = 0;
    for (; i + 2 <= rows; i += 2, lhs += 2 * depth, out += 2 * cols) {
        bmm_s8_two_rows(k, lhs, rt, sums, out);
    }
    if (i < rows) {
        bmm_s8_one_row(k, lhs, rt, sums, out);
    }
}

// sum of l * r over int16 values, in 64 bits (each product fits 32).
static inline int64_t bmm_dot_s16(const int16_t *l, const int16_t *r, int32_t n) {
    int64_t acc = 0;
    int32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        acc += (int64_t)(l[i] * r[i]) + (int64_t)(l[i + 1] * r[i + 1]);
    }
    if (i < n) {
        acc += (int64_t)(l[i] * r[i]);
    }
    return acc;
}

static void bmm_s16_matrix(const bmm_data_t *d, const int16_t *lhs, const int16_t *rt, int16_t *out) {
    const int32_t rows = d->rows, depth = d->depth, cols = d->cols;
    const int32_t mult = d->multiplier, shift = d->shift;
    for (int32_t i = 0; i < rows; ++i, lhs += depth) {
        const int16_t *r = rt;
        for (int32_t j = 0; j < cols; ++j, r += depth) {
            *out++ = (int16_t)tflm_clamp(tflm_mul_by_quantized_mul64(bmm_dot_s16(lhs, r, depth), mult, shift),
                -32768, 32767);
        }
    }
}

static void bmm_f32_matrix(const bmm_data_t *d, const float *lhs, const float *rt, float *out) {
    const int32_t rows = d->rows, depth = d->depth, cols = d->cols;
    for (int32_t i = 0; i < rows; ++i, lhs += depth) {
        const float *r = rt;
        int32_t j = 0;
        // Two columns share the row's loads; each sum adds in TFLM's order.
        for (; j + 2 <= cols; j += 2, r += 2 * depth) {
            float t0 = 0.0f, t1 = 0.0f;
            tflm_dot2_f32(&t0, &t1, r, r + depth, lhs, depth);
            *out++ = t0;
            *out++ = t1;
        }
        if (j < cols) {
            *out++ = tflm_dot_f32(0.0f, r, lhs, depth);
        }
    }
}

tflm_status_t tflm_batch_matmul_eval(tflm_eval_t *e) {
    const bmm_data_t *d = e->data;
    const uint32_t es = d->kind == BMM_FLOAT32 ? 4u : d->kind == BMM_INT16 ? 2u : 1u;
    const int32_t rows = d->rows, depth = d->depth, cols = d->cols;
    const size_t lhs_matrix = (size_t)rows * (size_t)depth * es, rhs_matrix = (size_t)cols * (size_t)depth * es;
    const uint8_t *lhs = e->in[0];
    const uint8_t *rt = e->in[1];
    if (d->adj_x) {
        uint8_t *t = e->scratch[d->lhs_scratch];
        bmm_transpose(lhs, t, d->lhs_matrices, depth, rows, es);
        lhs = t;
    }
    if (d->rhs_stored) {
        rt = bmm_words(d);
    } else if (d->rhs_transpose) {
        uint8_t *t = e->scratch[d->rhs_scratch];
        bmm_transpose(rt, t, d->rhs_matrices, depth, cols, es);
        rt = t;
    }
    const int32_t *stored_sums = d->rhs_folded
        ? (const int32_t *)(bmm_words(d) + (d->rhs_stored ? tflm_align_up((uint32_t)(d->rhs_matrices * rhs_matrix), 4) : 0))
        : NULL;
    int32_t *sums = d->rhs_folded ? NULL : (d->kind == BMM_INT8 ? e->scratch[d->sums_scratch] : NULL);
    bmm_s8_t k;
    memset(&k, 0, sizeof(k));
    if (d->kind == BMM_INT8) {
        k.rows = rows;
        k.depth = depth;
        k.cols = cols;
        k.lhs_offset = d->lhs_offset;
        k.rhs_offset = d->rhs_offset;
        k.out_zp = d->out_zp;
        tflm_out_s8_setup(&k.q, d->multiplier, d->shift, d->out_zp);
    }
    uint8_t *out = e->out[0];
    const size_t out_matrix = (size_t)rows * (size_t)cols * es;
    const uint8_t *summed = NULL;  // the right matrix whose sums are in `sums`
    for (int32_t b0 = 0; b0 < d->batch[0]; ++b0) {
        for (int32_t b1 = 0; b1 < d->batch[1]; ++b1) {
            for (int32_t b2 = 0; b2 < d->batch[2]; ++b2, out += out_matrix) {
                const uint32_t lm = (uint32_t)b0 * d->lhs_step[0] + (uint32_t)b1 * d->lhs_step[1] + (uint32_t)b2 * d->lhs_step[2];
                const uint32_t rm = (uint32_t)b0 * d->rhs_step[0] + (uint32_t)b1 * d->rhs_step[1] + (uint32_t)b2 * d->rhs_step[2];
                const uint8_t *l = lhs + lm * lhs_matrix, *r = rt + rm * rhs_matrix;
                switch (d->kind) {
                    case BMM_FLOAT32:
                        bmm_f32_matrix(d, (const float *)l, (const float *)r, (float *)out);
                        break;
                    case BMM_INT16:
                        bmm_s16_matrix(d, (const int16_t *)l, (const int16_t *)r, (int16_t *)out);
                        break;
                    default: {
                        const int32_t *s = stored_sums ? stored_sums + rm * (uint32_t)cols : sums;
                        if (!stored_sums && summed != r) {
                            bmm_col_sums((const int8_t *)r, cols, depth, k.lhs_offset, k.rhs_offset, sums);
                            summed = r;
                        }
                        bmm_s8_matrix(&k, (const int8_t *)l, (const int8_t *)r, s, (int8_t *)out);
                        break;
                    }
                }
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_BATCH_MATMUL
