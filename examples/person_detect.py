# person_detect: TFLM's 96x96 grayscale person detector (250 KB of int8
# weights), run from flash on a board with 128 KiB of RAM.
#
# The model and a few camera frames sit in the board's ROMFS region and are
# used in place. The interpreter's arena is the only large allocation; its
# size is printed, with the scores and, on the QEMU boards, the number of
# instructions one invoke() takes (QEMU -icount shift=0 makes it repeatable).
import gc
import sys

import tflm

try:
    import qemuboard
except ImportError:
    qemuboard = None

ROOT = "/rom"
MODEL = ROOT + "/person_detect.tflite"
FRAMES = ROOT + "/frames.bin"
NAMES = ROOT + "/frames.txt"


def load(path):
    f = open(path, "rb")
    try:
        return memoryview(f)  # ROMFS: points into flash, no copy
    except TypeError:
        return f.read()


print("tflm", tflm.version, "on", getattr(sys.implementation, "_machine", sys.platform))
gc.collect()
model = tflm.load(MODEL)  # in place from flash
print("model:", MODEL, "-", model.size, "bytes in flash")
print(model)
free_before = gc.mem_free()
interp = tflm.Interpreter(model)
gc.collect()
print("arena_used_bytes:", interp.arena_used_bytes(),
      "(head", interp.head_bytes(), "for tensors + tail", interp.tail_bytes(), "for the interpreter);",
      gc.mem_free(), "bytes of heap left")

frame_bytes = len(interp.input(0))  # int8: a byte per value
frames = load(FRAMES)
with open(NAMES) as f:
    names = f.read().split()
raw = interp.output(0)  # the int8 scores behind predict()'s floats
print()
for k, name in enumerate(names):
    start = qemuboard.icount() if qemuboard else 0
    # The frame's int8 bytes in (no copy of the frame on the heap), the
    # scores [no person, person] dequantized as floats out.
    scores = interp.predict(frames[k * frame_bytes:(k + 1) * frame_bytes])
    instructions = qemuboard.icount() - start if qemuboard else 0
    print("frame {:<10} person {:.3f}  no person {:.3f}  raw {} {}".format(
        name, scores[1], scores[0], raw[1], raw[0]) + ("  ({} instructions)".format(instructions) if qemuboard else ""))
print()
print("arena_used_bytes:", interp.arena_used_bytes())
