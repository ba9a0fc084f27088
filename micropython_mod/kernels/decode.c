// TFLM_DECODE (TFLM's custom op that decompresses constant tensors at run
// time, inserted by its model compressor before each operator that reads a
// compressed tensor). Inputs come in pairs, (encoded data, ancillary data),
// both constants, one output per pair. The ancillary data starts with a
// 16-byte header: byte 0 the decode type, byte 1 its version (1), byte 4
// the type's own version (1); what follows the header is the type's table.
//   LUT (0): byte 5 the index width (low 3 bits, 1 to 7), byte 6 the value
//     table stride (elements per channel); the encoded data is the indices,
//     packed most significant bit first; element i is table[channel * stride
//     + index]. Any output type TFLM decodes (bool, int8, int16, int32,
//     int64, float32).
//   Pruning (2): the encoded data is a bit per element (most significant
//     first): 1 takes the table's next value, 0 the zero point.
//   Huffman (1): byte 5 holds the table width (bit 0: 32-bit entries, else
//     16-bit, int8 output only) and the first lookup's width (bits 7-4, plus
//     1); the encoded data is 32-bit words of codewords, most significant bit
//     first. An entry is a symbol (top bit; its low bits the value, its 4-bit
//     count the codeword bits of the last lookup, the rest put back) or a
//     link (count + 1 bits more index a table `value` entries further on).
// Channels are TFLM's: the output's quantization scales, along the first
// axis, or the last when that is the quantized dimension (TFLM reads the
// channels nowhere else: the header's axis field is not used).
//
// TFLM reads outside the encoded data or the tables when they are shorter
// than the output needs; prepare() decodes everything once with every read
// checked and refuses such models. eval() checks its reads too (a writable
// model's bytes may change after the build): a RuntimeError then.
#include "kernels/kernels.h"

#if TFLM_KERNEL_TFLM_DECODE

#define DECODE_DCM_BYTES (16)

enum { DECODE_LUT = 0, DECODE_HUFFMAN = 1, DECODE_PRUNE = 2 };

typedef struct {
    uint8_t kind;
    uint8_t size;           // bytes per output element
    uint8_t bits;           // LUT: index width; Huffman: the first lookup's width
    uint8_t last_axis;      // channel = element % channels
    uint8_t wide;           // Huffman: 32-bit table entries
    uint8_t zp;             // Pruning: the zero point (one for all channels)
    uint8_t per_channel_zp; // Pruning int8: zero points per channel, at zp_at
    uint8_t pad;
    uint32_t count;         // output elements
    uint32_t channels;
    uint32_t stride;        // LUT: table elements per channel
    uint32_t zp_at;         // offset of the channels' zero points in the data
    uint32_t entries;       // table entries after the header
    uint32_t enc_bytes;     // encoded data's bytes
} decode_item_t;

typedef struct {
    uint32_t n;
    decode_item_t item[];
} decode_data_t;

// -- bit readers -------------------------------------------------------------

// Bits from a byte string, most significant first.
typedef struct {
    const uint8_t *p;
    uint32_t pos;           // next byte
    uint32_t acc;
    uint32_t held;          // bits in acc
} decode_bits_t;

static inline uint32_t decode_take(decode_bits_t *b, uint32_t n) {
    while (b->held < n) {
        b->acc = (b->acc << 8) | b->p[b->pos++];
        b->held += 8;
    }
    b->held -= n;
    return (b->acc >> b->held) & ((1u << n) - 1);
}

// Huffman's reader: a bit position in 32-bit words, TFLM reading whole words.
typedef struct {
    const uint8_t *p;
    uint32_t words;         // whole words in the encoded data
    uint32_t at;            // bit position
} decode_stream_t;

static inline bool decode_stream_get(decode_stream_t *s, uint32_t n, uint32_t *v) {
    uint32_t end = s->at + n; // n is 1 to 16: the bits span at most 3 bytes
    if (n == 0 || ((end - 1) >> 5) >= s->words) {
        return false;
    }
    uint32_t last = (end - 1) >> 3, x = 0;
    for (uint32_t i = s->at >> 3; i <= last; ++i) {
        x = (x << 8) | s->p[i];
    }
    *v = (x >> (8 * (last + 1) - end)) & ((1u << n) - 1);
    s->at = end;
    return true;
}

