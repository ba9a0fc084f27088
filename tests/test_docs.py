"""The lists, figures and commands of README.md and docs/ are the tools':
the planners and targets they name are the CLI's and the engine's, the
arena table and the claims about heads and tails are what the engine and
TFLM compute, and every `$ command` block marked as checked prints what the
block shows (the board steps on an emulated MPS2_AN385)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import MODELS, ROOT, model_path, run_on
from tflm_host import arena, cli
from tflm_host.model import load_model

README = ROOT / "README.md"
COMMANDS_MARKER = "<!-- commands: checked by tests/test_docs.py -->"
PORT = "/dev/ttyACM0"


def readme() -> str:
    return README.read_text()


def subcommands(parser=None) -> dict:
    parser = parser or cli.build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def option_choices(command: str, option: str) -> list[str]:
    sub = subcommands()[command]
    return list(next(a for a in sub._actions if option in a.option_strings).choices)


# -- lists -----------------------------------------------------------------------

def test_readme_planners_are_the_engines():
    """The planners the README names, in the Interpreter's `planner`
    argument, the CLI's options and the glossary, are the engine's (the
    CLI's choices, and the names the binding's error lists: the README's
    REPL block, checked on the unix port, shows that message)."""
    text = readme()
    engine = set(arena.PLANNERS) | {"offline"}
    assert set(option_choices("arena", "--planner")) == engine
    bullet = re.search(r"^- `planner`: (.*?)\n- `plan`", text, re.S | re.M).group(1)
    assert set(re.findall(r'`"(\w+)"`', bullet)) - {"offline"} <= engine
    assert set(re.findall(r'`"(\w+)"` \(', bullet)) | {"offline"} == engine
    message = re.search(r"unknown planner 'foo' \(planners: (.*)\)", text).group(1)
    assert set(re.findall(r"'(\w+)'", message)) == engine
    listed = re.search(r"`tflm-host arena MODEL \[--planner ([\w|]+)\]", text).group(1)
    assert set(listed.split("|")) == engine
    shown = re.search(r"`--planner ([\w|]+)`\s+shows the device's own plan", text).group(1)
    assert set(shown.split("|")) == set(arena.PLANNERS)
    glossary = (ROOT / "docs" / "glossary.md").read_text()
    para = re.search(r"\*\*planner\*\*: (.*?)\n\n", glossary, re.S).group(1)
    assert set(re.findall(r"`(\w+)`(?: \(the default\))?:", para)) == engine


def test_readme_target_list_is_the_clis():
    text = readme()
    listed = re.search(r"`tflm-host run MODEL --target ([\w|]+)", text).group(1).split("|")
    assert listed == option_choices("run", "--target")
    assert option_choices("compare", "--target") == option_choices("run", "--target")


def test_readme_examples_are_the_demos():
    """The examples table, the demo's --example list and the examples/
    folder name the same scripts, each with the model the demo loads."""
    from tflm_host.demo import EXAMPLES, EXTRA_MODELS

    text = readme()
    rows = re.findall(r"^\| `(\w+)\.py` \| ([^|]*) \|", text, re.M)
    assert {name: tuple(re.findall(r"`([\w.]+\.tflite)`", cell)) for name, cell in rows} == \
        {name: (model, *EXTRA_MODELS.get(name, ())) for name, model in EXAMPLES.items()}
    listed = re.search(r"`tflm-host demo \[--board BOARD\] \[--example ([\w|]+)\]", text).group(1)
    assert listed.split("|") == option_choices("demo", "--example") == list(EXAMPLES)
    assert {p.stem for p in (ROOT / "examples").glob("*.py")} == set(EXAMPLES)


def test_host_tools_readme_lists_every_subcommand():
    """The package page (PyPI's) names every subcommand the CLI has."""
    text = (ROOT / "host_tools" / "README.md").read_text()
    named = set(re.findall(r"^- `tflm-host (\w+)", text, re.M))
    assert named == set(subcommands()), sorted(set(subcommands()) ^ named)


def test_readme_names_only_methods_the_module_has():
    """`interp.NAME` and `model.NAME` in the README exist on the unix
    port's objects (OpenMV's `ml` column of the comparison table aside)."""
    text = readme()
    text = re.sub(r"`ml`'s `model\.predict\(\[x\]\)`", "", text)
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and line.count(" | ") >= 4]
    for cells in rows:
        if len(cells) == 5:
            text = text.replace(cells[3], "")
    names = {kind: set(re.findall(rf"\b{kind}\.([a-z_]\w*)", text)) - {"tflite", "labels"}
             for kind in ("interp", "model")}
    code = ("import tflm\nm = tflm.load(ROOT + '/hello_world_int8.tflite', quiet=True)\nit = tflm.Interpreter(m)\n"
            f"print([n for n in {sorted(names['model'])!r} if not hasattr(m, n)],"
            f" [n for n in {sorted(names['interp'])!r} if not hasattr(it, n)])\n")
    out = run_on("unix", code, {"hello_world_int8.tflite": model_path("hello_world_int8.tflite").read_bytes()})
    assert out.strip() == "[] []", out


