// Which ops a model uses that this build has no kernel for (see build.h).
#include "build.h"
#include "ops.h"
#include "schema.h"

// True when some operator of the model uses opcode entry `c`.
static bool opcode_used(tflm_model_t *m, uint32_t c) {
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return false;
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            uint32_t t = tflm_fb_vec_table(&m->fb, sg.operators, i);
            if (tflm_fb_u32(&m->fb, t, TFLM_OPERATOR_OPCODE_INDEX, 0) == c) {
                return true;
            }
        }
    }
    return false;
}

// Writes the name of opcode entry `c` ("CONV_2D", "CUSTOM:Name", "BUILTIN_300").
static void opcode_name(tflm_model_t *m, uint32_t c, char *name, size_t cap) {
    tflm_fb_vec_t custom = { 0, 0 };
    int32_t code = tflm_model_opcode(m, c, &custom);
    const char *builtin = tflm_op_name(code);
    tflm_error_t e;
    if (code == TFLM_OP_CUSTOM && custom.count) {
        char cname[64];
        uint32_t n = TFLM_MIN(custom.count, (uint32_t)sizeof(cname) - 1);
        memcpy(cname, m->fb.buf + custom.pos, n);
        cname[n] = '\0';
        tflm_error(&e, TFLM_OK, "CUSTOM:%s", cname);
    } else if (builtin) {
        tflm_error(&e, TFLM_OK, "%s", builtin);
    } else {
        tflm_error(&e, TFLM_OK, "BUILTIN_%d", (int)code);
    }
    size_t len = strlen(e.msg);
    len = len < cap ? len : cap - 1;
    memcpy(name, e.msg, len);
    name[len] = '\0';
}

// A used opcode with no kernel in this build.
static bool opcode_missing(tflm_model_t *m, uint32_t c) {
    return tflm_kernel_for_opcode(m, c, NULL) == NULL && !m->fb.bad && opcode_used(m, c);
}

bool tflm_interp_missing_op(tflm_model_t *m, uint32_t nth, char *name, size_t cap) {
    char other[72];
    for (uint32_t c = 0; c < m->opcodes.count && !m->fb.bad; ++c) {
        if (!opcode_missing(m, c)) {
            continue;
        }
        opcode_name(m, c, name, cap);
        bool seen = false;
        for (uint32_t c2 = 0; c2 < c && !seen; ++c2) {
            if (opcode_missing(m, c2)) {
                opcode_name(m, c2, other, sizeof(other));
                seen = strcmp(name, other) == 0;
            }
        }
        if (!seen && nth-- == 0) {
            return true;
        }
    }
    return false;
}

// Checks that every operator has a kernel; the error names the missing ones.
tflm_status_t tflm_build_check_ops(tflm_interp_t *ip) {
    tflm_model_t *m = ip->model;
    tflm_error_t *err = &ip->err;
    if (ip->tensors_only) {
        return tflm_model_check(m, err);
    }
    char name[72];
    for (uint32_t n = 0; tflm_interp_missing_op(m, n, name, sizeof(name)); ++n) {
        if (n == 0) {
            tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "model uses ops this firmware does not include: %s", name);
        } else {
            tflm_error_append(err, ", %s", name);
        }
    }
    if (err->status == TFLM_ERR_NOT_IMPLEMENTED) {
        return err->status;
    }
    return tflm_model_check(m, err);
}

