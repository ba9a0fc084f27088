"""A firmware built with one memory planner (`make firmware
TFLM_PLANNERS=greedy`: no offline planner, no linear one) and one model's
kernels, on the emulated Netduino 2: it runs the model as the full firmware
does (TFLM's outputs, the host's arena figure), and what it lacks is refused
by name (test_builtin_plan.py builds the other way round: the offline
planner alone)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, ROOT, SUPPORTED_OPS, model_files, model_path
from tflm_host import arena, cli, device
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

# One process runs this file's tests (make test's pytest-xdist): it builds one firmware folder.
pytestmark = pytest.mark.xdist_group("test_planners_built")

NAME = "hello_world_int8.tflite"


@pytest.fixture(scope="module")
def target():
    model = load_model(model_path(NAME))
    ops = sorted({op.opcode for op in model.main.operators} & SUPPORTED_OPS)
    args = ["make", "-s", "--no-print-directory", "-C", str(ROOT), f"BUILD={device.build_dir()}", "BOARD=NETDUINO2",
            f"TFLM_OPS={' '.join(ops)}", f"TFLM_TYPES={cli.kernel_types([model])}", "TFLM_PLANNERS=greedy"]
    built = subprocess.run(args + ["firmware"], capture_output=True, text=True)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    fw_dir = subprocess.run(args + ["fw-dir"], check=True, capture_output=True, text=True).stdout.strip()
    return device.QemuTarget("NETDUINO2", firmware=device.Path(fw_dir) / "firmware.elf")


def test_greedy_planner_alone(target):
    model = load_model(model_path(NAME))
    samples = make_inputs(model, "random", seed=3, count=2)
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(memoryview(open(ROOT + '/{NAME}', 'rb')))
print(tflm.builtin_plan)
attempt(lambda: tflm.Interpreter(m, planner='linear'))
attempt(lambda: tflm.Interpreter(m, planner='offline'))
attempt(lambda: tflm.Interpreter(m, plan=[0] * 12))
attempt(lambda: tflm.arena_size(m, plan=[0] * 12))
it = tflm.Interpreter(m)
print(it.planner, it.arena_used_bytes(), tflm.arena_size(m))
x = open(ROOT + '/x.bin', 'rb').read()
for k in range(2):
    it.set_input(0, x[k * {model.inputs[0].nbytes}:(k + 1) * {model.inputs[0].nbytes}])
    it.invoke()
    print(bytes(it.output(0)).hex())
"""
    files = model_files(NAME)
    files["x.bin"] = b"".join(s[0].tobytes() for s in samples)
    out = target.run([code], files).splitlines()
    used = arena.plan_layout(model).used
    assert out[:6] == ["None",
                       "ValueError unknown planner 'linear' (planners: 'greedy', 'tflm')",
                       "ValueError unknown planner 'offline' (planners: 'greedy', 'tflm')",
                       "NotImplementedError this firmware has no offline planner",
                       "NotImplementedError this firmware has no offline planner",
                       f"greedy {used} {used}"]
    ref = reference_outputs(model_path(NAME), samples)
    for k in range(2):
        assert bytes.fromhex(out[6 + k]) == np.asarray(ref[k][0]).tobytes()
