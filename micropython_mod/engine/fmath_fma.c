// The exact fused multiply-add glibc's FMA build computes (fmath_impl.h).
#include "fmath_impl.h"

double tflm_fmath_fma(double a, double b, double c) {
    double pl;
    double ph = two_prod(a, b, &pl);
    double tl;
    double th = two_sum(c, ph, &tl);
    return th + add_round_odd(tl, pl);
}
