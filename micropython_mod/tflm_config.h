// Build-time choice of what the tflm module links in.
//
// Every part is on unless the build says otherwise. To link only some
// kernels, build with -DTFLM_KERNELS_DEFAULT=0 and -DTFLM_KERNEL_<OP>=1 for
// each op wanted (`make ... TFLM_OPS="FULLY_CONNECTED QUANTIZE"` does this;
// `tflm-host ops MODEL...` prints the setting a set of models needs).
#ifndef TFLM_CONFIG_H
#define TFLM_CONFIG_H

#ifndef TFLM_KERNELS_DEFAULT
#define TFLM_KERNELS_DEFAULT (1)
#endif

#ifndef TFLM_KERNEL_FULLY_CONNECTED
#define TFLM_KERNEL_FULLY_CONNECTED TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_QUANTIZE
#define TFLM_KERNEL_QUANTIZE TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_DEQUANTIZE
#define TFLM_KERNEL_DEQUANTIZE TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_VAR_HANDLE
#define TFLM_KERNEL_VAR_HANDLE TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_ASSIGN_VARIABLE
#define TFLM_KERNEL_ASSIGN_VARIABLE TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_READ_VARIABLE
#define TFLM_KERNEL_READ_VARIABLE TFLM_KERNELS_DEFAULT
#endif
#ifndef TFLM_KERNEL_CALL_ONCE
#define TFLM_KERNEL_CALL_ONCE TFLM_KERNELS_DEFAULT
#endif

// A test kernel (CUSTOM op) for the engine's host tests; never in firmware.
#ifndef TFLM_TEST_KERNELS
#define TFLM_TEST_KERNELS (0)
#endif

// Memory planners.
#ifndef TFLM_PLANNER_GREEDY
#define TFLM_PLANNER_GREEDY (1)
#endif
#ifndef TFLM_PLANNER_LINEAR
#define TFLM_PLANNER_LINEAR (1)
#endif

#endif // TFLM_CONFIG_H