def test_readme_arena_size_rounding_is_the_modules():
    m = re.search(r"`(tflm\.Interpreter\(model, (\d+)\)\.arena\.size)` is (\d+)", readme())
    assert m, "the README's example of an arena size given in bytes"
    code = (f"import tflm\nmodel = tflm.load(ROOT + '/hello_world_int8.tflite', quiet=True)\n"
            f"print({m.group(1)}, tflm.Interpreter(model, 1008).arena.size)\n")
    out = run_on("unix", code, {"hello_world_int8.tflite": model_path("hello_world_int8.tflite").read_bytes()})
    assert out.split() == [m.group(3), "1008"]
    assert int(m.group(3)) == int(m.group(2)) // 16 * 16 != int(m.group(2))


# -- figures -----------------------------------------------------------------------

def test_readme_arena_table_is_the_engines():
    """Every cell of the README's arena table: TFLM's arena from its own
    recording allocator, ours from the engine (the same bytes on every
    target), prepared, prepared with an offline plan, with a patch stage,
    with a stage in bands of rows."""
    from tflm_dev import bench
    from tflm_host.planning import plan_model
    from tflm_host.prepare import prepare_model

    text = readme()
    table = text.split(bench.README_START, 1)[1].split(bench.README_END, 1)[0]
    rows = [line.strip("| ").split(" | ") for line in table.strip().splitlines()[2:]]
    assert [r[0] for r in rows] == list(bench.README_MODELS)

    def used(data: bytes) -> int:
        return arena.plan_layout(load_model(data)).used

    for name, tflm_used, ours, prepared, planned, patched, banded in rows:
        path = model_path(name + ".tflite")
        data = path.read_bytes()
        assert int(tflm_used.replace(",", "")) == bench.tflm_arena(path).used, name
        assert int(ours.replace(",", "")) == used(data), name
        assert int(prepared.replace(",", "")) == used(prepare_model(data)), name
        plan = plan_model(data, time_limit=5.0, backward=True)
        assert int(planned.replace(",", "")) == used(prepare_model(plan.embedded())), name
        with_patches = prepare_model(data, max_extra_macs=bench.PATCH_BOUND)
        split, _, _, extra, _, _ = bench._patch_of(with_patches)
        expected = f"{used(with_patches):,} (+{extra:.0%} MACs)" if split else "-"
        assert patched == expected, name
        in_bands = prepare_model(data, max_extra_macs=0.0)
        assert banded == (f"{used(in_bands):,}" if bench._patch_of(in_bands)[0] else "-"), name


