# Bad model buffers raise ValueError or TypeError with a reason.
import tflm

for buf in (b"", b"1234TFL3", bytearray(16), b"\x10\x00\x00\x00TFL3" + bytes(8)):
    try:
        tflm.Model(buf)
        print("loaded")
    except ValueError as e:
        print("ValueError:", e)
for obj in (123, None, 1.5):
    try:
        tflm.Model(obj)
    except TypeError:
        print("TypeError")
m = tflm.Model(open(ROOT + "/hello_world_int8.tflite", "rb").read())
for i in (-1, 10000):
    try:
        m.tensor(i)
    except IndexError as e:
        print("IndexError:", e)
print(m.tensor(0).index, m.tensor(0).dtype)
