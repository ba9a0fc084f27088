"""The fast int8 kernels' paths, bit-exact with TFLM on every core family
that has one (kernels/arch.h): models shaped like the cases the paths
special-case (speed_cases.py) through the ASan/UBSan engine built as-is
(portable loops), built with the DSP loops (their intrinsics in C), with
the Armv6-M loops, those two running rows in bands in reverse order, and
with the Thumb-2 loops (fully connected four units at a time), and on the
boards that run them for real: NETDUINOPLUS2
(Cortex-M4F: SMLAD/SXTB16), MPS2_AN385 (Cortex-M3: Thumb-2) and MICROBIT
(Cortex-M0: Armv6-M). Plus the output stage's arithmetic against the
reference's over millions of values, for the 64-bit and the Armv6-M forms,
and the tail layers' (the int8 softmax's exp and reciprocal, the average
pool's lanes and division) against the engine's and plain sums."""

from __future__ import annotations

import re
import subprocess
import zlib

import numpy as np
import pytest

import engine_host
from conftest import ROOT, get_target
from speed_cases import cases
from tflm_host.device import build_dir
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

# One process runs this file's tests (make test's pytest-xdist): it builds the engine once per core family.
pytestmark = pytest.mark.xdist_group("test_speed_paths")

CASES = cases()
# The engine for the host with each core family's loops (kernels/arch.h);
# those with the DSP and Armv6-M loops run the conv kernels' rows in bands
# of 3, the last band first (the row-range interface as a patch-by-patch
# caller uses it; the boards run them whole); the DSP loops twice, as PYBV11
# builds them (the settings its mpconfigboard.mk gives the module's objects:
# the depthwise channels path in one function, a patch's overlapped
# convolutions a band a call, ...), and as NETDUINOPLUS2 does ("dsp_full").


def board_settings(board: str) -> str:
    """The -D settings a board's mpconfigboard.mk adds to the module's
    objects' CFLAGS (PYBV11's, which leave paths out to fit its flash)."""
    text = (ROOT / "port_boards" / board / "mpconfigboard.mk").read_text()
    lines = re.findall(r"^\$\(BUILD\)/micropython_mod/\S+\.o: CFLAGS \+= (.+)$", text, re.M)
    return " ".join(f for line in lines for f in line.split() if f.startswith("-D"))


BANDS = "-DTFLM_CONV_TEST_BAND=3"
ARCHS = {"portable": None, "dsp": f"-DTFLM_KERNEL_ARCH=3 {BANDS} {board_settings('PYBV11')}",
         "dsp_full": f"-DTFLM_KERNEL_ARCH=3 {BANDS}", "v6m": f"-DTFLM_KERNEL_ARCH=1 {BANDS}",
         "thumb2": "-DTFLM_KERNEL_ARCH=2"}


def samples(case):
    if case.inputs is not None:
        return case.inputs
    return make_inputs(load_model(case.model), "random", seed=zlib.crc32(case.name.encode()), count=2)


_refs: dict[str, list] = {}


def reference(case, tmp_path):
    if case.name not in _refs:
        path = tmp_path / "ref.tflite"
        path.write_bytes(case.model)
        _refs[case.name] = reference_outputs(path, samples(case))
    return _refs[case.name]


def differences(ours, ref) -> list[str]:
    out = []
    for r, (a_run, b_run) in enumerate(zip(ours, ref)):
        for k, (a, b) in enumerate(zip(a_run, b_run)):
            b = np.asarray(b).astype(a.dtype).reshape(a.shape)
            bad = np.flatnonzero(a.ravel() != b.ravel())
            if bad.size:
                i = bad[0]
                out.append(f"run {r} output {k}: {bad.size} of {a.size} differ, first at {i}: "
                           f"ours {a.ravel()[i]}, TFLM {b.ravel()[i]}")
    if len(ours) != len(ref):
        out.append(f"{len(ours)} runs, TFLM {len(ref)}")
    return out


_binaries: dict[str, object] = {}


