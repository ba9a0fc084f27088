"""The cycle estimator (host_tools/cycles): hand-counted microbenchmarks
(tests/cycles/*.S) give exactly the cycles of the cores' Technical Reference
Manuals, and the RP2040 emulator (rp2040js, an independent timing model of
the Cortex-M0+) agrees with the estimator's Cortex-M0+ figures, on the same
microbenchmarks and on the engine running shared models (the same object
code, tests/cycles/engine_main.c, linked for each machine)."""
from __future__ import annotations

import subprocess

import pytest

from tflm_dev import cycles

# Cycles of each case, counted by hand from the TRMs' instruction tables:
# Cortex-M0 DDI 0432C and Cortex-M0+ DDI 0484C table 3-1; Cortex-M3
# 100165_0201 and Cortex-M4 DDI 0439D table 3-1 and section 3.3.2 (load/store
# timings), Cortex-M4 tables 3-2 (DSP) and 7-1 (FPU). N counts LR and PC.
# (instructions, M0, M0+)
V6M = {
    "alu": (8, 8, 8),
    "mul": (4, 4, 4),            # MULS: 1 (single-cycle multiplier)
    "ldr": (4, 8, 8),            # LDR, LDRB, LDRH: 2
    "str": (4, 8, 8),            # STR, STRB, STRH: 2
    "literal": (2, 4, 4),        # LDR Rd, <label>: 2
    "ldm": (1, 5, 5),            # LDM of 4: 1+N
    "stm": (1, 4, 4),            # STM of 3: 1+N
    "push_pop": (2, 10, 10),     # PUSH, POP of 4: 1+N each
    "push_lr": (3, 7, 7),        # PUSH {r4, lr}: 1+2, POP {r4}: 2, twice
    "b": (1, 3, 2),              # B: 3 / 2
    "bcc_taken": (2, 4, 3),      # CMP 1, B<cc> taken: 3 / 2
    "bcc_not": (2, 2, 2),        # B<cc> not taken: 1
    "loop": (21, 39, 30),        # MOVS, 10 SUBS, 9 taken + 1 not taken BNE
    "call": (2, 7, 5),           # BL 4 / 3, BX 3 / 2
    "call_pop": (3, 13, 11),     # BL, PUSH {r4, lr} 3, POP {r4, pc} 4+N / 3+N
    "bx": (3, 5, 4),             # ADR, ADDS, BX 3 / 2
    "mov_pc": (2, 4, 3),         # ADR, MOV PC 3 / 2
    "mrs": (1, 4, 3),
    "dmb": (1, 4, 3),
    "ext": (3, 3, 3),
}

