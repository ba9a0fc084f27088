// Which ops a model uses that this build has no kernel for (see build.h),
// and the message that says so: an op the build left out (TFLM_OPS) with how
// to build it in, an op no kernel of this project implements as such; and
// the tensor types of its operators that their kernels were built without
// (TFLM_TYPES), with how to build them in.
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

// The TFLM_OPS flag of opcode entry `c` when this project has a kernel for
// its op (linked in or not), else NULL.
static const char *opcode_flag(tflm_model_t *m, uint32_t c) {
    tflm_fb_vec_t custom = { 0, 0 };
    int32_t code = tflm_model_opcode(m, c, &custom);
    if (m->fb.bad || code < 0) {
        return NULL;
    }
    if (code != TFLM_OP_CUSTOM) {
        bool known = code < TFLM_OP_COUNT && ((tflm_known_builtins[code / 8] >> (code % 8)) & 1);
        return known ? tflm_op_name(code) : NULL;
    }
    for (const char *name = tflm_known_customs; *name;) {
        const size_t len = strlen(name);
        const char *flag = name + len + 1;
        if (len == custom.count && memcmp(name, m->fb.buf + custom.pos, len) == 0) {
            return flag;
        }
        name = flag + strlen(flag) + 1;
    }
    return NULL;
}

// Text written into a bounded buffer, counting all of it.
typedef struct {
    char *buf;
    size_t cap;
    size_t len;         // of the whole text, whether it fits or not
} msg_t;

static void msg_add(msg_t *w, const char *s) {
    for (; *s; ++s, ++w->len) {
        if (w->len + 1 < w->cap) {
            w->buf[w->len] = *s;
        }
    }
    if (w->cap) {
        w->buf[w->len + 1 < w->cap ? w->len : w->cap - 1] = '\0';
    }
}

// The missing ops with (known) or without a kernel in this project, comma-separated.
static uint32_t msg_missing(msg_t *w, tflm_model_t *m, bool known) {
    char name[72];
    uint32_t count = 0;
    for (uint32_t n = 0; tflm_interp_missing_op(m, n, name, sizeof(name)); ++n) {
        // the nth distinct missing op's first opcode entry, for its flag
        bool is_known = false;
        for (uint32_t c = 0; c < m->opcodes.count; ++c) {
            char other[72];
            if (opcode_missing(m, c)) {
                opcode_name(m, c, other, sizeof(other));
                if (strcmp(other, name) == 0) {
                    is_known = opcode_flag(m, c) != NULL;
                    break;
                }
            }
        }
        if (is_known == known) {
            msg_add(w, count++ ? ", " : "");
            msg_add(w, name);
        }
    }
    return count;
}

// Of the flags of the model's ops this project has a kernel for, the
// smallest above `last` (NULL: the first), NULL after the last.
static const char *next_flag(tflm_model_t *m, const char *last) {
    const char *next = NULL;
    for (uint32_t c = 0; c < m->opcodes.count; ++c) {
        const char *f = opcode_used(m, c) ? opcode_flag(m, c) : NULL;
        if (f && (!last || strcmp(f, last) > 0) && (!next || strcmp(f, next) < 0)) {
            next = f;
        }
    }
    return next;
}

// The flags of every op of the model this project has a kernel for, in
// increasing order, space-separated (what TFLM_OPS needs for this model).
static void msg_flags(msg_t *w, tflm_model_t *m) {
    const char *sep = "";
    for (const char *f = next_flag(m, NULL); f; f = next_flag(m, f)) {
        msg_add(w, sep);
        msg_add(w, f);
        sep = " ";
    }
}

// The types the engine names (bits 0 .. TFLM_TYPE_COUNT - 1): a model's
// other types reach the kernels, which refuse them as unsupported.
#define NAMED_TYPES ((1u << TFLM_TYPE_COUNT) - 1u)

// The types (bit t: type t) of the tensors in index list `io`.
static uint32_t io_types(tflm_model_t *m, const tflm_subgraph_t *sg, tflm_fb_vec_t io) {
    uint32_t types = 0;
    for (uint32_t k = 0; k < io.count; ++k) {
        int32_t i = tflm_model_index(m, io, k);
        tflm_model_tensor_t t;
        if (i >= 0 && (uint32_t)i < sg->tensors.count && tflm_model_tensor(m, sg, (uint32_t)i, &t) && t.type < 32u) {
            types |= 1u << t.type;
        }
    }
    return types;
}