// -- decoding (eval, and prepare's checked dry run) --------------------------

static inline void decode_put(uint8_t *out, uint32_t i, const uint8_t *value, uint32_t size) {
    if (out != NULL) {
        memcpy(out + (size_t)i * size, value, size);
    }
}

// The channel of element i of a per-channel table: cycling along the last
// axis, else in runs of count / channels.
typedef struct {
    uint32_t channel;
    uint32_t left;          // elements before the next channel (first axis)
    uint32_t per_channel;
} decode_channel_t;

static inline decode_channel_t decode_channel_start(const decode_item_t *it) {
    const uint32_t per_channel = it->last_axis ? 1 : it->count / it->channels;
    decode_channel_t c = { 0, per_channel, per_channel };
    return c;
}

static inline void decode_channel_next(const decode_item_t *it, decode_channel_t *c) {
    if (it->last_axis) {
        c->channel = c->channel + 1 == it->channels ? 0 : c->channel + 1;
    } else if (--c->left == 0) {
        c->channel++;
        c->left = c->per_channel;
    }
}

// LUT: false when a table position is past the table (`out` NULL: only checks).
static bool decode_lut(const decode_item_t *it, const uint8_t *enc, const uint8_t *table, uint8_t *out) {
    decode_bits_t b = { enc, 0, 0, 0 };
    decode_channel_t ch = decode_channel_start(it);
    for (uint32_t i = 0; i < it->count; ++i) {
        uint32_t at = ch.channel * it->stride + decode_take(&b, it->bits);
        if (at >= it->entries) {
            return false;
        }
        decode_put(out, i, table + (size_t)at * it->size, it->size);
        decode_channel_next(it, &ch);
    }
    return true;
}

// Pruning: false when the mask takes more values than the table holds.
static bool decode_prune(const decode_item_t *it, const uint8_t *data, const uint8_t *mask, const uint8_t *table,
    uint8_t *out) {
    decode_channel_t ch = decode_channel_start(it);
    uint32_t taken = 0;
    for (uint32_t i = 0; i < it->count; ++i) {
        if ((mask[i >> 3] >> (7 - (i & 7))) & 1u) {
            if (taken >= it->entries) {
                return false;
            }
            decode_put(out, i, table + (size_t)taken++ * it->size, it->size);
        } else if (out != NULL) {
            // the zero point as the element type (an int8 widened)
            // (data is NULL when only checking, with out: its zero points
            // are read here only.)
            int64_t zp = it->per_channel_zp ? ((const int8_t *)(data + it->zp_at))[ch.channel] : (int8_t)it->zp;
            uint8_t v[8];
            if (it->size == 1) {
                v[0] = (uint8_t)zp;
            } else if (it->size == 2) {
                int16_t z = (int16_t)zp;
                memcpy(v, &z, 2);
            } else if (it->size == 4) {
                int32_t z = (int32_t)zp;
                memcpy(v, &z, 4);
            } else {
                memcpy(v, &zp, 8);
            }
            decode_put(out, i, v, it->size);
        }
        decode_channel_next(it, &ch);
    }
    return true;
}

