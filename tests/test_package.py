"""The host package installs on its own: the release's wheel (`make dist`
builds it from the sdist, which carries the engine's C sources), unpacked
on a clean path, goes into a fresh virtual environment outside the
checkout, and tflm-host inspect, arena, plan and run --target host work
there with the device's figures. The wheel holds what users run:
no maintainers' tool (host_tools/tflm_dev), dependencies as ranges,
matplotlib only as the [plot] extra."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import tarfile
import venv
import zipfile
from pathlib import Path

from conftest import MEASURED, ROOT, dist_artifacts, model_path, run_on
from tflm_host import board_info, boards


def sh(*args, cwd=None) -> str:
    return sh_env(None, *args, cwd=cwd)


def sh_env(env: dict[str, str] | None, *args, cwd=None) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


def test_sdist_carries_the_engine(dist_copy):
    """The release's sdist (make dist-pkg builds the wheel from it) holds the
    engine's C sources and the boards' descriptions; the checkout keeps no copy."""
    (record,) = dist_artifacts(dist_copy, "sdist")
    with tarfile.open(dist_copy / record["file"]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    engine = {f"engine_src/{p.relative_to(ROOT / 'micropython_mod')}"
              for part in ("engine", "kernels") for p in (ROOT / "micropython_mod" / part).glob("*.[ch]")}
    assert engine and engine <= names, sorted(engine - names)[:5]
    assert {f"tflm_host/board_data/{name}.json" for name in board_info.names()} <= names
    assert not (ROOT / "host_tools" / "engine_src").exists()  # the copy is only in the sdist


def test_wheel_from_sdist_in_a_fresh_venv(dist_copy, tmp_path):
    (record,) = dist_artifacts(dist_copy, "wheel")
    wheel = dist_copy / record["file"]
    check_wheel_contents(wheel)
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    sh(env / "bin" / "pip", "install", "-q", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()
    tool = env / "bin" / "tflm-host"
    person = model_path("person_detect.tflite")
    # No checkout around: none named, none on the path, none above the folder.
    env_vars = {k: v for k, v in os.environ.items() if k not in ("TFLM_BUILD", "TFLM_CHECKOUT", "PYTHONPATH")}
    run = functools.partial(sh_env, env_vars)
    where = run(env / "bin" / "python", "-c", "import importlib.util as u, tflm_host\n"
               "print(tflm_host.__file__, u.find_spec('tflm_dev'), u.find_spec('matplotlib'))", cwd=work).split()
    assert Path(where[0]).is_relative_to(env) and where[1:] == ["None", "None"], where

    from tflm_host import __version__

    assert run(tool, "--version", cwd=work).strip() == __version__
    assert "ops: " in run(tool, "inspect", person, cwd=work)
    arena = json.loads(run(tool, "arena", person, "--json", cwd=work))
    device = run_on("unix", "import tflm\nm = tflm.load(ROOT + '/m.tflite', quiet=True)\n"
                            "print(tflm.Interpreter(m).arena_used_bytes())\n", {"m.tflite": person.read_bytes()})
    # The wheel's prediction is the device's figure, below TFLM's measured one.
    assert arena["arena_used_bytes"] == int(device) < MEASURED["person_detect.tflite"].tflm_used
    plan = json.loads(run(tool, "plan", model_path("kws_ref_model.tflite"), "--time-limit", "1", "--json", cwd=work))
    assert plan["head"] <= plan["tflm_greedy_head"]
    host = json.loads(run(tool, "run", person, "--target", "host", "--inputs", "zeros", "--json", cwd=work))
    assert host["outputs"][0]["data"] == [72, -72] and host["arena_used_bytes"] == int(device)
    # A board's heap and ROMFS region ship with the package: its build files' figures.
    fits = run(tool, "arena", person, "--board", "RPI_PICO", cwd=work).splitlines()
    b = boards.files_budget("RPI_PICO", ROOT / "port_boards" / "RPI_PICO")
    assert fits[0] == (f"RPI_PICO: MicroPython heap {b.heap:,} B ({b.heap_source}, when this tflm-host was built), "
                       f"ROMFS region {b.romfs:,} B")
    assert fits[-1] == "person_detect.tflite fits RPI_PICO in ROMFS flash, in place (tflm-host deploy)"

    # What needs the checkout, or an extra, says so in one line.
    needs = "needs the project's checkout"
    for command, message in ((["run", person, "--target", "unix"], needs),
                             (["run", person], "(or --target host: the engine built into tflm-host)"),
                             (["run", person, "--firmware", work / "none"], f"{work / 'none'} not found"),
                             (["codegen", "--check"], needs),
                             (["bench", "arena"], needs),
                             (["plan", person, "--png", work / "p.png"], "pip install matplotlib")):
        proc = subprocess.run([str(tool), *map(str, command)], cwd=work, capture_output=True, text=True,
                              env=env_vars, timeout=120)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""
    # Given a checkout, the installed tflm-host takes the maintainers' tools from it.
    assert sh_env(dict(env_vars, TFLM_CHECKOUT=str(ROOT)), tool, "codegen", "--check", cwd=work) == ""


MAINTAINERS_MODULES = ("bench", "opbench", "cycles", "builder", "codegen", "boards_report")


def check_wheel_contents(wheel: Path) -> None:
    """The wheel's files: the user's package, none of the checkout's
    maintainers' tools; its dependencies: ranges, matplotlib an extra."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    packages = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert packages == {"tflm_host"}, packages
    modules = {Path(n).stem for n in names if n.endswith(".py")}
    assert {"cli", "device", "runner", "host_run", "boards", "plot"} <= modules
    assert not modules & set(MAINTAINERS_MODULES), modules & set(MAINTAINERS_MODULES)
    assert any(re.fullmatch(r"tflm_host/_engine\..*\.so", n) for n in names)
    assert "tflm_host/pico/emulator.cjs" in names and not [n for n in names if n.endswith("bare.cjs")]
    requires = dict(line.split(": ", 1)[1].partition(";")[::2]
                    for line in metadata.splitlines() if line.startswith("Requires-Dist: "))
    for spec, marker in requires.items():
        assert "==" not in spec, spec  # ranges, no pins
    assert {re.match(r"[\w.-]+", s).group() for s, m in requires.items() if not m} == \
        {"numpy", "flatbuffers", "tflite", "mpremote"}, requires
    mpremote = next(s for s in requires if s.startswith("mpremote"))
    assert re.fullmatch(r"mpremote ?(<2,>=1\.29|>=1\.29,<2|~=1\.29)", mpremote), mpremote
    (plot,) = [m for s, m in requires.items() if s.startswith("matplotlib")]
    assert re.fullmatch(r' ?extra == "plot"', plot), plot