def test_readme_head_and_tail_claims_are_the_engines():
    """The heads quoted against TFLM's, TFLM's head byte for byte with
    `planner='tflm'`, and the range of our tail against TFLM's."""
    from tflm_dev import bench

    text = " ".join(readme().split())
    m = re.search(r"\(person_detect's head: ([\d,]+) bytes against TFLM's ([\d,]+); vww_96_int8's: ([\d,]+) "
                  r"against ([\d,]+)\)", text)
    assert m, "the README's head figures"
    figures = [int(g.replace(",", "")) for g in m.groups()]
    for name, ours, theirs in (("person_detect", *figures[:2]), ("vww_96_int8", *figures[2:])):
        model = load_model(model_path(name + ".tflite"))
        assert arena.plan_layout(model, "greedy").head == ours
        assert arena.plan_layout(model, "tflm").head == theirs == bench.tflm_arena(model_path(name + ".tflite")).head
    lo, hi = map(int, re.search(r"The tail \(the interpreter's records\) is (\d+)-(\d+)% of TFLM's", text).groups())
    shares = []
    for path in sorted(MODELS.glob("*.tflite")):
        t = bench.tflm_arena(path)
        model = load_model(path)
        if t is None or arena.missing_ops(model):
            continue
        layout = arena.plan_layout(model)
        shares.append(round(100 * layout.tail / t.tail))
        if not any(op.opcode == "SVDF" for op in model.main.operators):
            assert arena.plan_layout(model, "tflm").head == t.head, path.name
    assert (min(shares), max(shares)) == (lo, hi)


def test_plans_md_columns_name_the_planner_they_hold():
    """docs/plans.md's head column and pre-allocation column say which of
    our planners made them, and hold that planner's figures."""
    text = (ROOT / "docs" / "plans.md").read_text()
    header = text.splitlines()[2].strip("| ").split(" | ")
    col = next(i for i, h in enumerate(header) if h.startswith("head: "))
    planner = re.fullmatch(r"head: `(\w+)` planner", header[col]).group(1)
    assert planner in arena.PLANNERS
    for line in text.splitlines()[4:]:
        if not line.startswith("| ") or "---" in line:
            break
        cells = line.strip("| ").split(" | ")
        assert int(cells[col]) == arena.plan_layout(load_model(model_path(cells[0])), planner).head, cells[0]
    pre = text.split("## Pre-allocated tensors", 1)[1]
    assert "| arena: `tflm` planner |" in pre and "greedy" not in pre.split("|---")[0]


def test_planning_md_summary_is_the_planners():
    """docs/planning.md's summary: the plans without aliases or overlaps
    reach the bound on every shared model, proven optimal; its figures are
    the planner's."""
    from tflm_host.planning import plan_model

    text = " ".join((ROOT / "docs" / "planning.md").read_text().split("## The problem")[0].split())
    m = re.search(r"cut vww_96_int8's head from ([\d,]+) to ([\d,]+) bytes without them and to ([\d,]+) with "
                  r"them", text)
    assert m, "planning.md's vww_96_int8 figures"
    tflm_head, plain_head, best_head = (int(g.replace(",", "")) for g in m.groups())
    data = model_path("vww_96_int8.tflite").read_bytes()
    plain = plan_model(data, alias=False, reorder=False)
    assert (plain.head, plain.proven) == (plain_head, True)
    assert plan_model(data).head == best_head
    assert arena.plan_layout(load_model(data), "tflm").head == tflm_head
    for path in sorted(MODELS.glob("*.tflite")):
        if arena.missing_ops(load_model(path)):
            continue
        plain = plan_model(path.read_bytes(), alias=False, reorder=False)
        assert (plain.head, plain.proven) == (plain.bound, True), path.name


def test_glossary_defines_the_words_the_docs_use():
    glossary = (ROOT / "docs" / "glossary.md").read_text()
    defined = re.findall(r"^\*\*([\w ]+)\*\*", glossary, re.M)
    for word in ("head", "tail", "scope", "bound", "halo", "MACs", "shared model", "prepared model",
                 "patch stage", "seal", "planner", "arena"):
        assert defined.count(word) == 1, word
    assert "docs/glossary.md" in readme()


# -- commands ------------------------------------------------------------------------