# (instructions, M3 (nominal, least, most), M4 (nominal, least, most))
V7M = {
    "alu": (8, (8, 8, 8), (8, 8, 8)),
    "mul": (4, (4, 4, 4), (4, 4, 4)),
    "mla": (4, (8, 8, 8), (4, 4, 4)),            # MLA: 2 (M3), 1 (M4)
    "smull": (4, (20, 12, 20), (4, 4, 4)),       # SMULL: 3 to 5 (M3), 1 (M4)
    "smlal": (4, (28, 16, 28), (4, 4, 4)),       # SMLAL: 4 to 7 (M3), 1 (M4)
    "sdiv": (2, (24, 4, 24), (24, 4, 24)),       # SDIV, UDIV: 2 to 12
    "ldr_single": (1, (2, 2, 2), (2, 2, 2)),
    "ldr_pair": (2, (3, 3, 4), (3, 3, 4)),       # "LDR R0,[R1]; LDR R1,[R2] - normally three cycles"
    "ldr_str": (2, (3, 3, 4), (3, 3, 4)),        # "LDR R0,[R1,R2]; STR R0,[R3,#20] - normally three"
    "ldr_str_reg": (2, (3, 3, 4), (3, 3, 4)),    # "LDR R0,[R1,R2]; STR R1,[R3,R2] - normally three"
    "ldr_three": (3, (4, 4, 6), (4, 4, 6)),      # "...; LDR R1,[R2]; LDR R2,[R3,#4] - normally four"
    "ldr_pair_page": (2, (3, 3, 4), (3, 3, 4)),  # the same, the second across a 1 KB page of QEMU's
    "ldr_dep": (2, (4, 4, 4), (4, 4, 4)),        # the second address is the first load's result
    "str_imm": (4, (4, 4, 8), (4, 4, 8)),        # "STR Rx,[Ry,#imm] is always one cycle"
    "str_ldr": (2, (3, 3, 4), (3, 3, 4)),        # nothing pipelines after a store
    "interlock": (2, (4, 4, 4), (4, 4, 4)),      # address from the previous ALU result: +1
    "ldm3": (1, (4, 4, 4), (4, 4, 4)),           # "a three element LDM takes 2+1+1"
    "stm8": (1, (9, 9, 9), (9, 9, 9)),           # "an eight element store takes nine cycles"
    "ldrd": (1, (3, 3, 3), (3, 3, 3)),
    "push_pop": (2, (12, 12, 12), (12, 12, 12)),  # PUSH {r4-r7, lr}, POP {r4-r8}: 1+5 each
    "b": (1, (2, 2, 4), (2, 2, 4)),              # B: 1+P, P 1 (16-bit target) in 1 to 3
    "b_wide": (1, (3, 2, 4), (3, 2, 4)),         # P 2: a 32-bit target across a word boundary
    "bcc_taken": (2, (3, 3, 5), (3, 3, 5)),
    "bcc_not": (2, (2, 2, 2), (2, 2, 2)),
    "loop": (21, (30, 30, 48), (30, 30, 48)),
    "cbz": (1, (2, 2, 4), (2, 2, 4)),
    "call": (2, (4, 4, 8), (4, 4, 8)),           # BL 1+P, BX 1+P
    "call_pop": (3, (11, 9, 13), (11, 9, 13)),   # BL 2, PUSH 1+2, POP {r4, pc} 1+2+P (P 3: PC from memory)
    "ldr_pc": (1, (5, 3, 5), (5, 3, 5)),         # "LDR PC,[any] ... at least five cycles"
    "it_fold": (3, (2, 2, 3), (2, 2, 3)),        # IT folded onto the 16-bit CMP: 0
    "it_nofold": (3, (3, 2, 3), (3, 2, 3)),      # behind a 32-bit CMP.W: 1
    "it_load": (4, (4, 4, 5), (4, 4, 5)),        # CMP, ITE (folded), LDREQ runs 2, LDRNE skipped 1
    "unaligned_word1": (1, (4, 4, 4), (4, 4, 4)),  # byte-aligned word: +2
    "unaligned_word2": (1, (3, 3, 3), (3, 3, 3)),  # halfword-aligned word: +1
    "unaligned_half": (1, (3, 3, 3), (3, 3, 3)),   # byte-aligned halfword: +1
}

# Cortex-M4 only (DSP and FPU tables).
M4_ONLY = {
    "smlad": (4, (4, 4, 4)),
    "simd": (4, (4, 4, 4)),         # SXTB16, SXTB16, SADD16, SMLABB: 1 each
    "vadd": (4, (4, 4, 4)),
    "vadd_chain": (4, (7, 7, 7)),   # a result read by the next instruction: +1, three times
    "vmla": (2, (6, 6, 6)),         # VMLA.F32: 3
    "vdiv": (1, (14, 14, 14)),
    "vldr": (1, (2, 2, 2)),
    "vmov": (2, (3, 3, 3)),         # VMOV core from S: 1; two core registers to two S: 2
}


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cycles-bench")


@pytest.mark.parametrize("core", ["m0", "m0plus"])
def test_armv6m_microbenchmarks(core, bench_dir):
    got = cycles.run_microbench(core, bench_dir)
    assert set(got) == set(V6M)
    column = 1 if core == "m0" else 2
    for name, row in V6M.items():
        c = got[name]
        assert c.insns == row[0], f"{name}: {c.insns} instructions"
        assert (c.cycles, c.min, c.max) == (row[column],) * 3, f"{core} {name}: {c.cycles} [{c.min}, {c.max}]"