// The named types of the tensors that the operators of opcode entry `c`
// read and write (inputs and outputs, the tensors tflm_type_enabled() may
// leave out code for).
static uint32_t opcode_types(tflm_model_t *m, uint32_t c) {
    uint32_t types = 0;
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return 0;
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, &sg, i, &op)) {
                return 0;
            }
            if (op.opcode_index == c) {
                types |= io_types(m, &sg, op.inputs) | io_types(m, &sg, op.outputs);
            }
        }
    }
    return types & NAMED_TYPES;
}

// The named types of the model's tensors that ops with flag `flag` read and
// write; *left_out: those of them its kernel in this build was built
// without (none when the build has no kernel for it).
static uint32_t flag_types(tflm_model_t *m, const char *flag, uint32_t *left_out) {
    uint32_t used = 0, have = TFLM_ALL_TYPES;
    for (uint32_t c = 0; c < m->opcodes.count; ++c) {
        // (flags are pointers into the same tables: one op, one pointer)
        if (opcode_used(m, c) && opcode_flag(m, c) == flag) {
            used |= opcode_types(m, c);
            const tflm_kernel_t *k = tflm_kernel_for_opcode(m, c, NULL);
            have = k ? (uint32_t)k->types : have;
        }
    }
    *left_out = used & ~have;
    return used;
}

// Whether an operator's kernel was built without a type of its tensors.
static bool types_left_out(tflm_model_t *m) {
    if (!TFLM_TYPES_LEFT_OUT) {
        return false;
    }
    for (uint32_t c = 0; c < m->opcodes.count && !m->fb.bad; ++c) {
        const tflm_kernel_t *k = tflm_kernel_for_opcode(m, c, NULL);
        if (k && (opcode_types(m, c) & ~(uint32_t)k->types) != 0) {
            return true;
        }
    }
    return false;
}

// With all: "FLAG:type,type FLAG2:type" for every op of the model this
// project has a kernel for (what TFLM_TYPES needs for this model); without:
// "FLAG type, FLAG2 type", the types left out.
static void msg_types(msg_t *w, tflm_model_t *m, bool all) {
    const char *sep = "";
    for (const char *f = next_flag(m, NULL); f; f = next_flag(m, f)) {
        uint32_t left_out, used = flag_types(m, f, &left_out);
        uint32_t types = all ? used : left_out;
        for (unsigned t = 0; t < TFLM_TYPE_COUNT; ++t) {
            if (((types >> t) & 1u) == 0) {
                continue;
            }
            if (all && (types & ((1u << t) - 1u))) {
                msg_add(w, ",");
            } else {
                msg_add(w, sep);
                msg_add(w, f);
                msg_add(w, all ? ":" : " ");
                sep = all ? " " : ", ";
            }
            msg_add(w, tflm_type_name(t));
        }
    }
}

size_t tflm_interp_missing_ops_message(tflm_model_t *m, char *buf, size_t cap) {
    msg_t w = { buf, cap, 0 }, none = { NULL, 0, 0 };
    msg_add(&w, "");
    if (m->fb.bad) {
        return 0;
    }
    uint32_t left_out = msg_missing(&none, m, true), unknown = msg_missing(&none, m, false);
    bool types = types_left_out(m);
    if (left_out + unknown == 0 && !types) {
        return 0;
    }
    msg_add(&w, "model uses ");
    if (left_out) {
        msg_add(&w, "ops this firmware was built without: ");
        msg_missing(&w, m, true);
        msg_add(&w, " (build them in: make firmware TFLM_OPS=\"");
        msg_flags(&w, m);
        msg_add(&w, "\", this model's ops; tflm-host ops MODEL... prints them)");
    }
    if (types) {
        msg_add(&w, left_out ? ", and types this firmware was built without: " : "types this firmware was built without: ");
        msg_types(&w, m, false);
        msg_add(&w, " (build them in: make firmware TFLM_TYPES=\"");
        msg_types(&w, m, true);
        msg_add(&w, "\", this model's types; tflm-host ops MODEL... prints them)");
    }
    if (unknown) {
        msg_add(&w, left_out || types ? ", and ops no kernel of tflm implements: " : "ops no kernel of tflm implements: ");
        msg_missing(&w, m, false);
    }
    return w.len;
}

// Checks that every operator has a kernel built for its tensors' types; the
// error names the missing ones.
tflm_status_t tflm_build_check_ops(tflm_interp_t *ip) {
    tflm_model_t *m = ip->model;
    tflm_error_t *err = &ip->err;
    if (ip->tensors_only) {
        return tflm_model_check(m, err);
    }
    char msg[TFLM_ERROR_MSG_LEN];
    if (tflm_interp_missing_ops_message(m, msg, sizeof(msg))) {
        // the whole message: tflm_interp_missing_ops_message() (the binding's)
        return tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "%s", msg);
    }
    return tflm_model_check(m, err);
}
