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
print("ops:", ", ".join(model.ops))
free_before = gc.mem_free()
interp = tflm.Interpreter(model)
gc.collect()
print("arena_used_bytes:", interp.arena_used_bytes(),
      "(head", interp.head_bytes(), "for tensors + tail", interp.tail_bytes(), "for the interpreter);",
      gc.mem_free(), "bytes of heap left")

inp, out = model.inputs[0], model.outputs[0]
frame_bytes = 1
for d in inp.shape:
    frame_bytes *= d  # int8: a byte per value
frames = load(FRAMES)
with open(NAMES) as f:
    names = f.read().split()
y = interp.output(0)
print()
for k, name in enumerate(names):
    interp.set_input(0, frames[k * frame_bytes:(k + 1) * frame_bytes])
    start = qemuboard.icount() if qemuboard else 0
    interp.invoke()
    instructions = qemuboard.icount() - start if qemuboard else 0
    # Output: [no person, person], int8.
    scores = [(y[i] - out.zero_point) * out.scale for i in range(2)]
    print("frame {:<10} person {:.3f}  no person {:.3f}  raw {} {}".format(
        name, scores[1], scores[0], y[1], y[0]) + ("  ({} instructions)".format(instructions) if qemuboard else ""))
print()
print("arena_used_bytes:", interp.arena_used_bytes())
