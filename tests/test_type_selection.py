"""Type selection (TFLM_TYPES): what make makes of the setting `tflm-host
ops` prints, and the engine built for person_detect's tensor types only
(tests/engine: tflm_run_types, under ASan/UBSan) refusing models whose
operators use other types, naming op, type and setting, as the firmware
does (tests/test_builtin_plan.py)."""

from __future__ import annotations

import subprocess

import numpy as np

from conftest import ROOT, model_path
from engine_host import BUILD, make_engine
from opgen import single_op
from tflm_host import cli
from tflm_host.model import load_model

HOW = "this model's types; tflm-host ops MODEL... prints them)"


def test_make_takes_the_types_setting_as_ops_prints_it(tmp_path):
    """micropython_mod/tflm_types.mk turns TFLM_TYPES into the flags
    `ops` prints (and a bare type list into -DTFLM_TYPES)."""
    setting = "AVERAGE_POOL_2D:int8 CONV_2D:int32,int8 SOFTMAX: int8 uint8"
    mk = tmp_path / "t.mk"
    mk.write_text(f"include {ROOT}/micropython_mod/tflm_types.mk\nS := {setting}\n"
                  "all:\n\t@echo $(call tflm_types_cflags,$(S))\n")
    out = subprocess.run(["make", "-s", "-f", str(mk)], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["-DTFLM_TYPES_AVERAGE_POOL_2D=0+TFLM_T_INT8", "-DTFLM_TYPES_CONV_2D=0+TFLM_T_INT32+TFLM_T_INT8",
                   "-DTFLM_TYPES_SOFTMAX=0", "-DTFLM_TYPES=0+TFLM_T_INT8+TFLM_T_UINT8"]
    assert cli.types_cflags("AVERAGE_POOL_2D:int8 CONV_2D:int32,int8 SOFTMAX:") == out[:3]


def run_types(model: bytes, tmp_path) -> str:
    """tflm_run_types' first line for the model."""
    make_engine(BUILD)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    proc = subprocess.run([str(BUILD / "tflm_run_types"), str(path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr[-4000:]
    return proc.stdout.splitlines()[0]


def test_a_build_without_a_type_refuses_its_models(tmp_path):
    w = np.ones((3, 1, 1, 2), np.float32)
    conv, _ = single_op("CONV_2D", [((1, 4, 4, 2), "FLOAT32"), ((3, 1, 1, 2), "FLOAT32", w)],
                        [((1, 4, 4, 3), "FLOAT32", None)], Padding="VALID", StrideH=1, StrideW=1)
    assert run_types(conv, tmp_path) == (
        "error 3 needed 0 given 0: model uses types this firmware was built without: CONV_2D float32 "
        f'(build them in: make firmware TFLM_TYPES="CONV_2D:float32", {HOW}')
    # int8 in, int16 out: SOFTMAX's int16 is left out
    softmax, _ = single_op("SOFTMAX", [((1, 8), "INT8", None, ([0.1], [0]))],
                           [((1, 8), "INT16", ([1 / 65536], [-32768]))], Beta=1.0)
    assert run_types(softmax, tmp_path) == (
        "error 3 needed 0 given 0: model uses types this firmware was built without: SOFTMAX int16 "
        f'(build them in: make firmware TFLM_TYPES="SOFTMAX:int16,int8", {HOW}')
    # a kernel built for every type (FULLY_CONNECTED) takes any
    assert run_types(model_path("hello_world_float.tflite").read_bytes(), tmp_path).startswith("head ")
    # the model the build is for
    assert run_types(model_path("person_detect.tflite").read_bytes(), tmp_path).startswith("head ")
    assert cli.kernel_types([load_model(model_path("person_detect.tflite"))]) == (
        "AVERAGE_POOL_2D:int8 CONV_2D:int32,int8 DEPTHWISE_CONV_2D:int32,int8 RESHAPE:int32,int8 SOFTMAX:int8")


def test_every_op_with_a_type_left_out_is_named(tmp_path):
    """magic_wand (float32 throughout): each op whose kernel was built
    without float32, and in the setting every op of the model with a kernel
    (those built for every type, or not in this build, too)."""
    line = run_types(model_path("magic_wand.tflite").read_bytes(), tmp_path)
    assert line == (
        "error 3 needed 0 given 0: model uses types this firmware was built without: CONV_2D float32, "
        "DEPTHWISE_CONV_2D float32, SOFTMAX float32 (build them in: make firmware TFLM_TYPES=\""
        "CONV_2D:float32 DEPTHWISE_CONV_2D:float32 FULLY_CONNECTED:float32 MAX_POOL_2D:float32 SOFTMAX:float32\", "
        f"{HOW}")


def test_types_in_called_subgraphs_count(tmp_path):
    """A float32 SOFTMAX in the subgraph CALL_ONCE runs, the main one int8."""
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    main, init = b.subgraph(), b.subgraph("init")
    x = main.tensor((1, 4), "INT8", quant=([0.1], [0]))
    y = main.tensor((1, 4), "INT8", quant=([1 / 256], [-128]))
    main.op("CALL_ONCE", [], [], InitSubgraphIndex=1)
    main.op("SOFTMAX", [x], [y], Beta=1.0)
    main.inputs, main.outputs = [x], [y]
    c = init.tensor((1, 4), "FLOAT32", data=np.zeros((1, 4), np.float32))
    z = init.tensor((1, 4), "FLOAT32")
    init.op("SOFTMAX", [c], [z], Beta=1.0)
    assert run_types(b.build(), tmp_path) == (
        "error 3 needed 0 given 0: model uses types this firmware was built without: SOFTMAX float32 "
        f'(build them in: make firmware TFLM_TYPES="SOFTMAX:float32,int8", {HOW}')
