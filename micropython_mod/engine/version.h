// The version of the tflm module and of the host tools (tflm.__version__,
// `tflm-host --version`): one number for both, kept here only.
#ifndef TFLM_ENGINE_VERSION_H
#define TFLM_ENGINE_VERSION_H

#define TFLM_VERSION "0.3.0"

#endif // TFLM_ENGINE_VERSION_H
