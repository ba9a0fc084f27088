// Build-time choice of what the tflm module links in: the policy, written
// by hand. Each kernel's own flags are generated from the kernel table
// (kernels/kernel_config.h, included below).
//
// Every part is on unless the build says otherwise. To link only some
// kernels, build with -DTFLM_KERNELS_DEFAULT=0 and -DTFLM_KERNEL_<OP>=1 for
// each op wanted (`make ... TFLM_OPS="FULLY_CONNECTED QUANTIZE"` does this;
// `tflm-host ops MODEL...` prints the setting a set of models needs).
//
// Each kernel is built for every tensor type unless TFLM_TYPES_<OP> (or
// TFLM_TYPES, for every op without its own) lists fewer, as a sum of the
// TFLM_T_<TYPE> bits: -DTFLM_TYPES_CONV_2D=TFLM_T_INT32+TFLM_T_INT8 leaves
// out CONV_2D's float32 and int16 code (`make ...
// TFLM_TYPES="CONV_2D:int32,int8"` does this; `tflm-host ops MODEL...`
// prints the setting). A model whose operator reads or writes a tensor of a
// type its kernel was built without is refused when an interpreter is built
// (engine/missing_ops.c); kernels test tflm_type_enabled() (engine/kernel.h).
#ifndef TFLM_CONFIG_H
#define TFLM_CONFIG_H

#ifndef TFLM_KERNELS_DEFAULT
#define TFLM_KERNELS_DEFAULT (1)
#endif

#include "kernels/kernel_config.h"

// A test kernel (CUSTOM op) for the engine's host tests; never in firmware.
#ifndef TFLM_TEST_KERNELS
#define TFLM_TEST_KERNELS (0)
#endif

// Memory planners. A firmware that only runs models with complete offline
// plans can leave out the greedy planner (and the linear one).
#ifndef TFLM_PLANNER_GREEDY
#define TFLM_PLANNER_GREEDY (1)
#endif
#ifndef TFLM_PLANNER_LINEAR
#define TFLM_PLANNER_LINEAR (1)
#endif
#ifndef TFLM_PLANNER_OFFLINE
#define TFLM_PLANNER_OFFLINE (1)
#endif

// Patch-based stages (engine/patch.h, TflmPatchSchedule metadata written by
// `tflm-host prepare --max-extra-macs`): engine/patch.c and the kernels'
// window, slice and span hooks. A build for models without a schedule can
// leave them out (`make ... TFLM_PATCH=0`; `tflm-host ops MODEL...` says
// when the models allow it): a model with one is then refused with
// NotImplementedError when an interpreter is built.
#ifndef TFLM_PATCH
#define TFLM_PATCH (1)
#endif

#endif // TFLM_CONFIG_H
