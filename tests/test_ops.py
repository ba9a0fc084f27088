"""Generated models, op by op, through the engine (host build with ASan and
UBSan) and through TFLM: outputs bit-exact, arena exactly as the host
predicts. Then all of them again on the unix port, and one per generator on
the emulated MPS2_AN385 and NETDUINO2, through the MicroPython module. Set
TFLM_OPGEN_CASES to run more cases per generator, TFLM_OPGEN_ONLY to run
some generators only.

A failing case prints its parameters, and its model is kept in
build/failed-cases/ to reproduce it (tflm-host inspect / compare)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from conftest import get_target
from engine_host import run_engine
import opgen
from tflm_host import arena
from tflm_host.device import build_dir
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, run_batch

PER_GENERATOR = int(os.environ.get("TFLM_OPGEN_CASES", "12"))
# TFLM_OPGEN_ONLY=SIGNAL/,CUMSUM: the generators whose names hold one of these
CASES = opgen.cases(PER_GENERATOR, only=os.environ.get("TFLM_OPGEN_ONLY"))
FAILED = build_dir() / "failed-cases"


_references: dict[str, list[list[np.ndarray]]] = {}


def case_reference(case: opgen.Case, path) -> list[list[np.ndarray]]:
    """TFLM's outputs for the case (of its twin where it has one: its
    model at `path`'s name with .twin before the suffix; its expected
    outputs where TFLM has no kernel), computed once per session."""
    if case.name not in _references and case.expected is not None:
        _references[case.name] = [case.expected(sample) for sample in case.samples()]
    if case.name not in _references:
        if case.twin is not None:
            path = path.with_suffix(".twin.tflite")
            path.write_bytes(case.twin)
        _references[case.name] = reference_outputs(path, case.samples())
    return _references[case.name]


def keep_failed(case: opgen.Case) -> str:
    FAILED.mkdir(parents=True, exist_ok=True)
    keep = FAILED / (case.name.replace("/", "_") + ".tflite")
    keep.write_bytes(case.model)
    return str(keep)


def mismatch(a: np.ndarray, b: np.ndarray) -> str | None:
    """None when bit-exact, else where the first value differs."""
    b = np.asarray(b).astype(a.dtype, copy=False).reshape(a.shape)
    if a.tobytes() == b.tobytes():
        return None
    bad = [i for i in range(a.size) if a.ravel()[i:i + 1].tobytes() != b.ravel()[i:i + 1].tobytes()]
    i = bad[0]
    return f"{len(bad)} of {a.size} values differ; first at {i}: ours {a.ravel()[i]!r}, TFLM {b.ravel()[i]!r}"


def defined_part(case: opgen.Case, run: list[np.ndarray], index: int) -> list[np.ndarray]:
    """The outputs of run `index` that TFLM defines (opgen.Case.defined)."""
    return case.defined(run, index) if case.defined else run


def check_case(case: opgen.Case, tmp_path) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(case.model)
    model = load_model(path)
    samples = case.samples()
    try:
        ref = case_reference(case, path)
        ours = run_engine(path, model, samples, tmp_path)
        layout = arena.plan_layout(model)
        assert (ours.head, ours.tail, ours.needed) == (layout.head, layout.tail, layout.needed), \
            f"arena {ours.head}/{ours.tail}/{ours.needed}, host predicts {layout.head}/{layout.tail}/{layout.needed}"
        # Buffer by buffer: offsets, sizes (scratch included) and lifetimes.
        assert ours.buffers == layout.plan_tuples(), "the device's plan differs from the host's"
        for r, (a_run, b_run) in enumerate(zip(ours.runs, ref)):
            for k, (a, b) in enumerate(zip(defined_part(case, a_run, r), defined_part(case, b_run, r))):
                diff = mismatch(a, b)
                if diff:
                    raise AssertionError(f"run {r} output {k}: {diff}")
        assert len(ours.runs) == len(ref)
    except Exception as e:
        raise AssertionError(f"{case.describe()}\n(model kept in {keep_failed(case)})\n{e}") from e


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_generated(case, tmp_path):
    check_case(case, tmp_path)


# The module on real MicroPython: every case on the unix port, and one case
# of each generator on each emulated board (Cortex-M3 with software float,
# Cortex-M4F with hardware single-precision float, Cortex-M0).
DEVICE_CASES = {
    "unix": CASES,
    "MPS2_AN385": [c for c in CASES if c.name.endswith("/0")],
    "NETDUINO2": [c for c in CASES if c.name.endswith("/1")],
    "NETDUINOPLUS2": [c for c in CASES if c.name.endswith("/2")],  # hard float
    "MICROBIT": [c for c in CASES if c.name.endswith("/3")],  # Cortex-M0
}


@pytest.mark.parametrize("target", sorted(DEVICE_CASES))
def test_generated_on_device(target, tmp_path):
    cases = DEVICE_CASES[target]
    jobs = [BatchJob(f"c{i}", c.model, c.samples()) for i, c in enumerate(cases)]
    results = run_batch(get_target(target), jobs)
    failures = []
    for job, case in zip(jobs, cases):
        res = results[job.name]
        path = tmp_path / f"{job.name}.tflite"
        path.write_bytes(case.model)
        ref = case_reference(case, path)
        layout = arena.plan_layout(load_model(case.model))
        problems = []
        if res.error:
            problems.append(res.error)
        else:
            if res.arena != (layout.used, layout.head, layout.tail):
                problems.append(f"arena {res.arena}, host predicts {(layout.used, layout.head, layout.tail)}")
            if res.buffers != layout.plan_tuples():
                problems.append("the head's plan differs from the host's")
            for r, (a_run, b_run) in enumerate(zip(res.runs, ref)):
                for k, (a, b) in enumerate(zip(defined_part(case, a_run, r), defined_part(case, b_run, r))):
                    diff = mismatch(a, b)
                    if diff:
                        problems.append(f"run {r} output {k}: {diff}")
        if problems:
            failures.append(f"{case.describe()} (model kept in {keep_failed(case)}): " + "; ".join(problems[:3]))
    assert not failures, f"{len(failures)} of {len(cases)} cases differ on {target}:\n" + "\n".join(failures)


# Prepared, an int8 CONV_2D keeps each output channel's starting sum (its
# bias plus the input offset times its filter's sum) in the model: every
# path must start from it as it would from its own sums (grouped filters,
# padding, the lanes, large windows, the Cortex-M0's taps outside the input).
FOLDED = [dataclasses.replace(c, model=prepare_model(c.model))
          for c in opgen.cases(max(PER_GENERATOR, 24), only="CONV_2D/int8") if c.name.startswith("CONV_2D/")]


# DEPTHWISE_CONV_2D int8 windows of more than 25 taps with a multiplier of
# 4, 8, ... walk the window in place (dw_s8_channels_walk): more of them than
# the generator's first cases hold.
WALK = [c for c in opgen.cases(60, only="DEPTHWISE_CONV_2D/int8_multipliers")
        if c.params["kh"] * c.params["kw"] > 25 and c.params["kw"] <= 25 and c.params["multiplier"] % 4 == 0]
# The int8 FULLY_CONNECTED's groups of units (four on Thumb-2 and DSP, five
# with an input offset and six without on the Cortex-M0), their remainders
# and short rows, plain and prepared (the input offset folded in).
FC_INT8 = opgen.cases(max(PER_GENERATOR, 24), only="FULLY_CONNECTED/int8")
FC_INT8 += [dataclasses.replace(c, model=prepare_model(c.model)) for c in FC_INT8]
PATH_CASES = FOLDED + WALK + FC_INT8


@pytest.mark.parametrize("target", ["unix", "MICROBIT", "NETDUINOPLUS2", "MPS2_AN385"])
def test_generated_kernel_paths(target):
    """The folded CONV_2D, the depthwise walk and the int8 fully connected's
    groups of units, every core's variant."""
    assert len(WALK) >= 4
    jobs = [BatchJob(f"c{i}", c.model, c.samples()) for i, c in enumerate(PATH_CASES)]
    results = run_batch(get_target(target), jobs)
    failures = []
    for job, case in zip(jobs, PATH_CASES):
        res = results[job.name]
        ref = reference_outputs_of(case)
        if res.error:
            failures.append(f"{case.describe()}: {res.error}")
            continue
        layout = arena.plan_layout(load_model(case.model))
        if res.arena != (layout.used, layout.head, layout.tail):
            failures.append(f"{case.describe()}: arena {res.arena}, host predicts "
                            f"{(layout.used, layout.head, layout.tail)}")
        for r, (a_run, b_run) in enumerate(zip(res.runs, ref)):
            for k, (a, b) in enumerate(zip(a_run, b_run)):
                diff = mismatch(a, b)
                if diff:
                    failures.append(f"{case.describe()} (model kept in {keep_failed(case)}): run {r} output {k}: {diff}")
    assert not failures, f"{len(failures)} of {len(PATH_CASES)} cases differ on {target}:\n" + "\n".join(failures)


def reference_outputs_of(case: opgen.Case) -> list[list[np.ndarray]]:
    """TFLM's outputs for a case (TFLM ignores the prepared data)."""
    path = FAILED.parent / "opgen-ref" / (case.name.replace("/", "_") + ".tflite")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(case.model)
    return case_reference(case, path)
