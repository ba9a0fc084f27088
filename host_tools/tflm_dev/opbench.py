"""Single-op benchmark models (`tflm-host bench speed --ops`): the kernels
real models spend time in, at the shapes they see there (a detector's
upsampling, a transformer block's matmuls and layer norm, a classifier's
global average and log-softmax), with seeded random inputs. Each is
measured as the shared models are in docs/speed-reference.md: ours on a
QEMU board and in the unix port, TFLM's reference kernels in the
`tflite-micro` package, instructions per invoke.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tflm_host.device import board as board_info

from . import bench, builder
from .bench import OPS_END, OPS_START


def single_op(op: str, inputs: list, outputs: list, **options) -> tuple[bytes, object]:
    b, sg = builder.single_op(op, inputs, outputs, **options)
    return b.build(), sg



@dataclass
class OpCase:
    name: str          # file name stem
    op: str
    what: str          # type, shapes and options, for the table
    model: bytes
    inputs: list[np.ndarray]


def _data(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    if dtype == "FLOAT32":
        return rng.normal(0, 2, shape).astype(np.float32)
    if dtype == "BOOL":
        return rng.random(shape) < 0.99
    return rng.integers(-128, 128, shape).astype(np.int8)


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape)


def _resize(rng, op: str, dtype: str, hpc: bool) -> OpCase:
    q = ([0.05], [-3]) if dtype == "INT8" else None
    in_shape, out_shape = (1, 20, 20, 16), (1, 40, 40, 16)
    model, _ = single_op(op, [(in_shape, dtype, None, q), ((2,), "INT32", np.array([40, 40], np.int32))],
                         [(out_shape, dtype, q)], AlignCorners=False, HalfPixelCenters=hpc)
    short = "bilinear" if op == "RESIZE_BILINEAR" else "nearest"
    return OpCase(f"resize_{short}_{dtype.lower()}{'_hpc' if hpc else ''}", op,
                  f"{dtype.lower()} {_shape(in_shape)} to 40x40" + (", half-pixel centers" if hpc else ""),
                  model, [_data(rng, dtype, in_shape)])


def _batch_matmul(rng, dtype: str, batches: int, const_rhs: bool) -> OpCase:
    lhs, rhs, out = (1, batches, 64, 64), (1, batches, 64, 64), (1, batches, 64, 64)
    if const_rhs:
        rhs = (64, 64)
    q8 = dtype == "INT8"
    lq, rq, oq = (([0.05], [-3]), ([0.04], [0] if const_rhs else [5]), ([3.0], [2])) if q8 else (None, None, None)
    rhs_data = _data(rng, dtype, rhs) if const_rhs else None
    model, _ = single_op("BATCH_MATMUL", [(lhs, dtype, None, lq), (rhs, dtype, rhs_data, rq)], [(out, dtype, oq)],
                         AdjX=False, AdjY=False)
    inputs = [_data(rng, dtype, lhs)] + ([] if const_rhs else [_data(rng, dtype, rhs)])
    kind = "constant" if const_rhs else "computed"
    return OpCase(f"batch_matmul_{dtype.lower()}_{batches}x64x64_{kind}", "BATCH_MATMUL",
                  f"{dtype.lower()} {_shape(lhs)} by {kind} {_shape(rhs)}", model, inputs)


def _reduce(rng, op: str, dtype: str, shape, axes, keep: bool = True, tag: str = "") -> OpCase:
    rank = len(shape)
    resolved = {a % rank for a in axes}
    out_shape = tuple(1 if i in resolved else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in resolved)
    qin = qout = None
    if dtype == "INT8":
        qin = ([0.05], [-3])
        # MEAN's output scale is the input's order, SUM's its count's.
        qout = qin if op in ("REDUCE_MAX", "REDUCE_MIN") else ([0.02], [5]) if op == "MEAN" else ([0.5], [5])
    model, _ = single_op(op, [(shape, dtype, None, qin), ((len(axes),), "INT32", np.array(axes, np.int32))],
                         [(out_shape, dtype, qout)], KeepDims=keep)
    return OpCase(f"{op.lower()}_{dtype.lower()}_{tag}", op,
                  f"{dtype.lower()} {_shape(shape)} over axes {','.join(str(a) for a in axes)}",
                  model, [_data(rng, dtype, shape)])


def _unary(rng, op: str, dtype: str, shape) -> OpCase:
    qin = ([0.1], [10]) if dtype == "INT8" else None
    qout = ([16.0 / 256], [127]) if dtype == "INT8" else None  # LOG_SOFTMAX's
    model, _ = single_op(op, [(shape, dtype, None, qin)], [(shape, dtype, qout)])
    return OpCase(f"{op.lower()}_{dtype.lower()}", op, f"{dtype.lower()} {_shape(shape)}", model,
                  [_data(rng, dtype, shape)])


def _squared_difference(rng, dtype: str, s2) -> OpCase:
    s1 = (1, 16, 64)
    q8 = dtype == "INT8"
    q1, q2, qo = (([0.05], [-3]), ([0.04], [2]), ([0.4], [-128])) if q8 else (None, None, None)
    model, _ = single_op("SQUARED_DIFFERENCE", [(s1, dtype, None, q1), (s2, dtype, None, q2)], [(s1, dtype, qo)])
    tag = "broadcast" if s2 != s1 else "same"
    return OpCase(f"squared_difference_{dtype.lower()}_{tag}", "SQUARED_DIFFERENCE",
                  f"{dtype.lower()} {_shape(s1)} and {_shape(s2)}", model, [_data(rng, dtype, s1), _data(rng, dtype, s2)])


def _prelu(rng, dtype: str) -> OpCase:
    shape, a_shape = (1, 20, 20, 16), (1, 1, 16)
    if dtype == "INT8":
        alpha = rng.integers(0, 60, a_shape).astype(np.int8)
        qin, qa, qo = ([0.05], [-3]), ([0.005], [0]), ([0.04], [-20])
    else:
        alpha = rng.uniform(0, 0.3, a_shape).astype(np.float32)
        qin = qa = qo = None
    model, _ = single_op("PRELU", [(shape, dtype, None, qin), (a_shape, dtype, alpha, qa)], [(shape, dtype, qo)])
    return OpCase(f"prelu_{dtype.lower()}", "PRELU", f"{dtype.lower()} {_shape(shape)}, per-channel alpha "
                  f"{_shape(a_shape)}", model, [_data(rng, dtype, shape)])


def op_cases(seed: int = 0) -> list[OpCase]:
    rng = np.random.default_rng(seed)
    cases = []
    for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        cases += [_resize(rng, op, "INT8", False), _resize(rng, op, "INT8", True), _resize(rng, op, "FLOAT32", False)]
    for dtype in ("INT8", "FLOAT32"):
        cases += [_batch_matmul(rng, dtype, 4, False), _batch_matmul(rng, dtype, 1, True)]
    for dtype in ("INT8", "FLOAT32"):
        # The global average of a classifier's head; a layer norm's mean.
        cases += [_reduce(rng, "MEAN", dtype, (1, 10, 10, 64), [1, 2], tag="hw"),
                  _reduce(rng, "MEAN", dtype, (1, 16, 64), [-1], tag="last")]
    cases += [_reduce(rng, "SUM", "INT8", (1, 10, 10, 64), [1, 2], tag="hw"),
              _reduce(rng, "SUM", "FLOAT32", (1, 16, 64), [-1], tag="last"),
              _reduce(rng, "REDUCE_MAX", "INT8", (1, 10, 10, 64), [1, 2], tag="hw"),
              _reduce(rng, "REDUCE_MAX", "FLOAT32", (1, 10, 10, 64), [1, 2], tag="hw"),
              _reduce(rng, "REDUCE_MIN", "INT8", (1, 16, 64), [-1], tag="last"),
              _reduce(rng, "REDUCE_ALL", "BOOL", (1, 16, 64), [-1], tag="last")]
    cases += [_unary(rng, "EXP", "FLOAT32", (1, 1000)),
              _unary(rng, "LOG_SOFTMAX", "FLOAT32", (1, 1000)), _unary(rng, "LOG_SOFTMAX", "INT8", (1, 1000))]
    for dtype in ("INT8", "FLOAT32"):
        cases += [_squared_difference(rng, dtype, (1, 16, 1)), _squared_difference(rng, dtype, (1, 16, 64))]
    cases += [_prelu(rng, "INT8"), _prelu(rng, "FLOAT32")]
    return cases


def write_cases(cases: list[OpCase], folder: Path) -> dict[str, tuple[Path, list[Path]]]:
    """Each case's model and raw input files in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for c in cases:
        path = folder / f"{c.name}.tflite"
        path.write_bytes(c.model)
        ins = []
        for i, x in enumerate(c.inputs):
            ins.append(folder / f"{c.name}.in{i}")
            ins[-1].write_bytes(np.ascontiguousarray(x).tobytes())
        out[c.name] = (path, ins)
    return out


