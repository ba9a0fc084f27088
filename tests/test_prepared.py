"""Prepared models (tflm-host prepare): the kernels' data in the model's
metadata, read in place on the device. Outputs stay TFLM's (TFLM runs the
prepared model too, ignoring the metadata), the host's arena prediction is
the device's, and corrupt prepared data is a ValueError on the device and
on the host alike."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, MEASURED, get_target, model_path, run_on
import opgen
from tflm_host import _engine, arena, cli, fbedit
from tflm_host.model import load_model
from tflm_host.prepare import METADATA_NAME, prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)
# Cheap on a QEMU board, and between them: per-channel conv and depthwise,
# fully connected, softmax, LSTM state, small models.
# The audio front end: its spectral subtraction keeps a noise estimate between invokes.
ON_BOARD = ["person_detect.tflite", "kws_ref_model.tflite", "trained_lstm_int8.tflite", "hello_world_int8.tflite",
            "audio_preprocessor_int8.tflite"]
BOARD = "NETDUINOPLUS2"  # ROMFS in flash: the data is read from flash there
# Resource variables with an init subgraph: CALL_ONCE's data is run-time state.
STATEFUL = opgen.cases(1, only="STATEFUL/delay_line_init")[0]

# Kernels whose data holds run-time state (tflm_prep_alloc_state): CALL_ONCE's
# flag, VAR_HANDLE's output, the spectral subtraction's noise estimate.
STATE_OPS = {"CALL_ONCE", "VAR_HANDLE", "CUSTOM:SignalFilterBankSpectralSubtraction"}

_prepared: dict[str, bytes] = {}


def prepared(name: str) -> bytes:
    if name not in _prepared:
        _prepared[name] = prepare_model(model_path(name).read_bytes())
    return _prepared[name]


def folded_bytes(model) -> int:
    """What a prepared model keeps beyond the tail's kernel data: each int8
    fully connected operator with symmetric constant weights holds one int32
    starting sum per output unit (its bias plus the input offset times its
    weights' sum), and an int8 LSTM one per state cell for each of its eight
    gate FCs, and an int8 SVDF one per filter and one per unit, from the
    weights' shapes."""
    total = 0
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.opcode == "SVDF":
                x, wf, wt = (sg.tensors[i] for i in op.inputs[:3])
                b = sg.tensors[op.inputs[3]] if op.inputs[3] >= 0 else None
                if x.dtype == "INT8" and wf.is_constant and wt.is_constant and (b is None or b.is_constant):
                    filters = wf.shape[0]
                    total += 4 * (filters + filters // op.options["Rank"])
                continue
            if op.opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM":
                ws = [sg.tensors[i] for i in op.inputs[1:9]]
                biases = [sg.tensors[i] for i in op.inputs[12:16]]
                if sg.tensors[op.inputs[0]].dtype == "INT8" and all(w.is_constant and w.zero_point == 0 for w in ws) \
                        and all(b.is_constant for b in biases):
                    total += 4 * 8 * ws[0].shape[0]
                continue
            if op.opcode != "FULLY_CONNECTED":
                continue
            x, w = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
            b = sg.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
            y = sg.tensors[op.outputs[0]]
            if (x.dtype, w.dtype, y.dtype) == ("INT8", "INT8", "INT8") and w.is_constant \
                    and w.quantization.zero_points[0] == 0 and (b is None or b.is_constant):
                total += 4 * w.shape[-2]
    return total


def samples_for(data: bytes, name: str, count: int = 2) -> list[list[np.ndarray]]:
    return make_inputs(load_model(data), "random", seed=zlib.crc32(name.encode()), count=count)


def test_tflm_runs_prepared_models_unchanged(tmp_path):
    """TFLM ignores the metadata: the same outputs as from the model as it was."""
    for name in RUNNABLE:
        data = model_path(name).read_bytes()
        out = tmp_path / name
        out.write_bytes(prepared(name))
        samples = samples_for(data, name)
        for a, b in zip(reference_outputs(model_path(name), samples), reference_outputs(out, samples)):
            assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b)), name


