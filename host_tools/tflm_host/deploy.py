"""`tflm-host deploy`: models into a board's flash, then a check on the board.

The models (and labels files next to them) go into a ROMFS image with
aligned data, written with `mpremote romfs deploy` when the firmware has a
ROMFS partition (vfs.rom_ioctl), else copied to the board's filesystem with
`mpremote fs cp`. The esp32 port of MicroPython 1.25 reads its romfs
partition through vfs.rom_ioctl but cannot write it there: on an ESP32 the
image goes into the partition through esp32.Partition, a few flash blocks
per raw-REPL execution, and a hard reset maps the new image. Then a script
on the board loads each model and prints its arena_used_bytes, shown next
to the host's prediction.
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import arena, progress, romfs, shape_fold
from .device import check_port, connect, exec_chunk, wait_for_prompt
from .model import load_model

# Labels next to a model MODEL.tflite: MODEL.labels or MODEL_labels.txt.
LABEL_SUFFIXES = (".labels", "_labels.txt")

CAPABILITIES = """
import vfs, os
rom = hasattr(vfs, 'rom_ioctl') and vfs.rom_ioctl(1) > 0
size = 0
if rom:
    size = len(memoryview(vfs.rom_ioctl(2, 0)))  # the esp32 port gives its Partition (a buffer)
try:
    os.statvfs('/')
    fs = True
except Exception:
    fs = False
try:
    import esp32
    part = rom and len(esp32.Partition.find(esp32.Partition.TYPE_DATA, label='romfs')) > 0
except (ImportError, AttributeError):
    part = False
print('@CAPS', rom, size, fs, part)
"""

# The ESP32's romfs partition, written through esp32.Partition (flash blocks
# of 4 KiB, each erased by writeblocks before it is written).
ESP32_PARTITION_SETUP = """
import esp32, binascii
_romfs = esp32.Partition.find(esp32.Partition.TYPE_DATA, label='romfs')[0]
"""
ESP32_BLOCK = 4096
# The image's name in the commands a dry run prints (it writes no file).
DRY_RUN_IMAGE = "models.romfs"
ESP32_BLOCKS_PER_RUN = 4

CHECK = """
import tflm, gc
for path in PATHS:
    gc.collect()
    try:
        m = tflm.load(path, quiet=True)
        it = tflm.Interpreter(m)
        it.invoke()
        print('@MODEL', path, it.arena_used_bytes(), m.ram_bytes, 'ok')
    except Exception as e:
        print('@MODEL', path, -1, -1, type(e).__name__ + ': ' + str(e))
    it = m = None
"""


@dataclass
class Plan:
    files: dict[str, bytes]  # name on the board -> bytes
    image: bytes
    models: list[Path]
    sources: dict[str, Path]  # name on the board -> the file it comes from


def collect(models: list[Path], extra: list[Path] | None = None) -> Plan:
    files: dict[str, bytes] = {}
    sources: dict[str, Path] = {}

    def add(name: str, path: Path) -> None:
        # The board's files are named by the files' own names, in one folder.
        if name in sources and sources[name].resolve() != path.resolve():
            raise ValueError(f"{sources[name]} and {path} would both be {name} on the board: rename one")
        files[name], sources[name] = path.read_bytes(), path

    for path in models:
        load_model(path)  # a .tflite model, or ValueError now rather than on the board
        add(path.name, path)
        for suffix in LABEL_SUFFIXES:
            labels = path.with_name(path.stem + suffix)
            if labels.is_file():
                add(path.stem + ".labels", labels)
    for path in extra or []:
        add(path.name, path)
    return Plan(files, romfs.build_image(files), models, sources)


def mpremote(port: str, *args: str, dry_run: bool = False, timeout: float = 600, what: str = "") -> str:
    """Runs mpremote on the board at `port`, its command printed first and
    `what` it does timed on stderr while it runs (progress.py)."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, *args]
    # As a shell would take it (paths with spaces quoted), scripts summarised.
    shown_args = [f"'<script of {a.count(chr(10))} lines>'" if "\n" in a else shlex.quote(a) for a in args]
    shown = " ".join(["mpremote", "connect", shlex.quote(port), *shown_args])
    print(f"$ {shown}", flush=True)
    if dry_run:
        return ""

    check_port(port)
    with progress.step(what or f"mpremote {' '.join(shown_args[:2])}"):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{shown} failed:\n{(proc.stdout + proc.stderr).strip()[-1500:]}")
    return proc.stdout