def arch_binary(arch: str):
    """tflm_run built with one core family's loops (the default build for
    "portable"), under ASan and UBSan."""
    if arch not in _binaries:
        if ARCHS[arch] is None:
            _binaries[arch] = engine_host.tflm_run()
        else:
            out = build_dir() / f"engine-arch-{arch}"
            # The engine's own flags and the family's; the sources the
            # family does not change are the default build's objects.
            base = engine_host.tflm_run().parent
            engine_host.make_engine(out, f"ARCH_CFLAGS={ARCHS[arch]}", f"BASE={base}", target="arch-binaries")
            _binaries[arch] = out / "tflm_run"
    return _binaries[arch]


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_paths_on_engine(arch, tmp_path, monkeypatch):
    binary = arch_binary(arch)
    monkeypatch.setattr(engine_host, "tflm_run", lambda: binary)
    failures = []
    for i, case in enumerate(CASES):
        path = tmp_path / f"c{i}.tflite"
        path.write_bytes(case.model)
        run = engine_host.run_engine(path, load_model(path), samples(case), tmp_path)
        diff = differences(run.runs, reference(case, tmp_path))
        if diff:
            failures.append(f"{case.describe()}: {'; '.join(diff[:2])}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases differ ({arch} loops):\n" + "\n".join(failures)


@pytest.mark.parametrize("board", ["NETDUINOPLUS2", "MPS2_AN385", "MICROBIT"])
def test_paths_on_board(board, tmp_path):
    jobs = [BatchJob(f"c{i}", c.model, samples(c)) for i, c in enumerate(CASES)]
    results = run_batch(get_target(board), jobs)
    failures = []
    for job, case in zip(jobs, CASES):
        res = results[job.name]
        diff = [res.error] if res.error else differences(res.runs, reference(case, tmp_path))
        if diff:
            failures.append(f"{case.describe()}: {'; '.join(diff[:2])}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases differ on {board}:\n" + "\n".join(failures)


OUT_STAGE_CHECK = r"""
#include <stdio.h>
#include "kernels/out_s8.h"
static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }
int main(void) {
    static const int32_t edges[] = { INT32_MIN, INT32_MIN + 1, -65536, -65535, -32769, -1, 0, 1, 65535,
        INT32_MAX };
    long bad = 0, mmr = 0;
    for (long it = 0; it < 4000000; ++it) {
        // TFLM's shifts run from 31 bits left to 31 right; a scale below
        // 2^-31 gets multiplier 0 (shift 0; any shift is tried here).
        int32_t shift = 3 - (int32_t)(rnd() % 35);
        int32_t mult = it % 16 == 0 ? 0x40000000 : it % 61 == 0 ? 0
            : (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
        int32_t zp = (int32_t)(rnd() % 256) - 128;
        int32_t acc = it % 4 == 0 ? (int32_t)rnd() : it % 4 == 1 ? (int32_t)(rnd() % 200001) - 100000
            : it % 4 == 2 ? edges[rnd() % 10] : (int32_t)(rnd() % 2001) - 1000;
        tflm_out_s8_t q;
        tflm_out_s8_setup(&q, mult, shift, zp);
        int32_t want = tflm_clamp(tflm_wrap_add(tflm_mul_by_quantized_mul(acc, mult, shift), zp), -128, 127);
        int32_t got = tflm_out_s8(acc, &q, zp, -128, 127);
        if (got != want && bad++ < 5) {
            printf("acc %d mult %d shift %d zp %d: %d, reference %d\n", acc, mult, shift, zp, got, want);
        }
        // The SMMLAR form where the kernels take it: a bias and the fast
        // constants that fit it (tflm_out_s8_mmr_fits), or widened, plus a
        // lane sum (|s| < 2^22). Biases up to 2^31 - 2^22 (the bound's
        // edges every 8th time), the sum fitting or not.
        int32_t sum = (int32_t)(rnd() & 0x3fffffu) * (rnd() % 2 ? 1 : -1);
        int32_t bias = it % 8 == 5 ? (rnd() % 2 ? (1 << 29) - 1 : -(1 << 29) + 1)
            : it % 8 == 6 ? (rnd() % 2 ? (1 << 29) : -(1 << 29))
            : (int32_t)(rnd() % (1u << 31)) - (1 << 30) - (int32_t)(rnd() % (1u << 29));
        int32_t acc2 = bias + sum;
        tflm_out_s8_t w = q;
        tflm_out_s8_widen(&w);
        for (int form = 0; form < 2; ++form) {
            tflm_out_s8_t b = form == 0 ? q : w;
            const tflm_out_s8_t *f = &b;
            b.bias = bias;
            if (f->shift == -1 || (form == 1 && q.shift < -1) || !tflm_out_s8_mmr_fits(&b)) {
                continue;
            }
            // As the assembly: kk from the doubled sum's sign, SMMLAR, the
            // shift by r, the wide form's zero point after it.
            const int32_t r = f->shift >= 0 ? f->shift + 1 : ~f->shift;
            const int32_t v2 = 2 * acc2;
            int32_t u = tflm_out_s8_smmlar(v2, f->mult, f->k + (v2 >> 31)) >> r;
            u = tflm_clamp(f->shift < 0 ? u + zp : u, -128, 127);
            int32_t want2 = tflm_clamp(tflm_wrap_add(tflm_mul_by_quantized_mul(acc2, mult, shift), zp), -128, 127);
            ++mmr;
            if (u != want2 && bad++ < 5) {
                printf("SMMLAR form %d: acc %d mult %d shift %d zp %d: %d, reference %d\n", form, acc2, mult, shift,
                    zp, u, want2);
            }
        }
    }
    if (mmr < 1000000) {
        printf("the SMMLAR form checked %ld times only\n", mmr);
        bad++;
    }
    printf("%ld differ\n", bad);
    return bad != 0;
}
"""


TAIL_CHECK = r"""
#include <stdio.h>
#include "engine/fixedpoint.h"
#include "kernels/pool_s8.h"
#include "kernels/softmax_s8.h"
static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }
static long bad;
static void check_exp(int32_t x) {
    int32_t want = tflm_fp_exp_on_negative_values(x, 5), got = tflm_sm_exp_q5(x);
    if (got != want && bad++ < 5) printf("exp(%d): %d, engine %d\n", x, got, want);
}
static void check_reciprocal(int32_t x) {
    int b1, b2;
    int32_t want = tflm_fp_get_reciprocal(x, 12, &b1), got = tflm_sm_reciprocal_q12(x, &b2);
    if ((got != want || b1 != b2) && bad++ < 10) printf("1/%d: %d %d, engine %d %d\n", x, got, b2, want, b1);
}
int main(void) {
    // The Q31 product (Armv6-M's in 16-bit parts) against 64-bit arithmetic.
    for (int i = 0; i < 4000000; ++i) {
        int32_t a = (int32_t)rnd(), b = i % 3 == 0 ? (int32_t)(rnd() >> (rnd() % 32)) : (int32_t)rnd();
        if (i % 5 == 0) {
            b = -b;
        }
        if (a == INT32_MIN && b == INT32_MIN) {
            continue;
        }
        int32_t want = tflm_srdhm(a, b), got = tflm_sm_mul(a, b);
        if (got != want && bad++ < 5) printf("mul(%d, %d): %d, want %d\n", a, b, got, want);
    }
    static const int32_t ends[] = { INT32_MIN, INT32_MIN + 1, -65536, -65535, -32768, -1, 0, 1, 32767, 65535, 65536,
        INT32_MAX };
    for (int i = 0; i < 12; ++i) {
        for (int j = 0; j < 12; ++j) {
            if (ends[i] != INT32_MIN || ends[j] != INT32_MIN) {
                int32_t want = tflm_srdhm(ends[i], ends[j]), got = tflm_sm_mul(ends[i], ends[j]);
                if (got != want && bad++ < 5) printf("mul(%d, %d): %d, want %d\n", ends[i], ends[j], got, want);
            }
        }
    }
    // exp over every 997th value of [INT32_MIN, 0], a million random ones and the most negative.
    for (int64_t a = 0; a >= INT32_MIN; a -= 997) {
        check_exp((int32_t)a);
    }
    for (int i = 0; i < 1000000; ++i) {
        check_exp(-(int32_t)(rnd() & 0x7fffffffu));
    }
    check_exp(INT32_MIN);
    // The reciprocal of every 4099th int32 and of a million sums of up to 4096 exps.
    for (int64_t v = INT32_MIN; v <= INT32_MAX; v += 4099) {
        check_reciprocal((int32_t)v);
    }
    for (int i = 0; i < 1000000; ++i) {
        check_reciprocal((int32_t)(rnd() % (4096u << 19)) + 1);
    }
    check_reciprocal(0);
    check_reciprocal(INT32_MAX);
    // The pool's average for every tap count and sum, the reference's division.
    for (int32_t taps = 1; taps <= TFLM_POOL_S8_TAPS; ++taps) {
        uint32_t recip = tflm_pool_s8_recip(taps);
        for (int32_t sum = -128 * taps; sum <= 127 * taps; ++sum) {
            int32_t half = taps / 2, want = sum > 0 ? (sum + half) / taps : (sum - half) / taps;
            int32_t got = tflm_pool_s8_average(sum, half, recip);
            if (got != want && bad++ < 15) printf("average %d / %d: %d, reference %d\n", sum, taps, got, want);
        }
    }
    // The pool's lanes over windows of up to 256 taps, extremes included.
    static int8_t buf[4 * 300 * 3];
    for (int it = 0; it < 20000; ++it) {
        int32_t rows = 1 + (int32_t)(rnd() % 16), cols = 1 + (int32_t)(rnd() % 16), gap = 4 * (int32_t)(rnd() % 3);
        int kind = (int)(rnd() % 4);
        for (size_t i = 0; i < sizeof(buf); ++i) {
            buf[i] = (int8_t)(kind == 0 ? -128 : kind == 1 ? 127 : (int)(rnd() & 0xff) - 128);
        }
        int32_t col_step = 4 + gap, row_step = 4 * (int32_t)(rnd() % 3);
        int32_t want[4] = { 0, 0, 0, 0 };
        const int8_t *p = buf;
        for (int32_t r = 0; r < rows; ++r, p += row_step) {
            for (int32_t k = 0; k < cols; ++k, p += col_step) {
                for (int c = 0; c < 4; ++c) {
                    want[c] += p[c];
                }
            }
        }
        uint32_t even, odd;
        tflm_pool_s8_sum4(buf, rows, cols, col_step, row_step, &even, &odd);
        int32_t sums[4] = { tflm_pool_s8_lane(even, rows * cols), tflm_pool_s8_lane(odd, rows * cols),
            tflm_pool_s8_lane(even >> 16, rows * cols), tflm_pool_s8_lane(odd >> 16, rows * cols) };
        for (int c = 0; c < 4; ++c) {
            if (sums[c] != want[c] && bad++ < 20) printf("lanes %dx%d: channel %d %d, want %d\n", rows, cols, c, sums[c], want[c]);
        }
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
        // Eight channels: the lanes of two words, each as four channels give them.
        uint32_t eight[4], even1, odd1;
        tflm_pool_s8_sum8(buf, rows, cols, col_step, row_step, eight);
        tflm_pool_s8_sum4(buf + 4, rows, cols, col_step, row_step, &even1, &odd1);
        if ((eight[0] != even || eight[1] != odd || eight[2] != even1 || eight[3] != odd1) && bad++ < 20) {
            printf("eight lanes %dx%d differ\n", rows, cols);
        }
#endif
    }
    printf("%ld differ\n", bad);
    return bad != 0;
}
"""


@pytest.mark.parametrize("arch", ["64-bit", "dsp", "v6m"])
def test_tail_arithmetic(arch, tmp_path):
    """softmax_s8.h's exp and reciprocal against engine/fixedpoint.c's, and
    pool_s8.h's lanes and average against plain sums and the division,
    with each core family's C (the DSP one through arch.h's C forms)."""
    src = tmp_path / "check.c"
    src.write_text(TAIL_CHECK)
    exe = tmp_path / "check"
    flags = {"64-bit": [], "dsp": ["-DTFLM_KERNEL_ARCH=3"], "v6m": ["-DTFLM_KERNEL_ARCH=1"]}[arch]
    mod = ROOT / "micropython_mod"
    engine = [str(mod / "engine" / f) for f in ("fixedpoint.c", "quant.c")] + sorted(map(str, mod.glob("engine/fmath*.c")))
    subprocess.run(["gcc", "-std=gnu99", "-O2", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *flags,
                    f"-I{mod}", str(src), *engine, "-lm", "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize("arch", ["64-bit", "v6m"])
def test_output_stage(arch, tmp_path):
    src = tmp_path / "check.c"
    src.write_text(OUT_STAGE_CHECK)
    exe = tmp_path / "check"
    flags = ["-DTFLM_KERNEL_ARCH=1"] if arch == "v6m" else []
    subprocess.run(["gcc", "-std=gnu99", "-O2", "-fsanitize=undefined", "-fno-sanitize-recover=all", *flags,
                    f"-I{ROOT / 'micropython_mod'}", str(src), "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stdout + proc.stderr
