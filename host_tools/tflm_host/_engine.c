// tflm_host._engine: the module's C engine (micropython_mod/engine and
// kernels, the same sources the firmware builds) as a CPython extension.
// The host's arena figures, plans, plan checks and host runs come from here,
// so they are the device's by construction. A thin layer, as the
// MicroPython binding is: engine errors become Python exceptions with the
// engine's messages.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>

#include "engine/interpreter.h"
#include "engine/plan_heap.h"
#include "engine/ops.h"
#include "engine/prepared.h"
#include "engine/version.h"

// ---------------------------------------------------------------------------
// Errors

// NotImplementedError naming every op the model needs and this build lacks
// (left out, or with no kernel at all), else the exception the engine's
// status stands for.
static PyObject *raise_engine(tflm_model_t *model, const tflm_error_t *err) {
    size_t n = err->status == TFLM_ERR_NOT_IMPLEMENTED && model ? tflm_interp_missing_ops_message(model, NULL, 0) : 0;
    if (n) {
        char *msg = PyMem_Malloc(n + 1);
        if (msg == NULL) {
            return PyErr_NoMemory();
        }
        tflm_interp_missing_ops_message(model, msg, n + 1);
        PyErr_SetString(PyExc_NotImplementedError, msg);
        PyMem_Free(msg);
        return NULL;
    }
    PyObject *type;
    switch (err->status) {
        case TFLM_ERR_VALUE:
            type = PyExc_ValueError;
            break;
        case TFLM_ERR_MEMORY:
            type = PyExc_MemoryError;
            break;
        case TFLM_ERR_NOT_IMPLEMENTED:
            type = PyExc_NotImplementedError;
            break;
        default:
            type = PyExc_RuntimeError;
            break;
    }
    PyErr_SetString(type, err->msg);
    return NULL;
}

// 16-byte aligned memory the engine may use as it uses a board's (malloc
// aligns to 16 on the hosts this runs on; checked).
static uint8_t *alloc_aligned(size_t len) {
    uint8_t *p = malloc(len ? len : 1);
    if (p == NULL) {
        PyErr_NoMemory();
    } else if ((uintptr_t)p % TFLM_ALIGN != 0) {
        free(p);
        PyErr_SetString(PyExc_RuntimeError, "malloc returned memory that is not 16-byte aligned");
        p = NULL;
    }
    return p;
}

// ---------------------------------------------------------------------------
// Model: a .tflite model read by the engine, from its own aligned copy.

typedef struct {
    PyObject_HEAD
    uint8_t *data;
    Py_ssize_t len;
    tflm_model_t model;
} ModelObject;

static void model_dealloc(ModelObject *self) {
    free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int model_init(ModelObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = { "data", "writable", NULL };
    Py_buffer buf;
    int writable = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|$p", names, &buf, &writable)) {
        return -1;
    }
    free(self->data);
    self->data = alloc_aligned((size_t)buf.len);
    if (self->data == NULL) {
        PyBuffer_Release(&buf);
        return -1;
    }
    memcpy(self->data, buf.buf, (size_t)buf.len);
    self->len = buf.len;
    PyBuffer_Release(&buf);
    tflm_error_t err;
    tflm_error_clear(&err);
    if (tflm_model_init(&self->model, self->data, (size_t)self->len, &err) != TFLM_OK) {
        raise_engine(NULL, &err);
        return -1;
    }
    // As the device sees bytes or a ROMFS file (a bytearray: writable).
    self->model.immutable = !writable;
    return 0;
}

