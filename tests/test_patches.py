"""Patch-based first stages (engine/patch.h, `tflm-host prepare --max-extra-macs`):
the first convolutions run patch by patch, their big maps never whole in the
arena. Outputs stay TFLM's bit for bit (TFLM runs the same model, ignoring
the schedule), the arena is the host's prediction on the device, and a bad
schedule is a ValueError."""

from __future__ import annotations

import math
import re
import struct
import zlib

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, model_path, run_as_predicted, run_on
import opgen
from tflm_host import _engine, arena, cli, patches
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs

CHAINS = (opgen.cases(12, only="PATCH/chain_int8") + opgen.cases(8, only="PATCH/chain_pool_float32")
          + opgen.cases(8, only="PATCH/chain_pool_int8") + opgen.cases(8, only="PATCH/chain_after_quantize_int8"))
# Chains whose windows, strides and dilations differ between rows and
# columns, float32 and int8, strides longer than windows among them.
UNEVEN = opgen.cases(40, only="PATCH/chain_uneven")
# Int8 chains ending in a FULLY_CONNECTED (a stage in bands of rows only).
FC_CHAINS = opgen.cases(8, only="PATCH/chain_fc_int8")
# Residual blocks, int8 and float32: ADDs of maps the stage makes (bands of rows only).
RESIDUAL = opgen.cases(8, only="PATCH/residual_int8") + opgen.cases(4, only="PATCH/residual_float32")
# Shared models whose arena a stage lowers within the bound (not
# kws_ref_model's: its zigzag of overlapped layers, engine/overlap.h, is
# below every stage's, test_no_stage_beats_the_zigzag).
SHARED = ["person_detect.tflite", "magic_wand.tflite", "vww_96_int8.tflite", "test_conv_model.tflite"]
BOUND = 0.2  # --max-extra-macs 20%
# Arenas the stage must reach within the bound (issue 28's goals: for
# vww_96_int8 its 27,648-byte input is whole in the arena while the stage
# runs, so the stage's output must lie over it; for person_detect each op's
# output must lie over its input in the patch buffer).
GOALS = {"vww_96_int8.tflite": 34816, "person_detect.tflite": 19500}
# In bands of rows (--max-extra-macs 0): the models a stage in bands lowers,
# and the goals it reaches (micro_speech_quantized: 0.5 x TFLM's 7,584 B;
# pretrainedResnet_quant, through its first two residual blocks: 0.5 x
# TFLM's 55,984 B).
BANDED = SHARED + ["micro_speech_quantized.tflite", "pretrainedResnet_quant.tflite"]
BANDED_GOALS = {"person_detect.tflite": 19500, "vww_96_int8.tflite": 34816, "micro_speech_quantized.tflite": 3792,
                "pretrainedResnet_quant.tflite": 27992}

_patched: dict[str, bytes] = {}


def patched(name: str) -> bytes:
    if name not in _patched:
        _patched[name] = prepare_model(model_path(name).read_bytes(), max_extra_macs=BOUND)
    return _patched[name]


def scheduled(case: opgen.Case) -> bytes:
    gh, gw = case.params["grid"]
    return patches.with_schedule(case.model, case.params["split"], gh, gw, case.params.get("start", 0))


def banded(case: opgen.Case, bands: int | None = None) -> bytes:
    """The case's stage in rows mode (bands of rows keeping their halos): as
    many bands as its grid has rows, or `bands`."""
    return patches.with_schedule(case.model, case.params["split"], bands or case.params["grid"][0], 1,
                                 case.params.get("start", 0), patches.ROWS)


def kept(case: opgen.Case, grid: tuple[int, int] | None = None) -> bytes:
    """The case's stage in patches keeping their halos: its grid, or `grid`."""
    return patches.with_schedule(case.model, case.params["split"], *(grid or case.params["grid"]),
                                 case.params.get("start", 0), patches.KEEP)


_banded_shared: dict[str, bytes] = {}


def banded_shared(name: str) -> bytes:
    """A shared model prepared with --max-extra-macs 0: a stage in bands of rows or in patches keeping their
    halos, when one lowers the arena."""
    if name not in _banded_shared:
        _banded_shared[name] = prepare_model(model_path(name).read_bytes(), max_extra_macs=0.0)
    return _banded_shared[name]


def _host_outputs(data: bytes, samples) -> list[list[np.ndarray]]:
    model = load_model(data)
    it = arena.interpreter(model, None, run=True)
    runs = []
    for sample in samples:
        for i, x in enumerate(sample):
            it.set_input(i, np.ascontiguousarray(x, model.inputs[i].numpy_dtype).tobytes())
        it.invoke()
        runs.append([np.frombuffer(it.output(k), t.numpy_dtype).reshape(t.shape) for k, t in enumerate(model.outputs)])
    return runs


def _same(ours, ref) -> bool:
    return all(x.tobytes() == np.asarray(y).astype(x.dtype).reshape(x.shape).tobytes()
               for a, b in zip(ours, ref) for x, y in zip(a, b))


def test_generated_chains_bit_exact_on_host(tmp_path):
    """Every element of the stage's output (the model's output) is TFLM's:
    strides 1 and 2, SAME and VALID, 1x1 to 5x5, dilation, depth multipliers,
    grids that do not divide the map; the intermediate maps leave the head."""
    for case in CHAINS:
        data = scheduled(case)
        ip = _engine.allocate(_engine.Model(data))
        assert ip.patch == (case.params["split"], *case.params["grid"]), case.describe()
        assert ip.patch_start == case.params.get("start", 0), case.describe()
        plain = arena.plan_layout(load_model(case.model))
        layout = arena.plan_layout(load_model(data))
        sg = load_model(data).main
        # The stage's intermediate maps are not planned.
        inner = {sg.operators[j].outputs[0] for j in range(case.params.get("start", 0), case.params["split"] - 1)}
        assert not inner & {b.tensor for b in layout.buffers if b.tensor >= 0}, case.describe()
        assert inner <= {b.tensor for b in plain.buffers if b.tensor >= 0}, case.describe()
        path = tmp_path / "m.tflite"
        path.write_bytes(case.model)
        samples = make_inputs(load_model(data), "random", seed=zlib.crc32(case.name.encode()), count=2)
        assert _same(_host_outputs(data, samples), reference_outputs(path, samples)), case.describe()


def test_generated_chains_in_bands_bit_exact_on_host(tmp_path):
    """Rows mode: each chain's stage in as many bands as its grid has rows,
    and in one band (every map whole in the buffers). TFLM's outputs; the
    intermediate maps leave the head; no MAC is computed twice (fewer only
    where a stride skips rows no window reads)."""
    for case in CHAINS:
        for bands in (None, 1):
            data = banded(case, bands)
            ip = _engine.allocate(_engine.Model(data))
            assert ip.patch_mode == patches.ROWS
            assert ip.patch == (case.params["split"], bands or case.params["grid"][0], 1)
            assert 0 < ip.patch_macs <= ip.patch_whole_macs, case.describe()
            layout = arena.plan_layout(load_model(data))
            sg = load_model(data).main
            inner = {sg.operators[j].outputs[0] for j in range(case.params.get("start", 0), case.params["split"] - 1)}
            assert not inner & {b.tensor for b in layout.buffers if b.tensor >= 0}, case.describe()
            path = tmp_path / "m.tflite"
            path.write_bytes(case.model)
            samples = make_inputs(load_model(data), "random", seed=zlib.crc32(case.name.encode()), count=2)
            assert _same(_host_outputs(data, samples), reference_outputs(path, samples)), (case.describe(), bands)