@pytest.mark.parametrize("core", ["m3", "m4"])
def test_armv7m_microbenchmarks(core, bench_dir):
    got = cycles.run_microbench(core, bench_dir)
    expected = {name: (row[0], row[1] if core == "m3" else row[2]) for name, row in V7M.items()}
    if core == "m4":
        expected.update(M4_ONLY)
    assert set(got) == set(expected)
    for name, (insns, (nom, lo, hi)) in expected.items():
        c = got[name]
        assert c.insns == insns, f"{name}: {c.insns} instructions"
        assert (c.cycles, c.min, c.max) == (nom, lo, hi), f"{core} {name}: {c.cycles} [{c.min}, {c.max}]"


def test_rp2040_emulator_on_the_microbenchmarks(bench_dir):
    """rp2040js runs the same ARMv6-M cases: the same instructions, and the
    Cortex-M0+ table's cycles except where its N leaves LR and PC out of
    PUSH and POP (one cycle less for each such instruction)."""
    got = cycles.run_microbench("rp2040", bench_dir)
    assert set(got) == set(V6M)
    fewer = {"push_lr": 1, "call_pop": 2}  # PUSH {r4, lr}; PUSH {r4, lr} and POP {r4, pc}
    for name, (insns, _, m0plus) in V6M.items():
        assert got[name].insns == insns, name
        assert got[name].cycles == m0plus - fewer.get(name, 0), f"{name}: {got[name].cycles}"


@pytest.mark.parametrize("core", ["m0plus", "m3", "m4"])
def test_profile_spans_add_up_to_their_marks(core, tmp_path):
    """profile=1: the blocks' lines after each mark add up to that mark's
    nominal cycles less the one before, with a mark at every
    microbenchmark's start and end (mid-block marks among them), and the
    marks are those of profile=0."""
    elf = cycles.build_microbench(core, tmp_path)
    at = sorted(set((cycles.symbols(elf, "c_") | cycles.symbols(elf, "e_")).values()))
    marks, spans = cycles.profile_qemu_elf(elf, core, at, timeout=120)
    plain, _ = cycles.run_qemu_elf(elf, core, at, timeout=120)
    assert [(m.pc, m.cycles, m.insns) for m in marks] == [(m.pc, m.cycles, m.insns) for m in plain]
    assert len(spans) == len(marks) > 2 * len(cycles.symbols(elf, "c_")) - 1
    for k in range(1, len(marks)):
        assert sum(spans[k].values()) == marks[k].cycles - marks[k - 1].cycles, k


def test_plugin_rejects_bad_arguments(tmp_path):
    elf = cycles.build_microbench("m3", tmp_path)
    for bad in ["core=m7", "mark=0x10", "core=m3,profile=2"]:
        option = f"{cycles.plugin_path()},{bad},out={tmp_path / 'x'}"
        proc = subprocess.run(["qemu-system-arm", "-machine", "mps2-an385", "-nographic", "-monitor", "none",
                               "-serial", "null", "-semihosting", "-kernel", str(elf), "-plugin", option],
                              capture_output=True, text=True, timeout=60)
        if bad.startswith("core=m3"):
            assert proc.returncode != 0 and "profile=0|1" in proc.stderr
        elif bad.startswith("core"):
            assert proc.returncode != 0 and "m0, m0plus, m3 or m4" in proc.stderr
        else:
            assert proc.returncode != 0 and "core=m0|m0plus|m3|m4 is needed" in proc.stderr


# Small shared models, the kernels they need (the whole set runs in
# `tflm-host bench speed --cycles`, docs/speed.md).
CHECK_MODELS = ("hello_world_int8.tflite", "network_tester_model.tflite", "keyword_scrambled.tflite")
CHECK_OPS = ("FULLY_CONNECTED", "QUANTIZE", "SOFTMAX", "SVDF", "DEPTHWISE_CONV_2D")


