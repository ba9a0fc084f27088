// Shared definitions of the tflm engine: status codes, errors, tensor types.
// The engine is plain C99 with no MicroPython dependency, so it can be built
// and fuzzed on a host.
#ifndef TFLM_ENGINE_COMMON_H
#define TFLM_ENGINE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tflm_config.h"

typedef enum {
    TFLM_OK = 0,
    TFLM_ERR_VALUE,           // malformed model, bad argument: ValueError
    TFLM_ERR_MEMORY,          // arena too small: MemoryError
    TFLM_ERR_NOT_IMPLEMENTED, // op or type not supported: NotImplementedError
    TFLM_ERR_RUNTIME,         // failure while running: RuntimeError
} tflm_status_t;

#define TFLM_ERROR_MSG_LEN (200)

typedef struct _tflm_error_t {
    tflm_status_t status;
    uint32_t needed; // with TFLM_ERR_MEMORY: bytes the arena must have
    uint32_t given;  // with TFLM_ERR_MEMORY: bytes it has
    char msg[TFLM_ERROR_MSG_LEN];
} tflm_error_t;

// Sets status and message and returns status. The format knows %d (int),
// %u (unsigned), %x (unsigned, hex), %s and %c; the engine avoids libc's
// printf so bare-metal builds stay small and behave alike.
tflm_status_t tflm_error(tflm_error_t *err, tflm_status_t status, const char *fmt, ...);
// Appends to the message without changing the status.
void tflm_error_append(tflm_error_t *err, const char *fmt, ...);
void tflm_error_clear(tflm_error_t *err);
// Formats into buf (always NUL-terminated); returns the length written.
size_t tflm_format(char *buf, size_t cap, const char *fmt, ...);

// Tensor element types, numbered as in the TFLite schema.
typedef enum {
    TFLM_FLOAT32 = 0,
    TFLM_FLOAT16 = 1,
    TFLM_INT32 = 2,
    TFLM_UINT8 = 3,
    TFLM_INT64 = 4,
    TFLM_STRING = 5,
    TFLM_BOOL = 6,
    TFLM_INT16 = 7,
    TFLM_COMPLEX64 = 8,
    TFLM_INT8 = 9,
    TFLM_FLOAT64 = 10,
    TFLM_COMPLEX128 = 11,
    TFLM_UINT64 = 12,
    TFLM_RESOURCE = 13,
    TFLM_VARIANT = 14,
    TFLM_UINT32 = 15,
    TFLM_UINT16 = 16,
    TFLM_INT4 = 17,
    TFLM_TYPE_COUNT = 18,
} tflm_type_t;

// Bytes per element, 0 for types the engine cannot hold in memory.
size_t tflm_type_size(unsigned type);
const char *tflm_type_name(unsigned type);

// Every buffer in the arena starts on this boundary, as in TFLM.
#define TFLM_ALIGN (16u)

static inline uint32_t tflm_align_up(uint32_t n, uint32_t a) {
    return (n + a - 1u) & ~(a - 1u);
}

// Unaligned little-endian reads; all targets are little-endian.
static inline uint16_t tflm_rd_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
static inline uint32_t tflm_rd_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
static inline int32_t tflm_rd_i32(const uint8_t *p) {
    return (int32_t)tflm_rd_u32(p);
}
static inline uint64_t tflm_rd_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
// Element i of int64 data, which converters align to 4 bytes only: never
// loaded through an int64_t pointer (undefined, and faults on some cores).
static inline int64_t tflm_ld_i64(const void *data, uint32_t i) {
    int64_t v;
    memcpy(&v, (const uint8_t *)data + 8u * i, sizeof(v));
    return v;
}

// A float's bits and back. C99 defines reading the other member of a union;
// compilers turn it into a plain register move.
typedef union {
    float f;
    uint32_t u;
} tflm_f32_pun_t;
static inline uint32_t tflm_f32_bits(float f) {
    return ((tflm_f32_pun_t){ .f = f }).u;
}
static inline float tflm_f32_from(uint32_t u) {
    return ((tflm_f32_pun_t){ .u = u }).f;
}
static inline float tflm_rd_f32(const uint8_t *p) {
    return tflm_f32_from(tflm_rd_u32(p));
}

// For small loops that take an element operation as a function pointer:
// inlined, they compile to the loop with the operation written in.
// TFLM_NOINLINE: a function whose locals must not join its caller's frame
// (the caller's frame would then hold them under every call it makes).
#if defined(__GNUC__)
#define TFLM_ALWAYS_INLINE inline __attribute__((always_inline))
#define TFLM_NOINLINE __attribute__((noinline))
#else
#define TFLM_ALWAYS_INLINE inline
#define TFLM_NOINLINE
#endif

#define TFLM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TFLM_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif // TFLM_ENGINE_COMMON_H