def test_generated_chains_keeping_halos_bit_exact_on_host(tmp_path):
    """Keep mode: each chain's stage in its grid, in one patch, in patches of
    one output pixel, and in grids of one row and of one column of patches.
    TFLM's outputs; the intermediate maps leave the head; no MAC is computed
    twice (the MACs of one patch over the whole stage, which computes each
    element any window reads once)."""
    for case in CHAINS:
        sg = load_model(case.model).main
        _, out_h, out_w, _ = sg.tensors[sg.operators[case.params["split"] - 1].outputs[0]].shape
        gh, gw = case.params["grid"]
        path = tmp_path / "m.tflite"
        path.write_bytes(case.model)
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)
        ref = reference_outputs(path, samples)
        one = _engine.allocate(_engine.Model(patches.with_schedule(case.model, case.params["split"], 1, 1,
                                                                   case.params.get("start", 0))))
        skips = any(_reach(sg, op) < max(op.options.get("StrideH", 1), op.options.get("StrideW", 1))
                    for op in sg.operators[case.params.get("start", 0):case.params["split"]])
        for grid in sorted({(gh, gw), (1, 1), (out_h, out_w), (out_h, 1), (1, out_w)}):
            data = kept(case, grid)
            ip = _engine.allocate(_engine.Model(data))
            assert ip.patch_mode == patches.KEEP and ip.patch == (case.params["split"], *grid), case.describe()
            # (Fewer where a stride passes over rows or columns no window reads.)
            assert ip.patch_macs == one.patch_macs or (skips and ip.patch_macs < one.patch_macs), \
                (case.describe(), grid)
            layout = arena.plan_layout(load_model(data))
            inner = {sg.operators[j].outputs[0] for j in range(case.params.get("start", 0), case.params["split"] - 1)}
            assert not inner & {b.tensor for b in layout.buffers if b.tensor >= 0}, case.describe()
            assert _same(_host_outputs(data, samples), ref), (case.describe(), grid)


def test_uneven_chains_in_every_mode_bit_exact_on_host(tmp_path):
    """Windows, strides and dilations that differ between rows and columns
    (the modes walk each axis apart), strides past the window: each chain's
    stage in patches and in patches keeping their halos over its grid, one
    patch, and a patch per output pixel, and in as many bands as its grid
    has rows (two operators or more): TFLM's outputs; kept patches compute
    no more MACs than one patch does, and no more than recomputing ones."""
    for case in UNEVEN:
        sg = load_model(case.model).main
        _, out_h, out_w, _ = sg.tensors[sg.operators[case.params["split"] - 1].outputs[0]].shape
        path = tmp_path / "m.tflite"
        path.write_bytes(case.model)
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=1)
        ref = reference_outputs(path, samples)
        one = _engine.allocate(_engine.Model(patches.with_schedule(case.model, case.params["split"], 1, 1)))
        runs = [(grid, mode) for grid in sorted({case.params["grid"], (1, 1), (out_h, out_w)})
                for mode in (patches.PATCHES, patches.KEEP)]
        if case.params["split"] >= 2:
            runs.append(((case.params["grid"][0], 1), patches.ROWS))
        for grid, mode in runs:
            data = patches.with_schedule(case.model, case.params["split"], *grid, 0, mode)
            ip = _engine.allocate(_engine.Model(data))
            assert ip.patch_mode == mode and ip.patch == (case.params["split"], *grid), case.describe()
            if mode == patches.KEEP:
                recompute = _engine.allocate(_engine.Model(patches.with_schedule(case.model, case.params["split"],
                                                                                 *grid)))
                assert ip.patch_macs <= min(one.patch_macs, recompute.patch_macs), (case.describe(), grid)
            assert _same(_host_outputs(data, samples), ref), (case.describe(), grid, mode)


def _reach(sg, op) -> int:
    """The rows or columns an op's window reaches at least (its filter's smaller side, dilated)."""
    if op.opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        return min(op.options["FilterHeight"], op.options["FilterWidth"])
    _, fh, fw, _ = sg.tensors[op.inputs[1]].shape
    return min((fh - 1) * op.options.get("DilationHFactor", 1) + 1, (fw - 1) * op.options.get("DilationWFactor", 1) + 1)


def test_chains_ending_in_fully_connected_bit_exact_on_host(tmp_path):
    """A stage in bands of rows ending in a FULLY_CONNECTED, which takes its
    input's rows in slices and keeps each unit's sum between bands: TFLM's
    outputs in every number of bands from one to one per row of its input
    map; the same stage in patches is a ValueError naming the operator."""
    for case in FC_CHAINS:
        sg = load_model(case.model).main
        rows = sg.tensors[sg.operators[case.params["split"] - 1].inputs[0]].shape[1]
        path = tmp_path / "m.tflite"
        path.write_bytes(case.model)
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)
        ref = reference_outputs(path, samples)
        for bands in sorted({1, case.params["grid"][0], rows}):
            data = banded(case, bands)
            ip = _engine.allocate(_engine.Model(data))
            assert ip.patch_mode == patches.ROWS and 0 < ip.patch_macs <= ip.patch_whole_macs, case.describe()
            assert _same(_host_outputs(data, samples), ref), (case.describe(), bands)
        with pytest.raises(ValueError, match="reduces its whole input"):
            _engine.allocate(_engine.Model(patches.with_schedule(case.model, case.params["split"], 1, 1, 0)))


def test_residual_blocks_in_bands_bit_exact_on_host():
    """A stage in bands of rows through residual blocks (ADDs of the stage's
    input or of maps its ops make, a 1x1 stride-2 shortcut beside two
    convolutions): TFLM's outputs in every number of bands from one to one
    per row of the last map; in patches, a ValueError naming the ADD."""
    for case in RESIDUAL:
        sg = load_model(case.model).main
        rows = sg.tensors[sg.operators[case.params["split"] - 1].outputs[0]].shape[1]
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)
        ref = _reference(case.model, samples)
        for bands in sorted({1, case.params["grid"][0], rows}):
            data = banded(case, bands)
            ip = _engine.allocate(_engine.Model(data))
            assert ip.patch_mode == patches.ROWS and ip.patch_macs == ip.patch_whole_macs, case.describe()
            assert _same(_host_outputs(data, samples), ref), (case.describe(), bands)
        first_add = next(k for k, op in enumerate(sg.operators) if op.opcode == "ADD")
        with pytest.raises(ValueError, match=f"operator {first_add} adds two maps element by element"):
            _engine.allocate(_engine.Model(patches.with_schedule(case.model, case.params["split"], 1, 1, 0)))


def _branch_model(dead: bool) -> bytes:
    """Two 3x3 convolutions of the input (float32 12x6x2, SAME), the second
    followed by a 1x1 one: the first's output read by no op (`dead`) or a
    model output too."""
    from tflm_dev.builder import ModelBuilder

    rng = np.random.default_rng(5)
    b = ModelBuilder()
    sg = b.subgraph()

    def conv(x, d, k, out_d):
        w = sg.tensor((out_d, k, k, d), "FLOAT32", data=rng.normal(0, 1, (out_d, k, k, d)).astype(np.float32))
        bias = sg.tensor((out_d,), "FLOAT32", data=rng.normal(0, 1, out_d).astype(np.float32))
        y = sg.tensor((1, 12, 6, out_d), "FLOAT32")
        sg.op("CONV_2D", [x, w, bias], [y], Padding="SAME", StrideH=1, StrideW=1)
        return y

    x = sg.tensor((1, 12, 6, 2), "FLOAT32")
    sg.inputs = [x]
    first = conv(x, 2, 3, 2)
    out = conv(conv(x, 2, 3, 3), 3, 1, 2)
    sg.outputs = [out] if dead else [out, first]
    return b.build()


def test_bands_whose_last_op_reads_the_stage_input():
    """A stage in bands of rows whose last operator reads the stage's input
    itself, not the operator before it (that one's output read by no other
    operator of the stage): the stage's output, laid over the input that
    dies there, starts far enough below it that the last operator's own
    rows written in a band never reach the input rows it still reads in
    that band. TFLM's outputs in every number of bands; a ValueError when
    the first operator's output is also read outside the stage."""
    model = _branch_model(dead=True)
    samples = make_inputs(load_model(model), "random", seed=3, count=2)
    ref = _reference(model, samples)
    for bands in range(1, 13):
        data = patches.with_schedule(model, 2, bands, 1, 0, patches.ROWS)
        ip = _engine.allocate(_engine.Model(data))
        assert ip.patch_mode == patches.ROWS, bands
        assert _same(_host_outputs(data, samples), ref), bands
    with pytest.raises(ValueError, match="operator 0 has an output used outside the stage"):
        _engine.allocate(_engine.Model(patches.with_schedule(_branch_model(dead=False), 2, 4, 1, 0, patches.ROWS)))


