"""`tflm-host deploy` for real, against an emulated board over a serial
pseudo-terminal with mpremote: the ROMFS image goes into the board's
writable ROMFS region (MPS2_AN385's is RAM) through vfs.rom_ioctl, the
models then run from it and their arenas match the host's prediction."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from conftest import MEASURED, model_path
from tflm_host import cli, progress, romfs
from tflm_host.device import QemuServer


def mpremote(url: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "mpremote", "connect", url, *args], check=True,
                          capture_output=True, text=True, timeout=120).stdout


def test_deploy_to_a_qemu_board(tmp_path, capsys, monkeypatch):
    # Progress on stderr (forced: stderr is no terminal here), each step shown however short.
    monkeypatch.setenv("TFLM_PROGRESS", "1")
    monkeypatch.setattr(progress, "SHOW_AFTER", 0)
    models = []
    for name in ("hello_world_int8.tflite", "magic_wand.tflite"):
        shutil.copy(model_path(name), tmp_path / name)
        models.append(tmp_path / name)
    (tmp_path / "magic_wand.labels").write_text("wing\nring\nslope\nnegative\n")
    script = tmp_path / "main_check.py"
    script.write_text("print('hello from flash')\n")
    with QemuServer("MPS2_AN385") as board:
        assert "Not a valid ROMFS" in mpremote(board.url, "romfs", "query")
        code = cli.main(["deploy", *map(str, models), "--port", board.url, "--file", str(script)])
        out, err = capsys.readouterr()
        assert code == 0, out
        for step in ("asking the board for its ROMFS partition", "writing the ROMFS image", "running the models"):
            assert re.search(rf"^{step}.*: done in \d+\.\d s$", err.replace("\r", "\n"), re.M), err
        assert f"$ mpremote connect {board.url} romfs deploy" in out
        for name in ("hello_world_int8.tflite", "magic_wand.tflite"):
            # The board's arena_used_bytes, then the host's prediction: equal, below TFLM's.
            row = re.search(rf"^{re.escape(name)} +(\d+) +(\d+)  in place \(flash\)$", out, re.M)
            assert row and int(row[1]) == int(row[2]) < MEASURED[name].tflm_used, out
        listing = mpremote(board.url, "exec", "import os; print(sorted(os.listdir('/rom')))")
        assert listing.strip() == str(sorted(["hello_world_int8.tflite", "magic_wand.tflite", "magic_wand.labels",
                                               "main_check.py"]))
        assert mpremote(board.url, "exec", "import main_check").strip() == "hello from flash"
        labels = mpremote(board.url, "exec", "print(open('/rom/magic_wand.labels').read().split())")
        assert labels.strip() == "['wing', 'ring', 'slope', 'negative']"
        # The image is the one the host built (data aligned for the kernels).
        image = romfs.build_image({p.name: p.read_bytes() for p in [*models, tmp_path / "magic_wand.labels", script]})
        assert "ROMFS image size: " in mpremote(board.url, "romfs", "query")
        assert mpremote(board.url, "exec", f"import vfs; print(bytes(vfs.rom_ioctl(2, 0)[:{len(image)}]) == "
                                           f"{image!r})").strip() == "True"


def test_deploy_to_flash_that_cannot_be_written(capsys):
    """The Netduino 2's ROMFS region is flash, which QEMU does not let the
    program write: deploy fails with the board's own error."""
    with QemuServer("NETDUINO2") as board:
        code = cli.main(["deploy", str(model_path("hello_world_int8.tflite")), "--port", board.url])
    err = capsys.readouterr().err
    assert code == 2 and "romfs deploy" in err and "OSError: 30" in err


def test_deploy_dry_run(capsys, tmp_path):
    model = model_path("hello_world_int8.tflite")
    assert cli.main(["deploy", str(model), "--port", "/dev/ttyACM0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    # No image is written: the command names it, and says how to make it.
    assert re.search(r"^\$ mpremote connect /dev/ttyACM0 romfs deploy models.romfs$", out, re.M)
    assert "the image is not written; `tflm-host romfs DIR -o models.romfs`" in out
    assert "$ mpremote connect /dev/ttyACM0 soft-reset" in out
    assert "tflm-deploy-" not in out  # no temporary path, gone once the command returns
    assert cli.main(["deploy", str(model), "--port", "/dev/ttyACM0", "--dry-run", "--no-romfs"]) == 0
    out = capsys.readouterr().out
    assert "no ROMFS partition on the board: copying to its filesystem" in out
    # The files are copied from where they are (a labels file under its name on the board).
    assert f"$ mpremote connect /dev/ttyACM0 fs cp {model} :hello_world_int8.tflite" in out.splitlines()
    (tmp_path / "m.tflite").write_bytes(model.read_bytes())
    (tmp_path / "m_labels.txt").write_text("a\nb\n")
    assert cli.main(["deploy", str(tmp_path / "m.tflite"), "--port", "/dev/ttyACM0", "--dry-run", "--no-romfs"]) == 0
    out = capsys.readouterr().out
    assert f"$ mpremote connect /dev/ttyACM0 fs cp {tmp_path / 'm_labels.txt'} :m.labels" in out.splitlines()
    # A path as the shell takes it; two files that would have one name on the board are refused.
    (tmp_path / "my model.tflite").write_bytes(model.read_bytes())
    assert cli.main(["deploy", str(tmp_path / "my model.tflite"), "--port", "/dev/ttyACM0", "--dry-run",
                     "--no-romfs"]) == 0
    assert f"$ mpremote connect /dev/ttyACM0 fs cp '{tmp_path / 'my model.tflite'}' ':my model.tflite'" in \
        capsys.readouterr().out.splitlines()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "m.tflite").write_bytes(model_path("hello_world_float.tflite").read_bytes())
    assert cli.main(["deploy", str(tmp_path / "m.tflite"), str(tmp_path / "b" / "m.tflite"), "--port",
                     "/dev/ttyACM0", "--dry-run"]) == 2
    assert capsys.readouterr().err == (f"tflm-host deploy: {tmp_path / 'm.tflite'} and {tmp_path / 'b' / 'm.tflite'} "
                                       "would both be m.tflite on the board: rename one\n")
    bad = tmp_path / "x.tflite"
    bad.write_bytes(b"not a model")
    assert cli.main(["deploy", str(bad), "--port", "/dev/ttyACM0", "--dry-run"]) == 2
    assert "not a .tflite model" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["deploy", "MODEL", "--port", "/dev/ttyACM97"],
                                     ["run", "MODEL", "--port", "/dev/ttyACM97"]])
def test_a_port_that_does_not_exist_is_named(capsys, command):
    """Not the serial library's guess "it may be in use by another program":
    no such device, and the ports there are."""
    argv = [model_path("hello_world_int8.tflite") if a == "MODEL" else a for a in command]
    assert cli.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "no device at /dev/ttyACM97: is the board plugged in" in err, err
    assert "in use by another program" not in err
