"""`make demo`: a real model in the flash of an emulated STM32, run from MicroPython.

Builds a flash image the way a board is flashed (firmware, then a ROMFS image
with the model and the example script at the board's ROMFS address), boots
it in QEMU and runs an example script from /rom, streaming its output:
examples/person_detect.py (TFLM's person detector on a few camera-like
frames), examples/keyword_spotting.py (MLPerf Tiny's keyword spotter on a few
feature clips), examples/micro_speech.py (TFLM's audio preprocessor and
keyword model on a second of synthetic audio), each checked against TFLM on
the host, or examples/hello_world.py.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

from . import _engine, arena, board_info, device, romfs
from .model import load_model
from .prepare import prepare_model
from .reference import reference_outputs

# Example scripts (examples/) and the model each runs.
EXAMPLES = {
    "person_detect": "person_detect.tflite",
    "keyword_spotting": "kws_ref_model.tflite",
    "hello_world": "hello_world_int8.tflite",
    "micro_speech": "micro_speech_quantized.tflite",
}
# Further models an example loads (from the same folder).
EXTRA_MODELS = {"micro_speech": ("audio_preprocessor_int8.tflite",)}
SPEECH_RATE = 16000
FRAME_SIDE = 96


def demo_frames() -> dict[str, np.ndarray]:
    """Camera-like 96x96 int8 grayscale frames, the same on every run."""
    y, x = np.mgrid[0:FRAME_SIDE, 0:FRAME_SIDE].astype(np.float32)
    centre = FRAME_SIDE / 2
    frames = {
        "gray": np.zeros((FRAME_SIDE, FRAME_SIDE)),
        "gradient": (x + y) * (255 / (2 * FRAME_SIDE - 2)) - 128,
        # A bright head-and-shoulders silhouette on a dark background.
        "silhouette": np.where(((x - centre) ** 2 + (y - 30) ** 2 < 14 ** 2)
                               | ((np.abs(x - centre) < 28 - (96 - y) * 0.05) & (y > 46)), 90, -100),
        "checker": np.where(((x // 12) + (y // 12)) % 2 == 0, 100, -100),
        "noise": np.random.default_rng(7).integers(-128, 128, (FRAME_SIDE, FRAME_SIDE)),
    }
    return {k: np.clip(np.round(v), -128, 127).astype(np.int8).reshape(1, FRAME_SIDE, FRAME_SIDE, 1)
            for k, v in frames.items()}


def demo_clips() -> dict[str, np.ndarray]:
    """Feature clips for the keyword spotter (49 frames of 10 MFCCs, int8),
    the same on every run: the host has no microphone."""
    rng = np.random.default_rng(11)
    t, c = np.mgrid[0:49, 0:10].astype(np.float32)
    clips = {
        "quiet": np.full((49, 10), 83.0),  # the input's zero point
        "noise": rng.integers(-128, 128, (49, 10)),
        "sweep": 83 + 40 * np.sin(t / 4 + c),
        "burst": np.where((t > 15) & (t < 34), 83 + 60 * np.cos(c), 83 - 30),
    }
    return {k: np.clip(np.round(v), -128, 127).astype(np.int8).reshape(1, 49, 10, 1) for k, v in clips.items()}


def demo_speech() -> tuple[bytes, np.ndarray]:
    """One second of synthetic speech-like audio as a 16 kHz 16-bit mono WAV
    (the host has no microphone): quiet noise, then a 200 Hz buzz with
    harmonics under a rising and falling envelope. Returns the file and its
    samples."""
    rng = np.random.default_rng(7)
    t = np.arange(SPEECH_RATE) / SPEECH_RATE
    envelope = np.clip((t - 0.3) / 0.1, 0, 1) * np.clip((0.9 - t) / 0.1, 0, 1)
    voice = sum(np.sin(2 * np.pi * 200 * h * t) / h for h in range(1, 12))
    x = 6000 * envelope * voice + rng.normal(0, 80, SPEECH_RATE)
    pcm = np.clip(np.round(x), -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SPEECH_RATE)
        w.writeframes(pcm.tobytes())
    return buf.getvalue(), pcm


def flash_image(board: device.Board, image: bytes, out: Path) -> Path:
    """Firmware as raw flash bytes from address 0, then the ROMFS image at its
    region, written to `out` in one step (a run booting it meanwhile sees the
    whole old file or the whole new one)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        fw = Path(tmp, "firmware.bin")
        subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", str(board.firmware), str(fw)], check=True)
        data = fw.read_bytes()
        if len(data) > board.romfs_start:
            raise RuntimeError(f"firmware ({len(data)} bytes) overlaps the ROMFS region at {board.romfs_start:#x}")
        if len(image) > board.romfs_size:
            raise RuntimeError(f"ROMFS image ({len(image)} bytes) exceeds its region ({board.romfs_size} bytes)")
        staged = Path(tmp, out.name)
        staged.write_bytes(data + b"\xff" * (board.romfs_start - len(data)) + image)
        os.replace(staged, out)
    return out