def test_shared_models_in_bands_bit_exact_on_host(tmp_path):
    """person_detect, magic_wand, vww_96_int8, test_conv_model,
    micro_speech_quantized (its depthwise layer and the fully connected layer
    that reads it) and pretrainedResnet_quant (its first two residual
    blocks) prepared with --max-extra-macs 0: a stage in bands of rows or in
    patches keeping their halos, no extra MAC, a smaller arena than prepared
    alone (person_detect's and vww_96_int8's within issue 28's goals,
    micro_speech_quantized's and pretrainedResnet_quant's within 0.5 x
    TFLM's); TFLM's outputs."""
    for name in BANDED:
        data = banded_shared(name)
        ip = _engine.allocate(_engine.Model(data))
        assert ip.patch[0] >= 2 and ip.patch_mode in (patches.ROWS, patches.KEEP), name
        assert ip.patch_mode == patches.KEEP or ip.patch[2] == 1, name
        assert ip.patch_macs <= ip.patch_whole_macs, name
        assert ip.used < _engine.allocate(_engine.Model(prepare_model(model_path(name).read_bytes()))).used, name
        if name in BANDED_GOALS:
            assert ip.used <= BANDED_GOALS[name], (name, ip.used)
        samples = make_inputs(load_model(data), "random", seed=zlib.crc32(name.encode()), count=2)
        assert _same(_host_outputs(data, samples), reference_outputs(model_path(name), samples)), name


def test_no_stage_beats_the_zigzag():
    """kws_ref_model prepared: its depthwise and pointwise layers zigzag over
    each other (engine/overlap.h's backward rule), 8,000 bytes of map and two
    rows; every stage and grid the search tries ends higher, so prepare
    writes none."""
    plain = prepare_model(model_path("kws_ref_model.tflite").read_bytes())
    found = patches.search(plain)
    assert found.candidates and all(c.used >= found.plain_used for c in found.candidates)
    assert found.plain_used == _engine.allocate(_engine.Model(plain)).used <= 9216  # issue 28's goal
    written = prepare_model(model_path("kws_ref_model.tflite").read_bytes(), max_extra_macs=BOUND)
    assert _engine.allocate(_engine.Model(written)).patch[0] == 0


def test_shared_models_patched_bit_exact_on_host(tmp_path):
    """person_detect, magic_wand (float32), vww_96_int8 and test_conv_model
    prepared with --max-extra-macs 20%: a smaller arena (vww_96_int8's within
    its goal), MACs within the bound; TFLM's outputs (random inputs and the
    demo's frames)."""
    from tflm_host.demo import demo_frames

    for name in SHARED:
        data = patched(name)
        ip = _engine.allocate(_engine.Model(data))
        split, gh, gw = ip.patch
        assert split >= 2, name
        assert ip.patch_macs - ip.patch_whole_macs <= BOUND * patches.model_macs(load_model(data)), name
        unpatched = prepare_model(model_path(name).read_bytes())
        assert ip.used < _engine.allocate(_engine.Model(unpatched)).used, name
        assert ip.used <= GOALS.get(name, ip.used), (name, ip.used)
        samples = make_inputs(load_model(data), "random", seed=zlib.crc32(name.encode()), count=3)
        if name == "person_detect.tflite":
            samples += [[f.reshape(1, 96, 96, 1)] for f in demo_frames().values()]
        # TFLM runs the patched model unchanged (it ignores the schedule).
        path = tmp_path / name
        path.write_bytes(data)
        assert _same(_host_outputs(data, samples), reference_outputs(model_path(name), samples)), name
        assert _same(reference_outputs(path, samples), reference_outputs(model_path(name), samples)), name


@pytest.mark.parametrize("arch", ["portable", "dsp", "dsp_full", "v6m"])
def test_chains_on_engine_with_each_cores_loops(arch, tmp_path, monkeypatch):
    """The patches through the engine under ASan/UBSan, with the portable
    loops and with the DSP and Armv6-M kernels' loops (test_speed_paths'
    builds): bit-exact with TFLM, no access outside the windows."""
    import engine_host
    from test_speed_paths import arch_binary

    binary = arch_binary(arch)
    monkeypatch.setattr(engine_host, "tflm_run", lambda: binary)
    for i, case in enumerate(CHAINS):
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)
        for mode, data in (("patches", scheduled(case)), ("bands", banded(case)), ("kept", kept(case))):
            path = tmp_path / f"c{i}.tflite"
            path.write_bytes(data)
            run = engine_host.run_engine(path, load_model(path), samples, tmp_path)
            assert _same(run.runs, _reference(case.model, samples)), (arch, mode, case.describe())
    for i, case in enumerate(UNEVEN[:12]):
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=1)
        for mode, data in (("patches", scheduled(case)), ("kept", kept(case))):
            path = tmp_path / f"u{i}.tflite"
            path.write_bytes(data)
            run = engine_host.run_engine(path, load_model(path), samples, tmp_path)
            assert _same(run.runs, _reference(case.model, samples)), (arch, mode, case.describe())
    for i, case in enumerate(FC_CHAINS + RESIDUAL):
        samples = make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)
        path = tmp_path / f"fc{i}.tflite"
        path.write_bytes(banded(case))
        run = engine_host.run_engine(path, load_model(path), samples, tmp_path)
        assert _same(run.runs, _reference(case.model, samples)), (arch, case.describe())


@pytest.mark.parametrize("target", ["unix", "NETDUINO2", "NETDUINOPLUS2", "MICROBIT", "MPS2_AN385"])
def test_patched_models_on_device(target):
    """Bit-exact with TFLM on the board (the M4's SIMD kernels on NETDUINOPLUS2,
    the M3's on the 128 KiB NETDUINO2, the M0's on MICROBIT, generated chains
    only and micro_speech_quantized in bands: its RAM holds no person
    detector), and arena_used_bytes as the host predicts."""
    jobs, originals = [], {}
    small = ["micro_speech_quantized.tflite"]
    items = [(name.removesuffix(".tflite") + "_bands", banded_shared(name), model_path(name).read_bytes())
             for name in (small if target == "MICROBIT" else BANDED)]
    if target != "MICROBIT":
        items += [(name.removesuffix(".tflite"), patched(name), model_path(name).read_bytes()) for name in SHARED]
    # Int8 chains, then float32 and int8 chains with pools; in patches and in bands.
    some = CHAINS[:4] + CHAINS[12:15] + CHAINS[20:23]
    items += [(c.name.replace("/", "_"), scheduled(c), c.model) for c in some]
    items += [(c.name.replace("/", "_") + "_bands", banded(c), c.model)
              for c in some + FC_CHAINS[:4] + RESIDUAL[:3] + RESIDUAL[8:10]]
    items += [(c.name.replace("/", "_") + "_kept", kept(c), c.model) for c in some + UNEVEN[:6]]
    for key, data, original in items:
        samples = make_inputs(load_model(data), "random", seed=zlib.crc32(key.encode()), count=1)
        jobs.append(BatchJob(key, data, samples))
        originals[key] = original
    runs = run_as_predicted(target, jobs)
    for job in jobs:
        assert _same(runs[job.name], _reference(originals[job.name], job.samples)), job.name


def _reference(data: bytes, samples):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.tflite"
        p.write_bytes(data)
        return reference_outputs(p, samples)


def _bad_schedules() -> dict[str, bytes]:
    data = patched("person_detect.tflite")
    md = load_model(data).metadata[patches.METADATA_NAME]
    at = data.index(md)

    def put(word: int, value: int) -> bytes:
        b = bytearray(data)
        struct.pack_into("<I", b, at + 4 * word, value)
        return bytes(b)

    return {
        "magic": put(0, 0),
        "version": put(1, 9),
        "split 0": put(2, 0),
        "split past the ops": put(2, 1000),
        "start at the split": put(5, 8),
        "start past the split": put(5, 1000),
        "a stage from a QUANTIZE": patches.with_schedule(_after_quantize().model, 3, 2, 2, 0),
        "a stage through FULLY_CONNECTED": patches.with_schedule(
            model_path("hello_world_int8.tflite").read_bytes(), 2, 1, 1),
        "grid 0": put(3, 0),
        "grid past the map": put(4, 60),
        "huge grid": put(3, 0xffffffff),
        "short": _short(data),
        "a stage writing its own input": _in_place_chain(),
        "bands over 1 MB of buffers": _wide_chain(),
        "mode 3": put(6, 3),
        "bands of two columns": put(6, 1),  # its grid is 4x4
        "bands of one operator": banded(CHAINS[0]).replace(
            patches.schedule_metadata(CHAINS[0].params["split"], CHAINS[0].params["grid"][0], 1, 0, patches.ROWS),
            patches.schedule_metadata(1, CHAINS[0].params["grid"][0], 1, 0, patches.ROWS)),
        "more bands than rows": patches.with_schedule(prepare_model(model_path("person_detect.tflite").read_bytes()),
                                                      4, 25, 1, 0, patches.ROWS),
        "fully connected in patches": patches.with_schedule(FC_CHAINS[0].model, FC_CHAINS[0].params["split"], 1, 1),
        "fully connected inside the stage": patches.with_schedule(
            model_path("micro_speech_quantized.tflite").read_bytes(), 4, 5, 1, 1, patches.ROWS),
        "an ADD of a map from before the stage": patches.with_schedule(
            model_path("pretrainedResnet_quant.tflite").read_bytes(), 4, 4, 1, 2, patches.ROWS),
        "an ADD in patches": patches.with_schedule(
            model_path("pretrainedResnet_quant.tflite").read_bytes(), 4, 4, 1, 0, patches.PATCHES),
        "an ADD in patches keeping their halos": patches.with_schedule(
            model_path("pretrainedResnet_quant.tflite").read_bytes(), 4, 4, 1, 0, patches.KEEP),
        "kept patches past the map": patches.with_schedule(
            prepare_model(model_path("person_detect.tflite").read_bytes()), 8, 13, 1, 0, patches.KEEP),
    }