// The distinct ops the model uses that this build has no kernel for.
static PyObject *model_missing_ops(ModelObject *self, PyObject *unused) {
    (void)unused;
    PyObject *out = PyList_New(0);
    char name[72];
    for (uint32_t n = 0; out && tflm_interp_missing_op(&self->model, n, name, sizeof(name)); ++n) {
        PyObject *s = PyUnicode_FromString(name);
        if (!s || PyList_Append(out, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(out);
        } else {
            Py_DECREF(s);
        }
    }
    return out;
}

// The NotImplementedError's message for the ops the model uses that this
// build has no kernel for (the firmware's), or None.
static PyObject *model_missing_ops_message(ModelObject *self, PyObject *unused) {
    (void)unused;
    size_t n = tflm_interp_missing_ops_message(&self->model, NULL, 0);
    if (n == 0) {
        Py_RETURN_NONE;
    }
    char *msg = PyMem_Malloc(n + 1);
    if (msg == NULL) {
        return PyErr_NoMemory();
    }
    tflm_interp_missing_ops_message(&self->model, msg, n + 1);
    PyObject *out = PyUnicode_FromString(msg);
    PyMem_Free(msg);
    return out;
}

static PyMethodDef model_methods[] = {
    { "missing_ops", (PyCFunction)model_missing_ops, METH_NOARGS, "Ops the model uses that have no kernel here." },
    { "missing_ops_message", (PyCFunction)model_missing_ops_message, METH_NOARGS,
      "The error's message for the ops the model uses that have no kernel here, or None." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tflm_host._engine.Model",
    .tp_doc = "Model(data, *, writable=False): a .tflite model read and checked by the engine (ValueError when "
              "malformed); writable: as the device sees a model in a bytearray.",
    .tp_basicsize = sizeof(ModelObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)model_init,
    .tp_dealloc = (destructor)model_dealloc,
    .tp_methods = model_methods,
};

// ---------------------------------------------------------------------------
// Interpreter: the model built in an arena as on the device.

typedef struct {
    PyObject_HEAD
    ModelObject *model;
    uint8_t *arena_buf;
    uint8_t *plan_buf;
    uint8_t *external_buf[TFLM_MAX_EXTERNAL];
    uint32_t n_external;
    tflm_arena_t arena;
    tflm_interp_t ip;
    bool ready;
} InterpObject;

static void interp_dealloc(InterpObject *self) {
    free(self->arena_buf);
    free(self->plan_buf);
    for (uint32_t k = 0; k < self->n_external; ++k) {
        free(self->external_buf[k]);
    }
    Py_XDECREF(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject InterpType;

// Bytes of tensor `index` of subgraph 0, -1 when there is no such tensor.
static long long tensor_bytes(tflm_model_t *m, long long index) {
    tflm_subgraph_t sg;
    tflm_model_tensor_t t;
    uint32_t elements, bytes;
    if (index < 0 || !tflm_model_subgraph(m, 0, &sg) || (uint64_t)index >= sg.tensors.count
        || !tflm_model_tensor(m, &sg, (uint32_t)index, &t) || !tflm_model_tensor_size(m, &t, &elements, &bytes)) {
        return -1;
    }
    return bytes;
}


// allocate(model, *, planner=None, plan=None, preallocated=(), tensors_only=False, run=False, arena=None,
//          forward_overlaps=False)
// The model built as tflm.Interpreter(model) builds it: measured first in a
// buffer as large as its tail (which is what tflm.arena_size() reports), and
// that measured build is the result unless the model is to run: then in an
// arena of exactly the bytes it needs, or of `arena` usable bytes, with
// MemoryError naming the needed bytes as the device gives it. A measured
// build has the head's plan but no memory behind it (an offline plan may
// place buffers gigabytes up).
static PyObject *engine_allocate(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *names[] = { "model", "planner", "plan", "preallocated", "tensors_only", "run", "arena",
        "forward_overlaps", NULL };
    ModelObject *model;
    const char *planner = NULL;
    Py_buffer plan = { 0 };
    PyObject *prealloc = NULL;
    int tensors_only = 0, run = 0, forward = 0;
    PyObject *arena_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|$zz*OppOp", names, &ModelType, &model, &planner, &plan,
        &prealloc, &tensors_only, &run, &arena_arg, &forward)) {
        return NULL;
    }
    InterpObject *self = PyObject_New(InterpObject, &InterpType);
    if (self == NULL) {
        PyBuffer_Release(&plan);
        return NULL;
    }
    self->model = model;
    Py_INCREF(model);
    self->arena_buf = NULL;
    self->plan_buf = NULL;
    self->n_external = 0;
    self->ready = false;
    tflm_model_t *m = &model->model;
    tflm_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tensors_only = tensors_only != 0;
    cfg.forward_overlaps = forward != 0;
    cfg.plan_memory = tflm_plan_heap; // as the binding: its heap, not the arena
    tflm_external_t ext[TFLM_MAX_EXTERNAL];
    tflm_plan_t words;
    tflm_error_t err;
    tflm_error_clear(&err);
    PyObject *seq = NULL;
    if (planner) {
        cfg.planner = tflm_planner_find(planner);
        if (cfg.planner == NULL) {
            PyErr_Format(PyExc_ValueError, "unknown planner '%s'", planner);
            goto fail;
        }
    }
    if (plan.buf) {
        // The plan's words, in a buffer of their own that outlives the build.
        self->plan_buf = alloc_aligned((size_t)plan.len);
        if (self->plan_buf == NULL) {
            goto fail;
        }
        memcpy(self->plan_buf, plan.buf, (size_t)plan.len);
        if (tflm_plan_from_words(self->plan_buf, (size_t)plan.len, &words, &err) != TFLM_OK) {
            raise_engine(NULL, &err);
            goto fail;
        }
        cfg.plan = &words;
        if (cfg.planner == NULL) {
            cfg.planner = tflm_planner_find("offline");
        }
    }
    if (prealloc && prealloc != Py_None) {
        seq = PySequence_Fast(prealloc, "preallocated must be a sequence of tensor indices");
        if (seq == NULL) {
            goto fail;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n > TFLM_MAX_EXTERNAL) {
            PyErr_Format(PyExc_ValueError, "at most %d tensors can be pre-allocated", TFLM_MAX_EXTERNAL);
            goto fail;
        }
        for (Py_ssize_t k = 0; k < n; ++k) {
            long long index = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, k));
            if (index == -1 && PyErr_Occurred()) {
                goto fail;
            }
            long long bytes = tensor_bytes(m, index);
            if (bytes < 0) {
                PyErr_Format(PyExc_ValueError, "tensor %lld does not exist", index);
                goto fail;
            }
            // A buffer of the tensor's own, as the device's user gives one.
            self->external_buf[self->n_external] = alloc_aligned((size_t)bytes);
            if (self->external_buf[self->n_external] == NULL) {
                goto fail;
            }
            ext[k].tensor = (uint32_t)index;
            ext[k].data = self->external_buf[self->n_external++];
            ext[k].len = (uint32_t)bytes;
        }
        cfg.external = ext;
        cfg.n_external = (uint32_t)n;
    }
    // As tflm.Interpreter(model) does: measure, then an arena of exactly that.
    uint32_t tail, work;
    if (tflm_interp_tail_size(m, &cfg, &tail, &work, &err) != TFLM_OK) {
        raise_engine(m, &err);
        goto fail;
    }
    size_t work_len = (size_t)work + TFLM_ALIGN;
    self->arena_buf = alloc_aligned(work_len);
    if (self->arena_buf == NULL) {
        goto fail;
    }
    tflm_interp_t measured;
    if (tflm_interp_measure(m, &cfg, self->arena_buf, work_len, &measured) != TFLM_OK) {
        raise_engine(m, &measured.err);
        goto fail;
    }
    if (!run && arena_arg == Py_None) {
        // The measured build, its records in the work buffer, laid out from
        // the same base as they were built.
        tflm_arena_init(&self->arena, self->arena_buf, work_len);
        self->ip = measured;
        self->ip.arena = &self->arena;
        self->ready = true;
        Py_XDECREF(seq);
        PyBuffer_Release(&plan);
        return (PyObject *)self;
    }
    free(self->arena_buf);
    self->arena_buf = NULL;
    uint32_t needed = tflm_interp_needed_bytes(&measured);
    unsigned long long size = needed;
    if (arena_arg != Py_None) {
        size = PyLong_AsUnsignedLongLong(arena_arg);
        if (PyErr_Occurred()) {
            goto fail;
        }
        if (size > TFLM_ARENA_DRY_SIZE) {
            PyErr_Format(PyExc_ValueError, "arena size %llu is too large (at most %u bytes)", size,
                (unsigned)TFLM_ARENA_DRY_SIZE);
            goto fail;
        }
    }
    self->arena_buf = alloc_aligned((size_t)size);
    if (self->arena_buf == NULL) {
        goto fail;
    }
    tflm_arena_init(&self->arena, self->arena_buf, (size_t)size);
    if (tflm_interp_init(&self->ip, m, &self->arena, &cfg) != TFLM_OK) {
        if (self->ip.err.status == TFLM_ERR_MEMORY) {
            uint32_t need = self->ip.err.needed ? self->ip.err.needed : tflm_interp_needed_in(&self->arena, &measured);
            PyErr_Format(PyExc_MemoryError, "arena too small: needs %u bytes, has %u", (unsigned)need,
                (unsigned)self->arena.size);
        } else {
            raise_engine(m, &self->ip.err);
        }
        goto fail;
    }
    self->ready = true;
    Py_XDECREF(seq);
    PyBuffer_Release(&plan);
    return (PyObject *)self;
fail:
    Py_XDECREF(seq);
    PyBuffer_Release(&plan);
    Py_DECREF(self);
    return NULL;
}