@pytest.mark.parametrize("name", CHECK_MODELS)
def test_estimator_against_the_rp2040_emulator(name, tmp_path_factory):
    """The same object code (the engine, bare metal) on the estimator's
    Cortex-M0+ and in rp2040js: the same instructions and outputs, cycles
    within 3%, and the whole difference is the emulator's PUSH/POP rule."""
    from conftest import model_path
    from tflm_host.device import build_dir

    check = cycles.engine_check(model_path(name), build_dir() / "cycles" / "engine-test", ops=CHECK_OPS)
    assert check.estimator.insns == check.emulator.insns > 1000
    assert check.output_qemu == check.output_pico and check.output_qemu.startswith("output ")
    assert abs(check.difference) <= 0.03
    assert check.estimator.cycles - check.emulator.cycles == check.explained > 0


def test_bench_speed_cycles_json(tmp_path):
    """`tflm-host bench speed --cycles --json`: one object per model and
    board; the estimator's instructions are the device's own count
    (qemuboard.icount(), to its SysTick's resolution: 62.5 instructions at
    16 MHz), its cycles at least that many. hello_world_float is no chain of
    int8 layers: no CMSIS-NN figures."""
    import json
    import os
    import sys

    from conftest import MODELS, ROOT

    proc = subprocess.run([sys.executable, "-m", "tflm_host", "bench", "speed", "--cycles", "--json", "--only",
                           "hello_world_float", "--boards", "MICROBIT", "--runs", "2", "--models", str(MODELS)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "host_tools")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout)
    assert [(r["model"], r["board"]) for r in rows] == [("hello_world_float.tflite", "MICROBIT")]
    r = rows[0]
    from tflm_dev import bench
    # The bench's own file name: the same heap layout, so the same arena
    # address (memcpy's path, and so the count, follows its alignment).
    name = "hello_world_float.tflite"
    files = {name: (MODELS / name).read_bytes()}
    device = bench.measure_ours("MICROBIT", files, {name: 2})[name][0]
    # Each run's figure is four readings of the device's counter, each to
    # a tick: within two ticks of the estimator's exact count.
    assert abs(r["instructions"] - device) <= 125
    assert r["cycles_min"] == r["cycles"] == r["cycles_max"] > r["instructions"]  # no ranges on the M0+
    assert r["core"] == "Cortex-M0+" and r["clock_hz"] == 125_000_000
    assert r["ms"] == pytest.approx(r["cycles"] / 125_000)
    assert r["cmsis_nn_instructions"] is None and r["cmsis_nn_cycles"] is None


@pytest.mark.parametrize("board", ["MICROBIT", "MPS2_AN385"])
def test_bench_profile_adds_up(board):
    """`tflm-host bench profile`: the functions' cycles add up to the
    estimator's between the two readings around invoke(), which less the
    counter's call are bench speed --cycles' figure for the same run;
    test_conv_model's go mostly to the convolution kernels."""
    from conftest import MODELS
    from tflm_dev import bench

    name = "test_conv_model.tflite"
    p, = bench.profile_ours(board, [MODELS / name])
    assert sum(p.functions.values()) == p.span.cycles
    assert 0 < p.span.cycles - p.total.cycles < 2000  # the counter's call
    timed = bench.measure_ours_cycles(board, {name: (MODELS / name).read_bytes()}, {name: 1})[name][0]
    assert timed.cycles == p.total.cycles
    kernels = sum(v for f, v in p.functions.items() if f.startswith(("conv_s8", "tflm_conv_2d", "dw_s8")))
    assert kernels > 0.8 * p.span.cycles
    # Code outside every function symbol (assembly without a size: libgcc's helpers' tails).
    assert p.functions.get("?", 0) < 1e-4 * p.span.cycles