def _after_quantize() -> opgen.Case:
    return next(c for c in CHAINS if c.params.get("start"))


def _in_place_chain() -> bytes:
    """Two 1x1 CONV_2Ds, the first writing over the model's input tensor: a
    stage would unplan the tensor its patches read."""
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.05], [3])
    x = sg.tensor((1, 8, 8, 4), "INT8", quant=q)
    w = sg.tensor((4, 1, 1, 4), "INT8", data=np.ones((4, 1, 1, 4), np.int8), quant=([0.01] * 4, [0] * 4, 0))
    bias = sg.tensor((4,), "INT32", data=np.zeros(4, np.int32), quant=([0.0005] * 4, [0] * 4, 0))
    y = sg.tensor((1, 8, 8, 4), "INT8", quant=q)
    sg.op("CONV_2D", [x, w, bias], [x], Padding="SAME", StrideH=1, StrideW=1)
    sg.op("CONV_2D", [x, w, bias], [y], Padding="SAME", StrideH=1, StrideW=1)
    sg.inputs, sg.outputs = [x], [y]
    return patches.with_schedule(b.build(), 2, 2, 2)


def _wide_chain() -> bytes:
    """Two 1x1 CONV_2Ds over rows of 20,000 x 56 values in two bands: the
    first one's buffer keeps a row at least, 1,120,000 B, past the 1 MB (in
    16-byte units that fit 16 bits) where the engine keeps a band buffer."""
    from tflm_dev.builder import ModelBuilder

    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.05], [3])
    shape = (1, 3, 20000, 56)
    x = sg.tensor(shape, "INT8", quant=q)
    w = sg.tensor((56, 1, 1, 56), "INT8", data=np.ones((56, 1, 1, 56), np.int8), quant=([0.01] * 56, [0] * 56, 0))
    bias = sg.tensor((56,), "INT32", data=np.zeros(56, np.int32), quant=([0.0005] * 56, [0] * 56, 0))
    h = sg.tensor(shape, "INT8", quant=q)
    y = sg.tensor(shape, "INT8", quant=q)
    sg.op("CONV_2D", [x, w, bias], [h], Padding="SAME", StrideH=1, StrideW=1)
    sg.op("CONV_2D", [h, w, bias], [y], Padding="SAME", StrideH=1, StrideW=1)
    sg.inputs, sg.outputs = [x], [y]
    return patches.with_schedule(b.build(), 2, 2, 1, 0, patches.ROWS)


def _short(data: bytes) -> bytes:
    from tflm_host import fbedit

    return fbedit.edit_model(data, metadata={patches.METADATA_NAME: patches.schedule_metadata(2, 2, 2)[:12]})


def _host_verdict(data: bytes) -> str:
    try:
        _engine.allocate(_engine.Model(data), run=True).invoke()
    except ValueError as e:
        return f"ValueError {e}"
    return "ok"


def test_bad_schedule_is_a_value_error_on_host_and_device():
    cases = _bad_schedules()
    host = {k: _host_verdict(v) for k, v in cases.items()}
    assert all(v.startswith("ValueError") for v in host.values()), host
    code = DEVICE_PRELUDE + "".join(
        f"attempt(lambda: tflm.Interpreter(tflm.Model(load('{i}.tflite'))).invoke())\n" for i in range(len(cases)))
    out = run_on("unix", code, {f"{i}.tflite": v for i, v in enumerate(cases.values())})
    assert out.splitlines() == list(host.values())


def test_schedule_with_an_offline_plan_is_refused():
    data = patched("person_detect.tflite")
    from tflm_host.planning import plan_model
    from tflm_host.prepare import unprepared

    planned = plan_model(unprepared(data), time_limit=1).embedded()
    both = patches.with_schedule(planned, 8, 4, 4)
    assert _host_verdict(both).startswith("ValueError"), "schedule and offline plan together"


# tflm.Interpreter(model, stage=...): a model prepared without a stage, run
# with stages of each mode and with none; the errors of bad ones.
STAGE_ARGUMENT = DEVICE_PRELUDE + """
plain = tflm.Model(load('plain.tflite'))
staged = tflm.Model(load('staged.tflite'))
x = load('x.bin')
def run(model, **kw):
    it = tflm.Interpreter(model, **kw)
    it.set_input(0, x)
    it.invoke()
    print(repr(it.stage), it.arena_used_bytes(), tflm.arena_size(model, **kw), bytes(it.output(0)).hex())
    del it
    gc.collect()
run(plain)
run(staged)
run(staged, stage=())
for st in STAGES:
    run(plain, stage=st)
for bad in BAD:
    attempt(lambda: tflm.Interpreter(plain, stage=bad))
"""
# (bad stage=, its error): the binding's checks, then the engine's (as of
# the model's own schedule, `stage:` for `TflmPatchSchedule metadata:`).
USAGE = ("ValueError stage must be () or (first op, last op, grid rows, grid columns, "
         "'patches'|'bands'|'kept')")
BAD_STAGES = [
    ((0, 7, 12, 7, "keep"), USAGE),
    ((0, 7, 12, 7), USAGE),
    (5, USAGE),
    ([0, 7, 12, 7, "kept"], USAGE),
    ((-1, 3, 2, 2, "patches"), USAGE),
    ((0, 65535, 2, 2, "patches"), "ValueError stage: a stage of operators 0 to 65535 (of 31) in 2x2 patches is out "
                                  "of range"),
    ((3, 1, 2, 2, "patches"), "ValueError stage: a stage of operators 3 to 1 (of 31) in 2x2 patches is out of range"),
    ((0, 3, 9, 2, "bands"), "ValueError stage: mode 1 (0: patches; 1: bands of rows: one grid column, two ops or "
                            "more; 2: patches keeping halos)"),
    ((0, 7, 13, 1, "kept"), "ValueError stage: 13x1 patches over a 12x12 map"),
    ((0, 20, 2, 2, "patches"), "ValueError stage: a stage of operators 0 to 20 (of 31) in 2x2 patches is out of "
                               "range"),
    ((27, 29, 1, 1, "patches"), "ValueError stage: operator 29 is not an operator of one batch whose kernel can run "
                                "over a patch"),
]


@pytest.mark.parametrize("target", ["unix", "NETDUINOPLUS2"])
def test_stage_argument_runs_any_stage(target):
    """tflm.Interpreter(model, stage=(first op, last op, grid rows, grid
    columns, mode)) runs the model with that stage instead of its own
    schedule (stage=(): none): each point of person_detect's curve and
    --max-slowdown's (patches, bands and kept patches) gives the output of
    the model without a stage, which is TFLM's, with the arena the host
    predicts for the model carrying that schedule; interp.stage says which
    ran; bad stages are refused as the model's own schedule would be.
    (NETDUINOPLUS2: magic_wand, whose model its RAM holds.)"""
    name = "person_detect.tflite" if target == "unix" else "magic_wand.tflite"
    staged = patched(name)
    plain = patches.without_schedule(staged)
    found = patches.search(plain)
    points = list(dict.fromkeys(found.front() + found.fast_front(BOUND)))
    modes = {patches.PATCHES: "patches", patches.ROWS: "bands", patches.KEEP: "kept"}
    stages = [(s.start, s.split - 1, *s.grid, modes[s.mode]) for s in points]
    if target == "unix":
        assert {s[4] for s in stages} == {"patches", "bands", "kept"}
    bad = BAD_STAGES if target == "unix" else BAD_STAGES[:5]
    code = f"STAGES = {stages!r}\nBAD = {[b for b, _ in bad]!r}\n" + STAGE_ARGUMENT
    samples = make_inputs(load_model(plain), "random", seed=5, count=1)
    want = np.asarray(_reference(plain, samples)[0][0]).tobytes().hex()
    out = run_on(target, code, {"plain.tflite": plain, "staged.tflite": staged,
                                "x.bin": samples[0][0].tobytes()}).splitlines()

    def expect(data: bytes, stage: tuple) -> str:
        ip = _engine.allocate(_engine.Model(data))
        return f"{stage!r} {ip.used} {ip.needed} {want}"

    best = found.best(BOUND)
    assert out[:3] == [expect(plain, ()), expect(staged, stages[points.index(best)]), expect(plain, ())]
    assert out[3:3 + len(stages)] == [expect(patches.with_schedule(plain, s.split, *s.grid, s.start, s.mode), st)
                                      for s, st in zip(points, stages)]
    assert out[3 + len(stages):] == [e for _, e in bad]