static PyObject *interp_get_int(InterpObject *self, void *what) {
    const tflm_interp_t *ip = &self->ip;
    switch ((intptr_t)what) {
        case 0:
            return PyLong_FromUnsignedLong(ip->head_bytes);
        case 1:
            return PyLong_FromUnsignedLong(ip->tail_bytes);
        case 2:
            return PyLong_FromUnsignedLong(tflm_interp_used_bytes(ip));
        case 3:
            return PyLong_FromUnsignedLong(tflm_interp_needed_bytes(ip));
        case 4:
            return PyLong_FromUnsignedLong(ip->prepare_peak);
        case 5:
            return PyLong_FromUnsignedLong(ip->n_model_tensors);
        case 6:
            return PyLong_FromUnsignedLong(ip->n_scopes);
        case 8:
            return PyLong_FromUnsignedLong(ip->model_data_bytes);
        case 9:
            return PyLong_FromUnsignedLong(ip->model_data_count);
        case 10:
            return PyLong_FromUnsignedLongLong(ip->patch.macs);
        case 11:
            return PyLong_FromUnsignedLongLong(ip->patch.whole_macs);
        case 13:
            return PyLong_FromUnsignedLong(ip->model_lists_bytes);
        case 14:
            return PyLong_FromUnsignedLong(ip->model_records_bytes);
        case 15:
            return PyLong_FromUnsignedLong(ip->model_nodes_bytes);
        case 16:
            return PyLong_FromUnsignedLong(ip->patch.start);
        case 18:
            return PyLong_FromUnsignedLong(ip->patch.mode);
        case 12:
            return Py_BuildValue("(III)", (unsigned)ip->patch.split, (unsigned)ip->patch.grid_h,
                (unsigned)ip->patch.grid_w);
        default:
            return PyLong_FromUnsignedLong(self->arena.size);
    }
}

static PyObject *interp_get_planner(InterpObject *self, void *unused) {
    (void)unused;
    return PyUnicode_FromString(self->ip.planner->name);
}