def op_rows(board: str, runs: int, folder: Path, only: list[str] | None = None, progress=None) -> list[dict]:
    cases = [c for c in op_cases() if not only or any(o.lower() in c.name for o in only)]
    files = write_cases(cases, folder)
    device = bench.measure_ours(board, {f"{c.name}.tflite": c.model for c in cases},
                                {f"{c.name}.tflite": runs for c in cases},
                                inputs={f"{c.name}.tflite": [np.ascontiguousarray(x).tobytes() for x in c.inputs]
                                        for c in cases})
    rows = []
    for i, c in enumerate(cases):
        if progress:
            progress(i, len(cases), c.name)
        path, ins = files[c.name]
        rows.append({"name": c.name, "op": c.op, "what": c.what, "qemu": device[f"{c.name}.tflite"][0],
                     "host": bench.host_ours(path, runs, inputs=ins), "tflm": bench.host_tflm(path, runs, ins)})
    return rows


# -- the float transcendentals against newlib on the board ------------------------
#
# TFLM's reference EXP is expf() per value, its float LOG_SOFTMAX x - max -
# log(sum(exp(x - max))) with expf() and logf(); on a Cortex-M they come from
# the toolchain's C library (newlib). The same loops over the same inputs,
# built with newlib for the board's core and run on its QEMU machine, give a
# lower bound of what TFLM's reference takes there (its interpreter aside).

