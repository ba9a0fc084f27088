// The head's plan as text, as TFLM's PrintMemoryPlan draws it (see interpreter.h).
#include "interpreter.h"
#include "overlap.h"

char tflm_interp_plan_char(const tflm_interp_t *ip, uint32_t record) {
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (record >= ip->map.n_live && !(record & TFLM_REC_CONST)) {
        return '#';
    }
    uint32_t tensor = tflm_interp_tensor_of(ip, record);
    return tensor < sizeof(digits) - 1 ? digits[tensor] : '*';
}

void tflm_interp_memory_plan(const tflm_interp_t *ip, const tflm_plan_rec_t *recs, uint32_t width,
    void (*line)(void *ctx, const char *text, size_t len), void *ctx) {
    char text[TFLM_PLAN_MAX_WIDTH + 48];
    width = TFLM_MAX(8u, TFLM_MIN(width, (uint32_t)TFLM_PLAN_MAX_WIDTH));
    // As TFLM's picture: the head spread over the width, at least a byte a column.
    uint32_t span = TFLM_MAX(ip->head_bytes, width);
    int32_t last = -1;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_plan_rec_t *r = &recs[i];
        if (r->where == TFLM_AT_HEAD) {
            last = TFLM_MAX(last, (int32_t)r->last);
        }
    }
    size_t n = tflm_format(text, sizeof(text), "head %u bytes over %u columns; row n: during operator n-1 (row 0: inputs);",
        (unsigned)ip->head_bytes, (unsigned)width);
    line(ctx, text, n);
    n = tflm_format(text, sizeof(text), "0-9a-zA-Z: tensor 0-61, *: higher tensors, #: scratch buffer, !: overlap");
    line(ctx, text, n);
    for (int32_t scope = 0; scope <= last; ++scope) {
        size_t pre = tflm_format(text, sizeof(text), "%s%d: ", scope < 10 ? "  " : scope < 100 ? " " : "", (int)scope);
        char *row = text + pre;
        memset(row, '.', width);
        uint32_t live = 0;
        for (uint32_t i = 0; i < ip->n_tensors; ++i) {
            const tflm_plan_rec_t *r = &recs[i];
            if (r->where != TFLM_AT_HEAD || scope < r->first || scope > r->last) {
                continue;
            }
            uint32_t size = tflm_planned_size(r);
            live += size;
            uint32_t c0 = (uint32_t)((uint64_t)r->data * width / span);
            uint32_t c1 = (uint32_t)((uint64_t)(r->data + size) * width / span);
            char c = tflm_interp_plan_char(ip, i);
            for (uint32_t col = c0; col < c1 && col < width; ++col) {
                row[col] = row[col] == '.' ? c : '!';
            }
        }
        n = pre + width;
        n += tflm_format(text + n, sizeof(text) - n, " %u", (unsigned)live);
        line(ctx, text, n);
    }
    // The overlapped pairs ('!' above where they share bytes).
    tflm_plan_view_t v = tflm_interp_plan_view(ip, (tflm_plan_rec_t *)(uintptr_t)recs);
    for (uint32_t y = 0; y < ip->map.n_live; ++y) {
        const tflm_plan_rec_t *ry = &recs[y];
        for (uint32_t x = 0; ry->where == TFLM_AT_HEAD && x < ip->map.n_live; ++x) {
            const tflm_plan_rec_t *rx = &recs[x];
            tflm_overlap_t o;
            const bool below = ry->data < rx->data;
            if (rx->where != TFLM_AT_HEAD || rx->last != ry->first || ry->data == rx->data
                || ry->data + tflm_planned_size(ry) <= rx->data || rx->data + tflm_planned_size(rx) <= ry->data
                || !tflm_overlap_distance(&v, y, x, &o)) {
                continue;
            }
            n = tflm_format(text, sizeof(text), "overlap: tensor %u written over tensor %u (read last by the same "
                "operator), %u bytes %s it (%u needed)", (unsigned)tflm_interp_tensor_of(ip, y),
                (unsigned)tflm_interp_tensor_of(ip, x),
                (unsigned)(below ? rx->data - ry->data : ry->data - rx->data), below ? "below" : "above",
                (unsigned)(below ? o.below : o.up));
            line(ctx, text, n);
        }
    }
}