def test_cli_prepare_max_extra_macs(tmp_path, capsys):
    out = tmp_path / "p.tflite"
    assert cli.main(["prepare", str(model_path("person_detect.tflite")), "-o", str(out),
                     "--max-extra-macs", "20%"]) == 0
    text = capsys.readouterr().out
    ip = _engine.allocate(_engine.Model(out.read_bytes()))
    assert f"-> {ip.used} " in text and "patch-based stage: operators 0-" in text
    assert "trade-off curve" not in text  # --explain prints it
    assert cli.main(["arena", str(out)]) == 0
    split, gh, gw = ip.patch
    # Patches keeping their halos: the smallest arena within 20%, and no extra MAC.
    assert ip.patch_mode == patches.KEEP and ip.patch_macs == ip.patch_whole_macs
    assert (f"patch-based stage: operators 0-{split - 1} in {gh}x{gw} patches (halos kept) (+0 MACs)"
            in capsys.readouterr().out)
    # No extra MACs allowed: the same stage; in bands of rows for magic_wand.
    assert cli.main(["prepare", str(model_path("person_detect.tflite")), "-o", str(out),
                     "--max-extra-macs", "0"]) == 0
    assert _engine.allocate(_engine.Model(out.read_bytes())).patch == (split, gh, gw)
    assert (f"patch-based stage: operators 0-{split - 1} in {gh}x{gw} patches (halos kept), 0 extra MACs"
            in capsys.readouterr().out)
    assert cli.main(["prepare", str(model_path("magic_wand.tflite")), "-o", str(out),
                     "--max-extra-macs", "0"]) == 0
    ip = _engine.allocate(_engine.Model(out.read_bytes()))
    split, gh, gw = ip.patch
    assert ip.patch_mode == patches.ROWS and gw == 1 and ip.patch_macs <= ip.patch_whole_macs
    assert (f"patch-based stage: operators 0-{split - 1} in {gh} bands of rows (halos kept), "
            f"{ip.patch_macs - ip.patch_whole_macs} extra MACs" in capsys.readouterr().out)
    # No stage lowers hello_world_int8's arena (a fully connected model).
    assert cli.main(["prepare", str(model_path("hello_world_int8.tflite")), "-o", str(out),
                     "--max-extra-macs", "0"]) == 0
    assert "no patch-based stage" in capsys.readouterr().out
    assert _engine.allocate(_engine.Model(out.read_bytes())).patch[0] == 0


def test_stage_output_over_its_input_is_safe(tmp_path):
    """The stage's output laid over the input that dies at it (patch.c's
    distance, overlap.h): placed at every offset from the distance on (and K
    bytes past it either way), the outputs are the non-overlapped run's, which
    are TFLM's (tests/engine/overlap_brute.c, under ASan/UBSan); grids that do
    not divide the map included."""
    from test_overlap import brute

    # Chains whose stage is the whole model (its input and output are the stage's).
    whole = [c for c in CHAINS if not c.params["tail"]]
    for i, case in enumerate(whole[:10]):
        for mode, data in (("patches", scheduled(case)), ("bands", banded(case)), ("kept", kept(case))):
            kind, info = brute(data, tmp_path, f"stage{i}")
            assert kind == "rule", (mode, case.describe())
            assert info["tight"] <= info["rule"], (mode, case.describe())
    # Residual blocks: the input is read by op 0 and by the first ADD.
    for i, case in enumerate(RESIDUAL):
        kind, info = brute(banded(case), tmp_path, f"residual{i}")
        assert kind == "rule", case.describe()
        assert info["tight"] <= info["rule"], case.describe()


PATCH_K = 24  # bytes tried beyond each op's distance in the patch buffer, either way


