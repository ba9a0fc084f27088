"""A firmware built with one memory planner (`make firmware
TFLM_PLANNERS=greedy`: no offline planner, no linear one) and one model's
kernels, on the emulated Netduino 2: it runs the model as the full firmware
does (TFLM's outputs, the host's arena figure), and what it lacks is refused
by name (test_builtin_plan.py builds the other way round: the offline
planner alone)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, invoke_inputs, model_files, model_firmware, model_path
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

# One process runs this file's tests (make test's pytest-xdist): it builds one firmware folder.
pytestmark = pytest.mark.xdist_group("test_planners_built")

NAME = "hello_world_int8.tflite"


@pytest.fixture(scope="module")
def target():
    return model_firmware(NAME, "TFLM_PLANNERS=greedy")


def test_greedy_planner_alone(target):
    model = load_model(model_path(NAME))
    samples = make_inputs(model, "random", seed=3, count=2)
    run, x = invoke_inputs(model, samples)
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(memoryview(open(ROOT + '/{NAME}', 'rb')))
print(tflm.builtin_plan)
attempt(lambda: tflm.Interpreter(m, planner='linear'))
attempt(lambda: tflm.Interpreter(m, planner='offline'))
attempt(lambda: tflm.Interpreter(m, plan=[0] * 12))
attempt(lambda: tflm.arena_size(m, plan=[0] * 12))
it = tflm.Interpreter(m)
print(it.planner, it.arena_used_bytes(), tflm.arena_size(m))
""" + run
    out = target.run([code], model_files(NAME) | x).splitlines()
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