def run_demo(board_name: str, models: Path, example: str = "person_detect", prepare: bool = False) -> int:
    pico = board_name in device.PICO_BOARDS
    board = device.pico_board() if pico else device.board(board_name)
    model_name = EXAMPLES[example]
    model_path = models / model_name
    if not model_path.is_file():
        print(f"demo: {model_path} not found (set MODELS=...)", file=sys.stderr)
        return 2
    script = f"{example}.py"
    model_bytes = model_path.read_bytes()
    if prepare:
        model_bytes = _prepared(model_bytes, model_name)
    files = {
        model_name: model_bytes,
        script: (device.checkout("the demo") / "examples" / script).read_bytes(),
    }
    for extra in EXTRA_MODELS.get(example, ()):
        if not (models / extra).is_file():
            print(f"demo: {models / extra} not found (set MODELS=...)", file=sys.stderr)
            return 2
        files[extra] = (models / extra).read_bytes()
    speech = demo_speech() if example == "micro_speech" else None
    if speech:
        files["speech.wav"] = speech[0]
    frames = demo_frames() if example == "person_detect" else {}
    if frames:
        files["frames.bin"] = b"".join(f.tobytes() for f in frames.values())
        files["frames.txt"] = " ".join(frames).encode()
    clips = demo_clips() if example == "keyword_spotting" else {}
    if clips:
        files["clips.bin"] = b"".join(c.tobytes() for c in clips.values())
        files["clips.txt"] = " ".join(clips).encode()
        files["kws_ref_model.labels"] = (device.checkout("the demo") / "examples" / "kws_ref_model.labels").read_bytes()
    image = romfs.build_image(files)
    if pico:
        return _run_pico(board, image, files, example, model_path, frames, clips)
    # One image per example and form: runs of other examples may boot theirs meanwhile.
    name = f"flash-{example}{'-prepared' if prepare else ''}.bin"
    flash = flash_image(board, image, device.build_dir() / board_name / name)
    print(f"== {board_info.get(board_name).demo or board_name}, emulated by QEMU ({board.machine})")
    print(f"== flash image {_shown(flash)}: firmware, then ROMFS at "
          f"{board.romfs_start:#x} holding {', '.join(files)} ({len(image)} bytes)")
    print(f"== running /rom/{script} on the device")
    print()
    # The flash image boots as the kernel: firmware and ROMFS as a board holds them.
    with device.QemuServer(board_name, kernel=flash, keep_connection=True) as server:
        out = server.run([f"import {example}"], timeout=600, echo=sys.stdout)
    if frames:
        return _check_frames(model_path, frames, out)
    if clips:
        return _check_clips(model_path, clips, out)
    if speech:
        return _check_speech(models, speech[1], out)
    return 0


def _run_pico(board: device.PicoBoard, image: bytes, files: dict[str, bytes], example: str, model_path: Path,
              frames: dict[str, np.ndarray], clips: dict[str, np.ndarray]) -> int:
    """The demo on the real RPI_PICO firmware in the RP2040 emulator: the
    ROMFS image in its flash at the board's ROMFS offset, as `tflm-host
    flash RPI_PICO --romfs` writes it."""
    print(f"== {board.name} ({board_info.get(board.name).chip}): its firmware {_shown(board.firmware)} in the RP2040 "
          "emulator rp2040js")
    print(f"== ROMFS at flash offset {board.romfs_start:#x} holding {', '.join(files)} ({len(image)} bytes)")
    print(f"== running /rom/{example}.py on the device")
    print()
    with device.PicoServer(image, board.firmware) as server:
        out = device.run_chunks(server.url, [f"import {example}"], 900, echo=sys.stdout)
    if frames:
        return _check_frames(model_path, frames, out)
    if clips:
        return _check_clips(model_path, clips, out)
    return 0


