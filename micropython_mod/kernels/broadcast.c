// Broadcast loop planning and walking (see broadcast.h).
#include "kernels/broadcast.h"
#include "engine/quant.h"

#if TFLM_KERNEL_ADD || TFLM_KERNEL_SUB || TFLM_KERNEL_MUL || TFLM_KERNEL_DIV \
    || TFLM_KERNEL_MINIMUM || TFLM_KERNEL_MAXIMUM || TFLM_KERNEL_EQUAL || TFLM_KERNEL_NOT_EQUAL \
    || TFLM_KERNEL_GREATER || TFLM_KERNEL_GREATER_EQUAL || TFLM_KERNEL_LESS || TFLM_KERNEL_LESS_EQUAL \
    || TFLM_KERNEL_LOGICAL_AND || TFLM_KERNEL_LOGICAL_OR || TFLM_KERNEL_FLOOR_DIV || TFLM_KERNEL_FLOOR_MOD \
    || TFLM_KERNEL_SQUARED_DIFFERENCE || TFLM_KERNEL_SELECT_V2 \
    || TFLM_KERNEL_BROADCAST_TO || TFLM_KERNEL_PRELU

// Extent of dimension i counted from the last one, 1 beyond the rank.
static int32_t dim_from_end(const tflm_tinfo_t *t, uint32_t i) {
    return i < t->ndims ? t->dims[t->ndims - 1u - i] : 1;
}

tflm_status_t tflm_binary_io(tflm_prepare_t *p, tflm_tinfo_t *in1, tflm_tinfo_t *in2, tflm_tinfo_t *out) {
    return tflm_prep_io_2_1(p, in1, in2, out);
}

tflm_status_t tflm_binary_same_types(tflm_prepare_t *p, const tflm_tinfo_t *in1, const tflm_tinfo_t *in2,
    const tflm_tinfo_t *out) {
    if (in1->type != out->type || in2->type != out->type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input types %s and %s differ from the output's %s",
            tflm_type_name(in1->type), tflm_type_name(in2->type), tflm_type_name(out->type));
    }
    return TFLM_OK;
}

tflm_status_t tflm_arith_prepare(tflm_prepare_t *p, const char *name, const uint8_t *types, uint32_t n_types,
    uint32_t activation_field, tflm_arith_t *a) {
    tflm_status_t st = tflm_binary_io(p, &a->in1, &a->in2, &a->out);
    if (st || (st = tflm_prep_type_in(p, "output", &a->out, types, n_types, &a->kind))
        || (st = tflm_binary_same_types(p, &a->in1, &a->in2, &a->out))) {
        return st;
    }
    a->quantized = a->out.type == TFLM_INT8 || a->out.type == TFLM_INT16;
    if (a->quantized && (a->in1.n_scales == 0 || a->in2.n_scales == 0 || a->out.n_scales == 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized %s needs quantized inputs and output", name);
    }
    a->activation = tflm_prep_opt_u8(p, activation_field, TFLM_ACT_NONE);
    if (a->quantized && a->activation > TFLM_ACT_RELU6) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fused activation %u is not supported",
            (unsigned)a->activation);
    }
    if (a->quantized) {
        // The clamp is set up again when the data is stored (arith_range).
        int32_t lo, hi;
        if ((st = tflm_prep_activation_range(p, a->activation, a->out.scale, a->out.zero_point,
                 a->out.type == TFLM_INT8 ? -128 : -32768, a->out.type == TFLM_INT8 ? 127 : 32767, &lo, &hi))) {
            return st;
        }
    }
    return tflm_bcast_plan(p, &a->in1, &a->in2, &a->out, &a->plan);
}

static void arith_range(const tflm_arith_t *a, tflm_bound_t *min, tflm_bound_t *max) {
    if (a->out.type == TFLM_FLOAT32) {
        tflm_activation_range_float(a->activation, &min->f, &max->f);
    } else if (!a->quantized) {
        tflm_activation_range_int32(a->activation, &min->i, &max->i);
    } else {
        int32_t qmin = a->out.type == TFLM_INT8 ? -128 : -32768;
        int32_t qmax = a->out.type == TFLM_INT8 ? 127 : 32767;
        (void)tflm_activation_range_quantized(a->activation, a->out.scale, a->out.zero_point, qmin, qmax, &min->i,
            &max->i);  // (checked by tflm_arith_prepare)
    }
}

