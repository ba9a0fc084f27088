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

from conftest import DEVICE_PRELUDE, MEASURED, get_target, model_path, run_as_predicted, run_on
import opgen
from tflm_host import _engine, arena, cli, fbedit, prepare
from tflm_host.model import load_model
from tflm_host.planning import formats, plan_model
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
    weights' shapes; so does each int8 CONV_2D with constant filters and
    bias, one per output channel."""
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
            if op.opcode == "CONV_2D":
                x, w = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
                b = sg.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
                if (x.dtype, w.dtype) == ("INT8", "INT8") and w.is_constant \
                        and w.quantization.zero_points[0] == 0 and (b is None or b.is_constant):
                    total += 4 * w.shape[0]
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


def constant_tensors(model) -> int:
    """Tensors whose bytes are in the model and never change (not variables):
    their records stay in a prepared model."""
    return sum(1 for sg in model.subgraphs for t in sg.tensors if t.data and not t.is_variable)


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
    the index lists, the constant tensors' records and, without run-time
    state, the subgraph and node records; the tail keeps the other records,
    and the arena shrinks by the bytes that left it."""
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
        # So are the constants' records: 16 bytes each (records.h).
        n_const = constant_tensors(model)
        assert after.model_records == _engine.TENSOR_RECORD_BYTES * n_const, name
        assert after.audit["tensor records"].count == before.audit["tensor records"].count - n_const, name
        # The subgraph and node records, 16 bytes each, unless a kernel keeps run-time state.
        records = 16 * (len(model.subgraphs) + sum(len(sg.operators) for sg in model.subgraphs))
        assert after.model_nodes == (0 if stateful else records), name
        moved = ["subgraph records", "node records"] if not stateful else []
        assert all(after.audit[k].used == 0 and before.audit[k].used > 0 for k in moved), name
        assert after.model_nodes == sum(before.audit[k].used for k in moved), name
        assert abs((before.tail - after.tail)
                   - (after.model_data - folded + after.model_lists + after.model_records + after.model_nodes)) < slack, name
        # The folded sums are checked word by word as prepare() makes them,
        # not from a copy: preparing never makes the arena a model needs larger.
        assert after.needed <= before.needed, name
    state = arena.plan_layout(load_model(prepare_model(STATEFUL.model)))
    # Run-time state stays in the arena: CALL_ONCE's flag, VAR_HANDLE's output.
    ops = load_model(STATEFUL.model).op_counts()
    assert state.audit["kernel data"].count == ops["CALL_ONCE"] + ops["VAR_HANDLE"]
    assert state.model_data > 0


