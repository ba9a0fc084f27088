"""The module compiles without warnings for the real boards' CPUs (make compile-check),
and `make firmware` for a real board says what to install when the SDKs are missing."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tflm_host import board_info

# One process runs this file's tests (make test's pytest-xdist): it builds build/compile-check.
pytestmark = pytest.mark.xdist_group("test_compile_check")

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TFLM_BUILD", ROOT / "build"))
CPUS = ["cortex-m0plus", "cortex-m4", "cortex-m7", "rv32imc", "xtensa"]
# boards.mk works whether or not the top-level Makefile includes it yet.
MAKE = ["make", "--no-print-directory", "-C", str(ROOT), "-f", "Makefile", "-f", "port_boards/boards.mk",
        f"BUILD={BUILD}"]


def make(*args, timeout=600, env=None):
    return subprocess.run(MAKE + list(args), capture_output=True, text=True, timeout=timeout, env=env)


def compile_check_run() -> tuple[subprocess.CompletedProcess, str]:
    """`make compile-check` and the size table it wrote, one process at a
    time (it rewrites build/compile-check/sizes.md on every run)."""
    out = BUILD / "compile-check"
    out.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".compile-check.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = make("compile-check")
        return r, (out / "sizes.md").read_text() if r.returncode == 0 else ""


def sources():
    mod = ROOT / "micropython_mod"
    return sorted(str(p.relative_to(mod).with_suffix(".o")) for part in ("engine", "kernels", "binding")
                  for p in (mod / part).glob("*.c"))


@pytest.fixture(scope="module")
def compile_check():
    if not shutil.which("make"):
        pytest.skip("no make")
    r, table = compile_check_run()
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return r, table


def test_every_file_compiles_for_every_cpu(compile_check):
    run, table = compile_check
    for cpu in CPUS + ["cortex-m4-ops"]:
        objs = BUILD / "compile-check" / cpu
        missing = [o for o in sources() if not (objs / o).is_file()]
        assert not missing, f"{cpu}: {missing}"
        row = next(line for line in table.splitlines() if line.startswith(f"| {cpu} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        engine, kernels, binding, total = (int(c.replace(",", "")) for c in cells[2:6])
        assert engine > 0 and kernels > 0 and binding > 0 and total == engine + kernels + binding
    assert "compile-check: " in run.stdout


def test_fewer_kernels_are_smaller(compile_check):
    _, table = compile_check

    def kernels(cpu):
        row = next(line for line in table.splitlines() if line.startswith(f"| {cpu} |"))
        return int(row.strip("|").split("|")[3].replace(",", ""))

    assert kernels("cortex-m4-ops") < kernels("cortex-m4") / 2


def test_objects_are_reused(compile_check):
    r, _ = compile_check_run()
    assert r.returncode == 0, r.stderr
    assert not re.search(r"^CC ", r.stdout, re.M), "objects were rebuilt although nothing changed"


@pytest.mark.parametrize("cpu", CPUS)
def test_warnings_are_errors(compile_check, cpu, tmp_path):
    """A double constant in float arithmetic fails on every CPU: -Werror holds and, for the
    stm32 flags, -fsingle-precision-constant is undone for the module."""
    mod = tmp_path / "mod"
    (mod / "engine").mkdir(parents=True)
    (mod / "engine" / "bad.c").write_text("float tflm_bad(float x);\nfloat tflm_bad(float x) { return x * 2.5; }\n")
    (mod / "engine" / "good.c").write_text("float tflm_good(float x);\nfloat tflm_good(float x) { return x * 2.5f; }\n")
    out = tmp_path / "out"
    good = make(f"CC_MOD={mod}", f"CC_DIR={out}", f"CC_CONFIGS={cpu}", f"{out}/{cpu}/engine/good.o")
    assert good.returncode == 0, good.stderr
    bad = make(f"CC_MOD={mod}", f"CC_DIR={out}", f"CC_CONFIGS={cpu}", f"{out}/{cpu}/engine/bad.o")
    assert bad.returncode != 0 and "double-promotion" in bad.stderr


# ---------------------------------------------------------------------------
# Real boards without their SDKs: the build stops and says what to run


@pytest.mark.parametrize("board,port", [("RPI_PICO", "rp2"), ("ESP32_GENERIC", "esp32"), ("PYBV11", "stm32")])
def test_real_board_without_micropython_checkout(board, port, tmp_path):
    r = make("firmware-real", f"BOARD={board}", f"MPY_DIR={tmp_path / 'none'}")
    assert r.returncode != 0
    assert f"make firmware BOARD={board}: MPY_DIR={tmp_path / 'none'} holds no MicroPython 1.25 source" in r.stderr
    assert "git clone --branch v1.25.0" in r.stderr
    assert f"/ports/{port} " in r.stderr or f"/ports/{port}\n" in r.stderr
    assert f"make firmware BOARD={board} MPY_DIR=" in r.stderr


@pytest.mark.parametrize("board,port,first", [("RPI_PICO", "rp2", "lib/pico-sdk"),
                                              ("ESP32_GENERIC", "esp32", "lib/berkeley-db-1.xx"),
                                              ("PYBV11", "stm32", "lib/stm32lib")])
def test_real_board_without_submodules(board, port, first, tmp_path):
    mpy = tmp_path / "micropython"
    (mpy / "py").mkdir(parents=True)
    (mpy / "py" / "mpconfig.h").write_text("#define MICROPY_VERSION_MINOR (25)\n")
    for m in ("pico-sdk", "tinyusb", "mbedtls", "micropython-lib", "stm32lib", "berkeley-db-1.xx"):
        (mpy / "lib" / m).mkdir(parents=True)  # empty, as in a source tree without submodules
    # Without the offline SDK archives (SDK=...) and not a git clone: nothing to get them from.
    r = make("firmware-real", f"BOARD={board}", f"MPY_DIR={mpy}", f"SDK={tmp_path / 'no-sdk'}")
    assert r.returncode != 0
    assert f"has no {first}: the {port} port needs a MicroPython 1.25 git checkout with its submodules" in r.stderr
    assert f"make -C $HOME/micropython-1.25/ports/{port}" in r.stderr and "submodules" in r.stderr


def test_esp32_without_esp_idf(tmp_path):
    mpy = tmp_path / "micropython"
    (mpy / "py").mkdir(parents=True)
    (mpy / "py" / "mpconfig.h").write_text("#define MICROPY_VERSION_MINOR (25)\n")
    for m in ("micropython-lib", "berkeley-db-1.xx"):
        (mpy / "lib" / m).mkdir(parents=True)
        (mpy / "lib" / m / "README").write_text("x")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    env.pop("IDF_PATH", None)
    r = make("firmware-real", "BOARD=ESP32_GENERIC", f"MPY_DIR={mpy}", f"SDK={tmp_path / 'no-sdk'}", env=env)
    assert r.returncode != 0
    assert "idf.py is not on PATH (ESP-IDF v5.2 to v5.4 must be installed and its export.sh sourced" in r.stderr
    assert "install.sh esp32" in r.stderr and "export.sh" in r.stderr


def test_not_a_real_board():
    r = make("firmware-real", "BOARD=NETDUINO2")
    real = " ".join(b.name for b in board_info.boards() if b.real)
    assert r.returncode != 0 and f"BOARD=NETDUINO2 is not a real board; real boards: {real}" in r.stderr
