"""One description per board: port_boards/<BOARD>/board.json, read through
tflm_host.board_info by the host tools and by the Makefile. Every board
folder has one, the descriptions agree with the board's build files, the
Makefile's board variables are the descriptions', and no list of boards is
written out anywhere else (host package, Makefiles, the tests' conftest)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from tflm_host import board_info

PORT_BOARDS = ROOT / "port_boards"
BOARD_DIRS = sorted(p.name for p in PORT_BOARDS.iterdir() if p.is_dir() and p.name != "common")
# Where board lists used to be written out, and must not be again.
PYTHON_SOURCES = (sorted((ROOT / "host_tools" / "tflm_host").glob("*.py")) + sorted((ROOT / "host_tools" / "tflm_dev").glob("*.py"))
                  + [ROOT / "tests" / "conftest.py"])
MAKEFILES = [ROOT / "Makefile", *sorted(PORT_BOARDS.glob("*.mk")), *sorted(PORT_BOARDS.glob("common/*.mk"))]


def mk(board: str) -> str:
    path = PORT_BOARDS / board / "mpconfigboard.mk"
    return path.read_text() if path.is_file() else ""


def test_every_board_folder_has_its_description():
    assert BOARD_DIRS, "no board folders"
    for name in BOARD_DIRS:
        assert (PORT_BOARDS / name / "board.json").is_file(), f"port_boards/{name} has no board.json"
    assert sorted(board_info.names()) == BOARD_DIRS


def test_budgets_are_only_in_a_packages_copies(tmp_path, monkeypatch):
    """A board's heap and ROMFS figures (budget) come from its build files:
    setup.py writes them into a package's copies; port_boards/ holds none
    (a budget typed there is refused), the copies are read where there is
    no checkout."""
    assert all(b.budget is None for b in board_info.boards())
    checkout, shipped = tmp_path / "port_boards", tmp_path / "board_data"
    shipped.mkdir()
    for name in BOARD_DIRS:
        d = json.loads((PORT_BOARDS / name / "board.json").read_text())
        if name == "RPI_PICO":
            d["budget"] = {"heap": 1, "romfs": 2, "heap_source": "x"}
        (checkout / name).mkdir(parents=True)
        (checkout / name / "board.json").write_text(json.dumps(d))
        (shipped / f"{name}.json").write_text(json.dumps(d))
    monkeypatch.setattr(board_info, "CHECKOUT", checkout)
    board_info.boards.cache_clear()
    try:
        with pytest.raises(board_info.BoardFileError, match="budget is written into a package's copies"):
            board_info.boards()
        monkeypatch.setattr(board_info, "CHECKOUT", tmp_path / "none")
        monkeypatch.setattr(board_info, "SHIPPED", shipped)
        board_info.boards.cache_clear()
        assert board_info.get("RPI_PICO").budget == (1, 2, "x") and board_info.get("PYBV11").budget is None
    finally:
        board_info.boards.cache_clear()


def test_descriptions_agree_with_the_build_files():
    for b in board_info.boards():
        machine = re.search(r"^QEMU_MACHINE\s*=\s*(\S+)", mk(b.name), re.M)
        # QEMU's Arm machines run exactly the boards whose makefile names one.
        assert (b.emulator == "qemu-arm") == bool(machine), b.name
        cmake = (PORT_BOARDS / b.name / "mpconfigboard.cmake").is_file()
        assert cmake == (b.port in ("rp2", "esp32")), b.name
        assert (b.port == "qemu") == (b.name in board_info.make_vars()["QEMU_BOARDS"])
        if b.variant_of:
            assert board_info.get(b.variant_of).port == b.port and b.flash is None, b.name
        if b.real and not b.variant_of:
            assert b.flash is not None and b.chip, f"{b.name}: a real board has a chip and a flash map"
            assert (ROOT / b.flash.romfs_source).is_file(), b.flash.romfs_source
        if b.cycles and b.cycles.estimator:
            # The estimator's core is the board's own CPU (-mcpu of its build) unless stated otherwise.
            cpu = re.search(r"-mcpu=cortex-(\w+)", mk(b.name)).group(1)
            assert (b.cycles.emulated_core or b.cycles.core) == cpu, b.name
            assert b.cycles.chip and b.cycles.clock_hz and b.cycles.flash_cache and b.cycles.note, b.name
        if b.cmsis_nn:
            assert b.cmsis_nn.hz == int(re.search(r"^TFLM_CPU_HZ\s*=\s*(\d+)", mk(b.name), re.M).group(1))
            assert f"-mcpu=cortex-{b.cycles.emulated_core or b.cycles.core}" in b.cmsis_nn.cpu, b.name
        if b.cmsis_nn_stand_in:
            assert board_info.get(b.cmsis_nn_stand_in).cmsis_nn is not None, b.name


def make_value(var: str, *args: str) -> str:
    out = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "--eval",
                          "print-%: ; @echo $($*)", f"print-{var}", *args],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return out.strip()


def test_the_makefile_takes_its_boards_from_the_descriptions():
    want = board_info.make_vars()
    for var in ("QEMU_BOARDS", "REAL_BOARDS", "TESTED_REAL_BOARDS", "RELEASE_BOARDS"):
        assert make_value(var).split() == want[var], var
    for b in board_info.boards():
        if b.real:
            assert make_value("REAL_PORT", f"BOARD={b.name}") == b.port
    assert want["QEMU_BOARDS"] and want["REAL_BOARDS"]
    # make natmod-stock: each natmod board's .mpy (every kernel, or its models') and stock firmware.
    assert make_value("NATMOD_BOARDS").split() == want["NATMOD_BOARDS"] != []
    plan = subprocess.run(
        ["make", "--no-print-directory", "-n", "-C", str(ROOT), "natmod-stock"], capture_output=True, text=True,
        timeout=120, check=True).stdout
    for name in want["NATMOD_BOARDS"]:
        b = board_info.get(name)
        assert f"firmware-stock BOARD={name}" in plan
        if b.natmod_models is None:
            assert f"natmod ARCH={b.natmod_arch}\n" in plan
        else:
            builds = [[Path(w).name for w in x.split() if w.endswith(".tflite")]
                      for x in plan.splitlines() if f"ops --natmod {b.natmod_arch} " in x]
            assert list(b.natmod_models) in builds, name


def test_make_stops_on_a_broken_description(tmp_path):
    tree = tmp_path / "checkout"
    (tree / "host_tools").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(ROOT / "host_tools" / "tflm_host"), str(tree / "host_tools")], check=True)
    subprocess.run(["cp", "-r", str(PORT_BOARDS), str(tree)], check=True)
    (tree / "Makefile").write_text((ROOT / "Makefile").read_text())
    broken = tree / "port_boards" / "MICROBIT" / "board.json"
    broken.write_text(broken.read_text().replace('"port": "qemu"', '"port": "nrf"'))
    env = {"PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["make", "-C", str(tree), "help"], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode != 0
    assert "port 'nrf' is none of qemu, rp2, stm32, esp32" in proc.stderr
    assert "(port_boards/*/board.json) could not be read" in proc.stderr


def board_names_in(values: list[ast.expr]) -> set[str]:
    names = set(BOARD_DIRS)
    return {v.value for v in values if isinstance(v, ast.Constant) and v.value in names}


@pytest.mark.parametrize("path", PYTHON_SOURCES, ids=lambda p: p.name)
def test_no_board_list_in_python(path):
    """A tuple, list, set or dict of two boards or more is a list of boards
    written out again: it belongs in the boards' board.json."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            found = board_names_in(node.elts)
        elif isinstance(node, ast.Dict):
            found = board_names_in([k for k in node.keys if k is not None])
        else:
            continue
        assert len(found) < 2, f"{path.name}:{node.lineno} lists boards {sorted(found)}: use tflm_host.board_info"


