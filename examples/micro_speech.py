# micro_speech: keyword spotting from raw audio, TFLM's micro_speech
# pipeline. A 1-second 16 kHz mono 16-bit WAV in the board's ROMFS goes
# through TFLM's audio preprocessor model (its signal ops: window, FFT,
# mel filter bank, noise reduction, PCAN, log) over 30 ms windows every
# 20 ms: 49 windows of 40 int8 features, the 49 x 40 input of the keyword
# model, whose scores say silence, unknown, "yes" or "no".
#
# The WAV's samples and both models are used in place from flash. The
# preprocessor keeps a noise estimate from one window to the next, as it
# does in TFLM. Each window's features print as hex, then the raw int8
# scores (the host checks both against the same pipeline run in TFLM).
import struct

import tflm

try:
    ROOT
except NameError:
    ROOT = "/rom"

RATE = 16000
WINDOW = 480   # 30 ms
STRIDE = 320   # 20 ms
LABELS = ("silence", "unknown", "yes", "no")


def open_bytes(path):
    f = open(path, "rb")
    try:
        return memoryview(f)   # a ROMFS file: its bytes in flash
    except TypeError:
        return memoryview(f.read())


def wav_samples(path):
    """The sample bytes of a PCM WAV (mono, 16 kHz, 16-bit), in place."""
    wav = open_bytes(path)
    if bytes(wav[0:4]) != b"RIFF" or bytes(wav[8:12]) != b"WAVE":
        raise ValueError("not a WAV file")
    at = 12
    fmt = None
    while at + 8 <= len(wav):
        tag = bytes(wav[at:at + 4])
        size = struct.unpack("<I", wav[at + 4:at + 8])[0]
        body = at + 8
        if tag == b"fmt ":
            fmt = struct.unpack("<HHIIHH", wav[body:body + 16])
        elif tag == b"data":
            if fmt is None or fmt[0] != 1 or fmt[1] != 1 or fmt[2] != RATE or fmt[5] != 16:
                raise ValueError("need 16-bit mono PCM at 16 kHz")
            return wav[body:body + size]
        at = body + size + (size & 1)
    raise ValueError("no data chunk")


samples = wav_samples(ROOT + "/speech.wav")
n_windows = (len(samples) // 2 - WINDOW) // STRIDE + 1

pre = tflm.Interpreter(tflm.load(ROOT + "/audio_preprocessor_int8.tflite", quiet=True))
kws = tflm.Interpreter(tflm.load(ROOT + "/micro_speech_quantized.tflite", quiet=True))
features = kws.input(0)
n_features = len(pre.output(0))
if n_windows * n_features != len(features):
    raise ValueError("the audio gives %d x %d features, the model takes %d" % (n_windows, n_features, len(features)))

for w in range(n_windows):
    pre.set_input(0, samples[2 * STRIDE * w:2 * (STRIDE * w + WINDOW)])
    pre.invoke()
    out = pre.output(0)
    base = w * n_features
    for k in range(n_features):
        features[base + k] = out[k]
    print("features %2d %s" % (w, "".join("%02x" % (v & 0xFF) for v in out)))

kws.invoke()
scores = kws.output(0)
print("scores raw:", " ".join(str(v) for v in scores))
best = max(range(len(scores)), key=lambda i: scores[i])
print("heard:", LABELS[best] if best < len(LABELS) else best)
print("arena_used_bytes:", pre.arena_used_bytes(), "+", kws.arena_used_bytes())