// Huffman: false when a read leaves the codewords' words or the tables.
static bool decode_huffman(const decode_item_t *it, const uint8_t *enc, const uint8_t *table, uint8_t *out) {
    const uint32_t found = it->wide ? 0x80000000u : 0x8000u;
    const uint32_t count_shift = it->wide ? 27 : 11;
    const uint32_t value_mask = it->wide ? 0x07FFFFFFu : 0x07FFu;
    const uint32_t entries = it->entries;
    decode_stream_t s = { enc, it->enc_bytes / 4, 0 };
    for (uint32_t i = 0; i < it->count; ++i) {
        uint32_t bits = it->bits, index = 0;
        if (!decode_stream_get(&s, bits, &index)) {
            return false;
        }
        uint32_t at = index, v = 0;
        for (;;) {
            if (at >= entries) {
                return false;
            }
            v = it->wide ? tflm_rd_u32(table + 4 * (size_t)at) : tflm_rd_u16(table + 2 * (size_t)at);
            if (v & found) {
                break;
            }
            bits = ((v >> count_shift) & 15u) + 1;
            if (!decode_stream_get(&s, bits, &index)) {
                return false;
            }
            at += (v & value_mask) + index; // at < entries and both parts < 2^27: no wrap
        }
        // the symbol's low bits, as TFLM's store into int8 / int16 keeps them
        uint8_t sym[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
        decode_put(out, i, sym, it->size);
        uint32_t used = (v >> count_shift) & 15u;
        if (bits > used) {
            s.at -= bits - used; // the bits of the last read the codeword did not use
        }
    }
    return true;
}

// -- prepare -----------------------------------------------------------------

static tflm_status_t decode_bad(tflm_prepare_t *p, uint32_t k, const char *what) {
    return tflm_error(p->err, TFLM_ERR_VALUE, "decode of output %u: %s", (unsigned)k, what);
}

// Channels as TFLM takes them from the output's quantization.
static tflm_status_t decode_channels(tflm_prepare_t *p, uint32_t k, const tflm_tinfo_t *out, decode_item_t *it) {
    it->channels = 1;
    it->last_axis = 0;
    if (out->n_scales == 0 || out->t.zero_point.count == 0) {
        return TFLM_OK;
    }
    it->channels = out->n_scales;
    if (out->quantized_dimension == (int32_t)out->ndims - 1 && it->channels > 1) {
        it->last_axis = 1;
    } else if (out->quantized_dimension != 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "decode of output %u: quantized dimension %d",
            (unsigned)k, (int)out->quantized_dimension);
    }
    if (it->count % it->channels) {
        // TFLM leaves the rest unwritten (first axis) or writes past the output (last)
        return decode_bad(p, k, "elements are not whole channels");
    }
    return TFLM_OK;
}

static bool decode_type_ok(unsigned kind, unsigned type, bool wide) {
    switch (kind) {
        case DECODE_LUT:
            return type == TFLM_BOOL || type == TFLM_FLOAT32 || type == TFLM_INT8 || type == TFLM_INT16
                   || type == TFLM_INT32 || type == TFLM_INT64;
        case DECODE_PRUNE:
            return type == TFLM_BOOL || type == TFLM_FLOAT32 || type == TFLM_INT8 || type == TFLM_INT16
                   || type == TFLM_INT32 || type == TFLM_INT64;
        default:
            return type == TFLM_INT8 || (wide && type == TFLM_INT16);
    }
}

