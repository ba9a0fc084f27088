// The planners linked into this build, by name.
#include "planner.h"

static const tflm_planner_t *const tflm_planners[] = {
    #if TFLM_PLANNER_GREEDY
    &tflm_planner_greedy,
    &tflm_planner_tflm,
    #endif
    #if TFLM_PLANNER_LINEAR
    &tflm_planner_linear,
    #endif
    #if TFLM_PLANNER_OFFLINE
    &tflm_planner_offline,
    #endif
    NULL,
};

const tflm_planner_t *tflm_planner_at(size_t i) {
    return i < sizeof(tflm_planners) / sizeof(tflm_planners[0]) ? tflm_planners[i] : NULL;
}

const tflm_planner_t *tflm_planner_find(const char *name) {
    for (size_t i = 0; tflm_planners[i]; ++i) {
        if (strcmp(tflm_planners[i]->name, name) == 0) {
            return tflm_planners[i];
        }
    }
    return NULL;
}