def capabilities(port: str) -> tuple[bool, int, bool, bool]:
    """(ROMFS partition, its size, a filesystem, an esp32.Partition named
    romfs) of the board on `port`."""
    out = mpremote(port, "exec", CAPABILITIES, what="asking the board for its ROMFS partition")
    for line in out.splitlines():
        if line.startswith("@CAPS "):
            _, rom, size, fs, part = line.split()
            return rom == "True", int(size), fs == "True", part == "True"
    raise RuntimeError(f"unexpected answer from the board:\n{out}")


def esp32_partition_chunks(image: bytes) -> list[str]:
    """Device code writing `image` into the romfs partition, padded with
    erased bytes to whole flash blocks, a few blocks per chunk."""
    data = image + b"\xff" * (-len(image) % ESP32_BLOCK)
    step = ESP32_BLOCK * ESP32_BLOCKS_PER_RUN
    chunks = [ESP32_PARTITION_SETUP]
    for start in range(0, len(data), step):
        chunks.append("\n".join(
            f"_romfs.writeblocks({at // ESP32_BLOCK}, binascii.a2b_base64("
            f"{base64.b64encode(data[at:at + ESP32_BLOCK]).decode()!r}))"
            for at in range(start, min(start + step, len(data)), ESP32_BLOCK)))
    return chunks