@pytest.mark.parametrize("path", MAKEFILES, ids=lambda p: p.name)
def test_no_board_list_in_makefiles(path):
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        m = re.match(r"^\s*[A-Za-z_][\w-]*\s*(?::=|\?=|\+=|=)(.*)$", line)
        if m:
            found = {w for w in re.findall(r"\w+", m.group(1)) if w in BOARD_DIRS}
            assert len(found) < 2, f"{path.name}:{n} lists boards {sorted(found)}: they come from port_boards/*/board.json"


def test_a_description_off_its_schema_is_refused():
    good = json.loads((PORT_BOARDS / "RPI_PICO" / "board.json").read_text())
    assert board_info.parse("RPI_PICO", good).flash.romfs_addr == 0x10100000
    for change, message in (({"emulater": "x"}, "unknown emulater"),
                            ({"port": "nrf"}, "port 'nrf' is none of"),
                            ({"emulator": "renode"}, "emulator 'renode' is none of"),
                            ({"order": "five"}, "'five' is not a number"),
                            ({"flash": {**good["flash"], "romfs_adr": 1}}, "flash: unknown romfs_adr"),
                            ({"port": "stm32", "natmod": {"arch": "armv7emsp"}},
                             "natmod: stock firmware is built for the qemu and rp2 ports' boards only"),
                            ({"natmod": {"models": []}}, "natmod: missing arch")):
        with pytest.raises(board_info.BoardFileError, match=re.escape(message)):
            board_info.parse("RPI_PICO", {**good, **change})
    microbit = json.loads((PORT_BOARDS / "MICROBIT" / "board.json").read_text())
    with pytest.raises(board_info.BoardFileError, match="natmod.models: a list of .tflite file names"):
        board_info.parse("MICROBIT", {**microbit, "natmod": {"arch": "armv6m", "models": ["kws"]}})
    bad = dict(good)
    del bad["make_test"]
    with pytest.raises(board_info.BoardFileError, match="missing make_test"):
        board_info.parse("RPI_PICO", bad)