static PyGetSetDef interp_getset[] = {
    { "head", (getter)interp_get_int, NULL, "head bytes (planned tensors and scratch buffers)", (void *)0 },
    { "tail", (getter)interp_get_int, NULL, "tail bytes (records, kernel data, state)", (void *)1 },
    { "used", (getter)interp_get_int, NULL, "arena_used_bytes: head + tail", (void *)2 },
    { "needed", (getter)interp_get_int, NULL, "the smallest arena that works (tflm.arena_size)", (void *)3 },
    { "prepare_peak", (getter)interp_get_int, NULL, "bytes in use at the busiest moment of prepare()", (void *)4 },
    { "n_model_tensors", (getter)interp_get_int, NULL, "records of model tensors (scratch buffers follow)", (void *)5 },
    { "scopes", (getter)interp_get_int, NULL, "allocation scopes of the lifetimes", (void *)6 },
    { "arena_size", (getter)interp_get_int, NULL, "usable bytes of the arena it was built in", (void *)7 },
    { "model_data", (getter)interp_get_int, NULL, "a prepared model's kernel data read in place (not in the arena)",
      (void *)8 },
    { "model_data_count", (getter)interp_get_int, NULL, "operators whose kernel data is read in place", (void *)9 },
    { "model_records", (getter)interp_get_int, NULL,
      "a prepared model's constant tensors' records read in place (not in the arena)", (void *)14 },
    { "model_nodes", (getter)interp_get_int, NULL,
      "a prepared model's subgraph and node records read in place (not in the arena)", (void *)15 },
    { "model_lists", (getter)interp_get_int, NULL, "a prepared model's index lists read in place (not in the arena)",
      (void *)13 },
    { "patch_macs", (getter)interp_get_int, NULL, "multiply-accumulates of the patch-based stage", (void *)10 },
    { "patch_whole_macs", (getter)interp_get_int, NULL, "the same operators' multiply-accumulates run whole",
      (void *)11 },
    { "patch", (getter)interp_get_int, NULL,
      "the patch-based stage: (the operator after it (0: none), grid rows, grid columns)", (void *)12 },
    { "patch_start", (getter)interp_get_int, NULL, "the patch-based stage's first operator", (void *)16 },
    { "patch_mode", (getter)interp_get_int, NULL,
      "the patch-based stage's mode: PATCH_MODE_PATCHES, PATCH_MODE_ROWS or PATCH_MODE_KEEP", (void *)18 },
    { "planner", (getter)interp_get_planner, NULL, "the memory planner's name", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

// audit(): {category: (used, requested, count)} as interp.allocations() gives it.
static PyObject *interp_audit(InterpObject *self, PyObject *unused) {
    (void)unused;
    PyObject *out = PyDict_New();
    for (int k = 0; out && k < TFLM_AUDIT_COUNT; ++k) {
        const tflm_audit_t *a = &self->ip.audit[k];
        PyObject *v = Py_BuildValue("(kkk)", (unsigned long)a->used, (unsigned long)a->requested,
            (unsigned long)a->count);
        if (!v || PyDict_SetItemString(out, tflm_audit_names[k], v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(out);
        } else {
            Py_DECREF(v);
        }
    }
    return out;
}

// TFLM_AT_*: a kept variable and an output in its kernel's state are in the tail too.
static const char *const where_names[] = { "none", "head", "none", "model", "external", "tail", "tail", "tail" };

// The record of item i of records(): model tensor i, or the scratch
// buffers' after them.
static const tflm_tensor_rec_t *record_item(const tflm_interp_t *ip, uint32_t i) {
    return tflm_interp_tensor(ip, i < ip->n_model_tensors ? tflm_interp_rec_of(ip, i)
                                                          : ip->map.n_live + (i - ip->n_model_tensors));
}

// A record index as records() numbers it (model tensors, then scratch
// buffers), -1 for an omitted one.
static long record_number(const tflm_interp_t *ip, uint32_t rec) {
    return rec == TFLM_NO_INDEX ? -1 : (long)tflm_interp_tensor_of(ip, rec);
}

// The planners' records with the lifetimes, walked again (the arena keeps
// none): PyMem_Free them. NULL with an exception set on an error.
static tflm_plan_rec_t *plan_records(InterpObject *self) {
    tflm_plan_rec_t *recs = PyMem_Calloc(self->ip.n_tensors + 1, sizeof(tflm_plan_rec_t));
    if (recs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (tflm_interp_plan_records(&self->ip, recs) != TFLM_OK) {
        PyErr_SetString(PyExc_RuntimeError, self->ip.err.msg);
        PyMem_Free(recs);
        return NULL;
    }
    return recs;
}

// records(): per model tensor of all subgraphs, then per scratch buffer:
// (where, offset, bytes, first, last, type, fixed).
static PyObject *interp_records(InterpObject *self, PyObject *unused) {
    (void)unused;
    const tflm_interp_t *ip = &self->ip;
    uint32_t n = ip->n_model_tensors + (ip->n_tensors - ip->map.n_live);
    tflm_plan_rec_t *lives = plan_records(self);
    if (lives == NULL) {
        return NULL;
    }
    PyObject *out = PyList_New(n);
    for (uint32_t i = 0; out && i < n; ++i) {
        const tflm_tensor_rec_t *r = record_item(ip, i);
        uint32_t rec = i < ip->n_model_tensors ? tflm_interp_rec_of(ip, i) : ip->map.n_live + (i - ip->n_model_tensors);
        const tflm_plan_rec_t *l = (rec & TFLM_REC_CONST) ? NULL : &lives[rec];
        // An offline plan's offsets: every head buffer keeps its place once built.
        bool fixed = ip->fixed && r->where == TFLM_AT_HEAD;
        PyObject *v = Py_BuildValue("(skkiiiO)", where_names[r->where], (unsigned long)r->data,
            (unsigned long)r->bytes, l ? (int)l->first : TFLM_LIFETIME_UNSET, l ? (int)l->last : TFLM_LIFETIME_UNSET,
            (int)r->type, fixed ? Py_True : Py_False);
        if (v == NULL) {
            Py_CLEAR(out);
        } else {
            PyList_SET_ITEM(out, i, v);
        }
    }
    PyMem_Free(lives);
    return out;
}

static PyObject *index_tuple(const tflm_interp_t *ip, const uint16_t *io, uint32_t n) {
    PyObject *t = PyTuple_New(n);
    for (uint32_t k = 0; t && k < n; ++k) {
        PyTuple_SET_ITEM(t, k, PyLong_FromLong(record_number(ip, io[k])));
    }
    return t;
}

// nodes(): per operator of all subgraphs in order: (op code, inputs, outputs,
// first scratch record, scratch count); indices are those of records(),
// -1: omitted.
static PyObject *interp_nodes(InterpObject *self, PyObject *unused) {
    (void)unused;
    const tflm_interp_t *ip = &self->ip;
    PyObject *out = PyList_New(ip->n_nodes);
    for (uint32_t n = 0; out && n < ip->n_nodes; ++n) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, n);
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        const tflm_kernel_t *k = tflm_kernel_of_id(nr->kernel);
        int op = k == NULL ? -1 : (int)k->op;
        PyObject *v = Py_BuildValue("(iNNkk)", op, index_tuple(ip, io, nr->n_inputs),
            index_tuple(ip, io + nr->n_inputs, nr->n_outputs), (unsigned long)record_number(ip, nr->scratch),
            (unsigned long)nr->n_scratch);
        if (v == NULL) {
            Py_CLEAR(out);
        } else {
            PyList_SET_ITEM(out, n, v);
        }
    }
    return out;
}

// subgraphs(): (first tensor record, tensors, first node, nodes, inputs, outputs).
static PyObject *interp_subgraphs(InterpObject *self, PyObject *unused) {
    (void)unused;
    const tflm_interp_t *ip = &self->ip;
    PyObject *out = PyList_New(ip->n_subgraphs);
    for (uint32_t s = 0; out && s < ip->n_subgraphs; ++s) {
        const tflm_subgraph_rec_t *r = tflm_interp_subgraph(ip, s);
        const uint16_t *io = tflm_interp_io(ip, r->io);
        PyObject *v = Py_BuildValue("(kkkkNN)", (unsigned long)r->tensor_base, (unsigned long)r->n_tensors,
            (unsigned long)r->node_base, (unsigned long)r->n_nodes, index_tuple(ip, io, r->n_inputs),
            index_tuple(ip, io + r->n_inputs, r->n_outputs));
        if (v == NULL) {
            Py_CLEAR(out);
        } else {
            PyList_SET_ITEM(out, s, v);
        }
    }
    return out;
}

static void plan_line(void *ctx, const char *text, size_t len) {
    PyObject *lines = ctx;
    PyObject *s = PyUnicode_FromStringAndSize(text, (Py_ssize_t)len);
    if (s) {
        PyList_Append(lines, s);
        Py_DECREF(s);
    }
}

// memory_plan(width=80): the plan picture, as interp.memory_plan() prints it.
static PyObject *interp_memory_plan(InterpObject *self, PyObject *args) {
    unsigned int width = 80;
    if (!PyArg_ParseTuple(args, "|I", &width)) {
        return NULL;
    }
    PyObject *lines = PyList_New(0);
    if (lines == NULL) {
        return NULL;
    }
    tflm_plan_rec_t *recs = plan_records(self);
    if (recs == NULL) {
        Py_DECREF(lines);
        return NULL;
    }
    tflm_interp_memory_plan(&self->ip, recs, width, plan_line, lines);
    PyMem_Free(recs);
    if (PyErr_Occurred()) {
        Py_DECREF(lines);
        return NULL;
    }
    PyObject *nl = PyUnicode_FromString("\n");
    PyObject *text = nl ? PyUnicode_Join(nl, lines) : NULL;
    Py_XDECREF(nl);
    Py_DECREF(lines);
    if (text == NULL) {
        return NULL;
    }
    PyObject *end = PyUnicode_FromString("\n");
    PyObject *out = end ? PyUnicode_Concat(text, end) : NULL;
    Py_XDECREF(end);
    Py_DECREF(text);
    return out;
}

static const tflm_tensor_rec_t *io_record(InterpObject *self, Py_ssize_t i, bool output) {
    if (!self->ip.ready) {
        // Its head has no memory behind it.
        PyErr_SetString(PyExc_RuntimeError, "a measured build holds no tensors: allocate(..., run=True)");
        return NULL;
    }
    uint32_t n = output ? tflm_interp_num_outputs(&self->ip) : tflm_interp_num_inputs(&self->ip);
    if (i < 0 || (size_t)i >= n) {
        PyErr_Format(PyExc_IndexError, "model has %u %s", (unsigned)n, output ? "outputs" : "inputs");
        return NULL;
    }
    uint32_t index = output ? tflm_interp_output(&self->ip, (uint32_t)i) : tflm_interp_input(&self->ip, (uint32_t)i);
    return tflm_interp_tensor(&self->ip, index);
}

// set_input(i, data): the input's raw bytes.
static PyObject *interp_set_input(InterpObject *self, PyObject *args) {
    Py_ssize_t i;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "ny*", &i, &buf)) {
        return NULL;
    }
    const tflm_tensor_rec_t *r = io_record(self, i, false);
    if (r && (size_t)buf.len != r->bytes) {
        PyErr_Format(PyExc_ValueError, "input %zd holds %u bytes, not %zd", i, (unsigned)r->bytes, buf.len);
        r = NULL;
    }
    if (r) {
        memcpy(tflm_interp_tensor_data(&self->ip, r), buf.buf, (size_t)buf.len);
    }
    PyBuffer_Release(&buf);
    if (r == NULL) {
        return NULL;
    }
    Py_RETURN_NONE;
}