def test_prepared_data_leaves_the_tail():
    """Every kernel's data goes to the model except run-time state, and so do
    the index lists; the tail keeps the records, and the arena shrinks by the
    bytes that left it."""
    for name in RUNNABLE:
        model = load_model(model_path(name).read_bytes())
        before = arena.plan_layout(model)
        after = arena.plan_layout(load_model(prepared(name)))
        # The ops whose data eval() changes keep it in the tail.
        stateful = sum(n for op, n in model.op_counts().items() if op in STATE_OPS)
        assert after.audit["kernel data"].count == stateful, name
        folded = folded_bytes(model)
        assert after.model_data + after.audit["kernel data"].used == before.audit["kernel data"].used + folded, name
        assert after.head == before.head, name
        # What leaves the tail is the data, give or take the 16-byte alignment of what follows it.
        slack = 16 * (1 + before.audit["variable tensors"].count + before.audit["resource variables"].count)
        # The index lists are read from the model too: the tail keeps none.
        assert after.audit["index lists"].used == 0, name
        assert after.model_lists == before.audit["index lists"].used > 0, name
        assert abs((before.tail - after.tail) - (after.model_data - folded + after.model_lists)) < slack, name
        # The folded sums are checked word by word as prepare() makes them,
        # not from a copy: preparing never makes the arena a model needs larger.
        assert after.needed <= before.needed, name
    state = arena.plan_layout(load_model(prepare_model(STATEFUL.model)))
    # Run-time state stays in the arena: CALL_ONCE's flag, VAR_HANDLE's output.
    ops = load_model(STATEFUL.model).op_counts()
    assert state.audit["kernel data"].count == ops["CALL_ONCE"] + ops["VAR_HANDLE"]
    assert state.model_data > 0


def _run_prepared(target: str, names: list[str]) -> None:
    jobs, refs, expect = [], {}, {}
    for name in names:
        data = prepared(name)
        key = name.removesuffix(".tflite")
        samples = samples_for(data, name)
        jobs.append(BatchJob(key, data, samples))
        refs[key] = reference_outputs(model_path(name), samples)  # TFLM on the model as it was
        layout = arena.plan_layout(load_model(data))
        expect[key] = (layout.used, layout.head, layout.tail)
    results = run_batch(get_target(target), jobs, planner=None)
    for key, res in results.items():
        assert res.error is None, (key, res.error)
        assert res.arena == expect[key], key
        for ours, ref in zip(res.runs, refs[key]):
            for x, y in zip(ours, ref):
                assert x.tobytes() == np.asarray(y).astype(x.dtype).reshape(x.shape).tobytes(), key


@pytest.mark.parametrize("target", ["unix", BOARD])
def test_prepared_models_on_device(target):
    """Bit-exact with TFLM, and arena_used_bytes as the host predicts."""
    _run_prepared(target, RUNNABLE if target == "unix" else ON_BOARD)


def test_invoke_never_writes_the_model():
    """Data read in place is never written: on the unix port a bytes model is
    ordinary memory, so a kernel keeping run-time state in data that is not
    tflm_prep_alloc_state()'s would change the model's bytes (and on a board
    write to flash)."""
    names = RUNNABLE
    code = DEVICE_PRELUDE + "".join(f"""
data = open(ROOT + '/{i}.tflite', 'rb').read()
copy = bytes(bytearray(data))
m = tflm.Model(data)
it = tflm.Interpreter(m)
for k in range(3):
    for j in range(len(m.inputs)):
        b = it.input(j)
        for q in range(len(b)):
            b[q] = (q * 37 + k * 11 + 5) & 0x7f
    it.invoke()
print('{name}', data == copy)
""" for i, name in enumerate(names))
    out = run_on("unix", code, {f"{i}.tflite": prepared(n) for i, n in enumerate(names)})
    assert out.split() == [w for n in names for w in (n, "True")]


@pytest.mark.parametrize("target", ["unix", BOARD])
def test_prepared_stateful_model_on_device(target, tmp_path):
    data = prepare_model(STATEFUL.model)
    samples = make_inputs(load_model(data), "random", seed=1, count=STATEFUL.runs)
    ref_path = tmp_path / "stateful.tflite"
    ref_path.write_bytes(STATEFUL.model)
    res = run_batch(get_target(target), [BatchJob("stateful", data, samples)], planner=None)["stateful"]
    assert res.error is None, res.error
    layout = arena.plan_layout(load_model(data))
    assert res.arena == (layout.used, layout.head, layout.tail)
    for ours, ref in zip(res.runs, reference_outputs(ref_path, samples)):
        assert all(x.tobytes() == np.asarray(y).astype(x.dtype).reshape(x.shape).tobytes() for x, y in zip(ours, ref))