def test_bench_profile_patches_section(tmp_path):
    """`tflm-host bench profile --patches --out FILE`: per model with a
    stage, its functions with and without it, their differences summing to
    the invoke's; the section written between its markers, the rest of the
    file kept."""
    import os
    import sys

    from conftest import MODELS, ROOT
    from tflm_dev import bench

    doc = tmp_path / "speed.md"
    doc.write_text("# Speed\n\nkept\n")
    proc = subprocess.run([sys.executable, "-m", "tflm_host", "bench", "profile", "--patches", "--only",
                           "test_conv_model", "--boards", "MPS2_AN385", "--models", str(MODELS), "--out", str(doc),
                           "-q"], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "host_tools")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = doc.read_text()
    assert text.startswith("# Speed\n\nkept\n") and text.count(bench.PROFILE_START) == 1
    section = text.split(bench.PROFILE_START)[1].split(bench.PROFILE_END)[0]
    assert "### test_conv_model.tflite: ops 1-3" in section and "MPS2_AN385 (Cortex-M3)" in section
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    diffs = [int(r[3].split()[0].rstrip(" |").replace(",", "")) for r in rows[:-1]]
    without, with_stage = (int(rows[-1][k].replace(",", "")) for k in (1, 2))
    # The functions' differences add up to the invoke()s' (the counter's
    # call, in the functions' spans, is the same in both).
    assert abs(sum(diffs) - (with_stage - without)) <= 16
    assert with_stage > without  # a stage's kernels run once per patch


@pytest.mark.parametrize("board", ["MICROBIT", "NETDUINOPLUS2"])
def test_low_counter_allocates_nothing(board):
    """qemuboard.icount_low(), which bench speed times invoke() with: the
    count's low 30 bits, a small int, so a reading allocates nothing (with
    the heap locked it still reads, where icount() fails: its long int);
    two readings in a row are the same count apart, to a SysTick tick,
    on a calm heap and on a fragmented one; its spans are icount()'s."""
    from conftest import check_low_counter
    from tflm_host.device import QemuTarget

    assert "qemuboard.icount_low" in QemuTarget.counters["instructions"]
    hz = {"MICROBIT": 16_000_000, "NETDUINOPLUS2": 168_000_000}[board]
    got = check_low_counter(board, ["import qemuboard\nprint('@HZ', qemuboard.cpu_hz)"], "qemuboard.icount_low",
                            "qemuboard.icount", -(-1_000_000_000 // hz) + 1)
    assert got["HZ"] == [hz]


PAIRS_CODE = """
import qemuboard
def pairs(f, n):
    i = 0
    while i < n:
        c = f()
        d = f()
        i += 1
pairs(qemuboard.icount_low, 8)
pairs(qemuboard.icount, 8)
_keep = [bytearray(k % 7 * 8 + 1) for k in range(300)]
for k in range(0, 300, 2):
    _keep[k] = None
pairs(qemuboard.icount_low, 8)
pairs(qemuboard.icount, 8)
"""


@pytest.mark.parametrize("board", ["MICROBIT", "NETDUINOPLUS2"])
def test_low_counter_pairs_under_the_estimator(board, tmp_path):
    """The estimator's marks at the readers' entries count the instructions
    from one reading to the next exactly: two icount_low() readings in a
    row are the same count apart every time, on a calm heap and on a
    fragmented one, so the pair that bench speed reads next to each invoke
    costs what the pair around it does. icount() allocates its long int,
    at a cost that follows the heap (not the same from pair to pair)."""
    from tflm_dev.bench import make_target
    from tflm_host.device import elf_symbol

    tgt = make_target(board)
    fw = tgt.board.firmware
    low, full = elf_symbol(fw, "qemuboard_icount_low") & ~1, elf_symbol(fw, "qemuboard_icount") & ~1
    out = tmp_path / "marks.txt"
    tgt.run([PAIRS_CODE], {}, plugin=cycles.plugin_option(cycles.BOARD_CORES[board], [low, full], out))
    marks = cycles.parse_marks(out.read_text())
    assert [m.pc for m in marks] == ([low] * 16 + [full] * 16) * 2
    gaps = {pc: [] for pc in (low, full)}
    for c, d in zip(marks[::2], marks[1::2]):
        gaps[c.pc].append(d.insns - c.insns)
    assert len(set(gaps[low])) == 1 and 0 < gaps[low][0] < 1000, gaps[low]
    assert len(set(gaps[full])) > 1 and min(gaps[full]) > gaps[low][0], gaps[full]