// output(i): the output's raw bytes.
static PyObject *interp_output(InterpObject *self, PyObject *args) {
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i)) {
        return NULL;
    }
    const tflm_tensor_rec_t *r = io_record(self, i, true);
    if (r == NULL) {
        return NULL;
    }
    return PyBytes_FromStringAndSize(tflm_interp_tensor_data(&self->ip, r), (Py_ssize_t)r->bytes);
}

static PyObject *interp_invoke(InterpObject *self, PyObject *unused) {
    (void)unused;
    if (!self->ip.ready) {
        PyErr_SetString(PyExc_RuntimeError, "a measured build cannot run: allocate(..., run=True)");
        return NULL;
    }
    if (tflm_interp_invoke(&self->ip) != TFLM_OK) {
        return raise_engine(NULL, &self->ip.err);
    }
    Py_RETURN_NONE;
}

static PyObject *interp_reset(InterpObject *self, PyObject *unused) {
    (void)unused;
    if (!self->ip.ready) {
        PyErr_SetString(PyExc_RuntimeError, "a measured build cannot run: allocate(..., run=True)");
        return NULL;
    }
    if (tflm_interp_reset(&self->ip) != TFLM_OK) {
        return raise_engine(NULL, &self->ip.err);
    }
    Py_RETURN_NONE;
}

