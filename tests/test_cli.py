"""`tflm-host run`, `compare` and `demo`: their output is a contract."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest

from conftest import ROOT, UNKNOWN_OPS_MESSAGE, unknown_ops_model, EVERY_TARGET, MEASURED, MODELS, model_path
from tflm_host import cli, runner


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("target", EVERY_TARGET)
def test_run_json_shape(capsys, target):
    code, out, _ = run_cli(capsys, "run", model_path("hello_world_legacy.tflite"), "--target", target,
                           "--inputs", "zeros", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"target", "outputs", "arena_used_bytes", "head_bytes", "tail_bytes"}
    assert data["target"] == target
    (output,) = data["outputs"]
    assert output["dtype"] == "float32" and output["shape"] == [1, 1] and len(output["data"]) == 1
    assert data["arena_used_bytes"] == data["head_bytes"] + data["tail_bytes"] > 0


def test_run_several_and_npz(capsys, tmp_path):
    x = np.arange(-3, 3, dtype=np.int8).reshape(6, 1, 1)
    npz = tmp_path / "in.npz"
    np.savez(npz, input_0=x)
    code, out, _ = run_cli(capsys, "run", model_path("hello_world_int8.tflite"), "--inputs", npz, "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["runs"]) == 6 and data["runs"][0] == data["outputs"]
    code, out, _ = run_cli(capsys, "run", model_path("hello_world_int8.tflite"), "--count", "3", "--seed", "4")
    assert code == 0
    assert out.startswith("model hello_world_int8.tflite on unix (random inputs, 3 runs)")
    assert re.search(r"^arena_used_bytes \d+ \(head \d+, tail \d+\)$", out, re.M)
    np.savez(npz, wrong=x)
    code, _, err = run_cli(capsys, "run", model_path("hello_world_int8.tflite"), "--inputs", npz)
    assert code == 2 and "has no array 'input_0'" in err
    # Files that are no .npz of arrays: one line each, naming the file.
    not_npz = f"{npz} is not an .npz file of arrays input_0, input_1, ... (numpy.savez writes one)"
    for content in (b"text\n", b"", None):
        if content is None:
            np.save(tmp_path / "one.npy", x)
            npz.write_bytes((tmp_path / "one.npy").read_bytes())  # one array, renamed
        else:
            npz.write_bytes(content)
        code, _, err = run_cli(capsys, "run", model_path("hello_world_int8.tflite"), "--inputs", npz)
        assert code == 2 and err.strip() == f"tflm-host run: {not_npz}", err
    np.savez(npz, input_0=np.array([object()], dtype=object))
    code, _, err = run_cli(capsys, "run", model_path("hello_world_int8.tflite"), "--inputs", npz)
    assert code == 2 and err.strip() == f"tflm-host run: {npz}: input_0 holds Python objects; an input takes numbers"
    for option, value, message in (("--planner", "foo", "invalid choice: 'foo'"), ("--seed", "-1", "-1 is less than 0")):
        with pytest.raises(SystemExit):
            cli.main(["run", str(model_path("hello_world_int8.tflite")), option, value])
        assert f"argument {option}: {message}" in capsys.readouterr().err


# The three hello_world models on the unix port, one on every other target
# (test_hello_world.py holds the three bit-exact on every target).
@pytest.mark.parametrize("name,target", [(m, "unix") for m in ("hello_world_float.tflite", "hello_world_legacy.tflite")]
                         + [("hello_world_int8.tflite", t) for t in EVERY_TARGET])
def test_compare_bit_exact(capsys, name, target):
    code, out, _ = run_cli(capsys, "compare", model_path(name), "--target", target, "--count", "20")
    assert code == 0, out
    assert "output 0" in out and "bit-exact on 20 of 20 input sets" in out
    assert out.rstrip().endswith("result: bit-exact")


def test_compare_reports_differences(capsys, monkeypatch):
    real_run = runner.run_model

    def off_by_one(*args, **kwargs):
        result = real_run(*args, **kwargs)
        result.runs[1][0] = (result.runs[1][0].astype(np.int16) + 1).astype(np.int8)
        return result

    monkeypatch.setattr(cli, "run_model", off_by_one)
    code, out, _ = run_cli(capsys, "compare", model_path("hello_world_int8.tflite"), "--count", "3")
    assert code == 1
    assert "DIFFERS on 1 of 3 input sets; first at set 1" in out
    assert out.rstrip().endswith("result: DIFFERENT")


def test_demo_hello_world(capsys):
    code, out, _ = run_cli(capsys, "demo", "--models", MODELS, "--example", "hello_world")
    assert code == 0
    assert "flash image build/NETDUINO2/flash-hello_world.bin" in out
    assert "on netduino2 with STM32F205" in out
    m = re.search(r"(\d+) bytes in flash, (\d+) bytes of RAM to open it", out)
    assert m and int(m.group(1)) == model_path("hello_world_int8.tflite").stat().st_size
    assert int(m.group(2)) < 256  # used in place from flash, not copied
    assert re.search(r"largest error 0\.\d+", out)
    assert re.search(r"^arena_used_bytes: \d+$", out, re.M)


def test_demo_person_detect(capsys):
    """`make demo`: person detection in 128 KiB of RAM, the model prepared
    (its kernels' data in flash), scores identical to TFLM's."""
    code, out, _ = run_cli(capsys, "demo", "--models", MODELS, "--prepare")
    assert code == 0, out
    frames = re.findall(r"^frame (\S+) +person (\d\.\d+)  no person (\d\.\d+)  raw -?\d+ -?\d+  "
                        r"\((\d+) instructions\)", out, re.M)
    assert [f[0] for f in frames] == ["gray", "gradient", "silhouette", "checker", "noise"]
    for _, person, no_person, _ in frames:
        assert abs(float(person) + float(no_person) - 1) < 0.01  # softmax scores
    assert all(int(f[3]) > 1_000_000 for f in frames)  # instructions of one invoke
    assert "TFLM's reference kernels on the host give the same outputs for all 5 frames" in out
    used = int(re.search(r"^arena_used_bytes: (\d+)$", out, re.M).group(1))
    assert used < MEASURED["person_detect.tflite"].tflm_used
    # The RAM the prepared model frees: the device's arena is the host's prediction for it.
    from tflm_host import arena
    from tflm_host.model import load_model

    m = re.search(r"(\d+) bytes of kernel data read from flash; arena_used_bytes (\d+) instead of (\d+): "
                  r"(\d+) bytes of RAM freed for the heap", out)
    assert m and int(m.group(2)) == used
    assert int(m.group(3)) == arena.plan_layout(load_model(model_path("person_detect.tflite"))).used
    assert int(m.group(4)) == int(m.group(3)) - used > 0
    # The first convolutions run patch by patch (tflm-host prepare --max-extra-macs 20%).
    assert re.search(r"bytes of RAM freed for the heap; operators 0-\d+ run patch by patch", out)


def test_plan_command_outputs(capsys, tmp_path):
    """`tflm-host plan`: the figures, and the plan as a model, a plan file and a C header."""
    from tflm_host import arena
    from tflm_host.model import load_model
    from tflm_host.planning import formats

    path = model_path("vww_96_int8.tflite")
    out_model, shim, header, png = (tmp_path / n for n in ("p.tflite", "p.plan", "p.h", "p.png"))
    code, out, err = run_cli(capsys, "plan", path, "--embed", "-o", out_model, "--shim-out", shim,
                             "--c-header", header, "--png", png, "--width", 40)
    assert code == 0, err
    assert re.search(r"bound \(most bytes alive at one operator\) +55296", out)
    assert re.search(r"TFLM's greedy plan \(TFLM's order\) +73728", out)
    # Overlapped buffers (an output over the input it consumes) go below the bound.
    greedy = int(re.search(r"our greedy plan \(overlapped buffers\) +(\d+)", out).group(1))
    assert greedy < 55296
    head = int(re.search(r"this plan +(\d+) +\(", out).group(1))
    assert head <= greedy
    tail = arena.plan_layout(load_model(path)).tail  # the engine's tail (records, kernel data)
    assert (f"arena_used_bytes {head + tail} (head {head} + tail {tail}), greedy: {greedy + tail}, "
            f"TFLM's greedy: {73728 + tail}") in out
    plan = formats.plan_from_model(load_model(out_model))
    assert plan == formats.OfflinePlan.from_bytes(shim.read_bytes())
    text = header.read_text()
    assert "static const int32_t tflm_builtin_plan_words[" in text and "0x4c504654, 1, 89, -1," in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, _ = run_cli(capsys, "plan", path, "--json", "--no-alias")
    data = json.loads(out)
    assert data["head"] == data["bound"] == 55296 and data["tflm_greedy_head"] == 73728
    assert data["proven_optimal"] and data["aliases"] == 0 and data["order"] is None
    assert len(data["tensors"]) == 89 and data["scratch"] is None


@pytest.mark.parametrize("planner", ["offline", "tflm"])
def test_plan_png_without_matplotlib(capsys, monkeypatch, tmp_path, planner):
    """matplotlib is tflm-host's [plot] extra: --png without it is one line
    saying how to install it, exit 2, before any planning or file written."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    png, out_model = tmp_path / "p.png", tmp_path / "p.tflite"
    code, out, err = run_cli(capsys, "plan", model_path("vww_96_int8.tflite"), "--planner", planner,
                             "--png", png, *(["-o", out_model] if planner == "offline" else []))
    assert code == 2 and out == ""
    assert err == "tflm-host plan: --png draws with matplotlib, which is not installed: pip install matplotlib " \
                  "(tflm-host's [plot] extra)\n"
    assert not png.exists() and not out_model.exists()


def test_plan_command_errors(capsys, tmp_path):
    code, _, err = run_cli(capsys, "plan", model_path("vww_96_int8.tflite"), "--embed")
    assert code == 2 and "--embed needs -o OUT.tflite" in err
    # The device's own planners take none of the options that write or change a plan.
    out_model = tmp_path / "g.tflite"
    code, _, err = run_cli(capsys, "plan", model_path("kws_ref_model.tflite"), "--planner", "greedy", "--embed",
                           "-o", out_model, "--time-limit", "1")
    assert code == 2 and err == ("tflm-host plan: --planner greedy shows the device's own plan; --embed, -o, "
                                 "--time-limit are for the plan computed here (--planner offline, the default)\n")
    # A file that cannot be written stops the command before any is written.
    code, _, err = run_cli(capsys, "plan", model_path("kws_ref_model.tflite"), "--embed", "-o", out_model,
                           "--c-header", tmp_path / "none" / "p.h")
    assert code == 2 and err == f"tflm-host plan: {tmp_path / 'none' / 'p.h'}: no folder {tmp_path / 'none'} to " \
                                "write it into\n"
    assert not out_model.exists()
    # With --json, stdout is the object alone; what else is said goes to stderr.
    shim = tmp_path / "g.plan"
    code, out, err = run_cli(capsys, "plan", model_path("kws_ref_model.tflite"), "--json", "--embed", "-o",
                             out_model, "--shim-out", shim)
    assert code == 0 and json.loads(out)["head"] > 0 and out_model.is_file() and shim.is_file()
    assert f"written to {out_model}" in err and f"written to {shim}" in err
    assert "the plan embedded takes" in err  # more than the device's own plan on this runtime
    unknown = tmp_path / "unknown_ops.tflite"
    unknown.write_bytes(unknown_ops_model())
    code, _, err = run_cli(capsys, "plan", unknown)
    assert code == 2 and UNKNOWN_OPS_MESSAGE in err
    code, out, _ = run_cli(capsys, "plan", model_path("simple_add_model.tflite"), "--preallocate", "input")
    assert code == 0 and "tensors 0, 1 pre-allocated outside the arena" in out
    assert re.search(r"this plan +16384 ", out)  # the sum, in place over nothing: the inputs are outside


def test_ops_prints_the_types_kernels_need(capsys):
    """`ops` also prints TFLM_TYPES: each op's kernel built for the tensor
    types its operators read and write (every model given), as make and
    the compiler take it."""
    code, out, err = run_cli(capsys, "ops", model_path("person_detect.tflite"))
    types = "AVERAGE_POOL_2D:int8 CONV_2D:int32,int8 DEPTHWISE_CONV_2D:int32,int8 RESHAPE:int32,int8 SOFTMAX:int8"
    assert code == 0 and err == "" and f'TFLM_TYPES="{types}"' in out.splitlines()
    assert f'TFLM_TYPES="{types}"' in [line for line in out.splitlines() if line.startswith("# make firmware")][0]
    natmod = [line for line in out.splitlines() if "make natmod" in line][0]
    ops = "AVERAGE_POOL_2D CONV_2D DEPTHWISE_CONV_2D RESHAPE SOFTMAX"
    assert f'make natmod ARCH=... TFLM_OPS="{ops}" TFLM_TYPES="{types}"' in natmod
    flags = [line for line in out.splitlines() if line.startswith("# or compile with")][0].split()
    assert "-DTFLM_TYPES_CONV_2D=0+TFLM_T_INT32+TFLM_T_INT8" in flags and "-DTFLM_TYPES_SOFTMAX=0+TFLM_T_INT8" in flags
    # no patch-based stage in it: their code left out, in each form of the setting
    assert "TFLM_PATCH=0" in out.splitlines() and "-DTFLM_PATCH=0" in flags
    assert natmod.endswith(f'TFLM_TYPES="{types}" TFLM_PATCH=0 (docs/natmod.md)')
    # quantized inside, float at the edges: each op its own types
    code, out, _ = run_cli(capsys, "ops", model_path("hello_world_legacy.tflite"), model_path("magic_wand.tflite"))
    assert ('TFLM_TYPES="CONV_2D:float32 DEPTHWISE_CONV_2D:float32 DEQUANTIZE:float32,int8 '
            'FULLY_CONNECTED:float32,int32,int8 MAX_POOL_2D:float32 QUANTIZE:float32,int8 SOFTMAX:float32"'
            in out.splitlines())


def test_ops_keeps_patch_stages_for_a_model_with_one(capsys, tmp_path):
    """A model with a patch-based stage (TflmPatchSchedule metadata) needs
    their code: `ops` then prints no TFLM_PATCH (the default builds them
    in), for it alone or with others."""
    from tflm_host import patches
    from tflm_host.prepare import prepare_model

    staged = tmp_path / "staged.tflite"
    staged.write_bytes(patches.with_schedule(prepare_model(model_path("person_detect.tflite").read_bytes()), 8, 4, 4))
    for models in ([staged], [model_path("hello_world_int8.tflite"), staged]):
        code, out, err = run_cli(capsys, "ops", *models)
        assert code == 0 and err == "" and "TFLM_PATCH" not in out, out
    assert cli.patch_setting([cli.load_model(model_path("hello_world_int8.tflite"))]) == "0"


def test_ops_natmod_of_an_unknown_arch(capsys):
    """`ops --natmod ARCH` runs make natmod in the checkout (tests/test_natmod.py
    loads what it builds on stock firmware); an architecture make does not
    build (the Makefile's NATMOD_ARCHS) is refused before, in one line."""
    code, out, err = run_cli(capsys, "ops", model_path("hello_world_int8.tflite"), "--natmod", "sparc")
    archs = re.search(r"^NATMOD_ARCHS\s*:?=\s*(.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    assert code == 2 and out == ""
    assert err == f"tflm-host ops: --natmod 'sparc': make natmod builds {', '.join(archs)}\n"


def test_ops_and_inspect_flag_missing_kernels(capsys, tmp_path):
    """Before anything is flashed: `ops` and `inspect` name the ops no kernel
    of tflm implements, and with --built-with (a firmware's TFLM_OPS) the
    ones that firmware was built without, with the setting that adds them."""
    unknown = tmp_path / "unknown_ops.tflite"
    unknown.write_bytes(unknown_ops_model())
    person = model_path("person_detect.tflite")
    need = "AVERAGE_POOL_2D CONV_2D DEPTHWISE_CONV_2D RESHAPE SOFTMAX"
    code, out, err = run_cli(capsys, "ops", person)
    assert code == 0 and f'TFLM_OPS="{need}"' in out and err == ""
    code, out, err = run_cli(capsys, "ops", person, unknown)
    assert code == 1 and f'TFLM_OPS="{need}"' in out
    assert err == ("tflm-host ops: no kernel of tflm implements CUSTOM:SignalFoo, SKIP_GRAM "
                   "(no TFLM_OPS setting builds them in)\n")
    code, out, err = run_cli(capsys, "ops", person, "--built-with", "CONV_2D SOFTMAX,RESHAPE")
    assert code == 1
    assert err == (f'tflm-host ops: a firmware built with TFLM_OPS="CONV_2D SOFTMAX RESHAPE" lacks '
                   f'DEPTHWISE_CONV_2D, AVERAGE_POOL_2D: build it with TFLM_OPS="{need}"\n')
    code, _, err = run_cli(capsys, "ops", person, "--built-with", need)
    assert code == 0 and err == ""

    code, out, _ = run_cli(capsys, "inspect", unknown)
    assert code == 0 and ("kernels: no kernel of tflm implements CUSTOM:SignalFoo, SKIP_GRAM "
                          "(no TFLM_OPS setting builds them in)") in out.splitlines()
    code, out, _ = run_cli(capsys, "inspect", person)
    assert f'kernels: tflm has every op (TFLM_OPS="{need}" links only these)' in out.splitlines()
    # The engine's own prepare() checks, before anything is flashed: an op
    # every firmware has, in a type its kernel does not take (LOG takes
    # float32 only).
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((4,), "INT16", quant=([0.1], [0]))
    y = sg.tensor((4,), "INT16", quant=([0.1], [0]))
    sg.op("LOG", [x], [y])
    sg.inputs, sg.outputs = [x], [y]
    log_int16 = tmp_path / "log_int16.tflite"
    log_int16.write_bytes(b.build())
    code, out, _ = run_cli(capsys, "inspect", log_int16)
    assert ("engine: refuses it: UnsupportedModel: operator 0 (LOG): input of type int16 is not supported"
            in out.splitlines()), out
    code, out, _ = run_cli(capsys, "inspect", person)
    arena_line = [line for line in out.splitlines() if line.startswith("engine: ")]
    code, arena_out, _ = run_cli(capsys, "arena", person)
    needed = re.search(r"greedy planner: (\d+) bytes", arena_out).group(1)
    assert arena_line == [f"engine: every operator's prepare() accepts it: {needed} B of arena (greedy planner)"]
    code, out, _ = run_cli(capsys, "inspect", person, "--built-with", "CONV_2D", "--json")
    assert json.loads(out)["engine"] == {"accepted": True, "message": "", "arena_size": int(needed),
                                         "planner": "greedy"}
    kernels = json.loads(out)["kernels"]
    assert kernels == {"unimplemented": [], "left_out": ["DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "SOFTMAX"],
                       "tflm_ops": need}
    # A model with an offline plan in its metadata runs with it: the planner named is that one.
    embedded = tmp_path / "embedded.tflite"
    assert run_cli(capsys, "plan", model_path("kws_ref_model.tflite"), "--embed", "-o", embedded)[0] == 0
    code, out, _ = run_cli(capsys, "inspect", embedded)
    code, arena_out, _ = run_cli(capsys, "arena", embedded)
    needed = re.search(r"offline planner: (\d+) bytes", arena_out).group(1)
    assert f"engine: every operator's prepare() accepts it: {needed} B of arena (offline planner)" in out.splitlines()
    # custom ops by their flag or their name
    audio = model_path("audio_preprocessor_int8.tflite")
    code, out, _ = run_cli(capsys, "inspect", audio, "--built-with", "CUSTOM:SignalWindow SIGNAL_RFFT", "--json")
    left = json.loads(out)["kernels"]["left_out"]
    assert "CUSTOM:SignalWindow" not in left and "CUSTOM:SignalRfft" not in left and "CUSTOM:SignalPCAN" in left


def test_output_files_written_when_the_reader_leaves(tmp_path):
    """`tflm-host ... -o FILE | head`: once the pipe's reader has gone, the
    command still writes its file and exits 0, quietly (it used to die of
    SIGPIPE before writing it)."""
    import subprocess

    out = tmp_path / "planned.tflite"
    tool = f"{sys.executable} -m tflm_host"
    proc = subprocess.run(f"{tool} plan {model_path('hello_world_int8.tflite')} --prepare -o {out} | true; "
                          "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert out.read_bytes()[4:8] == b"TFL3"


def test_arena_verbose_rows_line_up(capsys):
    """arena -v: one row per allocation category, their columns aligned
    whatever the longest category's name."""
    code, out, _ = run_cli(capsys, "arena", model_path("hello_world_int8.tflite"), "-v")
    rows = [line for line in out.splitlines() if line.endswith(" allocations")]
    assert code == 0 and len(rows) >= 10 and any("resource variables" in r for r in rows)
    assert len({r.index(" used ") for r in rows}) == 1 and len({len(r) for r in rows}) == 1