LIBM_CASES = ("exp_float32", "log_softmax_float32")

LIBM_MAIN = """
#include <float.h>
#include <math.h>
#include "startup.h"

extern const float x[N];
float y[N];

static void exp_loop(void) {
    for (int i = 0; i < N; ++i) {
        y[i] = expf(x[i]);
    }
}

static void log_softmax_loop(void) {
    float max = -FLT_MAX, sum = 0.0f;
    for (int i = 0; i < N; ++i) {
        max = max < x[i] ? x[i] : max;
    }
    for (int i = 0; i < N; ++i) {
        sum += expf(x[i] - max);
    }
    const float log_sum = logf(sum);
    for (int i = 0; i < N; ++i) {
        y[i] = x[i] - max - log_sum;
    }
}

static void report(const char *name, void (*loop)(void)) {
    uint64_t t0 = ticks();
    loop();
    uint64_t t1 = ticks();
    sh_write0(name);
    sh_write0(" ");
    sh_uint(ticks_to_insns(t1 - t0));
    sh_write0("\\n");
}

int main(void) {
    uint64_t t0 = ticks();
    __asm volatile(".syntax unified\\n ldr r0, =1000000\\n1: subs r0, #1\\n bne 1b" ::: "r0", "cc");
    uint64_t t1 = ticks();
    sh_write0("loop_2000000 ");
    sh_uint(ticks_to_insns(t1 - t0));
    sh_write0("\\n");
    report("exp_float32", exp_loop);
    report("log_softmax_float32", log_softmax_loop);
    return 0;
}
"""


