"""`make fuzz`: the engine's mutation fuzzer (fuzz_model, built under
AddressSanitizer and UBSan) over a corpus of models, split into ranges of
cases run by parallel processes.

The corpus: every shared model, the generated models (gen_models.py), the
shared models that take an offline plan with that plan in their metadata
(OfflineMemoryAllocation, written by `tflm-host plan --embed -o`), and the
regression cases under tests/fuzz/crashers, which are replayed first, as
they are. N cases in all are shared equally by the corpus's models; case K
of a model draws its mutations from its own stream (SEED, K), so any case
runs again alone: fuzz_model -c K 1 SEED MODEL.

Per case a timer is armed (--timeout seconds): a case still running when it
fires is a hang. A process stopped by a sanitizer is a crash (its UBSan
reports are counted apart, "runtime error:"); the case is named from the
progress file fuzz_model keeps, its mutant is kept under tests/fuzz/crashers
(a mutant made after loading can only be run again with -c), and the range
goes on after it. The figures go to stdout, a JSON file and, with --doc,
into docs/reliability.md between its fuzz markers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tflm_dev.marked import write_marked

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CRASHERS = ROOT / "tests" / "fuzz" / "crashers"


@dataclass
class Totals:
    cases: int = 0
    after_load: int = 0
    crashes: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    ubsan: int = 0
    asan: int = 0
    failures: list[str] = field(default_factory=list)  # arena not exact, or anything else unexpected
    slowest: float = 0.0
    slowest_case: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)


def offline_plan_models(models: list[Path], out: Path) -> list[Path]:
    """The shared models this runtime can plan, with their plan embedded."""
    from tflm_host import cli

    out.mkdir(parents=True, exist_ok=True)
    made = []
    for m in models:
        target = out / f"{m.stem}_offline_plan.tflite"
        if not target.exists():
            devnull = open(os.devnull, "w")
            old = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = devnull
            try:
                code = cli.main(["plan", str(m), "--embed", "-o", str(target), "--time-limit", "1"])
            finally:
                sys.stdout, sys.stderr = old
                devnull.close()
            if code != 0:
                continue
        made.append(target)
    return made


def replay(binary: Path, files: list[Path], timeout: int) -> str:
    if not files:
        return "no regression cases to replay"
    proc = subprocess.run([str(binary), "-t", str(timeout), "-r", *map(str, files)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"a regression case under {CRASHERS} fails again")
    return proc.stdout.strip()


class Stop:
    """The deadline: past it no range starts and running ones are ended
    (their cases are not counted)."""

    def __init__(self, deadline: float | None):
        self.deadline = deadline
        self.procs: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.stopped = False

    def due(self) -> bool:
        if self.deadline is not None and time.time() >= self.deadline:
            self.stopped = True
        return self.stopped

    def watch(self) -> None:
        while not self.due():
            time.sleep(1)
        with self.lock:
            for proc in self.procs:
                proc.kill()


def run_range(binary: Path, model: Path, first: int, count: int, seed: int, timeout: int, totals: Totals,
              keep: Path, stop: Stop) -> None:
    """Cases first..first+count-1 of one model; after a crash or a hang, the
    rest of the range in a new process."""
    while count > 0 and not stop.due():
        with tempfile.NamedTemporaryFile(prefix="fuzz-progress-") as progress:
            env = dict(os.environ, FUZZ_PROGRESS=progress.name,
                       ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
                       UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
            with stop.lock:
                proc = subprocess.Popen([str(binary), "-q", "-c", str(first), "-t", str(timeout), str(count),
                                         str(seed), str(model)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
                stop.procs.add(proc)
            out, err = proc.communicate()
            with stop.lock:
                stop.procs.discard(proc)
            if stop.stopped and proc.returncode < 0:
                return  # ended at the deadline: not counted
            where = Path(progress.name).read_text().split()
        m = re.search(r"^@CASES (\d+) (\d+) ([\d.]+)$", out, re.M)
        if proc.returncode == 0 and m:
            with totals.lock:
                totals.cases += int(m.group(1))
                totals.after_load += int(m.group(2))
                if float(m.group(3)) > totals.slowest:
                    totals.slowest, totals.slowest_case = float(m.group(3)), f"{model.name} cases {first}.."
            return
        if proc.returncode == 1 and m and "FAIL" in out:
            with totals.lock:
                totals.cases += int(m.group(1))
                totals.after_load += int(m.group(2))
                totals.failures.append(out.strip().splitlines()[0])
            return
        case = int(where[1]) if len(where) >= 3 else first
        after = len(where) >= 3 and where[2] == "1"
        text = err
        what = f"{model.name} case {case}{' changed after loading' if after else ''} (seed {seed})"
        saved = "" if after or case < 0 else keep_case(binary, model, case, seed, keep)
        with totals.lock:
            totals.cases += max(case - first + 1, 0)
            if proc.returncode == 3:
                totals.hangs.append(what)
            else:
                totals.crashes.append(what + (f": kept as {saved}" if saved else ""))
                totals.ubsan += text.count("runtime error:")
                totals.asan += text.count("ERROR: AddressSanitizer")
            print(f"\n{'HANG' if proc.returncode == 3 else 'CRASH'} {what}\n" + "\n".join(text.splitlines()[-30:]),
                  flush=True)
        if case < first:  # the unmutated model itself
            return
        count -= case - first + 1
        first = case + 1


def keep_case(binary: Path, model: Path, case: int, seed: int, keep: Path) -> str:
    """The mutant of a case, written by fuzz_model -w, kept as a regression case."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(binary), "-q", "-w", tmp, "-c", str(case), "-t", "5", "1", str(seed), str(model)],
                       capture_output=True)
        made = list(Path(tmp).glob("*.tflite"))
        if not made:
            return ""
        keep.mkdir(parents=True, exist_ok=True)
        target = keep / f"{model.stem}-seed{seed}-case{case}.tflite"
        shutil.copy(made[0], target)
        return str(target.relative_to(ROOT)) if target.is_relative_to(ROOT) else str(target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", type=Path, required=True, help="fuzz_model")
    ap.add_argument("--models", type=Path, required=True, help="the shared models")
    ap.add_argument("--generated", type=Path, required=True, help="gen_models.py's output")
    ap.add_argument("--work", type=Path, required=True, help="a folder for offline-plan models and the report")
    ap.add_argument("-n", type=int, default=1_000_000, help="cases in all")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=20, help="seconds one case may take before it is a hang")
    ap.add_argument("--chunk", type=int, default=250, help="cases per process")
    ap.add_argument("--doc", type=Path, help="write the figures into this Markdown file's fuzz section")
    ap.add_argument("--deadline", help="UTC time (HH:MM) to stop at, counting only the cases completed by then")
    args = ap.parse_args()

    t0 = time.monotonic()
    crashers = sorted(CRASHERS.glob("*.tflite"))
    print(f"replaying {len(crashers)} regression cases from {CRASHERS.relative_to(ROOT)}: "
          + replay(args.binary, crashers, args.timeout), flush=True)
    shared = sorted(args.models.glob("*.tflite"))
    generated = sorted(args.generated.glob("*.tflite"))
    offline = offline_plan_models(shared, args.work / "offline_plans")
    corpus = shared + generated + offline + crashers
    per_model = -(-args.n // len(corpus))
    print(f"corpus: {len(shared)} shared models, {len(generated)} generated, {len(offline)} with an offline plan, "
          f"{len(crashers)} regression cases; {per_model} cases each, seed {args.seed}, {args.jobs} processes, "
          f"a case running over {args.timeout} s is a hang", flush=True)
    # Every model's first range, then every model's second, ...: a run
    # stopped early has fuzzed every model alike.
    ranges = [(m, first, min(args.chunk, per_model - first)) for first in range(0, per_model, args.chunk)
              for m in corpus]
    deadline = None
    if args.deadline:
        hh, mm = map(int, args.deadline.split(":"))
        now = time.gmtime()
        deadline = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
    stop = Stop(deadline)
    threading.Thread(target=stop.watch, daemon=True).start()
    totals = Totals()
    done = [0]

    def one(r):
        run_range(args.binary, r[0], r[1], r[2], args.seed, args.timeout, totals, CRASHERS, stop)
        with totals.lock:
            done[0] += 1
            if done[0] % max(1, len(ranges) // 50) == 0 or done[0] == len(ranges):
                print(f"  {totals.cases} cases, {len(totals.crashes)} crashes, {len(totals.hangs)} hangs, "
                      f"{time.monotonic() - t0:.0f} s", flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, ranges))
    elapsed = time.monotonic() - t0
    summary = {
        "asked": args.n, "stopped_at_deadline": stop.stopped,
        "cases": totals.cases, "changed_after_loading": totals.after_load, "models": len(corpus),
        "shared": len(shared), "generated": len(generated), "offline_plans": len(offline),
        "regression_cases": len(crashers), "seed": args.seed, "processes": args.jobs,
        "crashes": len(totals.crashes), "hangs": len(totals.hangs), "ubsan_reports": totals.ubsan,
        "asan_reports": totals.asan, "other_failures": totals.failures, "elapsed_s": round(elapsed),
        "slowest_case_s": round(totals.slowest, 3), "slowest_case": totals.slowest_case,
        "hang_timeout_s": args.timeout, "crash_list": totals.crashes, "hang_list": totals.hangs,
    }
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "fuzz-summary.json").write_text(json.dumps(summary, indent=1))
    table = (f"| cases (mutants) | of them also changed after loading | models | crashes | hangs | UBSan reports "
             f"| ASan reports | elapsed |\n|---|---|---|---|---|---|---|---|\n"
             f"| {totals.cases:,} | {totals.after_load:,} | {len(corpus)} | {len(totals.crashes)} | "
             f"{len(totals.hangs)} | {totals.ubsan} | {totals.asan} | {elapsed / 60:.1f} min |\n")
    detail = (f"\nCorpus: {len(shared)} shared models, {len(generated)} generated models, {len(offline)} shared models "
              f"with their offline plan in the metadata, {len(crashers)} regression cases; {per_model:,} cases per "
              f"model, seed {args.seed}, {args.jobs} processes (`make fuzz FUZZ_N={args.n}`). Slowest case: "
              f"{totals.slowest:.3f} s of wall-clock time, on a machine shared with other work ({totals.slowest_case}); "
              f"a case over {args.timeout} s counts as a hang. "
              f"Other failures: {len(totals.failures)}.\n")
    if stop.stopped:
        detail += (f"\n**Stopped at the deadline ({args.deadline} UTC) after {totals.cases:,} of the {args.n:,} cases "
                   f"asked**: these figures are for the cases completed by then.\n")
    for c in totals.crashes + totals.hangs + totals.failures:
        detail += f"- {c}\n"
    print(table + detail)
    if args.doc:
        write_marked(args.doc, "fuzz", "fuzz", table + detail)
    return 1 if totals.crashes or totals.hangs or totals.failures else 0


if __name__ == "__main__":
    sys.exit(main())