static PyMethodDef interp_methods[] = {
    { "audit", (PyCFunction)interp_audit, METH_NOARGS, "The arena by category: {name: (used, requested, count)}." },
    { "records", (PyCFunction)interp_records, METH_NOARGS,
      "Per record: (where, offset, bytes, first, last, type, fixed)." },
    { "nodes", (PyCFunction)interp_nodes, METH_NOARGS,
      "Per operator: (op code, input records, output records, first scratch record, scratch count)." },
    { "subgraphs", (PyCFunction)interp_subgraphs, METH_NOARGS,
      "Per subgraph: (first tensor record, tensors, first node, nodes, input records, output records)." },
    { "memory_plan", (PyCFunction)interp_memory_plan, METH_VARARGS, "The plan picture (width columns)." },
    { "set_input", (PyCFunction)interp_set_input, METH_VARARGS, "set_input(i, data): input i's raw bytes." },
    { "output", (PyCFunction)interp_output, METH_VARARGS, "output(i): output i's raw bytes." },
    { "invoke", (PyCFunction)interp_invoke, METH_NOARGS, "Runs the model." },
    { "reset", (PyCFunction)interp_reset, METH_NOARGS, "The model's state back to where TFLM's reset() puts it." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject InterpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tflm_host._engine.Interpreter",
    .tp_doc = "An interpreter built by allocate(): records, plan and runs, as on the device.",
    .tp_basicsize = sizeof(InterpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)interp_dealloc,
    .tp_methods = interp_methods,
    .tp_getset = interp_getset,
};

// ---------------------------------------------------------------------------
// Module

static const char *const alias_names[] = { "none", "view", "in_place" };

// kernels(): (op code, custom op name or None, alias of output 0) for every
// kernel linked in.
static PyObject *engine_kernels(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (uint32_t k = 0; out && k < tflm_kernel_count; ++k) {
        #if TFLM_TEST_KERNELS
        if (tflm_kernels[k].prepare == tflm_test_kernel_prepare) {
            continue; // a test kernel, never in firmware
        }
        #endif
        PyObject *v = Py_BuildValue("(izs)", (int)tflm_kernels[k].op, tflm_kernel_custom(&tflm_kernels[k]),
            alias_names[tflm_kernels[k].alias]);
        if (!v || PyList_Append(out, v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(out);
        } else {
            Py_DECREF(v);
        }
    }
    return out;
}

// type_names(): the names of the tensor types the engine knows, by type code
// (a kernel's TFLM_TYPES covers these; models' other types reach the kernels).
static PyObject *engine_type_names(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    PyObject *out = PyTuple_New(TFLM_TYPE_COUNT);
    for (unsigned t = 0; out && t < TFLM_TYPE_COUNT; ++t) {
        PyObject *name = PyUnicode_FromString(tflm_type_name(t));
        if (!name) {
            Py_CLEAR(out);
        } else {
            PyTuple_SET_ITEM(out, t, name);
        }
    }
    return out;
}

// What kernel_data() collects: each node's data, and the index lists.
typedef struct {
    PyObject *data;   // list, by node
    PyObject *lists;  // bytearray
} export_t;

static void collect_kernel_data(void *ctx, uint32_t node, const void *data, uint32_t bytes, bool state) {
    PyObject *list = ((export_t *)ctx)->data;
    if (PyErr_Occurred() || (Py_ssize_t)node >= PyList_GET_SIZE(list) || state) {
        return; // run-time state stays in the tail
    }
    PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)bytes);
    if (b) {
        PyList_SetItem(list, (Py_ssize_t)node, b);
    }
}

// Appends an index list as the prepared data stores it: uint16 entries,
// padded to 4 bytes.
static void collect_index_list(void *ctx, const uint16_t *list, uint32_t n) {
    PyObject *out = ((export_t *)ctx)->lists;
    Py_ssize_t at = PyByteArray_GET_SIZE(out);
    if (PyErr_Occurred() || PyByteArray_Resize(out, at + tflm_prepared_put_list(NULL, list, n)) < 0) {
        return;
    }
    tflm_prepared_put_list((uint8_t *)PyByteArray_AS_STRING(out) + at, list, n);
}