def _prepared(data: bytes, name: str) -> bytes:
    """The model prepared, with what that frees in the board's RAM (the
    host's exact prediction, which the device then shows)."""
    out = prepare_model(data, max_extra_macs=DEMO_MAX_EXTRA_MACS)
    before, after = arena.plan_layout(load_model(data)), arena.plan_layout(load_model(out))
    start, split = patch_stage(out)
    print(f"== {name} prepared (tflm-host prepare --max-extra-macs {DEMO_MAX_EXTRA_MACS:.0%}): "
          f"{after.model_data} bytes of kernel data read from flash; arena_used_bytes {after.used} instead of "
          f"{before.used}: {before.used - after.used} bytes of RAM freed for the heap"
          + (f"; operators {start}-{split - 1} run patch by patch" if split else ""))
    return out


def patch_stage(data: bytes) -> tuple[int, int]:
    """The model's patch-based stage: its first operator and the one after it (0: none)."""
    ip = _engine.allocate(_engine.Model(data))
    return ip.patch_start, ip.patch[0]


# The demo's bound on the MACs a patch-based first stage may add.
DEMO_MAX_EXTRA_MACS = 0.2


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(device.checkout("the demo")))
    except (ValueError, RuntimeError):
        return str(path)


def _check_clips(model_path: Path, clips: dict[str, np.ndarray], out: str) -> int:
    """The keyword spotter's raw scores against TFLM's reference kernels."""
    device_raw = {m.group(1): [int(v) for v in m.group(2).split()]
                  for m in re.finditer(r"^clip (\S+) .* raw: (.*)$", out, re.M)}
    return _compare(model_path, clips, device_raw, "clips")


def _check_speech(models: Path, pcm: np.ndarray, out: str) -> int:
    """The keyword model's raw scores against the same pipeline in TFLM: one
    preprocessor interpreter over the windows (its state carried), then the
    keyword model on the 49 x 40 features."""
    m = re.search(r"^scores raw: (.*)$", out, re.M)
    if not m:
        print("demo: the device printed no scores", file=sys.stderr)
        return 1
    try:
        n = (len(pcm) - 480) // 320 + 1
        windows = [[pcm[320 * w:320 * w + 480].astype(np.int16).reshape(1, 480)] for w in range(n)]
        feats = np.stack([np.asarray(r[0]).astype(np.int8)
                          for r in reference_outputs(models / EXTRA_MODELS["micro_speech"][0], windows)])
        ref = reference_outputs(models / EXAMPLES["micro_speech"], [[feats.reshape(1, -1)]])[0][0]
    except RuntimeError as e:  # tflite-micro not installed
        print(f"== not compared with TFLM: {e}")
        return 0
    same = [int(v) for v in m.group(1).split()] == np.asarray(ref).astype(np.int8).ravel().tolist()
    print(f"== TFLM's reference kernels on the host give {'the same' if same else 'DIFFERENT'} "
          f"scores for the synthetic second of audio")
    return 0 if same else 1


def _compare(model_path: Path, inputs: dict[str, np.ndarray], device_raw: dict[str, list[int]], what: str) -> int:
    if len(device_raw) != len(inputs):
        print(f"demo: the device did not score every one of the {what}", file=sys.stderr)
        return 1
    try:
        ref = reference_outputs(model_path, [[x] for x in inputs.values()])
    except RuntimeError as e:  # tflite-micro not installed
        print(f"== not compared with TFLM: {e}")
        return 0
    same = all(device_raw[name] == [int(v) for v in r[0].ravel()] for name, r in zip(inputs, ref))
    print(f"== TFLM's reference kernels on the host give {'the same' if same else 'DIFFERENT'} "
          f"outputs for all {len(inputs)} {what}")
    return 0 if same else 1


def _check_frames(model_path: Path, frames: dict[str, np.ndarray], out: str) -> int:
    """The person detector's raw scores (printed person first) against TFLM's."""
    device_raw = {m.group(1): [int(m.group(3)), int(m.group(2))]
                  for m in re.finditer(r"^frame (\S+) .* raw (-?\d+) (-?\d+)", out, re.M)}
    return _compare(model_path, frames, device_raw, "frames")
