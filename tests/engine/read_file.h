// The engine's test programs read models, inputs and plans whole from files.
#ifndef TFLM_TESTS_READ_FILE_H
#define TFLM_TESTS_READ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The file's bytes in a malloc'd buffer (at least one byte long), or NULL.
static inline uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

#endif
