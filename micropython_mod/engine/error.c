// Error messages and type names.
#include <stdarg.h>

#include "common.h"

typedef struct {
    char *buf;
    size_t len;
    size_t cap;
} tflm_fmt_out_t;

static void fmt_putc(tflm_fmt_out_t *o, char c) {
    if (o->len + 1 < o->cap) {
        o->buf[o->len++] = c;
        o->buf[o->len] = '\0';
    }
}

static void fmt_puts(tflm_fmt_out_t *o, const char *s) {
    while (*s) {
        fmt_putc(o, *s++);
    }
}

static void fmt_uint(tflm_fmt_out_t *o, uint32_t v, unsigned base) {
    char digits[12];
    int n = 0;
    do {
        unsigned d = v % base;
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    while (n) {
        fmt_putc(o, digits[--n]);
    }
}

static void fmt_va(tflm_fmt_out_t *o, const char *fmt, va_list ap) {
    for (; *fmt; ++fmt) {
        if (*fmt != '%') {
            fmt_putc(o, *fmt);
            continue;
        }
        ++fmt;
        switch (*fmt) {
            case 'd': {
                int v = va_arg(ap, int);
                if (v < 0) {
                    fmt_putc(o, '-');
                    fmt_uint(o, (uint32_t)0 - (uint32_t)v, 10);
                } else {
                    fmt_uint(o, (uint32_t)v, 10);
                }
                break;
            }
            case 'u':
                fmt_uint(o, va_arg(ap, unsigned), 10);
                break;
            case 'x':
                fmt_uint(o, va_arg(ap, unsigned), 16);
                break;
            case 's': {
                const char *s = va_arg(ap, const char *);
                fmt_puts(o, s ? s : "(null)");
                break;
            }
            case 'c':
                fmt_putc(o, (char)va_arg(ap, int));
                break;
            case '%':
                fmt_putc(o, '%');
                break;
            case '\0':
                return;
            default:
                fmt_putc(o, '%');
                fmt_putc(o, *fmt);
                break;
        }
    }
}

size_t tflm_format(char *buf, size_t cap, const char *fmt, ...) {
    tflm_fmt_out_t o = { buf, 0, cap };
    if (cap) {
        buf[0] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    fmt_va(&o, fmt, ap);
    va_end(ap);
    return o.len;
}

tflm_status_t tflm_error(tflm_error_t *err, tflm_status_t status, const char *fmt, ...) {
    err->status = status;
    err->msg[0] = '\0';
    tflm_fmt_out_t o = { err->msg, 0, sizeof(err->msg) };
    va_list ap;
    va_start(ap, fmt);
    fmt_va(&o, fmt, ap);
    va_end(ap);
    return status;
}

void tflm_error_append(tflm_error_t *err, const char *fmt, ...) {
    size_t len = strlen(err->msg);
    tflm_fmt_out_t o = { err->msg, len, sizeof(err->msg) };
    va_list ap;
    va_start(ap, fmt);
    fmt_va(&o, fmt, ap);
    va_end(ap);
}

void tflm_error_clear(tflm_error_t *err) {
    err->status = TFLM_OK;
    err->needed = 0;
    err->given = 0;
    err->msg[0] = '\0';
}

size_t tflm_type_size(unsigned type) {
    switch (type) {
        case TFLM_FLOAT32:
        case TFLM_INT32:
        case TFLM_UINT32:
            return 4;
        case TFLM_INT16:
        case TFLM_UINT16:
        case TFLM_FLOAT16:
            return 2;
        case TFLM_INT8:
        case TFLM_UINT8:
        case TFLM_BOOL:
            return 1;
        case TFLM_INT64:
        case TFLM_UINT64:
        case TFLM_FLOAT64:
        case TFLM_COMPLEX64:
            return 8;
        case TFLM_COMPLEX128:
            return 16;
        case TFLM_RESOURCE:
            // TFLM stores a resource handle as one int32.
            return 4;
        default:
            // string, variant and int4 have no fixed element size here
            return 0;
    }
}

static const char *const tflm_type_names[TFLM_TYPE_COUNT] = {
    "float32", "float16", "int32", "uint8", "int64", "string", "bool", "int16", "complex64",
    "int8", "float64", "complex128", "uint64", "resource", "variant", "uint32", "uint16", "int4",
};

const char *tflm_type_name(unsigned type) {
    return type < TFLM_TYPE_COUNT ? tflm_type_names[type] : "unknown";
}