def _run_prepared(target: str, names: list[str]) -> None:
    jobs = [BatchJob(name.removesuffix(".tflite"), prepared(name), samples_for(prepared(name), name)) for name in names]
    runs = run_as_predicted(target, jobs)
    for name, job in zip(names, jobs):
        ref = reference_outputs(model_path(name), job.samples)  # TFLM on the model as it was
        for ours, theirs in zip(runs[job.name], ref):
            for x, y in zip(ours, theirs):
                assert x.tobytes() == np.asarray(y).astype(x.dtype).reshape(x.shape).tobytes(), job.name


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
            f"(for {sum(1 for n in layout.nodes)} operators)") in out
    assert f"[tflm] 'index lists in the model' {layout.model_lists} bytes, not in the arena" in out
    assert (f"[tflm] 'tensor records in the model' {layout.model_records} bytes, not in the arena "
            f"(for {constant_tensors(load_model(data))} constant tensors)") in out
    assert "[tflm] 'index lists' takes 0 bytes for 0 allocations" in out
    model = load_model(data)
    n_records = len(model.subgraphs) + sum(len(sg.operators) for sg in model.subgraphs)
    assert layout.model_nodes == 16 * n_records
    assert (f"[tflm] 'node records in the model' {layout.model_nodes} bytes, not in the arena "
            f"(for {n_records} subgraphs and operators)") in out
    assert "[tflm] 'node records' takes 0 bytes for 0 allocations" in out
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
    table = 4 * _engine.PREPARED_HEADER_WORDS
    first = next(k for k in range(n) if struct.unpack_from("<I", md, table + 8 * k + 4)[0])
    off, size = struct.unpack_from("<2I", md, table + 8 * first)

    def patch(pos: int, fmt: str, *values) -> bytes:
        b = bytearray(data)
        struct.pack_into(fmt, b, at + pos, *values)
        return bytes(b)

    def flip(pos: int, bit: int = 0x01) -> bytes:
        b = bytearray(data)
        b[at + pos] ^= bit
        return bytes(b)

    # A folded starting sum (the last word of a fully connected operator's
    # data), which the device checks word by word rather than from a copy.
    fc = next(op.index for op in load_model(data).main.operators if op.opcode == "FULLY_CONNECTED")
    fc_off, fc_size = struct.unpack_from("<2I", md, table + 8 * fc)
    # The index lists: the first entry of the first operator's (after the
    # subgraph's inputs and outputs, padded to 4 bytes).
    lists, records, n_const = struct.unpack_from("<3I", md, 12)
    sg = load_model(data).main
    entry = lists + 2 * (len(sg.inputs) + len(sg.outputs) + (len(sg.inputs) + len(sg.outputs)) % 2)
    # Index lists 4 bytes longer than the build's, the records after them.
    raw = prepare.unprepared(data)
    blobs, raw_lists, records_map, constants, _ = prepare.kernel_data(raw)
    too_long = fbedit.edit_model(raw, metadata={
        METADATA_NAME: prepare.prepared_metadata(blobs, raw_lists + bytes(4), records_map, constants)})
    # The subgraph and node records fill the buffer's end, after the
    # constants' records; the first constant's `bytes` field, the first
    # node's kernel id.
    nodes_at = struct.unpack_from("<I", md, 24)[0]
    assert nodes_at, "kws_ref_model keeps no run-time state: its node records are in the model"
    first_const = nodes_at - _engine.TENSOR_RECORD_BYTES * n_const
    first_node = nodes_at + 16 * len(load_model(data).subgraphs)
    return {
        "version": patch(4, "<i", _engine.PREPARED_VERSION + 1),
        "index lists out of place": patch(12, "<I", len(md) + 4),
        "index lists misaligned": patch(12, "<I", lists + 2),
        "index lists cut short": patch(12, "<I", records),
        "index lists too long": too_long,
        "index list entry": flip(entry),
        "records out of place": patch(16, "<I", len(md) + 4),
        "constants count": patch(20, "<I", n_const + 1),
        "records map entry": flip(records),
        "constant's record": flip(first_const + 4),
        "node records out of place": patch(24, "<I", nodes_at + 8),
        "node record": flip(first_node + 8),
        "magic": patch(0, "<I", 0),
        "count": patch(8, "<I", n + 1),
        "offset past the end": patch(table + 8 * first, "<I", len(md) - 4),
        "offset inside the table": patch(table + 8 * first, "<I", 16),
        "misaligned": patch(table + 8 * first, "<I", off + 4),
        "size": patch(table + 8 * first + 4, "<I", size + 4),
        "huge size": patch(table + 8 * first + 4, "<I", 0xfffffff0),
        "data": flip(off + size - 1, 0x40),
        "folded sum": flip(fc_off + fc_size - 2),
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
    # The records map and the constants' records, each with its reason.
    assert host["records out of place"].endswith("do not fill its %d bytes" % len(load_model(data).metadata[METADATA_NAME]))
    assert host["constants count"].endswith("do not fill its %d bytes" % len(load_model(data).metadata[METADATA_NAME]))
    assert "tensor records differ from the model's" in host["records map entry"], host
    assert "tensor records differ from the model's" in host["constant's record"], host
    n_ops = len(load_model(data).main.operators)
    assert host["node records out of place"].endswith(
        "%d subgraph and node records at %d do not fill its %d bytes"
        % (1 + n_ops, struct.unpack_from("<I", load_model(data).metadata[METADATA_NAME], 24)[0] + 8,
           len(load_model(data).metadata[METADATA_NAME]))), host
    assert "subgraph or node records differ from the model's" in host["node record"], host
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
    # Preparing again changes nothing (an edit would append the same data
    # again), nor does --explain without a bound (it only measures stages).
    again, explained = tmp_path / "again.tflite", tmp_path / "explained.tflite"
    assert cli.main(["prepare", str(out), "-o", str(again)]) == 0
    assert cli.main(["prepare", str(src), "-o", str(explained), "--explain"]) == 0
    assert again.read_bytes() == out.read_bytes() == explained.read_bytes()
    staged, staged_again = tmp_path / "s.tflite", tmp_path / "s2.tflite"
    assert cli.main(["prepare", str(model_path("person_detect.tflite")), "-o", str(staged), "--max-extra-macs", "0"]) == 0
    assert cli.main(["prepare", str(staged), "-o", str(staged_again), "--max-extra-macs", "0"]) == 0
    assert staged_again.read_bytes() == staged.read_bytes()


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


# -- constants' records in the model -----------------------------------------

NUMBERED = ["keyword_scrambled.tflite", "kws_ref_model.tflite", "trained_lstm_int8.tflite", "person_detect.tflite"]


def test_prepared_models_number_tensors_as_the_model():
    """With the constants' records in the model, the arena keeps records for
    the other tensors only, in an order of its own; everything the host and
    the API show is still numbered by model tensor: the records, the plan,
    its picture, and a plan's error messages."""
    cases = {name: (model_path(name).read_bytes(), prepared(name)) for name in NUMBERED}
    cases["stateful"] = (STATEFUL.model, prepare_model(STATEFUL.model))  # three subgraphs
    for name, (raw, data) in cases.items():
        plain = arena.plan_layout(load_model(raw))
        ours = arena.plan_layout(load_model(data))
        assert ours.model_records > 0 and plain.model_records == 0, name
        # A constant's record as in the plain build (its lifetime is not kept:
        # it is never planned); every other record as it was.
        for a, b in zip(plain.records, ours.records, strict=True):
            assert (a.bytes, a.offset, a.external, a.planned, a.dtype_size) == \
                (b.bytes, b.offset, b.external, b.planned, b.dtype_size), (name, a.index)
            if a.planned:
                assert (a.first, a.last) == (b.first, b.last), (name, a.index)
        assert ours.plan_tuples() == plain.plan_tuples(), name
        assert ours.memory_plan(60) == plain.memory_plan(60), name
    # An offline plan given separately: applied by model tensor, its errors
    # name model tensors, the same on both.
    name = "keyword_scrambled.tflite"
    raw, data = cases[name]
    n = sum(len(sg.tensors) for sg in load_model(raw).subgraphs)
    result = plan_model(raw, reorder=False)
    good = result.plan.tensors + (result.plan.scratch or [])
    placed = [i for i, off in enumerate(result.plan.tensors) if off >= 0]
    variants = {"good": good, "onto another": list(good), "unaligned": list(good), "negative": list(good)}
    variants["onto another"][placed[0]] = good[placed[1]]
    wide = next(i for i in placed if load_model(raw).main.tensors[i].dtype in ("INT16", "INT32"))
    variants["unaligned"][wide] += 1
    variants["negative"][placed[3]] = -7
    verdicts = {}
    for kind, offsets in variants.items():
        plan = formats.OfflinePlan.from_offsets(offsets, n)
        seen = []
        for model in (raw, data):
            try:
                seen.append(f"ok {arena.plan_layout(load_model(model), 'offline', plan=plan).used}")
            except ValueError as e:
                seen.append(f"ValueError {e}")
        verdicts[kind] = seen
    assert verdicts["good"][0].startswith("ok") and verdicts["good"][1].startswith("ok"), verdicts["good"]
    for kind, (a, b) in verdicts.items():
        if kind != "good":
            assert a == b and a.startswith("ValueError"), (kind, a, b)
    assert f"tensor {wide} at offset" in verdicts["unaligned"][0]
    assert f"tensor {placed[3]} has offset -7" in verdicts["negative"][0]


@pytest.mark.parametrize("target", ["unix", BOARD])
def test_prepared_model_tensors_on_device(target):
    """tensor(i), buffers() and pre-allocated tensors of a prepared model are
    those of the model as it was: constants' bytes, the plan by model tensor,
    an input in the user's buffer, and a constant refused by its number."""
    name = "kws_ref_model.tflite"
    raw, data = model_path(name).read_bytes(), prepared(name)
    model = load_model(raw)
    tensors = model.main.tensors
    constants = [i for i, t in enumerate(tensors) if t.data and not t.is_variable]
    c0, x = constants[0], model.inputs[0]
    code = DEVICE_PRELUDE + f"""
for f in ('raw.tflite', 'prepared.tflite'):
    m = tflm.Model(load(f))
    it = tflm.Interpreter(m)
    print('@BUF', it.buffers())
    print('@SUM', sum(sum(bytes(it.tensor(i))) for i in {constants!r}))
    print('@PRE', tflm.Interpreter(m, preallocated={{{x.index}: bytearray({x.nbytes})}}).arena_used_bytes())
    attempt(lambda: tflm.Interpreter(m, preallocated={{{c0}: bytearray({tensors[c0].nbytes})}}))
"""
    out = run_on(target, code, {"raw.tflite": raw, "prepared.tflite": data}).splitlines()
    plan = arena.plan_layout(model).plan_tuples()
    total = sum(sum(tensors[i].data[:tensors[i].nbytes]) for i in constants)
    for lines, m in ((out[:4], raw), (out[4:], data)):
        assert lines[:2] == [f"@BUF {plan!r}", f"@SUM {total}"], lines
        # The input outside the arena: the arena shrinks as the host predicts.
        assert lines[2] == f"@PRE {arena.plan_layout(load_model(m), preallocated=[x.index]).used}", lines
        assert lines[3].startswith(f"ValueError tensor {c0} is a constant"), lines


def test_edits_move_only_this_engines_records():
    """fbedit moves the constants' record positions of a prepared model with
    the bytes it shifts, and leaves prepared data it cannot read as it is
    (a wrong constant count): no byte outside it changes."""
    data = prepared("hello_world_int8.tflite")
    moved = fbedit.edit_model(data, metadata={"Foo": b"z"})
    assert _host_verdict(moved) == "ok" and len(moved) > len(data)
    md = load_model(data).metadata[METADATA_NAME]
    at = data.index(md)
    bad = bytearray(data)
    struct.pack_into("<I", bad, at + 20, (len(md) + 64) // _engine.TENSOR_RECORD_BYTES)
    edited = fbedit.edit_model(bytes(bad), metadata={"Foo": b"z"})
    assert edited[len(edited) - len(bad):] == bytes(bad)
    assert _host_verdict(edited).endswith(f"do not fill its {len(md)} bytes")


def test_too_many_tensors_is_one_message_prepared_or_not():
    """Record indices are 15 bits: a model of 32,767 tensors or more is refused
    by name, whether it is allocated or prepared."""
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 4), "INT8", quant=([0.1], [3]))
    y = sg.tensor((1, 4), "INT8", quant=([0.1], [3]))
    for k in range(32765):
        sg.tensor((1,), "INT8", name=f"t{k}")
    sg.op("ADD", [x, x], [y])
    sg.inputs, sg.outputs = [x], [y]
    data = b.build()
    message = "model too large: 32767 tensors and 1 operators in all subgraphs"
    with pytest.raises(ValueError, match=message):
        _engine.allocate(_engine.Model(data))
    with pytest.raises(ValueError, match=message):
        prepare_model(data)
