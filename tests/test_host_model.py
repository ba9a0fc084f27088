"""The host model reader and `tflm-host inspect` on the shared models."""

from __future__ import annotations

import json

import pytest

from conftest import MEASURED, model_path
from tflm_host import cli
from tflm_host.model import load_model


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_ops_match_models_table(name, measured):
    model = load_model(model_path(name))
    assert model.op_counts() == measured[name].ops
    assert len(model.raw) == model_path(name).stat().st_size


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_no_reuse_figure(name, measured):
    """The sum of all planned tensors, each rounded to 16 bytes, is MODELS.md's `no reuse`."""
    model = load_model(model_path(name))
    total = 0
    for sg in model.subgraphs:
        for t in sg.tensors:
            if not t.is_constant and not t.is_variable and t.nbytes:
                total += (t.nbytes + 15) // 16 * 16
    assert total == measured[name].no_reuse


def test_hello_world_int8_details():
    model = load_model(model_path("hello_world_int8.tflite"))
    (inp,), (out,) = model.inputs, model.outputs
    assert (inp.dtype, inp.shape, out.dtype, out.shape) == ("INT8", (1, 1), "INT8", (1, 1))
    assert inp.quantization and not inp.quantization.per_channel
    fc = model.main.operators[0]
    assert fc.opcode == "FULLY_CONNECTED" and fc.options_type == "FullyConnectedOptions"
    assert fc.options["FusedActivationFunction"] == "RELU"


def test_per_channel_quantization_is_read():
    model = load_model(model_path("person_detect.tflite"))
    per_channel = [t for t in model.main.tensors if t.quantization and t.quantization.per_channel]
    assert per_channel
    for t in per_channel:
        assert len(t.quantization.scales) == len(t.quantization.zero_points)


def test_not_a_model(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="TFL3"):
        load_model(bad)


def test_inspect_text_and_json(capsys):
    path = str(model_path("hello_world_legacy.tflite"))
    assert cli.main(["inspect", path]) == 0
    text = capsys.readouterr().out
    assert "QUANTIZEx1, FULLY_CONNECTEDx3, DEQUANTIZEx1" in text
    assert "input [" in text and "output [" in text
    assert cli.main(["inspect", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ops"] == {"QUANTIZE": 1, "FULLY_CONNECTED": 3, "DEQUANTIZE": 1}
    sg = data["subgraphs"][0]
    assert [op["op"] for op in sg["operators"]] == ["QUANTIZE"] + ["FULLY_CONNECTED"] * 3 + ["DEQUANTIZE"]
    assert sg["tensors"][sg["inputs"][0]]["dtype"] == "float32"
