"""The host package installs on its own: a wheel built from its sdist (which
carries the engine's C sources) goes into a fresh virtual environment
outside the checkout, and tflm-host inspect, arena, plan and run --target
host work there with the device's figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv

from conftest import MEASURED, ROOT, model_path, run_on
from tflm_host.reference import reference_outputs


def sh(*args, cwd=None) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


def test_wheel_from_sdist_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    sh(sys.executable, "setup.py", "-q", "sdist", "-d", dist, cwd=ROOT / "host_tools")
    sdist = next(dist.glob("tflm_host-*.tar.gz"), None) or next(dist.glob("tflm-host-*.tar.gz"))
    assert not (ROOT / "host_tools" / "engine_src").exists()  # the copy is only in the sdist
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, sdist)
    wheel = next(dist.glob("*.whl"))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    sh(env / "bin" / "pip", "install", "-q", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()
    tool = env / "bin" / "tflm-host"
    person = model_path("person_detect.tflite")

    from tflm_host import __version__

    assert sh(tool, "--version", cwd=work).strip() == __version__
    assert "ops: " in sh(tool, "inspect", person, cwd=work)
    arena = json.loads(sh(tool, "arena", person, "--json", cwd=work))
    device = run_on("unix", "import tflm\nm = tflm.load(ROOT + '/m.tflite', quiet=True)\n"
                            "print(tflm.Interpreter(m).arena_used_bytes())\n", {"m.tflite": person.read_bytes()})
    # The wheel's prediction is the device's figure, below TFLM's measured one.
    assert arena["arena_used_bytes"] == int(device) < MEASURED["person_detect.tflite"].tflm_used
    plan = json.loads(sh(tool, "plan", model_path("kws_ref_model.tflite"), "--time-limit", "1", "--json", cwd=work))
    assert plan["head"] <= plan["tflm_greedy_head"]
    run = json.loads(sh(tool, "run", person, "--target", "host", "--inputs", "zeros", "--json", cwd=work))
    assert run["outputs"][0]["data"] == [72, -72] and run["arena_used_bytes"] == int(device)

    # What needs the checkout says so, in one line.
    env_vars = {k: v for k, v in os.environ.items() if k not in ("TFLM_BUILD", "TFLM_CHECKOUT")}
    for command in (["run", person, "--target", "unix"], ["codegen", "--check"]):
        proc = subprocess.run([str(tool), *map(str, command)], cwd=work, capture_output=True, text=True,
                              env=env_vars, timeout=120)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "needs the project's checkout" in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
