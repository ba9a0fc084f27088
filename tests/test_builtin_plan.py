"""A firmware for one model: person_detect's kernels only, built for its
tensor types only (`tflm-host ops`: TFLM_OPS and TFLM_TYPES), its offline
plan compiled in (`make firmware PLAN=...`) and no greedy planner at all
(`TFLM_PLANNERS=offline`), on the emulated Netduino 2; and what that
firmware says of models whose ops or types it was built without."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import UNKNOWN_OPS_MESSAGE, DEVICE_PRELUDE, invoke_inputs, model_files, model_firmware, model_path, \
    unknown_ops_model
from opgen import single_op
from tflm_host import cli, device
from tflm_host.model import load_model
from tflm_host.planning import formats, plan_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

# One process runs this file's tests (make test's pytest-xdist): it builds one firmware folder.
pytestmark = pytest.mark.xdist_group("test_builtin_plan")

NAME = "person_detect.tflite"


@pytest.fixture(scope="module")
def firmware():
    build = device.build_dir()
    header = build / "test-builtin-plan" / "person_detect_plan.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    result = plan_model(model_path(NAME).read_bytes(), reorder=False)
    text = formats.c_header(result.plan, NAME, result.head)
    if not header.exists() or header.read_text() != text:
        header.write_text(text)
    return model_firmware(NAME, "TFLM_PLANNERS=offline", f"PLAN={header}"), result


def test_builtin_plan_without_greedy_planner(firmware):
    target, result = firmware
    model = load_model(model_path(NAME))
    samples = make_inputs(model, "random", seed=8, count=2)
    n = len(result.plan.tensors)
    first = next(i for i, off in enumerate(result.plan.tensors) if off >= 0)
    partial = list(result.plan.tensors)
    partial[first] = -1  # left to the greedy planner, which is not there
    run, x = invoke_inputs(model, samples)
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(memoryview(open(ROOT + '/{NAME}', 'rb')))
print(len(tflm.builtin_plan))
attempt(lambda: tflm.Interpreter(m))
attempt(lambda: tflm.Interpreter(m, planner='greedy'))
attempt(lambda: tflm.Interpreter(m, plan={partial!r}))
it = tflm.Interpreter(m, plan=tflm.builtin_plan)
print(it.planner, it.arena_used_bytes(), it.head_bytes())
""" + run
    out = target.run([code], model_files(NAME) | x).splitlines()
    assert out[0] == str(4 * (4 + n))
    assert out[1] == "ValueError the model has no OfflineMemoryAllocation metadata: give the offline planner a plan"
    assert out[2] == "ValueError unknown planner 'greedy' (planners: 'offline')"
    assert out[3] == (f"NotImplementedError the offline plan leaves tensor {first} to the greedy planner, "
                      "which this firmware does not include")
    assert out[4] == f"offline {result.layout.used} {result.head}"
    ref = reference_outputs(model_path(NAME), samples)
    for k in range(2):
        assert bytes.fromhex(out[5 + k]) == np.asarray(ref[k][0]).tobytes()


def fc_and_unknown_model() -> bytes:
    """FULLY_CONNECTED (a kernel of tflm, not in this firmware), then a
    custom op no kernel implements."""
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 4), "FLOAT32")
    w = sg.tensor((2, 4), "FLOAT32", data=np.ones((2, 4), np.float32))
    y = sg.tensor((1, 2), "FLOAT32")
    z = sg.tensor((1, 2), "FLOAT32")
    sg.op("FULLY_CONNECTED", [x, w, -1], [y])
    sg.op("CUSTOM:SignalFoo", [y], [z], custom_options=b"")
    sg.inputs, sg.outputs = [x], [z]
    return b.build()


