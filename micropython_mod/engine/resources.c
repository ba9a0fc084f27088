// Resource variables: the records and buffers of the state models keep
// with VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE. Which resources a
// model has, their sizes and fill are the ops' own knowledge
// (kernels/resource_variables.c, through VAR_HANDLE's build_state and
// reset_state hooks); the engine keeps the records in the tail (build.c
// lays them out) and gives kernels a resource's buffer by id.
#include "interpreter.h"

tflm_status_t tflm_resource_shape(tflm_interp_t *ip, tflm_resource_shape_fn shape, uint32_t id, uint32_t *bytes,
    uint8_t *fill) {
    tflm_model_t *m = ip->model;
    if (shape(m, (int32_t)id, bytes, fill)) {
        return TFLM_OK;
    }
    return tflm_model_check(m, &ip->err) ? ip->err.status
           : tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: resource variable %u", (unsigned)id);
}

tflm_status_t tflm_reset_resources(tflm_interp_t *ip, tflm_resource_shape_fn shape) {
    tflm_resource_rec_t *res = (tflm_resource_rec_t *)tflm_arena_ptr(ip->arena, ip->resources_at);
    for (uint32_t id = 0; id < ip->n_resources; ++id) {
        uint32_t bytes;
        uint8_t fill;
        // The bytes are the sealed record's; the model gives the fill only.
        tflm_status_t st = tflm_resource_shape(ip, shape, id, &bytes, &fill);
        if (st) {
            return st;
        }
        if (res[id].bytes) {
            memset(tflm_arena_ptr(ip->arena, res[id].data), fill, res[id].bytes);
        }
    }
    return TFLM_OK;
}

void *tflm_resource_data(const tflm_interp_t *ip, int32_t id, uint32_t *bytes) {
    if (id < 0 || (uint32_t)id >= ip->n_resources) {
        return NULL;
    }
    const tflm_resource_rec_t *r = (const tflm_resource_rec_t *)tflm_arena_ptr(ip->arena, ip->resources_at) + id;
    if (r->bytes == 0) {
        return NULL;
    }
    *bytes = r->bytes;
    return tflm_arena_ptr(ip->arena, r->data);
}