def patch_brute(model: bytes, tmp_path, name: str, binary=None) -> dict[int, int]:
    """tests/engine/overlap_brute.c's patch mode under ASan/UBSan: each stage
    op's output exactly its distance below its input in every patch, then
    nudged PATCH_K bytes either way; fails on a nudge that keeps the rule and
    changes the stage's or the model's output. The planned run's output is
    TFLM's. Returns how far past the rule each op stayed right."""
    import os
    import subprocess

    from engine_host import BUILD, tflm_run

    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    m = load_model(model)
    t = m.inputs[0]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    data = rng.integers(-128, 128, size=t.nbytes, dtype=np.int8)
    if t.dtype == "FLOAT32":
        data = rng.normal(0, 1, t.nbytes // 4).astype(np.float32).view(np.int8)
    (tmp_path / f"{name}.bin").write_bytes(data.tobytes())
    tflm_run()  # builds the binaries
    exe = binary or BUILD / "overlap_brute"
    args = [str(exe), str(path), str(tmp_path / f"{name}.bin"), str(PATCH_K), "patch"]
    # The rule's side under the full ASan checks, then both sides (nearer
    # than the rule a kernel's memcpy may overlap: ASan's intrinsic checks off).
    for extra, env in ((["safe"], None), ([], dict(os.environ, ASAN_OPTIONS="intercept_intrin=0:replace_intrin=0"))):
        proc = subprocess.run(args + extra, capture_output=True, text=True, timeout=600, env=env)
        out = proc.stdout.strip().splitlines()
        assert proc.returncode == 0 and out and out[-1].startswith("patch ops"), \
            (name, proc.stdout[-800:], proc.stderr[-2000:])
    nudges = {int(f[2]): int(f[5]) for f in (line.split() for line in out[:-1]) if f[:2] == ["patch", "op"]}
    split = int(out[-1].split()[2])
    assert sorted(nudges) == list(range(split - 1)), (name, out)
    ref = reference_outputs(path, [[data.view(t.numpy_dtype).reshape(t.shape)]])[0][0]
    assert np.asarray(ref).tobytes() == bytes.fromhex(out[-1].split()[6]), name
    return nudges


def test_outputs_over_inputs_in_the_patch_buffer_are_safe(tmp_path):
    """Inside the patch buffer each op's output lies over its input by the row
    rule applied to the patch's windows (patch.c): placed exactly there in
    every patch, and each op's K bytes either side of it, the stage's output
    and the model's are the planned run's (TFLM's) from the rule's distance
    on; generated chains (strides, padding, dilation, pools, float32, grids
    that do not divide the map) and the shared models as prepared."""
    for i, case in enumerate(CHAINS):
        nudges = patch_brute(scheduled(case), tmp_path, f"chain{i}")
        assert all(v >= 0 for v in nudges.values()), (case.describe(), nudges)
    for name in SHARED:
        nudges = patch_brute(patched(name), tmp_path, name.removesuffix(".tflite"))
        assert all(v >= 0 for v in nudges.values()), (name, nudges)


@pytest.mark.parametrize("arch", ["dsp", "dsp_full", "v6m"])
def test_patch_buffer_overlap_with_each_cores_loops(arch, tmp_path):
    """The same with the DSP and Armv6-M kernels' loops (their int8 rows)."""
    from test_speed_paths import arch_binary

    binary = arch_binary(arch).parent / "overlap_brute"
    for i, case in enumerate(CHAINS[:12] + CHAINS[20:24]):
        nudges = patch_brute(scheduled(case), tmp_path, f"chain{i}", binary)
        assert all(v >= 0 for v in nudges.values()), (arch, case.describe(), nudges)
    nudges = patch_brute(patched("person_detect.tflite"), tmp_path, "person_detect", binary)
    assert all(v >= 0 for v in nudges.values()), (arch, nudges)


def test_one_operator_stage_overlaps_by_the_stage_rule(tmp_path):
    """A schedule of one operator (the host never writes one, a crafted model
    may): the stage writes its output patch by patch, so the planner must not
    lay it over the input that dies at it by the row rule, only by the
    stage's own distance. TFLM's outputs."""
    for case in CHAINS[:6]:
        data = patches.with_schedule(case.model, 1, 2, 2)
        samples = make_inputs(load_model(data), "random", seed=zlib.crc32(case.name.encode()), count=2)
        path = tmp_path / "m.tflite"
        path.write_bytes(case.model)
        assert _same(_host_outputs(data, samples), reference_outputs(path, samples)), case.describe()


def test_stage_maps_are_not_views():
    """The maps inside a stage never exist whole: tensor() of one is a
    ValueError, not a view reaching past the arena; the stage's output is a view."""
    data = patched("person_detect.tflite")
    split = _engine.allocate(_engine.Model(data)).patch[0]
    ops = load_model(data).main.operators
    inner, last = ops[0].outputs[0], ops[split - 1].outputs[0]
    code = DEVICE_PRELUDE + f"""
it = tflm.Interpreter(tflm.Model(load('m.tflite')))
attempt(lambda: it.tensor({inner}))
print(len(it.tensor({last})))
"""
    lines = run_on("unix", code, {"m.tflite": data}).splitlines()
    assert lines[0] == (f"ValueError tensor {inner} is never whole in the arena: the patch-based first stage "
                        "computes it patch by patch")
    assert int(lines[1]) == load_model(data).main.tensors[last].elements


def _marked_rows(lines: list[str]) -> list[tuple[bool, list[str]]]:
    """A table's rows up to the first blank line: whether '*' marks each, and
    its words without the mark."""
    rows = []
    for line in lines:
        f = line.split()
        if not f:
            break
        rows.append((f[0] == "*", f[1:] if f[0] == "*" else f))
    return rows


def _stage_row(f: list[str], grid_end: int) -> tuple[int, int, int, tuple[int, int], int, int]:
    """A stage row's (arena_used_bytes, extra MACs, the operator after the
    stage, grid, the stage's first operator, mode), its grid ending before
    word grid_end ('4x4', '6x6 kept' or '24 bands')."""
    mode = {"bands": patches.ROWS, "kept": patches.KEEP}.get(f[grid_end - 1], patches.PATCHES)
    gh, gw = (f[4], "1") if mode == patches.ROWS else f[4].split("x")
    first, last = f[3].split("-")
    return int(f[0]), int(f[1]), int(last) + 1, (int(gh), int(gw)), int(first), mode


def _front_rows(text: str) -> tuple[int, list[tuple[bool, int, int, str, int, tuple[int, int], int, int]]]:
    """prepare --explain's table: the arena with no stage, and (chosen,
    arena_used_bytes, extra MACs, % of model, the operator after the stage,
    grid, the stage's first operator, mode) of each stage row."""
    lines = text[text.index("the trade-off curve"):].splitlines()
    assert lines[1].split() == ["arena_used_bytes", "extra", "MACs", "%", "of", "model", "stage", "ops", "grid"]
    plain = lines[2].split()
    assert plain[1:] == ["0", "0.00%", "-", "-"], lines[2]
    rows = []
    for chosen, f in _marked_rows(lines[3:]):
        used, extra, split, grid, start, mode = _stage_row(f, len(f))
        rows.append((chosen, used, extra, f[2], split, grid, start, mode))
    return int(plain[0]), rows


def test_cli_prepare_explain_front(tmp_path, capsys):
    """prepare --explain: the trade-off curve. Each row's arena and extra MACs
    are the engine's for that schedule; the rows are the Pareto front of every
    stage and grid the engine accepts (each beats the row before on arena and
    costs more MACs, and every candidate is matched or beaten by a row); the
    row marked chosen is what prepare writes, and a row's percentage given to
    --max-extra-macs chooses that row."""
    out = tmp_path / "p.tflite"
    for name in ("vww_96_int8.tflite", "test_conv_model.tflite"):
        assert cli.main(["prepare", str(model_path(name)), "-o", str(out), "--max-extra-macs", "20%",
                         "--explain", "-q"]) == 0
        text = capsys.readouterr().out
        plain_used, rows = _front_rows(text)
        plain = prepare_model(model_path(name).read_bytes())
        total = patches.model_macs(load_model(plain))
        assert plain_used == _engine.allocate(_engine.Model(plain)).used, name
        assert len(rows) >= 2 and rows[0][1] < plain_used, (name, text)
        for (_, used, extra, *_), (_, used2, extra2, *_) in zip(rows, rows[1:]):
            assert used2 < used and extra2 > extra, name
        # Bands of rows or patches keeping their halos: the first point, no extra MAC.
        assert rows[0][7] in (patches.ROWS, patches.KEEP) and rows[0][2] == 0, (name, text)
        for chosen, used, extra, pct, split, grid, start, mode in rows:
            ip = _engine.allocate(_engine.Model(patches.with_schedule(plain, split, *grid, start, mode)))
            assert ip.patch_mode == mode, (name, split, grid)
            assert (ip.used, ip.patch_macs - ip.patch_whole_macs) == (used, extra), (name, split, grid)
            assert float(pct[:-1]) / 100 >= extra / total > float(pct[:-1]) / 100 - 1e-4, (name, pct)
        ip = _engine.allocate(_engine.Model(out.read_bytes()))
        marked = [r for r in rows if r[0]]
        assert len(marked) == 1 and (marked[0][1], marked[0][4], marked[0][5]) == (ip.used, ip.patch[0],
                                                                                  tuple(ip.patch[1:])), name
        assert max(r[2] for r in rows if r[2] <= 0.2 * total) == marked[0][2], name
    # test_conv_model: every candidate is matched or beaten by a row, and each
    # row's percentage chooses it.
    found = patches.search(plain)
    assert all(any(r[1] <= c.used and r[2] <= c.extra_macs for r in rows) or c.used >= found.plain_used
               for c in found.candidates)
    for _, used, extra, pct, split, grid, start, mode in rows:
        assert cli.main(["prepare", str(model_path("test_conv_model.tflite")), "-o", str(out),
                         "--max-extra-macs", pct, "-q"]) == 0
        capsys.readouterr()
        ip = _engine.allocate(_engine.Model(out.read_bytes()))
        assert (ip.patch_start, ip.patch[0], tuple(ip.patch[1:]), ip.patch_mode, ip.used) == \
            (start, split, grid, mode, used), pct


def test_scheduler_writes_what_with_schedule_writes():
    """The search's Scheduler (a template with marker values, each schedule
    written over them) gives the very bytes with_schedule() gives, on a shared
    model and a generated chain, and on a model that already has a schedule."""
    for data in (prepare_model(model_path("person_detect.tflite").read_bytes()), CHAINS[0].model,
                 scheduled(CHAINS[1])):
        base = patches.without_schedule(data)
        scheduler = patches.Scheduler(base)
        assert scheduler.at > 0
        for split, gh, gw, start, mode in ((2, 2, 2, 0, patches.PATCHES), (7, 4, 4, 0, patches.PATCHES),
                                           (3, 16, 1, 1, patches.PATCHES), (8, 1, 16, 5, patches.PATCHES),
                                           (4, 24, 1, 0, patches.ROWS), (3, 7, 1, 1, patches.ROWS),
                                           (8, 12, 7, 0, patches.KEEP), (3, 2, 5, 1, patches.KEEP)):
            assert scheduler(split, gh, gw, start, mode) == patches.with_schedule(base, split, gh, gw, start, mode), \
                (split, gh, gw, mode)


@pytest.mark.parametrize("board", ["MICROBIT", "RPI_PICO"])
def test_cli_prepare_explain_cycles(board, tmp_path, capsys):
    """prepare --explain --cycles BOARD: each row of the curve timed on the
    board (the cycle estimator on MICROBIT, the RP2040 emulator on the Pico's
    firmware): the row without a stage is the
    prepared model's cycles as bench speed measures them, a stage's halos
    cost cycles, each row's 'slower' is its cycles against that row's, and
    the model written is the row marked chosen, with the same cycles. A
    board nothing times is refused before the search."""
    from tflm_dev import bench

    out = tmp_path / "p.tflite"
    conv_model = str(model_path("test_conv_model.tflite"))
    assert cli.main(["prepare", conv_model, "-o", str(out), "--max-extra-macs", "20%", "--explain", "--cycles", board,
                     "-q"]) == 0
    text = capsys.readouterr().out
    lines = text[text.index("the trade-off curve"):].splitlines()[1:]
    assert lines[0].split()[-5:] == ["grid", "cycles", "on", board, "slower"], lines[0]
    rows = [line.split() for line in lines[1:] if line.strip()]
    plain_cycles = int(rows[0][-2].replace(",", ""))
    assert rows[0][-1] == "-"
    plain = patches.without_schedule(out.read_bytes())
    # The same file name as the bench's; the arena's address may still move
    # with what the heap held before, and the loads' alignment a few cycles
    # (up to 0.01% of test_conv_model's).
    measured = bench.measure_counts(board, {"stage00.tflite": plain}, {"stage00.tflite": 1})
    assert measured["stage00.tflite"][0].cycles == pytest.approx(plain_cycles, rel=2e-4)
    chosen = [r for r in rows if r[0] == "*"]
    assert len(chosen) == 1 and len(rows) >= 3
    for r in rows[1:]:
        cycles = int(r[-2].replace(",", ""))
        assert cycles > plain_cycles, r
        assert r[-1] == f"{100 * (cycles / plain_cycles - 1):+.2f}%", r
    k = rows.index(chosen[0])
    name = f"stage{k:02d}.tflite"
    measured = bench.measure_counts(board, {name: out.read_bytes()}, {name: 1})
    assert measured[name][0].cycles == pytest.approx(int(chosen[0][-2].replace(",", "")), rel=2e-4)
    # Refused up front: no model written.
    other = tmp_path / "q.tflite"
    assert cli.main(["prepare", conv_model, "-o", str(other), "--explain", "--cycles", "ESP32_GENERIC", "-q"]) != 0
    assert "nothing counts ESP32_GENERIC's cycles" in capsys.readouterr().err and not other.exists()
    assert cli.main(["prepare", conv_model, "-o", str(other), "--cycles", board, "-q"]) != 0
    assert "give --explain too" in capsys.readouterr().err and not other.exists()


def _dominates(a: patches.Schedule, b: patches.Schedule) -> bool:
    """a at most b on arena, extra MACs and kernel runs, and below it on one."""
    mine, theirs = (a.used, a.extra_macs, a.runs), (b.used, b.extra_macs, b.runs)
    return all(x <= y for x, y in zip(mine, theirs)) and mine != theirs


@pytest.mark.parametrize("name, bound", [("test_conv_model.tflite", None), ("person_detect.tflite", 0.2),
                                         ("vww_96_int8.tflite", 0.0)])
def test_fast_front(name, bound):
    """Search.fast_front(): the candidates within the MAC bound that lower
    the arena, none beaten on arena, extra MACs and kernel runs together by
    any candidate within the bound, each such candidate matched or beaten by
    a point; by decreasing arena; the 2-D curve's points within the bound
    among them. A stage's kernel runs are its operators times its patches
    (or bands)."""
    found = patches.search(prepare_model(model_path(name).read_bytes()))
    limit = math.inf if bound is None else bound * found.model_macs
    pool = [c for c in found.candidates if c.used < found.plain_used and c.extra_macs <= limit]
    fast = found.fast_front(bound)
    assert fast and all(p in pool for p in fast)
    assert [p.used for p in fast] == sorted((p.used for p in fast), reverse=True)
    for p in fast:
        assert not any(_dominates(c, p) for c in pool), p
    for c in pool:
        assert any(p == c or _dominates(p, c) or (p.used, p.extra_macs, p.runs) == (c.used, c.extra_macs, c.runs)
                   for p in fast), c
    assert all(p in fast for p in found.front() if p.extra_macs <= limit)
    s = fast[0]
    assert s.runs == s.grid[0] * s.grid[1] * (s.split - s.start)


def _port_rows(text: str, table: str) -> tuple[str, list[tuple[bool, tuple | None, int | None]]]:
    """A table of prepare --port (`table`: the words it follows): the unit
    of its figures, and (chosen, the stage row's fields as _stage_row's, the
    figure) of each row, the row without a stage first (None)."""
    lines = text[text.index(table):].splitlines()
    head = lines[1].split()
    assert head[-1] == "slower" and head[-3] == "on", lines[1]
    rows = []
    for chosen, f in _marked_rows(lines[2:]):
        figure = None if f[-2] == "room" else int(f[-2].replace(",", ""))
        stage = None if f[3] == "-" else _stage_row(f, len(f) - (3 if table.startswith("timed") else 2))
        rows.append((chosen, stage, figure))
    return head[-4], rows


def test_cli_prepare_port(tmp_path, capsys):
    """prepare --max-slowdown BOUND --port PORT: the points of fast_front()
    timed on the board at a serial port by its own clock, as
    tflm.Interpreter(model, stage=...) runs them (an emulated NETDUINOPLUS2
    over its socket: QEMU's boards have no time module, so qemuboard's
    instruction count, which bench's own measure of the written model
    matches), the model sent into its RAM; the model written has the
    smallest arena among the rows at most BOUND slower. --explain --port
    with --on-board: the curve timed from a copy in the board's ROMFS. A
    model its RAM cannot hold says how to put it in flash; a file on the
    board that is not the model is refused, as are --on-board without
    --port and --port with --cycles."""
    from tflm_dev import bench
    from tflm_host import device, romfs

    wand = str(model_path("magic_wand.tflite"))
    found = patches.search(prepare_model(model_path("magic_wand.tflite").read_bytes()))
    person = prepare_model(model_path("person_detect.tflite").read_bytes())
    out = tmp_path / "p.tflite"
    image = romfs.build_image({"pd.tflite": person, "mw.tflite": patches.without_schedule(patched("magic_wand.tflite"))})
    with device.QemuServer("NETDUINOPLUS2", image=image) as board:
        assert cli.main(["prepare", wand, "-o", str(out), "--max-slowdown", "1%", "--port", board.url, "-q"]) == 0
        text = capsys.readouterr().out
        unit, rows = _port_rows(text, "timed for --max-slowdown")
        fast = found.fast_front(None)
        assert unit == "instructions" and rows[0][1] is None and len(rows) == len(fast) + 1
        assert [r[1] for r in rows[1:]] == [(p.used, p.extra_macs, p.split, p.grid, p.start, p.mode) for p in fast]
        figures = [r[2] for r in rows]
        chosen = patches.within_slowdown(fast, figures, 0.01)
        assert chosen is not None and [r for r in rows if r[0]] == [rows[1 + fast.index(chosen)]]
        ip = _engine.allocate(_engine.Model(out.read_bytes()))
        assert (ip.used, ip.patch[0], ip.patch_mode) == (chosen.used, chosen.split, chosen.mode)
        measured = bench.measure_ours("NETDUINOPLUS2", {"m.tflite": out.read_bytes()}, {"m.tflite": 1})
        assert measured["m.tflite"][0] == pytest.approx(figures[1 + fast.index(chosen)], rel=1e-3)
        # The curve, timed from the copy in ROMFS.
        args = ["prepare", str(model_path("person_detect.tflite")), "-o", str(out), "--explain", "--port", board.url]
        assert cli.main(args + ["--on-board", "/rom/pd.tflite", "-q"]) == 0
        unit, rows = _port_rows(capsys.readouterr().out, "the trade-off curve")
        front = patches.search(person).front()
        assert unit == "instructions" and len(rows) == len(front) + 1 and all(r[2] > 0 for r in rows)
        assert [r[1][0] for r in rows[1:]] == [p.used for p in front]
        assert cli.main(args + ["--on-board", "/rom/mw.tflite", "-q"]) != 0
        assert "/rom/mw.tflite on the board is not this model" in capsys.readouterr().err
        assert cli.main(args + ["-q"]) != 0
        err = capsys.readouterr().err
        assert re.search(r"the model \([\d,]+ bytes\) does not fit the board's RAM: put it in its flash", err), err
    other = tmp_path / "q.tflite"
    assert cli.main(["prepare", wand, "-o", str(other), "--explain", "--on-board", "/rom/x.tflite", "-q"]) != 0
    assert "give --port too" in capsys.readouterr().err and not other.exists()
    assert cli.main(["prepare", wand, "-o", str(other), "--explain", "--port", "socket://127.0.0.1:1", "--cycles",
                     "MICROBIT", "-q"]) != 0
    assert "not both" in capsys.readouterr().err and not other.exists()


def test_within_slowdown():
    """within_slowdown(): the smallest arena whose cycles are within the
    bound of the model's without a stage (ties: fewer extra MACs, then fewer
    kernel runs); None when none is; the counts must match the points."""
    mk = lambda used, extra, grid: patches.Schedule(4, grid, used, used, extra, 1000, 0, patches.KEEP)
    a, b, c, d = mk(900, 0, (2, 2)), mk(800, 10, (2, 2)), mk(800, 0, (4, 4)), mk(700, 50, (1, 2))
    points = [a, b, c, d]
    assert patches.within_slowdown(points, [100, 101, 120, 110, 130], 0.10) is c
    assert patches.within_slowdown(points, [100, 101, 110, 110, 130], 0.10) is c
    assert patches.within_slowdown(points, [100, 101, 110, 111, 130], 0.10) is b
    assert patches.within_slowdown(points, [100, 101, 120, 120, 130], 0.30) is d
    assert patches.within_slowdown(points, [100, 102, 120, 120, 130], 0.01) is None
    # On the bound exactly (13% of 100: the float 1.13 * 100 is below 113).
    assert patches.within_slowdown([a], [100, 113], patches.parse_fraction("13%")) is a
    assert patches.within_slowdown([a], [100, 114], patches.parse_fraction("13%")) is None
    assert patches.within_slowdown([a], [1000, 1130], 0.13) is a
    with pytest.raises(ValueError, match="4 cycle counts for 4 points"):
        patches.within_slowdown(points, [100, 1, 2, 3], 0.1)


def test_slowdown_lines():
    """docs/speed.md's table of --max-slowdown's choices: per bound and
    board, within_slowdown()'s point (arena, stage, grid, how much slower),
    or no stage."""
    from tflm_dev import bench

    mk = lambda used, grid, mode: patches.Schedule(8, grid, used, used, 0, 1000, 0, mode)
    kept, bands = mk(17120, (12, 7), patches.KEEP), mk(20384, (9, 1), patches.ROWS)
    row = {"fast": [bands, kept], "fast_cycles": {"MPS2_AN385": [1000, 1004, 1120],
                                                  "NETDUINOPLUS2": [1000, 1060, 1300]}}
    lines = bench.slowdown_lines(row)
    assert lines[0] == "| `--max-slowdown` | MPS2_AN385 (Cortex-M3) | NETDUINOPLUS2 (Cortex-M4) |"
    assert [line.split(" | ")[0] for line in lines[2:]] == [f"| {b:.0%}" for b in bench.SLOWDOWNS]
    cells = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in lines[2:]}
    assert cells["0%"] == ["no stage", "no stage |"]
    assert cells["5%"] == ["20,384 B: ops 0-7, 9 bands, +0.40%", "no stage |"]
    assert cells["20%"] == ["17,120 B: ops 0-7, 12x7 kept, +12.00%", "20,384 B: ops 0-7, 9 bands, +6.00% |"]


