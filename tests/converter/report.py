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
have: a converter's placeholder for a dynamic shape); when ours is, "runs
here only, not TF Lite's". The exit status is 1 when a model differs, only
TFLM runs it correctly or only we run it and TF Lite disagrees, so `make
converter-check` fails on a regression."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tflm_host.cli import compare_outputs
from tflm_host.host_run import HostTarget
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs, run_model

RUNS = 5
ARCHITECTURES = Path(__file__).with_name("architectures.py")


def tflite_agrees(path: Path, sample: list[np.ndarray], theirs: list[np.ndarray], python: str,
                  whose: str = "TFLM's") -> str:
    """'' when TF Lite's outputs match `theirs` (TFLM's, or `whose`; float:
    to 1e-4 of the largest value; quantized values: to one step; indices
    and other integers: exactly), else how far apart they are."""
    with tempfile.TemporaryDirectory() as tmp:
        inputs, outputs = Path(tmp, "in.npz"), Path(tmp, "out.npz")
        np.savez(inputs, **{f"input_{k}": x for k, x in enumerate(sample)})
        subprocess.run([python, str(ARCHITECTURES), "--run", str(path), str(inputs), str(outputs)],
                       check=True, capture_output=True)
        lite = np.load(outputs)
        over = 0.0  # the worst difference over its tolerance
        for k, t in enumerate(theirs):
            kind = np.asarray(t).dtype
            a, b = np.asarray(t, dtype=np.float64), lite[f"output_{k}"].astype(np.float64).reshape(np.shape(t))
            floating = np.issubdtype(kind, np.floating)
            scale = max(float(np.abs(b).max()), 1e-30) if floating else 1.0
            tolerance = 1e-4 if floating else 1.0 if kind.itemsize <= 2 else 0.0
            worst = float(np.abs(a - b).max()) / scale if a.size else 0.0
            if worst > tolerance:
                over = max(over, worst)
        return "" if over == 0.0 else f"{whose} outputs are {over:.3g} (relative) from TF Lite's"


def _first_line(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    # The host target reports the engine's error as "<type> <message>".
    return text.replace(" ", ": ", 1) if type(e).__name__ == "DeviceError" else f"{type(e).__name__}: {text}"


def verdict(path: Path, tflite_python: str | None = None) -> tuple[str, str, str]:
    """(ops, verdict, detail) of one model."""
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
            wrong = tflite_agrees(path, samples[0], theirs[0], tflite_python)
            if wrong:
                return ops, "refused here, TFLM wrong", f"{ours_error} ({wrong})"
        return ops, "refused here only", ours_error
    if tflite_python:
        for sample, run in zip(samples, ours):
            wrong = tflite_agrees(path, sample, run, tflite_python, "our")
            if wrong:
                return ops, "runs here only, not TF Lite's", f"{wrong}; TFLM: {theirs_error}"
        return ops, "runs here only", f"as TF Lite on all {len(samples)} input sets; TFLM: {theirs_error}"
    return ops, "runs here only", f"TFLM: {theirs_error}"


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
            "TensorFlow's own converter, float32 and full-integer int8, each run on the host engine and on "
            f"TFLM's reference interpreter (PyPI `tflite-micro`) with the same {RUNS} random input sets. "
            "`make converter-check` (which installs `tensorflow-cpu` in a venv of its own under build/) "
            "rewrites this file.", "",
            "Totals: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".", "",
            "| model | ops | verdict | this engine's message, or the difference |", "|---|---|---|---|", *rows]
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
