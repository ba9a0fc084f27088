// The planners' memory (tflm_config_t.plan_memory) from the C library's
// heap, for programs on a host: the host tools' engine and the engine's
// test programs. The binding gives MicroPython's heap instead
// (binding/plan.c); no device build includes this header.
#ifndef TFLM_ENGINE_PLAN_HEAP_H
#define TFLM_ENGINE_PLAN_HEAP_H

#include <stdint.h>
#include <stdlib.h>

static inline void *tflm_plan_heap(void *old, uint32_t bytes) {
    if (old != NULL) {
        free(old);
        return NULL;
    }
    return malloc(bytes);
}

#endif // TFLM_ENGINE_PLAN_HEAP_H
