# hello_world: a small int8 network that learned sin(x), run from flash.
#
# The model file sits in the board's ROMFS region and tflm.load() uses it in
# place, through a memoryview into flash, so opening it costs a few dozen
# bytes of RAM whatever the model's size. The interpreter gets an arena of
# exactly the size the model needs (tflm.arena_size); predict() takes and
# gives real numbers, the quantization is the model's.
import gc
import math
import sys

import tflm

MODEL = "/rom/hello_world_int8.tflite"
STEPS = 24
WIDTH = 41


print("tflm", tflm.version, "on", getattr(sys.implementation, "_machine", sys.platform))
gc.collect()
free_before = gc.mem_free()
model = tflm.load(MODEL)
gc.collect()
print("model:", MODEL, "-", model.size, "bytes in flash,", free_before - gc.mem_free(), "bytes of RAM to open it")
print(model)

interp = tflm.Interpreter(model)
print("arena_used_bytes:", interp.arena_used_bytes(),
      "(head", interp.head_bytes(), "for tensors + tail", interp.tail_bytes(), "for the interpreter)")

print()
print("{:>5}  {:>6}  {:>6}   {}".format("x", "sin(x)", "model", "-1" + " " * (WIDTH - 4) + "+1"))
worst = 0.0
x_in = [0.0]
for step in range(STEPS + 1):
    x = 2 * math.pi * step / STEPS
    x_in[0] = x
    # predict() quantizes x with the input's scale and zero point, runs the
    # model and returns its output as floats (an array reused by every call).
    y = interp.predict(x_in)[0]
    worst = max(worst, abs(y - math.sin(x)))
    row = [" "] * WIDTH
    row[WIDTH // 2] = "|"
    row[round((math.sin(x) + 1) / 2 * (WIDTH - 1))] = "o"
    row[round((max(-1.0, min(1.0, y)) + 1) / 2 * (WIDTH - 1))] = "*"
    print("{:5.2f}  {:6.3f}  {:6.3f}   {}".format(x, math.sin(x), y, "".join(row)))
print()
print("o = sin(x), * = model; largest error {:.3f}".format(worst))
print("arena_used_bytes:", interp.arena_used_bytes())
