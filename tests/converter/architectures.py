"""Common small architectures, random weights, converted by
TensorFlow's own converter: float32 and full-integer int8 (int8 input and
output), some with float16 weights too. Run with a Python that has
tensorflow-cpu (`make converter-check` makes one in build/); never part of
`make test`.

    python architectures.py OUT_DIR [NAME ...]
    python architectures.py --run MODEL INPUTS.npz OUTPUTS.npz

The second form runs a model in TensorFlow Lite's own interpreter (the
third opinion report.py asks for where this engine and TFLM disagree on
whether a model can run): inputs input_0..., outputs output_0....

Each model goes to OUT_DIR/<name>_<float|int8|float16>.tflite; a conversion the
converter refuses is reported on stdout (`<file> FAILED <first line>`) and
skipped. Each architecture converts in a process of its own: TF's
converter aborts the process on some graphs (int8 recurrent layers)."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _models():
    """name -> function building the Keras model (TF imported here only)."""
    import keras
    import tensorflow as tf

    L = keras.layers
    K = keras.ops

    def classifier_cnn():
        # The classifier's last op as users convert it: tf.argmax (int64 out).
        x = i = L.Input((32, 32, 3))
        for c in (8, 16):
            x = L.MaxPooling2D()(L.Conv2D(c, 3, padding="same", activation="relu")(x))
        x = L.Softmax()(L.Dense(10)(L.Flatten()(x)))
        return keras.Model(i, L.Lambda(lambda t: tf.argmax(t, -1))(x))

    def mobilenet():
        x = i = L.Input((32, 32, 3))
        x = L.ReLU(6.0)(L.Conv2D(8, 3, strides=2, padding="same")(x))
        for c in (16, 24):
            y = L.ReLU(6.0)(L.Conv2D(c * 2, 1)(x))
            y = L.ReLU(6.0)(L.DepthwiseConv2D(3, padding="same")(y))
            x = L.Conv2D(c, 1)(y)
        return keras.Model(i, L.Dense(5)(L.GlobalAveragePooling2D()(x)))

    def resnet():
        x = i = L.Input((16, 16, 8))
        for _ in range(2):
            y = L.Conv2D(8, 3, padding="same", activation="relu")(x)
            y = L.BatchNormalization()(L.Conv2D(8, 3, padding="same")(y))
            x = L.ReLU()(L.Add()([x, y]))
        return keras.Model(i, L.Dense(4)(L.GlobalAveragePooling2D()(x)))

    def lstm():
        i = L.Input((10, 8), batch_size=1)
        return keras.Model(i, L.Dense(3)(L.LSTM(16)(i)))

    def gru():
        i = L.Input((10, 8), batch_size=1)
        return keras.Model(i, L.Dense(3)(L.GRU(16)(i)))

    def kws_ds_cnn():
        x = i = L.Input((49, 10, 1))
        x = L.Conv2D(16, (10, 4), strides=2, padding="same", activation="relu")(x)
        for _ in range(2):
            x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
            x = L.Conv2D(16, 1, activation="relu")(x)
        x = L.Flatten()(L.AveragePooling2D((x.shape[1], x.shape[2]))(x))
        return keras.Model(i, L.Softmax()(L.Dense(12)(x)))

    def autoencoder():
        x = i = L.Input((64,))
        for n in (32, 8, 32, 64):
            x = L.Dense(n, activation="relu")(x)
        return keras.Model(i, x)

    def conv1d():
        x = i = L.Input((64, 3))
        x = L.MaxPooling1D(2)(L.Conv1D(8, 5, activation="relu")(x))
        x = L.GlobalMaxPooling1D()(L.Conv1D(16, 3, activation="relu")(x))
        return keras.Model(i, L.Dense(4, activation="softmax")(x))

    def transformer(activation):
        def build():
            # One encoder block: attention, layer norms (MEAN, SQUARED_DIFFERENCE,
            # RSQRT), a feed-forward pair.
            i = L.Input((16, 32), batch_size=1)
            x = L.LayerNormalization(epsilon=1e-6)(i + L.MultiHeadAttention(num_heads=2, key_dim=16)(i, i))
            f = L.Dense(32)(L.Dense(64, activation=activation)(x))
            x = L.GlobalAveragePooling1D()(L.LayerNormalization(epsilon=1e-6)(x + f))
            return keras.Model(i, L.Dense(4)(x))
        return build

    def unet():
        # Upsampling by RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR, skips by CONCATENATION.
        i = L.Input((32, 32, 3))
        c1 = L.Conv2D(8, 3, padding="same", activation="relu")(i)
        c2 = L.Conv2D(16, 3, padding="same", activation="relu")(L.MaxPooling2D()(c1))
        b = L.Conv2D(32, 3, padding="same", activation="relu")(L.MaxPooling2D()(c2))
        u2 = L.Concatenate()([L.Resizing(16, 16, interpolation="nearest")(b), c2])
        d2 = L.Conv2D(16, 3, padding="same", activation="relu")(u2)
        u1 = L.Concatenate()([L.Resizing(32, 32, interpolation="bilinear")(d2), c1])
        d1 = L.Conv2D(8, 3, padding="same", activation="relu")(u1)
        return keras.Model(i, L.Conv2D(2, 1, activation="sigmoid")(d1))

    def yolo_head():
        x = i = L.Input((64, 64, 3))
        for c in (8, 16, 32):
            x = L.LeakyReLU(0.1)(L.Conv2D(c, 3, strides=2, padding="same")(x))
        p = L.Reshape((8 * 8 * 3, 9))(L.Conv2D(3 * 9, 1)(x))
        xy, wh, rest = K.sigmoid(p[..., 0:2]), K.exp(p[..., 2:4]), K.sigmoid(p[..., 4:])
        return keras.Model(i, L.Concatenate()([xy, wh, rest]))

    def dilated_cnn(batch_size):
        # Dilated convolutions. At an unknown batch (keras.Input's default)
        # the converter writes SPACE_TO_BATCH_ND, the convolution and
        # BATCH_TO_SPACE_ND, with batch 1 where the batch is 4; at batch 1,
        # one dilated convolution.
        def build():
            x = i = L.Input((24, 24, 3), batch_size=batch_size)
            x = L.Conv2D(8, 3, padding="same", activation="relu")(x)
            x = L.DepthwiseConv2D(3, dilation_rate=2, padding="same", activation="relu")(x)
            x = L.Conv2D(8, 3, dilation_rate=2, activation="relu")(x)
            return keras.Model(i, L.Dense(4)(L.GlobalAveragePooling2D()(x)))
        return build

    def upsampling():
        # Keras 3's UpSampling2D: EXPAND_DIMS, TILE and RESHAPE (TFLM has no
        # TILE), at batch 1 (upsampling_any_batch: at an unknown batch).
        x = i = L.Input((8, 8, 3), batch_size=1)
        x = L.UpSampling2D(2)(L.Conv2D(8, 3, padding="same", activation="relu")(x))
        x = L.Conv2D(4, 3, padding="same", activation="relu")(x)
        return keras.Model(i, L.Dense(3)(L.GlobalAveragePooling2D()(x)))

    def upsampling_any_batch():
        # upsampling() at an unknown batch: the converter writes 1 for the
        # tiled tensors' unknown sizes and computes the RESHAPE's new shape
        # (SHAPE, STRIDED_SLICE, CONCATENATION): tflm-host prepare writes
        # the sizes and removes that arithmetic.
        x = i = L.Input((8, 8, 3))
        x = L.UpSampling2D(2)(L.Conv2D(8, 3, padding="same", activation="relu")(x))
        x = L.Conv2D(4, 3, padding="same", activation="relu")(x)
        return keras.Model(i, L.Dense(3)(L.GlobalAveragePooling2D()(x)))

    def sequence_dense():
        # Dense layers on a sequence at an unknown batch: each is a RESHAPE
        # to 2-D and back around FULLY_CONNECTED, the new shapes computed
        # (SHAPE, GATHER, REDUCE_PROD, PACK: no TFLM kernel for REDUCE_PROD);
        # tflm-host prepare writes the sizes and removes that arithmetic.
        x = i = L.Input((12, 16))
        x = L.Dense(24, activation="relu")(x)
        x = L.Dense(8)(L.Reshape((-1, 8))(x))
        return keras.Model(i, L.Dense(4)(L.GlobalAveragePooling1D()(x)))

    def attention_lstm():
        i = L.Input((12, 8), batch_size=1)
        h = L.LSTM(16, return_sequences=True)(i)
        w = L.Softmax(axis=1)(L.Dense(1)(h))
        return keras.Model(i, L.Dense(3)(K.sum(h * w, axis=1)))

    return {"classifier_cnn": classifier_cnn, "mobilenet": mobilenet, "resnet": resnet, "lstm": lstm,
            "gru": gru, "kws_ds_cnn": kws_ds_cnn, "autoencoder": autoencoder, "conv1d": conv1d,
            "transformer": transformer("relu"), "transformer_gelu": transformer("gelu"), "unet": unet,
            "yolo_head": yolo_head, "dilated_cnn": dilated_cnn(None), "dilated_cnn_batch1": dilated_cnn(1),
            "upsampling": upsampling, "upsampling_any_batch": upsampling_any_batch,
            "sequence_dense": sequence_dense, "attention_lstm": attention_lstm}


NAMES = ("classifier_cnn", "mobilenet", "resnet", "lstm", "gru", "kws_ds_cnn", "autoencoder", "conv1d",
         "transformer", "transformer_gelu", "unet", "yolo_head", "dilated_cnn", "dilated_cnn_batch1", "upsampling",
         "upsampling_any_batch", "sequence_dense", "attention_lstm")


# Converted with float16 weights too (TF's float16 quantization: DEQUANTIZE
# of float16 constants, which tflm-host prepare makes float32).
FLOAT16 = ("mobilenet", "conv1d")


def convert(name: str, out_dir: str) -> None:
    import numpy as np
    import tensorflow as tf

    keras_model = _models()[name]
    tf.keras.utils.set_random_seed(1)
    model = keras_model()
    shape = [1] + list(model.inputs[0].shape[1:])
    rng = np.random.default_rng(7)
    for quant in (False, True, "float16") if name in FLOAT16 else (False, True):
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        if quant == "float16":
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.target_spec.supported_types = [tf.float16]
        elif quant:
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.representative_dataset = lambda: ([rng.normal(0, 1, shape).astype(np.float32)] for _ in range(30))
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8
            if model.outputs[0].dtype == "float32":
                conv.inference_output_type = tf.int8
        kind = quant if quant == "float16" else "int8" if quant else "float"
        out = os.path.join(out_dir, f"{name}_{kind}.tflite")
        try:
            data = conv.convert()
        except Exception as e:  # the converter's refusal: report, go on
            print(os.path.basename(out), "FAILED", str(e).splitlines()[0][:200], flush=True)
            continue
        with open(out, "wb") as f:
            f.write(data)
        print("wrote", os.path.basename(out), flush=True)


def run_tflite(model: str, inputs: str, outputs: str) -> None:
    import numpy as np
    import tensorflow as tf

    it = tf.lite.Interpreter(model_path=model)
    it.allocate_tensors()
    given = np.load(inputs)
    for k, d in enumerate(it.get_input_details()):
        it.set_tensor(d["index"], given[f"input_{k}"])
    it.invoke()
    np.savez(outputs, **{f"output_{k}": it.get_tensor(d["index"]) for k, d in enumerate(it.get_output_details())})


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run"]:
        run_tflite(*argv[1:4])
        return 0
    out_dir, names = argv[0], argv[1:] or list(NAMES)
    os.makedirs(out_dir, exist_ok=True)
    if len(names) == 1:
        convert(names[0], out_dir)
        return 0
    for name in names:
        r = subprocess.run([sys.executable, __file__, out_dir, name])
        if r.returncode:
            print(f"{name}: the converter's process stopped (exit {r.returncode})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
