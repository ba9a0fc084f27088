// Included first by the files holding the int8 inner loops (before any
// other header, so every function of the file gets the same options and
// still inlines). Two GCC passes work against these loops: reassociation
// splits a block's running sums into partial products that no longer fit
// the registers, and the first scheduling pass hoists loads ahead of their
// uses, which spills the sums too. Off here, the loops stay as written
// (measured on Cortex-M3 and M4: 2.3 and 1.4 instructions per MAC instead of
// 2.75 and 1.7). And short copy and fill loops stay loops rather than calls
// to memcpy and memset, which cost more than they copy at these lengths.
// Integer code only: float evaluation order is unaffected.
#ifndef TFLM_KERNELS_LOOP_OPT_H
#define TFLM_KERNELS_LOOP_OPT_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__arm__)
#pragma GCC optimize("no-tree-reassoc", "no-schedule-insns", "no-tree-loop-distribute-patterns")
#endif

#endif // TFLM_KERNELS_LOOP_OPT_H
