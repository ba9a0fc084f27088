# Bad interpreter arguments raise clear errors; the module stays usable.
import tflm

m = tflm.Model(open(ROOT + "/hello_world_int8.tflite", "rb").read())
tests = (
    lambda: tflm.Interpreter(5),
    lambda: tflm.Interpreter(m, planner="nope"),
    lambda: tflm.Interpreter(m, -1),
    lambda: tflm.Interpreter(m, b"read-only bytes"),
    lambda: tflm.arena_size(m, planner="nope"),
)
for t in tests:
    try:
        t()
        print("no error")
    except (TypeError, ValueError, MemoryError) as e:
        print(type(e).__name__ + ":", e)
greedy = tflm.Interpreter(m, planner="greedy")
linear = tflm.Interpreter(m, planner="linear")
print(greedy.planner, linear.planner)
print(linear.head_bytes() >= greedy.head_bytes(), tflm.arena_size(m, planner="linear") == linear.arena_used_bytes())
for it in (greedy, linear):
    it.input(0)[0] = 42
    it.invoke()
print(greedy.output(0)[0] == linear.output(0)[0])
print(type(tflm.version).__name__, isinstance(m.inputs[0], tflm.TensorInfo))
