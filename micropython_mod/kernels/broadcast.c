// Broadcast loop planning and walking (see broadcast.h).
#include "kernels/broadcast.h"

#if TFLM_KERNEL_ADD || TFLM_KERNEL_SUB || TFLM_KERNEL_MUL || TFLM_KERNEL_DIV \
    || TFLM_KERNEL_MINIMUM || TFLM_KERNEL_MAXIMUM || TFLM_KERNEL_PRELU

// Extent of dimension i counted from the last one, 1 beyond the rank.
static int32_t dim_from_end(const tflm_tinfo_t *t, uint32_t i) {
    return i < t->ndims ? t->dims[t->ndims - 1u - i] : 1;
}

tflm_status_t tflm_binary_io(tflm_prepare_t *p, tflm_tinfo_t *in1, tflm_tinfo_t *in2, tflm_tinfo_t *out) {
    tflm_status_t st;
    if ((st = tflm_prep_expect_io(p, 2, 2, 1)) || (st = tflm_prep_input(p, 0, in1))
        || (st = tflm_prep_input(p, 1, in2)) || (st = tflm_prep_output(p, 0, out))) {
        return st;
    }
    if (in1->index < 0 || in2->index < 0 || out->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an input or the output is missing");
    }
    return TFLM_OK;
}

tflm_status_t tflm_binary_same_types(tflm_prepare_t *p, const tflm_tinfo_t *in1, const tflm_tinfo_t *in2,
    const tflm_tinfo_t *out) {
    if (in1->type != out->type || in2->type != out->type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input types %s and %s differ from the output's %s",
            tflm_type_name(in1->type), tflm_type_name(in2->type), tflm_type_name(out->type));
    }
    return TFLM_OK;
}

tflm_status_t tflm_bcast_plan(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b,
    const tflm_tinfo_t *out, tflm_bcast_plan_t *plan) {
    uint32_t rank = TFLM_MAX(out->ndims, TFLM_MAX(a->ndims, b->ndims));
    uint32_t acc1 = 1, acc2 = 1;
    bool empty = false;
    plan->n = 0;
    for (uint32_t i = 0; i < rank; ++i) {
        int32_t o = dim_from_end(out, i), d1 = dim_from_end(a, i), d2 = dim_from_end(b, i);
        if ((d1 != 1 && d1 != o) || (d2 != 1 && d2 != o)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input shapes do not broadcast to the output shape");
        }
        if (o == 0) {
            empty = true;
        }
        if (o == 1) {
            continue; // both inputs have 1 here too
        }
        int32_t s1 = d1 == 1 ? 0 : (int32_t)acc1;
        int32_t s2 = d2 == 1 ? 0 : (int32_t)acc2;
        int32_t k = plan->n - 1;
        // Fuse with the loop inside it when both inputs continue it alike:
        // still broadcast, or still contiguous.
        if (k >= 0 && (plan->step1[k] == 0 ? s1 == 0 : s1 == (int32_t)acc1 && s1 != 0)
            && (plan->step2[k] == 0 ? s2 == 0 : s2 == (int32_t)acc2 && s2 != 0)) {
            plan->extent[k] *= o;
        } else {
            plan->extent[plan->n] = o;
            plan->step1[plan->n] = s1;
            plan->step2[plan->n] = s2;
            plan->n++;
        }
        acc1 *= (uint32_t)d1;
        acc2 *= (uint32_t)d2;
    }
    if (empty) {
        plan->n = 0;
    } else if (plan->n == 0) {
        // One element everywhere.
        plan->n = 1;
        plan->extent[0] = 1;
        plan->step1[0] = 0;
        plan->step2[0] = 0;
    }
    return TFLM_OK;
}

void tflm_bcast_store(const tflm_bcast_plan_t *plan, int32_t *dst) {
    int32_t n = plan->n;
    dst[0] = n;
    for (int32_t i = 0; i < n; ++i) {
        dst[1 + i] = plan->extent[i];
        dst[1 + n + i] = plan->step1[i];
        dst[1 + 2 * n + i] = plan->step2[i];
    }
}

bool tflm_bcast_begin(tflm_bcast_iter_t *it, const int32_t *plan) {
    it->plan = plan;
    it->n = plan[0];
    it->at1 = 0;
    it->at2 = 0;
    it->out = 0;
    if (it->n == 0) {
        return false;
    }
    it->len = plan[1];
    it->inc1 = plan[1 + it->n];
    it->inc2 = plan[1 + 2 * it->n];
    for (int32_t i = 0; i < it->n; ++i) {
        it->idx[i] = 0;
    }
    return true;
}

bool tflm_bcast_next(tflm_bcast_iter_t *it) {
    const int32_t n = it->n;
    const int32_t *extent = it->plan + 1, *step1 = extent + n, *step2 = step1 + n;
    it->out += (uint32_t)it->len;
    for (int32_t d = 1; d < n; ++d) {
        it->at1 += (uint32_t)step1[d];
        it->at2 += (uint32_t)step2[d];
        if (++it->idx[d] < extent[d]) {
            return true;
        }
        // Wrapped around: back to the start of this dimension.
        it->at1 -= (uint32_t)step1[d] * (uint32_t)extent[d];
        it->at2 -= (uint32_t)step2[d] * (uint32_t)extent[d];
        it->idx[d] = 0;
    }
    return false;
}

#endif