def write_esp32_partition(port: str, image: bytes, dry_run: bool = False) -> None:
    """The image into an ESP32's romfs partition over the raw REPL."""
    blocks = -(-len(image) // ESP32_BLOCK)
    print(f"$ raw REPL on {port}: esp32.Partition 'romfs' writeblocks, {blocks} blocks of {ESP32_BLOCK} bytes",
          flush=True)
    if dry_run:
        return

    transport = connect(port)
    # The esp32 port's UART keeps 260 bytes of input and drops the rest: the
    # raw REPL's flow control (raw paste) paces each chunk's 22 KB of code.
    transport.use_raw_paste = True
    chunks = esp32_partition_chunks(image)
    try:
        wait_for_prompt(transport)
        with progress.bar("writing the romfs partition (chunks of 4 blocks)", len(chunks)) as tick:
            transport.enter_raw_repl(soft_reset=False)
            for n, chunk in enumerate(chunks):
                exec_chunk(transport, chunk, 120)
                tick(n + 1)
        transport.exit_raw_repl()
    finally:
        transport.close()


def wait_for_board(port: str, timeout: float = 60) -> None:
    """Waits for the REPL's prompt of a board that is booting."""
    transport = connect(port)
    try:
        with progress.step("waiting for the board to boot"):
            wait_for_prompt(transport, timeout)
    finally:
        transport.close()


def _needs_prepare(path: Path, data: bytes) -> str:
    """Why the model at `path` (its bytes: `data`) must be prepared before it
    can run on a board ('' when it need not): converted with an unknown
    batch size or with float16 weights, the engine refuses it as it is and
    takes what `tflm-host prepare` writes."""
    note = shape_fold.prepare_note(data)
    if not note:
        return ""
    try:
        arena.plan_layout(load_model(data))
    except (ValueError, NotImplementedError) as e:
        return (f"{path.name}: {note}; deploy what it writes (tflm-host prepare {path.name} -o OUT.tflite): "
                f"as it is, the engine refuses it ({e})")
    return ""


def deploy(models: list[Path], port: str, extra: list[Path] | None = None, dry_run: bool = False,
           check: bool = True, caps: tuple[bool, int, bool, bool] | None = None) -> int:
    """Writes the models (labels, extra files) to the board on `port` and
    checks them there. `dry_run`: prints the commands, writes nothing (not
    even the image or files they would send: the commands name them)."""
    plan = collect(models, extra)  # (what cannot be read is named here)
    for model in models:
        refusal = _needs_prepare(model, plan.files[model.name])
        if refusal:
            raise ValueError(refusal)
    rom, size, fs, part = caps if caps is not None else (True, len(plan.image), False, False) if dry_run \
        else capabilities(port)
    with tempfile.TemporaryDirectory(prefix="tflm-deploy-") as tmp:
        if rom:
            if len(plan.image) > size:
                raise ValueError(f"the ROMFS image ({len(plan.image)} bytes) does not fit the board's ROMFS "
                                 f"partition ({size} bytes)")
            print(f"ROMFS image: {len(plan.image)} bytes, {', '.join(plan.files)} (data 16-byte aligned)")
            if dry_run:
                image = Path(DRY_RUN_IMAGE)
                print(f"(dry run: the image is not written; `tflm-host romfs DIR -o {image}` writes it from a "
                      "folder of these files)")
            else:
                image = Path(tmp, "models.romfs")
                image.write_bytes(plan.image)
            if part:
                write_esp32_partition(port, plan.image, dry_run)
                # The flash was mapped for /rom at boot; what the cache holds of
                # it can be the old image (QEMU's esp32 machine serves the old
                # bytes past the first 64 KiB page until a reset): a hard reset
                # maps the new image afresh.
                mpremote(port, "reset", dry_run=dry_run, what="resetting the board")
                if not dry_run:
                    wait_for_board(port)
            else:
                mpremote(port, "romfs", "deploy", str(image), dry_run=dry_run,
                         what=f"writing the ROMFS image ({len(plan.image):,} bytes) into the board's flash")
                mpremote(port, "soft-reset", dry_run=dry_run)  # mounts the new image at /rom
            prefix = "/rom/"
        elif fs:
            print("no ROMFS partition on the board: copying to its filesystem (the models will be read into RAM)")
            for name, data in plan.files.items():
                src = plan.sources[name]
                if not dry_run:
                    src = Path(tmp, name)
                    src.write_bytes(data)
                mpremote(port, "fs", "cp", str(src), f":{name}", dry_run=dry_run,
                         what=f"copying {name} ({len(data):,} bytes)")
            prefix = "/"
        else:
            raise RuntimeError("the board has neither a ROMFS partition (vfs.rom_ioctl) nor a filesystem")
    if not check or dry_run:
        return 0
    paths = [prefix + p.name for p in models]
    out = mpremote(port, "exec", CHECK.replace("PATHS", json.dumps(paths)),
                   what=f"running the model{'s' if len(paths) != 1 else ''} on the board")
    device = {}
    for line in out.splitlines():
        if line.startswith("@MODEL "):
            _, path, used, ram, status = line.split(" ", 4)
            device[path] = (int(used), int(ram), status)
    print()
    print(f"{'model':32s} {'arena_used_bytes':>16s} {'host predicts':>14s}  where")
    ok = True
    for path, model in zip(paths, models):
        predicted = arena.plan_layout(load_model(model)).used
        used, ram, status = device.get(path, (-1, -1, "no answer"))
        where = "in place (flash)" if ram == 0 else f"{ram} bytes of RAM"
        if status != "ok":
            ok = False
            print(f"{model.name:32s} {'-':>16s} {predicted:14d}  {status}")
            continue
        same = used == predicted
        ok = ok and same
        print(f"{model.name:32s} {used:16d} {predicted:14d}  {where}{'' if same else '  DIFFERENT'}")
    return 0 if ok else 1