def _fast_rows(text: str) -> list[tuple[bool, tuple | None, int]]:
    """prepare --max-slowdown's table: (chosen, the stage row's fields as
    _stage_row's and its kernel runs, cycles) of each row, the row without
    a stage first (None)."""
    lines = text[text.index("timed for --max-slowdown"):].splitlines()
    head = lines[1].split()
    assert head[-6:-3] == ["kernel", "runs", "cycles"] and head[-1] == "slower", lines[1]
    rows = []
    for chosen, f in _marked_rows(lines[2:]):
        cycles = int(f[-2].replace(",", ""))
        stage = None if f[3] == "-" else _stage_row(f, len(f) - 3) + (int(f[-3]),)
        rows.append((chosen, stage, cycles))
    return rows


def test_cli_prepare_max_slowdown(tmp_path, capsys):
    """prepare --max-slowdown BOUND --cycles BOARD: the points of
    fast_front() timed on the board, the model without a stage first; the
    model written has the smallest arena among the rows at most BOUND
    slower (its arena and stage the engine's, its cycles the row's), or no
    stage when none is; with --max-extra-macs only points within it. Without
    --cycles, or with a bound that is no fraction, refused before anything
    is written."""
    from tflm_dev import bench

    board = "MICROBIT"
    conv_model = str(model_path("test_conv_model.tflite"))
    found = patches.search(prepare_model(model_path("test_conv_model.tflite").read_bytes()))
    out = tmp_path / "p.tflite"
    for bound, extra in (("10%", None), ("10%", "0"), ("0", None)):
        args = ["prepare", conv_model, "-o", str(out), "--max-slowdown", bound, "--cycles", board, "-q"]
        assert cli.main(args + (["--max-extra-macs", extra] if extra else [])) == 0
        text = capsys.readouterr().out
        rows = _fast_rows(text)
        fast = found.fast_front(None if extra is None else float(extra))
        assert rows[0][1] is None and len(rows) == len(fast) + 1
        for (_, row, _), p in zip(rows[1:], fast):
            assert row == (p.used, p.extra_macs, p.split, p.grid, p.start, p.mode, p.runs)
        plain_cycles = rows[0][2]
        ok = [r for r in rows[1:] if r[2] <= plain_cycles * (1 + patches.parse_fraction(bound))]
        ip = _engine.allocate(_engine.Model(out.read_bytes()))
        marked = [r for r in rows if r[0]]
        if not ok:
            assert not marked and ip.patch[0] == 0
            assert f"no patch-based stage lowers the arena within {bound[:-1] if '%' in bound else 0}% more " \
                f"cycles on {board}" in text, text
            continue
        best = min(ok, key=lambda r: (r[1][0], r[1][1], r[1][6]))
        assert marked == [best]
        used, _, split, grid, start, mode, _ = best[1]
        assert (ip.used, ip.patch[0], tuple(ip.patch[1:]), ip.patch_start, ip.patch_mode) == \
            (used, split, grid, start, mode)
        measured = bench.measure_counts(board, {"m.tflite": out.read_bytes()}, {"m.tflite": 1})
        assert measured["m.tflite"][0].cycles == pytest.approx(best[2], rel=2e-4)
    # No stage lowers hello_world's arena: nothing timed, no stage, said so.
    assert cli.main(["prepare", str(model_path("hello_world_int8.tflite")), "-o", str(out), "--max-slowdown", "5%",
                     "--cycles", board, "-q"]) == 0
    text = capsys.readouterr().out
    assert "  no patch-based stage lowers the arena\n" in text and "timed for" not in text, text
    assert _engine.allocate(_engine.Model(out.read_bytes())).patch[0] == 0
    other = tmp_path / "q.tflite"
    assert cli.main(["prepare", conv_model, "-o", str(other), "--max-slowdown", "5%", "-q"]) != 0
    assert "give --cycles BOARD (or --port PORT) too" in capsys.readouterr().err and not other.exists()
    assert cli.main(["prepare", conv_model, "-o", str(other), "--max-slowdown", "fast", "--cycles", board, "-q"]) != 0
    assert "--max-slowdown fast: expected a fraction" in capsys.readouterr().err and not other.exists()


