"""Mutants of real models (tests/model_mutants.py) through every tflm-host
subcommand that reads a model, in this process (cli.main): each run must end
with status 0 (1 for `ops`: a missing kernel) or be refused with one line on
stderr and status 2; an exception escaping main() is the traceback a user
would see. tests/test_cli_robust.py runs a few mutants; `make fuzz` many and
writes the figures into docs/reliability.md.

    python tests/cli_fuzz.py COUNT [--doc docs/reliability.md]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from model_mutants import mutants
from tflm_dev.marked import report
from tflm_host import cli

# Subcommands reading a model ({} is the file), none of them needing a board.
# `compare` runs TFLM's own interpreter when ours accepts a model, which may
# crash on a mutant (TFLM is not hardened): it meets the bad files of
# tests/test_cli_robust.py only, which our reader refuses first.
MODEL_COMMANDS = [
    ["inspect", "{}"],
    ["inspect", "{}", "--json"],
    ["arena", "{}"],
    ["arena", "{}", "--planner", "linear", "-v"],
    ["plan", "{}", "--planner", "greedy"],
    ["plan", "{}", "--time-limit", "0.2"],
    ["run", "{}", "--target", "host", "--inputs", "zeros"],
    ["ops", "{}"],
    ["deploy", "{}", "--port", "/dev/null", "--dry-run", "--no-check"],
]
MUTATED_MODELS = ["hello_world_int8.tflite", "trained_lstm_int8.tflite", "kws_ref_model.tflite",
                  "person_detect.tflite"]


def seed_of(name: str) -> int:
    return 2024 + sum(name.encode())


def fuzz_model(path: Path, count: int, work: Path) -> dict[int, int]:
    """Runs `count` mutants of one model through MODEL_COMMANDS; outcomes by
    exit status. AssertionError on a traceback or a refusal of more than one line."""
    target = work / path.name
    outcomes = {0: 0, 1: 0, 2: 0}
    for k, data in enumerate(mutants(path.read_bytes(), seed_of(path.name), count)):
        target.write_bytes(data)
        for command in MODEL_COMMANDS:
            argv = [str(target) if a == "{}" else a for a in command]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(argv)
            text = err.getvalue()
            assert code in (0, 1, 2) and "Traceback" not in text, (path.name, k, argv, code, text)
            if code == 2:
                assert len(text.strip().splitlines()) == 1, (path.name, k, argv, text)
            outcomes[code] += 1
    return outcomes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int, help="mutants per model")
    ap.add_argument("--models", type=Path, default=Path(os.environ.get(
        "TFLM_MODELS", Path(__file__).resolve().parents[2] / "shared" / "models")))
    ap.add_argument("--doc", type=Path)
    args = ap.parse_args()
    t0 = time.monotonic()
    total = {0: 0, 1: 0, 2: 0}
    with tempfile.TemporaryDirectory() as tmp:
        for name in MUTATED_MODELS:
            for code, n in fuzz_model(args.models / name, args.count, Path(tmp)).items():
                total[code] += n
    runs = sum(total.values())
    text = (f"Host CLI: {args.count} mutants of each of {', '.join(MUTATED_MODELS)} through "
            f"{len(MODEL_COMMANDS)} subcommand lines: {runs:,} runs, {total[0] + total[1]:,} ran, {total[2]:,} "
            f"refused in one line with status 2, 0 tracebacks ({time.monotonic() - t0:.0f} s).\n")
    report(text, args.doc, "cli", "fuzz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