@pytest.mark.parametrize("target", ["unix", BOARD])
def test_print_allocations_shows_data_in_the_model(target):
    """Its own line, with the host's bytes; a bytearray copy keeps the data in
    the arena (its bytes could change), as the host predicts for one."""
    name = "kws_ref_model.tflite"
    data = prepared(name)
    layout = arena.plan_layout(load_model(data))
    writable = arena.layout_of(load_model(data), _engine.allocate(_engine.Model(data, writable=True)))
    code = DEVICE_PRELUDE + """
m = tflm.Model(load('m.tflite'))
it = tflm.Interpreter(m)
it.print_allocations()
print('@USED', it.arena_used_bytes())
print(it.memory_plan(60), end='')
print('@PLAN')
it = tflm.Interpreter(tflm.Model(bytearray(load('m.tflite'))))
print('@COPY', it.arena_used_bytes(), it.allocations()['kernel data']['used'])
"""
    out = run_on(target, code, {"m.tflite": data})
    where = "the model's RAM" if target == "unix" else "flash"
    assert (f"[tflm] 'kernel data in the model' {layout.model_data} bytes in {where}, not in the arena "
            f"(for {sum(1 for n in layout.nodes)})") in out
    assert f"[tflm] 'index lists in the model' {layout.model_lists} bytes, not in the arena" in out
    assert "[tflm] 'index lists' used 0 bytes" in out
    assert f"@USED {layout.used}" in out
    assert out.split(f"@USED {layout.used}\n")[1].split("@PLAN")[0] == layout.memory_plan(60)
    assert f"@COPY {writable.used} {writable.audit['kernel data'].used}" in out
    # A copy in RAM runs as an unprepared model: its data in the tail, without folded sums.
    assert writable.audit["kernel data"].used == layout.model_data - folded_bytes(load_model(data))


def _corruptions(data: bytes) -> dict[str, bytes]:
    """Prepared models with their metadata broken in one way each."""
    md = load_model(data).metadata[METADATA_NAME]
    at = data.index(md)
    n = struct.unpack_from("<I", md, 8)[0]
    first = next(k for k in range(n) if struct.unpack_from("<I", md, 16 + 8 * k + 4)[0])
    off, size = struct.unpack_from("<2I", md, 16 + 8 * first)

    def patch(pos: int, fmt: str, *values) -> bytes:
        b = bytearray(data)
        struct.pack_into(fmt, b, at + pos, *values)
        return bytes(b)

    flipped = bytearray(data)
    flipped[at + off + size - 1] ^= 0x40
    # A folded starting sum (the last word of a fully connected operator's
    # data), which the device checks word by word rather than from a copy.
    fc = next(op.index for op in load_model(data).main.operators if op.opcode == "FULLY_CONNECTED")
    fc_off, fc_size = struct.unpack_from("<2I", md, 16 + 8 * fc)
    folded = bytearray(data)
    folded[at + fc_off + fc_size - 2] ^= 0x01
    # The index lists: the first entry of the first operator's (after the
    # subgraph's inputs and outputs, padded to 4 bytes).
    lists = struct.unpack_from("<I", md, 12)[0]
    sg = load_model(data).main
    entry = lists + 2 * (len(sg.inputs) + len(sg.outputs) + (len(sg.inputs) + len(sg.outputs)) % 2)
    index = bytearray(data)
    index[at + entry] ^= 0x01
    return {
        "version": patch(4, "<i", 7),
        "index lists out of place": patch(12, "<I", len(md) + 4),
        "index lists misaligned": patch(12, "<I", lists + 2),
        "index lists cut short": patch(12, "<I", len(md)),
        "index lists too long": fbedit.edit_model(data, metadata={METADATA_NAME: bytes(md) + bytes(4)}),
        "index list entry": bytes(index),
        "magic": patch(0, "<I", 0),
        "count": patch(8, "<I", n + 1),
        "offset past the end": patch(16 + 8 * first, "<I", len(md) - 4),
        "offset inside the table": patch(16 + 8 * first, "<I", 16),
        "misaligned": patch(16 + 8 * first, "<I", off + 4),
        "size": patch(16 + 8 * first + 4, "<I", size + 4),
        "huge size": patch(16 + 8 * first + 4, "<I", 0xfffffff0),
        "data": bytes(flipped),
        "folded sum": bytes(folded),
    }


def _host_verdict(data: bytes) -> str:
    try:
        _engine.allocate(_engine.Model(data))
    except ValueError as e:
        return f"ValueError {e}"
    return "ok"