// prepared_metadata(data, lists, records_map, constants, records=b""): the
// metadata buffer of a prepared model (engine/prepared.h) from each
// operator's kernel data (bytes, or None: kept in the tail) and the other
// parts as kernel_data() gives them, laid out by the engine's own writer.
static PyObject *engine_prepared_metadata(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *seq;
    Py_buffer lists, map, consts, records = { 0 };
    if (!PyArg_ParseTuple(args, "Oy*y*y*|y*", &seq, &lists, &map, &consts, &records)) {
        return NULL;
    }
    PyObject *res = NULL;
    PyObject *items = PySequence_Fast(seq, "prepared_metadata: data must be a sequence of bytes or None");
    Py_ssize_t n = items ? PySequence_Fast_GET_SIZE(items) : 0;
    const uint8_t **data = items ? PyMem_Calloc((size_t)n + 1, sizeof(*data)) : NULL;
    uint32_t *data_bytes = items ? PyMem_Calloc((size_t)n + 1, sizeof(*data_bytes)) : NULL;
    if (items == NULL || data == NULL || data_bytes == NULL) {
        goto done;
    }
    if (n > (Py_ssize_t)TFLM_MAX_RECORDS || lists.len > INT32_MAX || map.len > INT32_MAX || consts.len > INT32_MAX
        || records.len > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "prepared_metadata: too many operators or bytes");
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; ++k) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, k);
        if (item == Py_None) {
            continue;
        }
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) > INT32_MAX) {
            PyErr_Format(PyExc_TypeError, "prepared_metadata: operator %zd's data must be bytes or None", k);
            goto done;
        }
        data[k] = (const uint8_t *)PyBytes_AS_STRING(item);
        data_bytes[k] = (uint32_t)PyBytes_GET_SIZE(item);
    }
    tflm_prepared_parts_t parts = {
        .n_nodes = (uint32_t)n, .data = data, .data_bytes = data_bytes,
        .lists = lists.buf, .lists_bytes = (uint32_t)lists.len,
        .map = map.buf, .map_bytes = (uint32_t)map.len,
        .consts = consts.buf, .consts_bytes = (uint32_t)consts.len,
        .records = records.buf, .records_bytes = (uint32_t)records.len,
    };
    uint32_t size = tflm_prepared_size(&parts);
    if (size == 0) {
        PyErr_SetString(PyExc_ValueError, "prepared_metadata: the parts make no buffer (sizes out of range or "
            "not whole entries)");
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, size);
    if (res) {
        tflm_prepared_write(&parts, (uint8_t *)PyBytes_AS_STRING(res));
    }
done:
    PyMem_Free(data);
    PyMem_Free(data_bytes);
    Py_XDECREF(items);
    PyBuffer_Release(&lists);
    PyBuffer_Release(&map);
    PyBuffer_Release(&consts);
    if (records.obj != NULL) {
        PyBuffer_Release(&records);
    }
    return res;
}

// prepared_shift_consts(buffer, n_tensors, shift): a prepared model's
// metadata buffer (writable) after an edit moved the model's old bytes by
// shift: its constants' records follow them. False when the buffer is not
// laid out as this engine's (left as it is).
static PyObject *engine_prepared_shift_consts(PyObject *mod, PyObject *args) {
    (void)mod;
    Py_buffer buf;
    unsigned long n_tensors, shift;
    if (!PyArg_ParseTuple(args, "w*kk", &buf, &n_tensors, &shift)) {
        return NULL;
    }
    bool done = buf.len <= INT32_MAX && n_tensors <= UINT32_MAX
                && tflm_prepared_shift_consts(buf.buf, (uint32_t)buf.len, (uint32_t)n_tensors, (uint32_t)shift);
    PyBuffer_Release(&buf);
    return PyBool_FromLong(done);
}

// kernel_data(model): (what each operator's prepare() stores (bytes), None
// for operators with none or with run-time state; the index lists, the
// records map, the constants' records, and the subgraph and node records
// (empty when they stay in the tail) as bytes): the data of a prepared
// model, computed by the engine's own build and the kernels' own prepare()
// as the device does.
static PyObject *engine_kernel_data(PyObject *mod, PyObject *args) {
    (void)mod;
    ModelObject *model;
    if (!PyArg_ParseTuple(args, "O!", &ModelType, &model)) {
        return NULL;
    }
    tflm_model_t *m = &model->model;
    uint32_t n_nodes = 0;
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            tflm_error_t err;
            tflm_model_check(m, &err);
            return raise_engine(NULL, &err);
        }
        n_nodes += sg.operators.count;
    }
    PyObject *out = PyList_New(n_nodes);
    if (out == NULL) {
        return NULL;
    }
    for (uint32_t k = 0; k < n_nodes; ++k) {
        Py_INCREF(Py_None);
        PyList_SET_ITEM(out, k, Py_None);
    }
    tflm_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.plan_memory = tflm_plan_heap;
    PyObject *lists = PyByteArray_FromStringAndSize(NULL, 0);
    if (lists == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    export_t ex = { out, lists };
    cfg.kernel_data = collect_kernel_data;
    cfg.index_list = collect_index_list;
    cfg.kernel_data_ctx = &ex;
    tflm_error_t err;
    tflm_error_clear(&err);
    uint32_t tail, work;
    if (tflm_interp_tail_size(m, &cfg, &tail, &work, &err) != TFLM_OK) {
        Py_DECREF(out);
        Py_DECREF(lists);
        return raise_engine(m, &err);
    }
    size_t work_len = (size_t)work + TFLM_ALIGN;
    uint8_t *buf = alloc_aligned(work_len);
    if (buf == NULL) {
        Py_DECREF(out);
        Py_DECREF(lists);
        return NULL;
    }
    tflm_interp_t measured;
    tflm_status_t st = tflm_interp_measure(m, &cfg, buf, work_len, &measured);
    PyObject *map = NULL, *consts = NULL, *records = NULL;
    if (st == TFLM_OK && !PyErr_Occurred()) {
        // The subgraph and node records, unless they stay in the tail.
        records = PyBytes_FromStringAndSize(NULL, tflm_prepared_records(&measured, buf, work_len, NULL));
        if (records) {
            tflm_prepared_records(&measured, buf, work_len, (uint8_t *)PyBytes_AS_STRING(records));
        }
        // The records map as the build made it (in its work buffer).
        map = PyBytes_FromStringAndSize(NULL, 2 * (Py_ssize_t)measured.map.n_model);
        consts = PyBytes_FromStringAndSize((const char *)measured.consts,
            (Py_ssize_t)(measured.n_const * sizeof(tflm_tensor_rec_t)));
        if (map) {
            uint8_t *p = (uint8_t *)PyBytes_AS_STRING(map);
            for (uint32_t i = 0; i < measured.map.n_model; ++i) {
                uint16_t rec = tflm_interp_rec_of(&measured, i);
                p[2 * i] = (uint8_t)(rec & 0xffu);
                p[2 * i + 1] = (uint8_t)(rec >> 8);
            }
        }
    }
    free(buf);
    if (PyErr_Occurred() || (st == TFLM_OK && (map == NULL || consts == NULL || records == NULL))) {
        Py_XDECREF(map);
        Py_XDECREF(consts);
        Py_XDECREF(records);
        Py_DECREF(out);
        Py_DECREF(lists);
        return NULL;
    }
    if (st != TFLM_OK) {
        Py_DECREF(out);
        Py_DECREF(lists);
        return raise_engine(m, &measured.err);
    }
    PyObject *res = Py_BuildValue("(NNNNN)", out, PyBytes_FromStringAndSize(PyByteArray_AS_STRING(lists),
        PyByteArray_GET_SIZE(lists)), map, consts, records);
    Py_DECREF(lists);
    return res;
}