void tflm_arith_store(const tflm_arith_t *a, uint8_t *kind, tflm_bound_t *act_min, tflm_bound_t *act_max,
    tflm_arith_offsets_t *offsets) {
    *kind = a->kind;
    arith_range(a, act_min, act_max);
    if (a->quantized) {
        offsets->in1 = -a->in1.zero_point;
        offsets->in2 = -a->in2.zero_point;
        offsets->out = a->out.zero_point;
    }
}

tflm_arith_data_t *tflm_arith_alloc(tflm_prepare_t *p, const tflm_arith_t *a) {
    tflm_arith_data_t *d = tflm_bcast_alloc(p, &a->plan, (uint32_t)sizeof(tflm_arith_data_t));
    if (d != NULL) {
        tflm_arith_store(a, &d->kind, &d->act_min, &d->act_max, &d->off);
    }
    return d;
}

// The plan of `k` inputs (2 or 3); steps[j] is input j's step array.
static tflm_status_t plan_inputs(tflm_prepare_t *p, const tflm_tinfo_t *const *in, uint32_t k,
    const tflm_tinfo_t *out, tflm_bcast_plan_t *plan) {
    int32_t *steps[3] = { plan->step1, plan->step2, plan->step3 };
    uint32_t acc[3] = { 1, 1, 1 };
    uint32_t rank = out->ndims;
    for (uint32_t j = 0; j < k; ++j) {
        rank = TFLM_MAX(rank, in[j]->ndims);
    }
    bool empty = false;
    plan->n = 0;
    plan->inputs = (int32_t)k;
    for (uint32_t i = 0; i < rank; ++i) {
        int32_t o = dim_from_end(out, i), d[3], s[3];
        for (uint32_t j = 0; j < k; ++j) {
            d[j] = dim_from_end(in[j], i);
            if (d[j] != 1 && d[j] != o) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "input shapes do not broadcast to the output shape");
            }
        }
        if (o == 0) {
            empty = true;
        }
        if (o == 1) {
            continue; // every input has 1 here too
        }
        // Fuse with the loop inside it when every input continues it alike:
        // still broadcast, or still contiguous.
        int32_t last = plan->n - 1;
        bool fuse = last >= 0;
        for (uint32_t j = 0; j < k; ++j) {
            s[j] = d[j] == 1 ? 0 : (int32_t)acc[j];
            if (fuse && !(steps[j][last] == 0 ? s[j] == 0 : s[j] == (int32_t)acc[j] && s[j] != 0)) {
                fuse = false;
            }
        }
        if (fuse) {
            plan->extent[last] *= o;
        } else {
            plan->extent[plan->n] = o;
            for (uint32_t j = 0; j < k; ++j) {
                steps[j][plan->n] = s[j];
            }
            plan->n++;
        }
        for (uint32_t j = 0; j < k; ++j) {
            acc[j] *= (uint32_t)d[j];
        }
    }
    if (empty) {
        plan->n = 0;
    } else if (plan->n == 0) {
        // One element everywhere.
        plan->n = 1;
        plan->extent[0] = 1;
        for (uint32_t j = 0; j < k; ++j) {
            steps[j][0] = 0;
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_bcast_plan(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b,
    const tflm_tinfo_t *out, tflm_bcast_plan_t *plan) {
    const tflm_tinfo_t *in[2] = { a, b };
    return plan_inputs(p, in, 2, out, plan);
}

tflm_status_t tflm_bcast_plan3(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b,
    const tflm_tinfo_t *c, const tflm_tinfo_t *out, tflm_bcast_plan_t *plan) {
    const tflm_tinfo_t *in[3] = { a, b, c };
    return plan_inputs(p, in, 3, out, plan);
}

void *tflm_bcast_alloc(tflm_prepare_t *p, const tflm_bcast_plan_t *plan, uint32_t header) {
    uint8_t *d = tflm_prep_alloc(p, header + tflm_bcast_bytes(plan));
    if (d != NULL) {
        tflm_bcast_store(plan, (int32_t *)(void *)(d + header));
    }
    return d;
}

void *tflm_bcast_data(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b, const tflm_tinfo_t *out,
    uint32_t header, tflm_status_t *st) {
    tflm_bcast_plan_t plan;
    if ((*st = tflm_bcast_plan(p, a, b, out, &plan))) {
        return NULL;
    }
    void *d = tflm_bcast_alloc(p, &plan, header);
    if (d == NULL) {
        *st = tflm_prep_status(p);
    }
    return d;
}

void *tflm_binary_data(tflm_prepare_t *p, const uint8_t *types, uint32_t n_types, uint32_t header,
    tflm_tinfo_t io[3], uint8_t *kind, tflm_status_t *st) {
    if ((*st = tflm_binary_io(p, &io[0], &io[1], &io[2]))
        || (*st = tflm_prep_type_in(p, "output", &io[2], types, n_types, kind))
        || (*st = tflm_binary_same_types(p, &io[0], &io[1], &io[2]))) {
        return NULL;
    }
    return tflm_bcast_data(p, &io[0], &io[1], &io[2], header, st);
}

void tflm_bcast_store(const tflm_bcast_plan_t *plan, int32_t *dst) {
    int32_t n = plan->n;
    dst[0] = n;
    for (int32_t i = 0; i < n; ++i) {
        dst[1 + i] = plan->extent[i];
        dst[1 + n + i] = plan->step1[i];
        dst[1 + 2 * n + i] = plan->step2[i];
        if (plan->inputs == 3) {
            dst[1 + 3 * n + i] = plan->step3[i];
        }
    }
}

// The first row of a plan of `k` inputs; k is a constant where inlined.
static inline bool begin_inputs(tflm_bcast_iter_t *it, const int32_t *plan, int32_t k) {
    it->plan = plan;
    it->n = plan[0];
    it->at1 = 0;
    it->at2 = 0;
    it->at3 = 0;
    it->out = 0;
    if (it->n == 0) {
        return false;
    }
    it->len = plan[1];
    it->inc1 = plan[1 + it->n];
    it->inc2 = plan[1 + 2 * it->n];
    it->inc3 = k == 3 ? plan[1 + 3 * it->n] : 0;
    for (int32_t i = 0; i < it->n; ++i) {
        it->idx[i] = 0;
    }
    return true;
}

// The next row, like an odometer over the outer dimensions from `from` on
// (1: every row; 2: the rows of dimension 1 taken by the caller).
static inline bool next_inputs(tflm_bcast_iter_t *it, int32_t k, int32_t from) {
    const int32_t n = it->n;
    const int32_t *extent = it->plan + 1, *step1 = extent + n, *step2 = step1 + n, *step3 = step2 + n;
    it->out += (uint32_t)it->len * (uint32_t)(from == 2 && n > 1 ? extent[1] : 1);
    for (int32_t d = from; d < n; ++d) {
        it->at1 += (uint32_t)step1[d];
        it->at2 += (uint32_t)step2[d];
        if (k == 3) {
            it->at3 += (uint32_t)step3[d];
        }
        if (++it->idx[d] < extent[d]) {
            return true;
        }
        // Wrapped around: back to the start of this dimension.
        it->at1 -= (uint32_t)step1[d] * (uint32_t)extent[d];
        it->at2 -= (uint32_t)step2[d] * (uint32_t)extent[d];
        if (k == 3) {
            it->at3 -= (uint32_t)step3[d] * (uint32_t)extent[d];
        }
        it->idx[d] = 0;
    }
    return false;
}

bool tflm_bcast_begin(tflm_bcast_iter_t *it, const int32_t *plan) {
    return begin_inputs(it, plan, 2);
}

bool tflm_bcast_next(tflm_bcast_iter_t *it) {
    return next_inputs(it, 2, 1);
}

bool tflm_bcast_next_block(tflm_bcast_iter_t *it) {
    return next_inputs(it, 2, 2);
}

#if TFLM_KERNEL_SELECT_V2
bool tflm_bcast3_begin(tflm_bcast_iter_t *it, const int32_t *plan) {
    return begin_inputs(it, plan, 3);
}

bool tflm_bcast3_next(tflm_bcast_iter_t *it) {
    return next_inputs(it, 3, 1);
}
#endif

#endif