def test_corrupt_prepared_data_is_a_value_error_on_host_and_device():
    data = prepared("kws_ref_model.tflite")
    cases = _corruptions(data)
    host = {k: _host_verdict(v) for k, v in cases.items()}
    assert all(v.startswith("ValueError") for v in host.values()), host
    # The index lists' own checks, each with its reason.
    assert host["index lists out of place"].endswith("index lists at %d are out of place"
                                                     % (len(load_model(data).metadata[METADATA_NAME]) + 4))
    assert host["index lists misaligned"].endswith("are out of place"), host
    assert host["index lists cut short"].endswith("the index lists end early"), host
    assert host["index lists too long"].endswith("4 bytes after the index lists"), host
    assert "index lists differ from the model's" in host["index list entry"], host
    code = DEVICE_PRELUDE + "".join(
        f"attempt(lambda: tflm.Interpreter(tflm.Model(load('{i}.tflite'))).invoke())\n" for i in range(len(cases)))
    out = run_on("unix", code, {f"{i}.tflite": v for i, v in enumerate(cases.values())})
    assert out.splitlines() == list(host.values())


def test_index_lists_read_from_the_model_are_the_models():
    """A prepared model's operators and subgraphs, as the interpreter reads
    their index lists in place, are those of the model as it was."""
    for name in ["kws_ref_model.tflite", "keyword_scrambled.tflite", "trained_lstm_int8.tflite"]:
        plain = _engine.allocate(_engine.Model(model_path(name).read_bytes()))
        ours = _engine.allocate(_engine.Model(prepared(name)))
        assert ours.model_lists > 0 and plain.model_lists == 0, name
        assert ours.nodes() == plain.nodes() and ours.subgraphs() == plain.subgraphs(), name
        model = load_model(prepared(name))
        assert [(ins, outs) for _, ins, outs, _, _ in ours.nodes()] == \
            [(tuple(op.inputs), tuple(op.outputs)) for op in model.main.operators], name


def test_model_changed_after_preparing_is_refused():
    """Data for another operator order (or other weights' scales) does not
    match what prepare() computes: refused, not used."""
    data = prepared("kws_ref_model.tflite")
    n_ops = len(load_model(data).main.operators)
    swapped = fbedit.edit_model(data, order=[1, 0] + list(range(2, n_ops)))
    assert _host_verdict(swapped).startswith("ValueError"), "data of one op given to another"


def test_cli_prepare_and_plan_prepare(tmp_path, capsys):
    src = model_path("kws_ref_model.tflite")
    out = tmp_path / "p.tflite"
    assert cli.main(["prepare", str(src), "-o", str(out)]) == 0
    assert METADATA_NAME in load_model(out.read_bytes()).metadata
    assert cli.main(["arena", str(out), "-v"]) == 0
    layout = arena.plan_layout(load_model(out.read_bytes()))
    assert f"kernel data in the model: {layout.model_data} bytes" in capsys.readouterr().out
    planned = tmp_path / "q.tflite"
    assert cli.main(["plan", str(src), "--embed", "--prepare", "-o", str(planned), "--time-limit", "1"]) == 0
    model = load_model(planned.read_bytes())
    assert METADATA_NAME in model.metadata and "OfflineMemoryAllocation" in model.metadata
    assert arena.plan_layout(model).audit["kernel data"].used == 0


@pytest.mark.parametrize("board", [BOARD, "MICROBIT"])
def test_data_prepared_on_the_host_is_the_boards_for_every_op_family(board):
    """The data of every generator's first case, computed on x86-64, is what
    a Cortex-M4F's and a Cortex-M0's (soft float) prepare() compute (else a
    ValueError), and the arena is the host's prediction."""
    jobs, expect = [], {}
    for case in opgen.cases(1):
        try:
            data = prepare_model(case.model)
        except (ValueError, NotImplementedError):
            continue  # test kernels the firmware does not have
        key = case.name.replace("/", "_")
        samples = case.inputs[:1] if case.inputs is not None else \
            make_inputs(load_model(data), "random", seed=zlib.crc32(key.encode()), count=1)
        jobs.append(BatchJob(key, data, samples))
        layout = arena.plan_layout(load_model(data))
        expect[key] = (layout.used, layout.head, layout.tail)
    assert len(jobs) > 100
    results = run_batch(get_target(board), jobs, planner=None)
    assert {k: (r.error, r.arena) for k, r in results.items()} == {k: (None, v) for k, v in expect.items()}