def test_ops_built_without_say_how_to_build_them_in(firmware):
    """An op this firmware was built without names the setting that builds
    it in; an op no kernel implements says so; tflm.ops lists the kernels."""
    target, _ = firmware
    code = DEVICE_PRELUDE + """
print(tflm.ops)
attempt(lambda: tflm.Interpreter(tflm.Model(load('fc.tflite'))))
attempt(lambda: tflm.arena_size(tflm.Model(load('hello.tflite'))))
attempt(lambda: tflm.Interpreter(tflm.Model(load('unknown.tflite'))))
"""
    files = {"fc.tflite": fc_and_unknown_model(), "unknown.tflite": unknown_ops_model(),
             "hello.tflite": model_path("hello_world_int8.tflite").read_bytes()}
    out = target.run([code], files).splitlines()
    assert out[0] == "('AVERAGE_POOL_2D', 'CONV_2D', 'DEPTHWISE_CONV_2D', 'RESHAPE', 'SOFTMAX')"
    assert out[1] == ('NotImplementedError model uses ops this firmware was built without: FULLY_CONNECTED '
                      '(build them in: make firmware TFLM_OPS="FULLY_CONNECTED", this model\'s ops; '
                      'tflm-host ops MODEL... prints them), and ops no kernel of tflm implements: CUSTOM:SignalFoo')
    assert out[2] == ('NotImplementedError model uses ops this firmware was built without: FULLY_CONNECTED '
                      '(build them in: make firmware TFLM_OPS="FULLY_CONNECTED", this model\'s ops; '
                      'tflm-host ops MODEL... prints them)')
    assert out[3] == "NotImplementedError " + UNKNOWN_OPS_MESSAGE


def float_conv_model() -> bytes:
    """CONV_2D in float32: a kernel of this firmware, built for int8 only."""
    w = np.ones((3, 1, 1, 2), np.float32)
    model, _ = single_op("CONV_2D", [((1, 4, 4, 2), "FLOAT32"), ((3, 1, 1, 2), "FLOAT32", w)],
                         [((1, 4, 4, 3), "FLOAT32", None)], Padding="VALID", StrideH=1, StrideW=1)
    return model


def softmax_int16_model() -> bytes:
    """SOFTMAX from int8 to int16: its int8 code is in this firmware, its
    int16 code is not."""
    model, _ = single_op("SOFTMAX", [((1, 8), "INT8", None, ([0.1], [0]))], [((1, 8), "INT16", ([1 / 65536], [-32768]))],
                         Beta=1.0)
    return model


def test_types_built_without_say_how_to_build_them_in(firmware):
    """A model whose operators use tensor types their kernels were built
    without is refused (NotImplementedError) before anything runs, naming the
    op, the type and the TFLM_TYPES setting for the model, the one
    `tflm-host ops` prints; with ops left out as well, both."""
    target, _ = firmware
    code = DEVICE_PRELUDE + """
for name in ('conv.tflite', 'softmax.tflite', 'magic_wand.tflite'):
    attempt(lambda: tflm.Interpreter(tflm.Model(load(name))))
attempt(lambda: tflm.arena_size(tflm.Model(load('conv.tflite'))))
"""
    files = {"conv.tflite": float_conv_model(), "softmax.tflite": softmax_int16_model(),
             "magic_wand.tflite": model_path("magic_wand.tflite").read_bytes()}
    out = target.run([code], files).splitlines()
    how = "this model's types; tflm-host ops MODEL... prints them)"
    conv = ('NotImplementedError model uses types this firmware was built without: CONV_2D float32 '
            f'(build them in: make firmware TFLM_TYPES="CONV_2D:float32", {how}')
    assert out[0] == conv
    assert out[1] == ('NotImplementedError model uses types this firmware was built without: SOFTMAX int16 '
                      f'(build them in: make firmware TFLM_TYPES="SOFTMAX:int16,int8", {how}')
    magic_types = ("CONV_2D:float32 DEPTHWISE_CONV_2D:float32 FULLY_CONNECTED:float32 MAX_POOL_2D:float32 "
                   "SOFTMAX:float32")
    assert out[2] == ('NotImplementedError model uses ops this firmware was built without: FULLY_CONNECTED, '
                      'MAX_POOL_2D (build them in: make firmware TFLM_OPS="CONV_2D DEPTHWISE_CONV_2D '
                      'FULLY_CONNECTED MAX_POOL_2D SOFTMAX", this model\'s ops; tflm-host ops MODEL... prints them), '
                      'and types this firmware was built without: CONV_2D float32, DEPTHWISE_CONV_2D float32, '
                      f'SOFTMAX float32 (build them in: make firmware TFLM_TYPES="{magic_types}", {how}')
    assert out[3] == conv
    # the setting the host prints for the same models
    for model, setting in ((float_conv_model(), "CONV_2D:float32"), (softmax_int16_model(), "SOFTMAX:int16,int8"),
                           (model_path("magic_wand.tflite").read_bytes(), magic_types)):
        assert cli.kernel_types([load_model(model)]) == setting
