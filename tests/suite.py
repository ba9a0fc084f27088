"""`make test`: every test, in phases, each timed.

    build    the unix port, the QEMU boards' and the real boards' firmware,
             the engine's host programs, tflm.mpy and the stock firmware
             it loads on (make targets)
    engine   the engine's tests under ASan/UBSan (make test-engine), run
             beside pytest: the two are independent
    pytest   the Python suite, in JOBS processes (pytest-xdist), the
             slowest tests listed at its end

The phases' times are printed at the end, pass or fail, with the command
that reproduces a failing phase.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def minutes(seconds: float) -> str:
    tenths = round(seconds * 10)  # rounded once: 899.98 s is 15m00.0s, not 14m60.0s
    return f"{tenths // 600}m{tenths % 600 / 10:04.1f}s"


class Phase:
    def __init__(self, name: str, cmd: list[str], log: Path | None = None) -> None:
        self.name, self.cmd, self.log = name, cmd, log
        self.start = time.monotonic()
        self.seconds = 0.0
        self.returncode: int | None = None
        out = open(log, "w") if log else None
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT if out else None)
        if out:
            out.close()

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = self.proc.wait()
            self.seconds = time.monotonic() - self.start
        return self.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", default="make", help="the make command (with the top-level variables)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--jobs", type=int, default=2, help="pytest processes (1: no pytest-xdist)")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest")
    args = ap.parse_args()
    make = args.make.split()
    start = time.monotonic()
    phases: list[Phase] = []

    def report() -> None:
        print("\nmake test, phase by phase:")
        for p in phases:
            status = "passed" if p.returncode == 0 else f"FAILED (exit {p.returncode})"
            where = f", log {p.log}" if p.log else ""
            print(f"  {p.name:<8} {minutes(p.seconds):>9}  {status}{where}")
        print(f"  {'total':<8} {minutes(time.monotonic() - start):>9}  (engine tests run beside pytest)")
        for p in phases:
            if p.returncode:
                print(f"  to run the {p.name} phase again: {' '.join(p.cmd)}")

    build = Phase("build", make + ["--no-print-directory", "unix", "qemu-firmware", "real-firmware", "engine-binaries",
                                  "natmod-stock"])
    phases.append(build)
    if build.wait():
        report()
        return 1
    args.build.mkdir(parents=True, exist_ok=True)
    engine = Phase("engine", make + ["--no-print-directory", "test-engine"], log=args.build / "test-engine.log")
    phases.append(engine)
    cmd = [args.python, "-m", "pytest", "-q", "--durations=15", "--durations-min=5"]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs), "--dist", "loadgroup"]
    tests = Phase("pytest", cmd + (args.pytest_args or ["tests"]))
    phases.append(tests)
    tests.wait()
    engine.wait()
    if engine.returncode:
        print(f"\nThe engine tests failed; the end of {engine.log}:")
        print("".join(engine.log.read_text(errors="replace").splitlines(keepends=True)[-40:]))
    report()
    return 1 if any(p.returncode for p in phases) else 0


if __name__ == "__main__":
    sys.exit(main())