def command_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each checked ```console block as (command, expected output lines)."""
    blocks = []
    for body in re.findall(re.escape(COMMANDS_MARKER) + r"\n *```console\n(.*?)\n *```", text, re.S):
        lines = [line.strip() if line.lstrip().startswith("$ ") else line for line in body.splitlines()]
        indent = min(len(line) - len(line.lstrip()) for line in body.splitlines())
        steps: list[tuple[str, list[str]]] = []
        for raw, line in zip(body.splitlines(), lines):
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(raw[indent:])
        blocks.append(steps)
    return blocks


def matches(expected: list[str], got: list[str]) -> bool:
    """`...` in the expected lines stands for any lines."""
    if not expected:
        return not got
    if expected[0] == "...":
        return any(matches(expected[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and matches(expected[1:], got[1:])


def run_command(command: str, cwd: Path, port: str) -> list[str]:
    head = None
    if " | head -" in command:
        command, count = command.rsplit(" | head -", 1)
        head = int(count)
    argv = shlex.split(command.replace(PORT, port))
    tool = {"tflm-host": [sys.executable, "-m", "tflm_host"], "mpremote": [sys.executable, "-m", "mpremote"]}
    proc = subprocess.run(tool[argv[0]] + argv[1:], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{command}: {proc.stdout}{proc.stderr}"
    lines = proc.stdout.rstrip("\n").splitlines()
    return lines[:head] if head else lines


def test_readme_commands_print_what_the_readme_shows(tmp_path):
    from tflm_host.device import QemuServer

    blocks = command_blocks(readme())
    assert len(blocks) >= 6
    for name in ("hello_world_int8.tflite", "person_detect.tflite"):
        shutil.copy(model_path(name), tmp_path / name)
    with QemuServer("MPS2_AN385") as board:
        for steps in blocks:
            for command, expected in steps:
                got = run_command(command, tmp_path, board.url)
                assert matches(expected, got), f"$ {command}\n" + "\n".join(got)
                if "--json" in command:
                    json.loads("\n".join(got))


def test_readme_converter_settings_are_the_converter_checks():
    """The README's converter settings are those `make converter-check`
    converts the int8 models with (tests/converter/architectures.py), and
    its float16 setting the one of the models with float16 weights."""
    text = readme()
    block = re.search(r"<!-- converter-settings: checked by tests/test_docs.py -->\n *```python\n(.*?)\n *```",
                      text, re.S).group(1)
    ours = dict(re.findall(r"converter\.([\w.]+) = (.*)", block))
    source = (ROOT / "tests" / "converter" / "architectures.py").read_text()

    def branch(condition: str) -> dict[str, str]:
        body = re.search(rf"\n( +)(?:el)?if {condition}:\n(.*?)\n\1\S", source, re.S).group(2)
        return dict(re.findall(r"conv\.([\w.]+) = (.*)", body))

    theirs = branch("quant")
    assert set(ours) == set(theirs) == {"optimizations", "representative_dataset", "target_spec.supported_ops",
                                        "inference_input_type", "inference_output_type"}
    for key in ours:
        if key != "representative_dataset":
            assert ours[key] == theirs[key], key
    float16 = branch('quant == "float16"')
    assert float16 == {"optimizations": ours["optimizations"], "target_spec.supported_types": "[tf.float16]"}
    assert "`converter.target_spec.supported_types = [tf.float16]`" in " ".join(text.split())


def test_boards_md_repl_figures_are_the_engines():
    """docs/boards.md's REPL session on a board: hello_world_int8's arena as
    the engine gives it (the same on every board and on the host)."""
    text = (ROOT / "docs" / "boards.md").read_text()
    layout = arena.plan_layout(load_model(model_path("hello_world_int8.tflite")))
    size = re.search(r">>> tflm\.arena_size\(m\)\n(\d+)\n", text)
    used = re.search(r">>> i\.arena_used_bytes\(\), i\.head_bytes\(\), i\.tail_bytes\(\)\n\((\d+), (\d+), (\d+)\)", text)
    printed = re.search(r"`(\d+) bytes \(head (\d+) \+ tail (\d+)\)` before anything is flashed", text)
    assert size and used and printed, "docs/boards.md's REPL session moved"
    assert int(size.group(1)) == layout.needed
    assert tuple(map(int, used.groups())) == tuple(map(int, printed.groups())) == (layout.used, layout.head,
                                                                                    layout.tail)