def libm_rows(board: str, folder: Path, anchor: Path | None = None) -> dict[str, int]:
    """Instructions of the newlib loops above on the board's QEMU machine,
    over the op cases' inputs (the CMSIS-NN anchor's start-up code and
    linker script: the same counter)."""
    anchor = anchor or bench.ANCHOR_DIR
    core = bench.CMSIS_CORES[board]
    cases = {c.name: c for c in op_cases()}
    size = cases[LIBM_CASES[0]].inputs[0].size
    if any(cases[n].inputs[0].size != size for n in LIBM_CASES):
        raise ValueError("the newlib loops take inputs of one size")
    work = folder / f"newlib-{board}"
    work.mkdir(parents=True, exist_ok=True)
    flags = ["-mthumb", *core.cpu.split(), "-O2", "-ffp-contract=off", f"-I{anchor / 'harness'}",
             f"-DCPU_HZ={core.hz}", f"-DN={size}"]
    results = {}
    for name in LIBM_CASES:
        data = cases[name].inputs[0].ravel().astype(np.float32)
        (work / "main.c").write_text(LIBM_MAIN)
        (work / "data.c").write_text(f"const float x[{data.size}] = {{\n"
                                     + ",\n".join(f"{float(v).hex()}f" for v in data) + "\n};\n")
        elf = work / f"{name}.elf"
        subprocess.run(["arm-none-eabi-gcc", *flags, "-nostartfiles", "-specs=nano.specs",
                        "-T", str(anchor / "harness" / core.ld), "-Wl,--gc-sections", "-o", str(elf),
                        str(work / "main.c"), str(work / "data.c"), str(anchor / "harness" / "startup.c"),
                        "-lm", "-lc", "-lgcc"], check=True)
        b = board_info(board)
        proc = subprocess.run(["qemu-system-arm", "-machine", b.machine, *b.qemu_args, "-nographic", "-monitor",
                               "none", "-serial", "null", "-semihosting", "-icount", "shift=0", "-kernel", str(elf)],
                              capture_output=True, text=True, timeout=600)
        text = proc.stdout + proc.stderr
        check = re.search(r"^loop_2000000 (\d+)", text, re.M)
        found = re.search(rf"^{name} (\d+)", text, re.M)
        if not check or abs(int(check.group(1)) - 2_000_000) > 100 or not found:
            raise RuntimeError(f"newlib loops failed on {board}:\n{text[-2000:]}")
        results[name] = int(found.group(1))
    return results


def op_markdown(rows: list[dict], board: str, libm: dict[str, int] | None = None) -> str:
    lines = [f"| op | case | {board}: ours | host: ours | host: TFLM reference | ours / TFLM |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['op']} | {r['what']} | {r['qemu']:,} | {r['host']:,} | {r['tflm']:,} "
                     f"| {r['host'] / r['tflm']:.2f} |")
    lines += [
        "",
        "One-op models (`tflm_dev.opbench`: seeded random inputs, set before every invoke; constant alpha, "
        "axes, sizes and the constant right operand in the model), measured as the table above: instructions "
        f"per invoke, the whole invoke() (its dispatch included). {board}: ours, counted by QEMU "
        "(`-icount shift=0`). Host: x86-64 instructions counted by callgrind, ours in the unix port and TFLM's "
        "reference kernels in PyPI `tflite-micro`. TFLM's reference kernels are not built for the Cortex-M3 "
        "here (this project and its anchors hold CMSIS-NN's kernels for the M3, not TFLM's reference ones), so "
        f"the comparison with TFLM is the host's; the {board} column is ours alone.",
    ]
    by_name = {r["name"]: r for r in rows}
    shown = [(name, n) for name, n in (libm or {}).items() if name in by_name]
    if shown:
        lines += ["", f"| case | {board}: ours | {board}: newlib's expf/logf in the reference's loop "
                  "| ours / newlib |", "|---|---|---|---|"]
        for name, n in shown:
            r = by_name[name]
            lines.append(f"| {r['op']} {r['what']} | {r['qemu']:,} | {n:,} | {r['qemu'] / n:.2f} |")
        lines += ["", "The float transcendentals on the host are glibc's, which uses the x86-64's fused "
                  "multiply-add; ours compute glibc's bits without one (the fixed-point path on cores without a "
                  "double-precision FPU, glibc's steps unfused on the host), so the host compares unlike "
                  "instruction sets there. On the board, TFLM's reference takes its C library's expf and logf: "
                  "the reference's loops (expf per value; x - max - log(sum(exp(x - max)))) built with newlib "
                  f"for the {board}'s core (arm-none-eabi-gcc -O2) and counted the same way give a lower bound of "
                  "what TFLM's reference takes there, its interpreter aside (newlib's results are not glibc's)."]
    return "\n".join(lines) + "\n"


def write_ops_section(doc: Path, table: str, command: str) -> None:
    """Puts the op table into `doc`, between its markers."""
    bench.write_section(doc, OPS_START, OPS_END, "Kernels, op by op", command, table)
