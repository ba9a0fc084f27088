"""The ROMFS image builder: aligned file data, read back by MicroPython's own VfsRom."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest

from conftest import model_files, model_path, run_on
from tflm_host import cli, romfs
from tflm_host.device import QEMU_BOARDS, QemuServer
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs


def test_varuint():
    assert romfs.varuint(0) == b"\x00"
    assert romfs.varuint(0x7F) == b"\x7f"
    assert romfs.varuint(0x80) == b"\x81\x00"
    assert romfs.varuint(0x14A6B1) == b"\xd2\xcd\x31"  # ROMFS magic "RM1"
    assert romfs.varuint(5, 4) == b"\x80\x80\x80\x05"


def random_files(seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    files = {}
    for i in range(rng.randint(1, 8)):
        depth = rng.randint(0, 2)
        path = "/".join(f"d{rng.randint(0, 2)}" for _ in range(depth)) + ("/" if depth else "") + f"f{i}.bin"
        files[path] = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 15, 16, 17, 300, 5000])))
    return files


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("align", [4, 16, 64])
def test_data_is_aligned(seed, align):
    files = random_files(seed)
    image = romfs.build_image(files, align)
    assert len(image) % 2 == 0
    listed = romfs.list_image(image)
    assert set(listed) == set(files)
    for path, (offset, length) in listed.items():
        assert offset % align == 0, path
        assert image[offset:offset + length] == files[path]


def test_micropython_reads_the_image():
    files = random_files(3)
    files["model.tflite"] = bytes(range(256)) * 10
    image = romfs.build_image(files)
    listed = romfs.list_image(image)
    code = f"""
import vfs, binascii
img = binascii.unhexlify({image.hex()!r})
vfs.mount(vfs.VfsRom(memoryview(img)), '/romtest')
for path in {sorted(files)!r}:
    data = open('/romtest/' + path, 'rb').read()
    print(path, len(data), binascii.crc32(data))
"""
    out = run_on("unix", code).split("\n")
    import zlib
    for path, line in zip(sorted(files), out):
        assert line == f"{path} {len(files[path])} {zlib.crc32(files[path])}"
    assert listed["model.tflite"][0] % 16 == 0


def test_romfs_command(tmp_path, capsys):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.tflite").write_bytes(b"x" * 100)
    (tmp_path / "in" / "sub" / "labels.txt").write_bytes(b"yes\nno\n")
    out = tmp_path / "rom.img"
    assert cli.main(["romfs", str(tmp_path / "in"), "-o", str(out)]) == 0
    listed = romfs.list_image(out.read_bytes())
    assert set(listed) == {"a.tflite", "sub/labels.txt"}
    assert "bytes written" in capsys.readouterr().out


@pytest.mark.parametrize("target", QEMU_BOARDS)
def test_models_in_flash_are_used_in_place(target):
    """tflm.load() of a model in the board's ROMFS flash: no copy in RAM (the
    heap shrinks by a few object headers, not by 300 KB), and inference from
    flash is TFLM's bit for bit."""
    name = "person_detect.tflite"
    model = load_model(model_path(name))
    x = make_inputs(model, "random", seed=12)[0][0]
    code = f"""
import tflm, gc
gc.collect()
before = gc.mem_free()
m = tflm.load('/rom/{name}')
gc.collect()
print(before - gc.mem_free(), m.ram_bytes, m.size)
it = tflm.Interpreter(m)
it.set_input(0, open('/rom/x.bin', 'rb').read())
it.invoke()
print(bytes(it.output(0)).hex())
"""
    files = model_files(name)
    files["x.bin"] = x.tobytes()
    out = run_on(target, code, files).splitlines()
    heap, ram, size = map(int, out[0].split())
    assert (ram, size) == (0, model_path(name).stat().st_size)
    assert 0 < heap < 256, heap
    assert bytes.fromhex(out[1]) == reference_outputs(model_path(name), [[x]])[0][0].tobytes()


def test_load_outside_romfs_reads_into_ram(tmp_path):
    path = model_path("hello_world_int8.tflite")
    text = tmp_path / "notes.tflite"
    text.write_text("not a model\n")
    code = f"""
import tflm
m = tflm.load({str(path)!r})
print(m.ram_bytes)
m = tflm.load({str(path)!r}, quiet=True)
print(m.ram_bytes, m.size)
try:
    tflm.load({str(text)!r})
except ValueError as e:
    print('ValueError', e)
"""
    out = run_on("unix", code).splitlines()
    size = path.stat().st_size
    # A file that is no model: the error alone, no line about reading it.
    assert out == [f"tflm.load: {path} is not in ROMFS: read into {size} bytes of RAM", str(size), f"{size} {size}",
                   "ValueError not a .tflite model (file identifier is not TFL3)"]


def test_load_without_ram_for_the_model_names_romfs():
    """A model bigger than the heap left: MemoryError saying that ROMFS keeps
    it in flash (the unix port with a 200 KiB heap, person_detect's 300 KB)."""
    from tflm_host.device import build_dir

    path = model_path("person_detect.tflite")
    code = f"tflm.load({str(path)!r})"
    proc = subprocess.run([str(build_dir() / "unix" / "micropython"), "-X", "heapsize=200K", "-c",
                           f"import tflm\n{code}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"MemoryError: tflm.load: no RAM to read {path} into: a model in ROMFS (tflm-host deploy) is used in "
        "place from flash, without RAM")


@pytest.mark.parametrize("board", ["NETDUINOPLUS2", "PYBV11_QEMU"])
def test_mpremote_romfs_query_reads_our_image(board, tmp_path):
    """An image from `tflm-host romfs`, in a board's ROMFS flash region, is
    what `mpremote romfs query` finds there: the board's partition (its
    size from the firmware's linker symbols) holding a valid ROMFS whose
    header gives the image's own length."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "hello_world_int8.tflite").write_bytes(model_path("hello_world_int8.tflite").read_bytes())
    (src / "labels.txt").write_text("a\nb\n")
    image = tmp_path / "rom.img"
    assert cli.main(["romfs", str(src), "-o", str(image)]) == 0
    data = image.read_bytes()
    with QemuServer(board, data) as qemu:
        out = subprocess.run([sys.executable, "-m", "mpremote", "connect", qemu.url, "romfs", "query"],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    size = qemu.board.romfs_size
    assert re.search(rf"^ROMFS0 partition has size {size} bytes \(\d+ blocks of \d+ bytes each\)$", out, re.M), out
    assert f"Raw contents: {data[:12].hex(':')} ..." in out
    header = int(re.search(r"ROMFS image size: (\d+)", out).group(1))
    # The header is the magic (3 bytes) and the size of what follows as a
    # varuint (ours pads it with 0x80 bytes to a fixed width): mpremote reads
    # the size of exactly the rest of the image.
    varuint_bytes = next(i for i in range(3, 16) if not data[i] & 0x80) - 2
    assert 3 + varuint_bytes + header == len(data)
