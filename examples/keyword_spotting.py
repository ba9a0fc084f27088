# keyword_spotting: MLPerf Tiny's keyword spotter (a DS-CNN on 49x10 MFCC
# features, 12 classes), run from flash on a few feature clips.
#
# The model, its labels (kws_ref_model.labels, one per line) and the clips
# sit in the board's ROMFS region; tflm.load() uses the model in place. On a
# board the features would come from a microphone and an MFCC front end; here
# they are precomputed on the host. Each clip prints its three best labels and
# the raw int8 scores (the host checks those against TFLM's). predict() takes
# the int8 features as they are and returns the scores as floats.
import gc
import sys

import tflm

ROOT = "/rom"
MODEL = ROOT + "/kws_ref_model.tflite"


def lines(path):
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []


print("tflm", tflm.version, "on", getattr(sys.implementation, "_machine", sys.platform))
gc.collect()
free = gc.mem_free()
model = tflm.load(MODEL)
gc.collect()
print("model:", MODEL, "-", model.size, "bytes,", model.ram_bytes, "of them in RAM;",
      free - gc.mem_free(), "bytes of heap to open it")
labels = lines(ROOT + "/kws_ref_model.labels") or [str(i) for i in range(12)]
interp = tflm.Interpreter(model)
print(interp)

clip_bytes = len(interp.input(0))  # int8 features: a byte per value
clips = open(ROOT + "/clips.bin", "rb").read()
names = lines(ROOT + "/clips.txt")
raw = interp.output(0)  # the int8 scores behind predict()'s floats
print()
for k, name in enumerate(names):
    # Raw int8 features in, the scores dequantized as floats out.
    scores = interp.predict(clips[k * clip_bytes:(k + 1) * clip_bytes])
    best = sorted(range(len(scores)), key=lambda i: -scores[i])[:3]
    print("clip {:<8} {}  raw: {}".format(
        name, "  ".join("{} {:.2f}".format(labels[i], scores[i]) for i in best), " ".join(str(v) for v in raw)))
print()
print("arena_used_bytes:", interp.arena_used_bytes())