static PyMethodDef engine_methods[] = {
    { "prepared_shift_consts", engine_prepared_shift_consts, METH_VARARGS,
      "prepared_shift_consts(buffer, n_tensors, shift): the constants' records of prepared data follow bytes moved by shift" },
    { "prepared_metadata", engine_prepared_metadata, METH_VARARGS,
      "prepared_metadata(data, lists, records_map, constants, records=b''): a prepared model's metadata buffer (engine/prepared.h)" },
    { "kernel_data", (PyCFunction)engine_kernel_data, METH_VARARGS,
      "kernel_data(model): (each operator's kernel data from prepare() (bytes, None: none or run-time state), the index lists, "
      "the records map (a uint16 record per model tensor) and the constants' records (bytes))." },
    { "allocate", (PyCFunction)(void (*)(void))engine_allocate, METH_VARARGS | METH_KEYWORDS,
      "allocate(model, *, planner=None, plan=None, preallocated=(), tensors_only=False, arena=None)" },
    { "kernels", (PyCFunction)engine_kernels, METH_NOARGS, "The kernels linked in: (op code, custom name or None, alias kind)." },
    { "type_names", (PyCFunction)engine_type_names, METH_NOARGS, "The tensor types the engine names, by type code." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef engine_module = {
    PyModuleDef_HEAD_INIT, "tflm_host._engine", "The tflm module's C engine, on the host.", -1, engine_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__engine(void) {
    if (PyType_Ready(&ModelType) < 0 || PyType_Ready(&InterpType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&engine_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&ModelType);
    Py_INCREF(&InterpType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0
        || PyModule_AddObject(m, "Interpreter", (PyObject *)&InterpType) < 0
        || PyModule_AddStringConstant(m, "VERSION", TFLM_VERSION) < 0
        || PyModule_AddIntConstant(m, "MAX_CALL_DEPTH", TFLM_MAX_CALL_DEPTH) < 0
        || PyModule_AddIntConstant(m, "ALIGN", TFLM_ALIGN) < 0
        || PyModule_AddIntConstant(m, "MAX_EXTERNAL", TFLM_MAX_EXTERNAL) < 0
        || PyModule_AddStringConstant(m, "PREPARED_METADATA", TFLM_PREPARED_METADATA) < 0
        || PyModule_AddIntConstant(m, "PREPARED_MAGIC", TFLM_PREPARED_MAGIC) < 0
        || PyModule_AddIntConstant(m, "PREPARED_VERSION", TFLM_PREPARED_VERSION) < 0
        || PyModule_AddIntConstant(m, "PREPARED_HEADER_WORDS", TFLM_PREPARED_HEADER_WORDS) < 0
        || PyModule_AddIntConstant(m, "PREPARED_ALIGN", TFLM_PREPARED_ALIGN) < 0
        || PyModule_AddIntConstant(m, "TENSOR_RECORD_BYTES", (long)sizeof(tflm_tensor_rec_t)) < 0
        || PyModule_AddStringConstant(m, "PATCH_METADATA", TFLM_PATCH_METADATA) < 0
        || PyModule_AddIntConstant(m, "PATCH_MAGIC", TFLM_PATCH_MAGIC) < 0
        || PyModule_AddIntConstant(m, "PATCH_VERSION", TFLM_PATCH_VERSION) < 0
        || PyModule_AddIntConstant(m, "PATCH_MODE_PATCHES", TFLM_PATCH_MODE_PATCHES) < 0
        || PyModule_AddIntConstant(m, "PATCH_MODE_ROWS", TFLM_PATCH_MODE_ROWS) < 0
        || PyModule_AddIntConstant(m, "PATCH_MODE_KEEP", TFLM_PATCH_MODE_KEEP) < 0
        || PyModule_AddIntConstant(m, "PATCH_MAX_OPS", TFLM_PATCH_MAX_OPS) < 0
        || PyModule_AddIntConstant(m, "PATCH_MAX_GRID", TFLM_PATCH_MAX_GRID) < 0
        || PyModule_AddIntConstant(m, "PLAN_MAX_WIDTH", TFLM_PLAN_MAX_WIDTH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