// Fills item k from its tensors; with `check`, decodes it once with every
// read checked. Per-channel zero points go to data + *zp_at (data NULL:
// only counted), which moves past them.
static tflm_status_t decode_item(tflm_prepare_t *p, uint32_t k, decode_item_t *it, int8_t *data, uint32_t *zp_at,
    bool check) {
    tflm_tinfo_t enc, anc, out;
    tflm_status_t st;
    if ((st = tflm_prep_input(p, 2 * k, &enc)) || (st = tflm_prep_input(p, 2 * k + 1, &anc))
        || (st = tflm_prep_output(p, k, &out))) {
        return st;
    }
    if (enc.index < 0 || anc.index < 0 || !enc.data || !anc.data) {
        return decode_bad(p, k, "encoded and ancillary data must be constants");
    }
    if (anc.bytes < DECODE_DCM_BYTES) {
        return decode_bad(p, k, "ancillary data shorter than its 16-byte header");
    }
    const uint8_t *dcm = anc.data;
    if (dcm[1] != 1 || dcm[4] != 1) {
        return decode_bad(p, k, "version is not 1");
    }
    if (dcm[0] != DECODE_LUT && dcm[0] != DECODE_HUFFMAN && dcm[0] != DECODE_PRUNE) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "decode of output %u: decode type %u (TFLM's are 0 to 2)",
            (unsigned)k, (unsigned)dcm[0]);
    }
    memset(it, 0, sizeof(*it));
    it->kind = dcm[0];
    it->wide = it->kind == DECODE_HUFFMAN && (dcm[5] & 1);
    if (!decode_type_ok(it->kind, out.type, it->wide)) {
        return tflm_prep_unsupported_type(p, "decode output", out.type);
    }
    it->size = (uint8_t)tflm_type_size(out.type);
    it->count = out.elements;
    const uint8_t *table = dcm + DECODE_DCM_BYTES;
    uint32_t table_bytes = anc.bytes - DECODE_DCM_BYTES;
    it->entries = table_bytes / it->size;
    it->enc_bytes = enc.bytes;
    bool ok = true;
    if (it->kind == DECODE_LUT) {
        it->bits = dcm[5] & 7;
        it->stride = dcm[6];
        if (it->bits == 0) {
            return decode_bad(p, k, "index width 0");
        }
        if ((st = decode_channels(p, k, &out, it))) {
            return st;
        }
        if (((uint64_t)it->count * it->bits + 7) / 8 > enc.bytes) {
            return decode_bad(p, k, "encoded data shorter than the indices");
        }
        ok = !check || decode_lut(it, enc.data, table, NULL);
    } else if (it->kind == DECODE_PRUNE) {
        if ((st = decode_channels(p, k, &out, it))) {
            return st;
        }
        bool nonzero = false;
        uint32_t n_zp = out.n_scales ? it->channels : 0;
        if (n_zp && out.t.zero_point.count < n_zp) {
            return decode_bad(p, k, "fewer zero points than scales");
        }
        for (uint32_t c = 0; c < n_zp; ++c) {
            nonzero |= tflm_prep_zero_point(p, &out, c) != 0;
        }
        if (nonzero && out.type != TFLM_INT8) {
            return decode_bad(p, k, "zero points must be 0 for this type");
        }
        // an int8 as TFLM stores it
        it->zp = (uint8_t)(n_zp ? tflm_prep_zero_point(p, &out, 0) : 0);
        if (it->channels > 1 && nonzero) {
            it->per_channel_zp = 1;
            it->zp_at = *zp_at;
            for (uint32_t c = 0; c < it->channels && data != NULL; ++c) {
                data[it->zp_at + c] = (int8_t)tflm_prep_zero_point(p, &out, c);
            }
            *zp_at += it->channels;
        }
        if ((it->count + 7) / 8 > enc.bytes) {
            return decode_bad(p, k, "encoded data shorter than the element mask");
        }
        ok = !check || decode_prune(it, NULL, enc.data, table, NULL);
    } else {
        it->bits = (uint8_t)((dcm[5] >> 4) + 1);
        it->entries = table_bytes / (it->wide ? 4 : 2);
        ok = !check || decode_huffman(it, enc.data, table, NULL);
    }
    if (!ok) {
        return decode_bad(p, k, "its encoded data reads outside the data or the tables");
    }
    return TFLM_OK;
}

tflm_status_t tflm_tflm_decode_prepare(tflm_prepare_t *p) {
    uint32_t n_in = tflm_prep_num_inputs(p), n = tflm_prep_num_outputs(p);
    if (n == 0 || n_in != 2 * n) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs and %u outputs, expected two inputs per output",
            (unsigned)n_in, (unsigned)n);
    }
    // the items, then the per-channel zero points after them
    uint32_t head = sizeof(decode_data_t) + n * sizeof(decode_item_t), bytes = head;
    decode_item_t it;
    tflm_status_t st;
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = decode_item(p, k, &it, NULL, &bytes, true))) {
            return st;
        }
    }
    decode_data_t *d = tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->n = n;
    bytes = head;
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = decode_item(p, k, &d->item[k], (int8_t *)d, &bytes, false))) {
            return st;
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_tflm_decode_eval(tflm_eval_t *e) {
    const decode_data_t *d = e->data;
    for (uint32_t k = 0; k < d->n; ++k) {
        const decode_item_t *it = &d->item[k];
        const uint8_t *enc = e->in[2 * k];
        const uint8_t *table = (const uint8_t *)e->in[2 * k + 1] + DECODE_DCM_BYTES;
        uint8_t *out = e->out[k];
        // prepare() decoded the same bytes; reads are checked again in case
        // a writable model's bytes changed since
        bool ok;
        if (it->kind == DECODE_LUT) {
            ok = decode_lut(it, enc, table, out);
        } else if (it->kind == DECODE_PRUNE) {
            ok = decode_prune(it, (const uint8_t *)d, enc, table, out);
        } else {
            ok = decode_huffman(it, enc, table, out);
        }
        if (!ok) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "decode of output %u reads outside its data: the model changed",
                (unsigned)k);
        }
    }
    return TFLM_OK;
}

#endif
