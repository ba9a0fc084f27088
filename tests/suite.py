"""`make test`: every test, in phases, each timed.

    build    mpy-cross and the engine's host programs first, side by side,
             then two lanes side by side: the unix port, the QEMU boards'
             firmware, tflm.mpy and the stock firmware it loads on, the
             release's tflm.mpy and host package; the real boards' firmware
             (make targets; output in build/build-*.log); then the release
             folder from them (make dist)
    engine   the engine's tests under ASan/UBSan (make test-engine), from
             the moment its programs are built: beside the build lanes,
             whose serial steps (configure, link, qstr scans) leave a core
             idle, then beside pytest
    pytest   the Python suite, in JOBS processes (pytest-xdist), the
             slowest tests listed at its end

Every phase runs on the machine's two cores at once with another; the
phases' times are printed at the end, pass or fail, with the command that
reproduces a failing phase and the end of its log.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host_tools"))

from tflm_host import board_info  # noqa: E402  (the checkout's, whichever Python runs this)

def build_lanes() -> dict[str, list[list[str]]]:
    """The build lanes: independent make targets (they share only mpy-cross,
    built before them), each lane's in order: the unix port, the QEMU
    boards, tflm.mpy and its stock firmware, tflm.mpy of every architecture
    and the host package's sdist and wheel (for the release folder); the
    real boards `make test` builds, then the unix port built by clang."""
    boards = board_info.make_vars()
    qemu, real = boards["QEMU_BOARDS"], boards["TESTED_REAL_BOARDS"]
    return {"host-qemu": [["unix"]] + [["firmware", f"BOARD={b}"] for b in qemu]
            + [["natmod-stock"], ["dist-natmod"], ["dist-pkg"]],
            "real-boards": [["firmware", f"BOARD={b}"] for b in real] + [["unix-clang"]]}


# After the lanes: the release folder (tests/test_dist.py), from what they built.
AFTER_LANES = ["dist"]


def minutes(seconds: float) -> str:
    tenths = round(seconds * 10)  # rounded once: 899.98 s is 15m00.0s, not 14m60.0s
    return f"{tenths // 600}m{tenths % 600 / 10:04.1f}s"


class Phase:
    """Commands run one after the other in a thread of their own, their
    output into `log` (else to the terminal); with `labels`, a line per
    command that ends, with its label and time."""

    def __init__(self, name: str, cmds: list[list[str]], log: Path | None = None,
                 labels: list[str] | None = None) -> None:
        self.name, self.cmds, self.log, self.labels = name, cmds, log, labels
        self.cmd = cmds[-1]  # the one that failed, once one has
        self.start = time.monotonic()
        self.end = self.start
        self.seconds = 0.0
        self.returncode: int | None = None
        if log:
            log.write_text("")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        code = 0
        for k, cmd in enumerate(self.cmds):
            self.cmd = cmd
            began = time.monotonic()
            out = open(self.log, "a") if self.log else None
            try:
                code = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT if out else None).returncode
            finally:
                if out:
                    out.close()
            if self.labels:
                status = "" if code == 0 else f", FAILED (exit {code})"
                print(f"  {self.name}: {self.labels[k]} {minutes(time.monotonic() - began)}{status}", flush=True)
            if code:
                break
        self.end = time.monotonic()
        self.seconds = self.end - self.start
        self.returncode = code

    def wait(self) -> int:
        self.thread.join()
        return self.returncode

    def tail(self, lines: int = 40) -> str:
        if not self.log or not self.log.is_file():
            return ""
        return "".join(self.log.read_text(errors="replace").splitlines(keepends=True)[-lines:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", default="make", help="the make command (with the top-level variables)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--jobs", type=int, default=3, help="pytest processes (1: no pytest-xdist)")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest")
    args = ap.parse_args()
    make = args.make.split() + ["--no-print-directory"]
    start = time.monotonic()
    phases: list[Phase] = []
    lanes: list[Phase] = []
    args.build.mkdir(parents=True, exist_ok=True)

    def finish(*waiting: Phase) -> int:
        for p in waiting:
            p.wait()
        for p in phases:
            if p.returncode and p.log:
                print(f"\nThe {p.name} phase failed; the end of {p.log}:\n{p.tail()}")
        print("\nmake test, phase by phase:")
        for p in phases:
            status = "passed" if p.returncode == 0 else f"FAILED (exit {p.returncode})"
            where = f", log {p.log}" if p.log else ""
            print(f"  {p.name:<17} {minutes(p.seconds):>9}  {status}{where}")
        if lanes:
            print(f"  {'build, in all':<17} {minutes(max(p.end for p in lanes) - start):>9}")
        print(f"  {'total':<17} {minutes(time.monotonic() - start):>9}  (the engine tests run beside the build lanes "
              "and pytest)")
        for p in phases:
            if p.returncode:
                print(f"  to run the {p.name} phase again: {' '.join(p.cmd)}")
        return 1 if any(p.returncode for p in phases) else 0

    # What the lanes and the engine tests need first, the two side by side.
    first = [Phase("build", [make + [t]], log=args.build / f"build-{t}.log", labels=[t])
             for t in ("mpy-cross", "engine-binaries")]
    phases += first
    if any([p.wait() for p in first]):
        return finish()
    engine = Phase("engine", [make + ["test-engine"]], log=args.build / "test-engine.log")
    lanes += [Phase(f"build: {name}", [make + t for t in targets], log=args.build / f"build-{name}.log",
                    labels=[" ".join(t) for t in targets]) for name, targets in build_lanes().items()]
    phases += lanes + [engine]
    if any([lane.wait() for lane in lanes]):
        return finish(engine)
    release = Phase("build: release", [make + AFTER_LANES], log=args.build / "build-release.log",
                    labels=[" ".join(AFTER_LANES)])
    phases.append(release)
    lanes.append(release)  # part of the build's time
    if release.wait():
        return finish(engine)
    cmd = [args.python, "-m", "pytest", "-q", "--durations=15", "--durations-min=5"]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs), "--dist", "loadgroup"]
    tests = Phase("pytest", [cmd + (args.pytest_args or ["tests"])])
    phases.append(tests)
    return finish(tests, engine)


if __name__ == "__main__":
    sys.exit(main())
