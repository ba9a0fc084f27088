"""Runs each converted model (architectures.py's, or any folder of
.tflite files) on the host engine and on TFLM's reference interpreter with
the same random inputs, and writes a Markdown table of the verdicts.

    python report.py MODELS_DIR [--log CONVERTER_LOG] [--tflite-python PY] [--out FILE.md]

Verdicts: bit-exact; DIFFERENT; refused by both (this engine's message
given); refused here only and runs here only (a gap either way). Where
only one of the two runs a model, TensorFlow Lite's interpreter (run by
`--tflite-python`, a Python with tensorflow) gives a third opinion on the
first input set: when TFLM's answer is not TF Lite's, the verdict is
"refused here, TFLM wrong" (TFLM computes on shapes the model does not
have: a converter's placeholder for a dynamic shape); where only ours
runs it, how far TF Lite's outputs are on every input set: "runs here only,
not TF Lite's" when floats or indices differ (quantized values are not
TF Lite's where TFLM's kernels, which this engine follows, are not: how
far TFLM's are on the models both run is given beside them). The exit
status is 1 when a model differs, only TFLM runs it correctly or only we
run it and TF Lite's floats or indices differ, so `make converter-check`
fails on a regression."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tflm_host import divergence, shape_fold
from tflm_host.cli import compare_outputs
from tflm_host.host_run import HostTarget
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs, run_model

RUNS = 5
ARCHITECTURES = Path(__file__).with_name("architectures.py")


def tflite_gaps(path: Path, sample: list[np.ndarray], outputs: list[np.ndarray], python: str) -> tuple[float, float, float]:
    """How far TF Lite's outputs for one input set are from `outputs`: the
    largest float difference relative to TF Lite's largest finite value,
    the most steps of a quantized output, the most of another (indices,
    booleans, plain integers). Equal values (infinities too) and NaN beside
    NaN count as equal, a NaN or infinity beside anything else as
    infinitely far."""
    quantized = [bool(t.quantization and t.quantization.scales) for t in load_model(path).outputs]
    with tempfile.TemporaryDirectory() as tmp:
        inputs, out = Path(tmp, "in.npz"), Path(tmp, "out.npz")
        np.savez(inputs, **{f"input_{k}": x for k, x in enumerate(sample)})
        subprocess.run([python, str(ARCHITECTURES), "--run", str(path), str(inputs), str(out)],
                       check=True, capture_output=True)
        lite = np.load(out)
        gaps = [0.0, 0.0, 0.0]
        for k, t in enumerate(outputs):
            a, b = np.asarray(t, dtype=np.float64), lite[f"output_{k}"].astype(np.float64).reshape(np.shape(t))
            if a.size == 0:
                continue
            floating = np.issubdtype(np.asarray(t).dtype, np.floating)
            finite = np.abs(b[np.isfinite(b)])
            scale = max(float(finite.max(initial=0.0)), 1e-30) if floating else 1.0
            with np.errstate(invalid="ignore"):
                same = (a == b) | (np.isnan(a) & np.isnan(b))
                diff = np.where(same, 0.0, np.nan_to_num(np.abs(a - b), nan=np.inf))
            at = 0 if floating else 1 if quantized[k] else 2
            gaps[at] = max(gaps[at], float(diff.max()) / scale)
        return gaps[0], gaps[1], gaps[2]


def tflite_agrees(path: Path, sample: list[np.ndarray], theirs: list[np.ndarray], python: str) -> str:
    """'' when TF Lite's outputs match TFLM's `theirs` (float: to 1e-4 of
    the largest value; quantized values: to one step; indices and other
    integers: exactly), else how far apart they are."""
    floats, quantized, ints = tflite_gaps(path, sample, theirs, python)
    over = [g for g, tolerance in ((floats, 1e-4), (quantized, 1.0), (ints, 0.0)) if g > tolerance]
    return f"TFLM's outputs are {max(over):.3g} (relative) from TF Lite's" if over else ""


def _first_line(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    # The host target reports the engine's error as "<type> <message>".
    return text.replace(" ", ": ", 1) if type(e).__name__ == "DeviceError" else f"{type(e).__name__}: {text}"


def verdict(path: Path, tflite_python: str | None = None) -> tuple[str, str, str]:
    """(ops, verdict, detail) of one model. A model converted with an
    unknown batch whose file leaves batch 1 where the batch is larger runs,
    on both, as `tflm-host prepare` writes it (tflm_host.batch_shapes); TF
    Lite, which sizes its tensors as it runs, says how far that is from its
    outputs for the file as converted. So does one whose file leaves other
    sizes unknown, with the shape arithmetic computing them
    (tflm_host.shape_fold)."""
    fixed, what = as_prepared(path.read_bytes())
    if not what:
        return _verdict(path, path, tflite_python)
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp, path.name)
        prepared.write_bytes(fixed)
        ops, v, detail = _verdict(prepared, path, tflite_python)
        model = load_model(prepared)
        samples = make_inputs(model, "random", seed=1, count=RUNS)
        note = f"as prepared (tflm-host prepare {what})"
        if v == "bit-exact" and tflite_python:
            runs = run_model(prepared, HostTarget(), samples).runs
            gaps = [tflite_gaps(path, sample, run, tflite_python) for sample, run in zip(samples, runs)]
            floats, quantized = max(g[0] for g in gaps), max(g[1] for g in gaps)
            note += (f"; TF Lite's floats within {floats:.2g} (relative)" if model.outputs[0].dtype == "FLOAT32"
                     else f"; quantized values up to {quantized:.0f} steps from TF Lite's")
            if any("(SPACE_TO_BATCH_ND)" in line for line in divergence.not_tensorflows(model)):
                note += (" (SPACE_TO_BATCH_ND pads with zero bytes, as TFLM does in a fresh arena; TF Lite pads "
                         "with the zero point)")
        return ops, v, f"{note}; {detail}" if detail else note


def as_prepared(data: bytes) -> tuple[bytes, str]:
    """The model with the shapes `tflm-host prepare` writes, and what it
    wrote ('' when nothing)."""
    folded, changes, plan = shape_fold.fixed_shapes(data)
    what = [shape_fold.prepare_writes(changes, plan)] if changes or plan.summary() else []
    what += [f"makes {plan.dequantized} float16 constant(s) float32"] if plan.dequantized else []
    return folded, ", ".join(what)


def _verdict(path: Path, source: Path, tflite_python: str | None) -> tuple[str, str, str]:
    """verdict() of the model at `path`, converted as `source` (TF Lite's)."""
    model = load_model(path)
    ops = " ".join(f"{k}x{v}" if v > 1 else k for k, v in model.op_counts().items())
    samples = make_inputs(model, "random", seed=1, count=RUNS)
    ours = theirs = None
    try:
        ours = run_model(path, HostTarget(), samples).runs
    except Exception as e:  # the engine's refusal, by type and message
        ours_error = _first_line(e)
    try:
        theirs = reference_outputs(path, samples)
    except Exception as e:
        theirs_error = _first_line(e)
    if ours is not None and theirs is not None:
        same, lines = compare_outputs(ours, theirs)
        return ops, "bit-exact" if same else "DIFFERENT", "" if same else "; ".join(lines)
    if ours is None and theirs is None:
        return ops, "refused by both", ours_error
    if ours is None:
        if tflite_python:
            wrong = tflite_agrees(source, samples[0], theirs[0], tflite_python)
            if wrong:
                return ops, "refused here, TFLM wrong", f"{ours_error} ({wrong})"
        return ops, "refused here only", ours_error
    if tflite_python:
        gaps = [tflite_gaps(source, sample, run, tflite_python) for sample, run in zip(samples, ours)]
        floats, quantized, ints = (max(g[i] for g in gaps) for i in range(3))
        if floats > 1e-4 or ints > 0:
            return ops, "runs here only, not TF Lite's", \
                f"our outputs are {max(floats, ints):.3g} (relative) from TF Lite's; TFLM: {theirs_error}"
        near = "TF Lite's outputs"
        if quantized > 1:
            # TFLM's int8 and int16 kernels are not TF Lite's, and ours are
            # TFLM's: how far TFLM's are on the models both run says more.
            steps, worst = tflm_steps(source.parent, tflite_python)
            near = (f"quantized values up to {quantized:.0f} steps from TF Lite's (TFLM's, whose quantized kernels "
                    f"are not TF Lite's, up to {steps:.0f} on the first input set of the models both run: {worst})")
        return ops, "runs here only", f"{near} on all {len(samples)} input sets; TFLM: {theirs_error}"
    return ops, "runs here only", f"TFLM: {theirs_error}"


_steps: dict[Path, tuple[float, str]] = {}


def tflm_steps(folder: Path, python: str) -> tuple[float, str]:
    """The most steps TFLM's quantized outputs are from TF Lite's over the
    folder's models both run (first input set), and on which model."""
    if folder not in _steps:
        best = (0.0, "")
        for path in sorted(folder.glob("*.tflite")):
            if as_prepared(path.read_bytes())[1]:
                continue  # TFLM computes on shapes the tensors do not have
            model = load_model(path)
            sample = make_inputs(model, "random", seed=1, count=1)
            try:
                theirs = reference_outputs(path, sample)[0]
            except Exception:
                continue  # TFLM refuses it
            quantized = tflite_gaps(path, sample[0], theirs, python)[1]
            best = max(best, (quantized, path.stem))
        _steps[folder] = best
    return _steps[folder]


# Generated cases (tests/opgen) of what this engine runs and TFLM does not:
# their make-test reference is TF Lite's definition (the tables of int8 and
# int16 EXP and int8 LOG, numpy's tile for TILE) or TFLM's int32 indices;
# here TF Lite itself runs them.
BEYOND_TFLM = ("EXP/int8,EXP/int16,LOG/int8,float32_int64,int8_int64,TILE/,SPACE_TO_BATCH_ND/int16,"
               "BATCH_TO_SPACE_ND/int16")
BEYOND_CASES = 3


def beyond_tflm(python: str) -> tuple[list[str], int]:
    """Rows of the generated cases against TF Lite, and how many differ."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import opgen  # tests/opgen, beside this folder

    rows, bad = [], 0
    by_name: dict[str, list[opgen.Case]] = {}
    for case in opgen.cases(BEYOND_CASES, only=BEYOND_TFLM):
        by_name.setdefault(case.name.rsplit("/", 1)[0], []).append(case)
    with tempfile.TemporaryDirectory() as tmp:
        for name, cases in by_name.items():
            sets = same = refused = 0
            for case in cases:
                path = Path(tmp, "case.tflite")
                path.write_bytes(case.model)
                samples = case.samples()
                try:
                    for sample, run in zip(samples, run_model(path, HostTarget(), samples).runs):
                        gaps = tflite_gaps(path, sample, run, python)
                        sets += 1
                        same += not any(gaps)
                except subprocess.CalledProcessError:
                    refused += 1  # what TF Lite does not take (a 2-value axis, int16 TILE)
            bad += same != sets
            rows.append(f"| {name} | {len(cases) - refused} | {same} of {sets} | {refused} |")
            print(f"{name}: {same} of {sets} input sets as TF Lite, {refused} cases refused by it", file=sys.stderr)
    return rows, bad


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", type=Path)
    p.add_argument("--log", type=Path, help="the converter's output (its FAILED lines are listed)")
    p.add_argument("--tflite-python", help="a Python with tensorflow, for TF Lite's opinion")
    p.add_argument("--out", type=Path, help="Markdown file to write (default: stdout)")
    args = p.parse_args(argv)
    rows, bad = [], 0
    for path in sorted(args.models.glob("*.tflite")):
        ops, v, detail = verdict(path, args.tflite_python)
        bad += v in ("DIFFERENT", "refused here only", "runs here only, not TF Lite's")
        rows.append(f"| {path.stem} | {ops} | {v} | {detail} |")
        print(f"{path.name}: {v} {detail}", file=sys.stderr)
    failed = []
    if args.log and args.log.is_file():
        for line in args.log.read_text().splitlines():
            if " FAILED " in line:
                failed.append(line.split(" FAILED ", 1))
            elif ": the converter's process stopped" in line:  # the int8 conversion aborted the process
                name, why = line.split(": ", 1)
                failed.append((f"{name}_int8.tflite", why))
    counts = {v: sum(f"| {v} |" in r for r in rows)
              for v in ("bit-exact", "DIFFERENT", "refused by both", "refused here, TFLM wrong", "refused here only",
                        "runs here only", "runs here only, not TF Lite's")}
    text = ["# Models from TensorFlow's converter", "",
            "Small architectures with random weights (`tests/converter/architectures.py`), converted by "
            "TensorFlow's own converter, float32 and full-integer int8 (some with float16 weights too), each run "
            "on the host engine and on "
            f"TFLM's reference interpreter (PyPI `tflite-micro`) with the same {RUNS} random input sets. "
            "`make converter-check` (which installs `tensorflow-cpu` in a venv of its own under build/) "
            "rewrites this file.", "",
            "Totals: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".", "",
            "| model | ops | verdict | this engine's message, or the difference |", "|---|---|---|---|", *rows]
    if args.tflite_python:
        beyond, wrong = beyond_tflm(args.tflite_python)
        bad += wrong
        text += ["", "What this engine runs and TFLM refuses, op by op: generated cases (`tests/opgen`, "
                 f"{BEYOND_CASES} per generator, all their input sets) against TensorFlow Lite's interpreter, "
                 "bit-exact or not.", "",
                 "| generator | cases | input sets as TF Lite's | cases TF Lite refuses |",
                 "|---|---|---|---|", *beyond]
    if failed:
        text += ["", "Not converted (the converter's own error, or its process stopped by a signal):", ""]
        text += [f"- {name}: {why}" for name, why in failed]
    out = "\n".join(text) + "\n"
    if args.out:
        args.out.write_text(out)
    else:
        sys.stdout.write(out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
