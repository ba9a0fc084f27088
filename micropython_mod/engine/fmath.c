// Placeholder: libm wrappers until the own implementations land.
#include <math.h>
#include "fmath.h"

float tflm_expf(float x) {
    return expf(x);
}

float tflm_tanhf(float x) {
    return tanhf(x);
}

double tflm_exp(double x) {
    return exp(x);
}