def test_architecture_stage_figures_are_the_engines():
    """docs/architecture.md's figures of patch stages and bands ("X's
    operators A-B in GxG patches take its arena from P B prepared to U B (+M%
    MACs)", "... in N bands ... with no extra MAC"): the engine's for that
    schedule on the prepared model."""
    import re
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text().split())
    pattern = (r"(\w+)'s operators (\d+)-(\d+) in (?:(\d+)x(\d+) patches( keeping their halos)?|(\d+) bands) take "
               r"its arena from ([\d,]+) B prepared to ([\d,]+) B (?:\(([+-][\d.]+)% MACs\)|with no extra MAC)")
    found = re.findall(pattern, text)
    assert len(found) >= 8 and any(f[5] for f in found), found
    for name, first, last, gh, gw, keep, bands, prepared, used, pct in found:
        plain = prepare_model(model_path(name + ".tflite").read_bytes())
        assert int(prepared.replace(",", "")) == _engine.allocate(_engine.Model(plain)).used, name
        grid = (int(bands), 1) if bands else (int(gh), int(gw))
        mode = patches.ROWS if bands else patches.KEEP if keep else patches.PATCHES
        ip = _engine.allocate(_engine.Model(patches.with_schedule(plain, int(last) + 1, *grid, int(first), mode)))
        extra = ip.patch_macs - ip.patch_whole_macs
        assert int(used.replace(",", "")) == ip.used, (name, grid)
        if bands or keep:
            assert extra == 0, name
        else:
            assert f"{100 * extra / patches.model_macs(load_model(plain)):+.1f}" == pct, (name, grid)
