"""The host CLI on bad input files: one line on stderr naming the problem and
exit status 2, never a traceback, for every subcommand that reads a model
(or a plan file). Mutants of real models come from tests/model_mutants.py,
the engine fuzzer's mutations in Python; `make fuzz` runs many more
(tests/cli_fuzz.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import model_path
from cli_fuzz import MODEL_COMMANDS, MUTATED_MODELS, fuzz_model
from tflm_host import _engine, cli

GOOD = "hello_world_int8.tflite"
BAD_FILE_COMMANDS = MODEL_COMMANDS + [
    ["compare", "{}", "--target", "host"],
    ["ops", "GOOD", "{}"],
    ["arena", "GOOD", "--plan", "{}"],
    ["prepare", "{}", "-o", "/dev/null"],
]


def run_cli(capsys, argv: list[str]) -> tuple[int, str]:
    """main() in this process: an exception escaping it is the traceback a
    user would see (pytest shows it)."""
    code = cli.main(argv)
    return code, capsys.readouterr().err


def check_refused(capsys, argv: list[str]) -> str:
    code, err = run_cli(capsys, argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (argv, code, err)
    assert lines[0].startswith(f"tflm-host {argv[0]}: ") and "Traceback" not in err
    return lines[0]


def bad_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Bad inputs and a part of the message naming what is wrong."""
    data = model_path("person_detect.tflite").read_bytes()
    (tmp / "folder.tflite").mkdir()
    files = {
        "folder": ("folder.tflite", b"", "is a folder"),
        "empty": ("empty.tflite", b"", "is empty"),
        "three bytes": ("three.tflite", b"abc", "not a .tflite model"),
        "identifier only": ("ident.tflite", b"\x10\x00\x00\x00TFL3", "malformed model"),
        "garbage tables": ("garbage.tflite", b"\x10\x00\x00\x00TFL3" + bytes(range(7, 250)) * 3, "malformed model"),
        "truncated to 100 bytes": ("t100.tflite", data[:100], "outside the buffer (at byte"),
        "truncated to half": ("thalf.tflite", data[:len(data) // 2], "outside the buffer (at byte"),
        "truncated by one byte": ("tone.tflite", data[:-1], "malformed model"),
    }
    out = {}
    for what, (name, content, message) in files.items():
        path = tmp / name
        if not path.exists():
            path.write_bytes(content)
        out[what] = (path, message)
    out["missing"] = (tmp / "missing.tflite", "not found")
    return out


def argv_for(command: list[str], path: Path) -> list[str]:
    return [str(path) if a == "{}" else str(model_path(GOOD)) if a == "GOOD" else a for a in command]


@pytest.mark.parametrize("command", BAD_FILE_COMMANDS, ids=lambda c: " ".join(c))
def test_bad_files(capsys, tmp_path, command):
    for what, (path, message) in bad_files(tmp_path).items():
        line = check_refused(capsys, argv_for(command, path))
        if "--plan" not in command:
            assert message in line, (what, line)
        else:
            assert path.name in line, (what, line)


def test_unreadable_file(capsys, tmp_path, monkeypatch):
    """A file that cannot be read (as root, permissions cannot make one)."""
    path = tmp_path / "locked.tflite"
    path.write_bytes(model_path(GOOD).read_bytes())

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    for command in MODEL_COMMANDS:
        assert "cannot read" in check_refused(capsys, argv_for(command, path))


def test_plan_file_not_a_plan(capsys, tmp_path):
    text = tmp_path / "plan.txt"
    text.write_text("0, 16, x")
    line = check_refused(capsys, ["arena", str(model_path(GOOD)), "--plan", str(text)])
    assert "plan.txt: neither a plan file" in line
    short = tmp_path / "short.plan"
    short.write_bytes(b"TFPL" + bytes(8))
    assert "short.plan: " in check_refused(capsys, ["arena", str(model_path(GOOD)), "--plan", str(short)])


def test_output_into_a_folder(capsys, tmp_path):
    line = check_refused(capsys, ["plan", str(model_path(GOOD)), "--no-reorder", "-o", str(tmp_path)])
    assert line == f"tflm-host plan: {tmp_path} is a folder: name a file to write"


@pytest.mark.parametrize("name", MUTATED_MODELS)
def test_mutated_models(tmp_path, name):
    """Mutants of real models through every model-reading subcommand: each
    runs (status 0, or 1 for ops: a missing kernel) or is refused in one
    line with status 2 (tests/cli_fuzz.py; `make fuzz` runs more)."""
    outcomes = fuzz_model(model_path(name), 12, tmp_path)
    # The mutants reach past the reader's first check: some still load.
    assert outcomes[2] and outcomes[0], outcomes


@pytest.mark.parametrize("table", ["NOT_AN_OP -\n", "ADD bogus\n", "ADD\n", None, "folder"])
def test_codegen_bad_kernel_table(capsys, tmp_path, monkeypatch, table):
    """codegen's input, kernels/kernel_table.txt, broken in a checkout."""
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "port_boards").mkdir()
    (tmp_path / "micropython_mod" / "engine").mkdir(parents=True)
    (tmp_path / "micropython_mod" / "kernels").mkdir()
    (tmp_path / "micropython_mod" / "engine" / "version.h").write_bytes(
        (root / "micropython_mod" / "engine" / "version.h").read_bytes())
    path = tmp_path / "micropython_mod" / "kernels" / "kernel_table.txt"
    if table == "folder":
        path.mkdir()
    elif table is not None:
        path.write_text((root / "micropython_mod" / "kernels" / "kernel_table.txt").read_text() + table)
    monkeypatch.setenv("TFLM_CHECKOUT", str(tmp_path))
    line = check_refused(capsys, ["codegen", "--check"])
    assert "kernel_table.txt" in line


@pytest.mark.parametrize("what", ["arena", "plans"])
def test_bench_folder_with_a_bad_model(capsys, tmp_path, what):
    """bench reads every model of a folder before running any: a bad one is
    named in one line."""
    src = tmp_path / "src"
    src.mkdir()
    for bad, (path, message) in bad_files(src).items():
        if bad == "missing":
            continue
        folder = tmp_path / bad.replace(" ", "_")
        folder.mkdir()
        target = folder / path.name
        if path.is_dir():
            target.mkdir()
        else:
            target.write_bytes(path.read_bytes())
        line = check_refused(capsys, ["bench", what, "--models", str(folder), "-q"])
        assert path.name in line and message in line, (bad, line)


GOOD_PATH = str(model_path(GOOD))


@pytest.mark.parametrize("argv,message", [
    (["ops", GOOD_PATH, "--built-with", "FOO_BAR conv_2d"], "--built-with: no kernel of tflm is named FOO_BAR, conv_2d"),
    (["ops", GOOD_PATH, "--natmod", "foo"], "--natmod 'foo': make natmod builds "),
    (["plan", GOOD_PATH, "--preallocate", "foo"], "--preallocate takes tensor indices, input or output, not 'foo'"),
    (["arena", GOOD_PATH, "--preallocate", "1,x"], "--preallocate takes tensor indices, input or output, not 'x'"),
    (["run", GOOD_PATH, "--target", "host", "--firmware", "/bin/true"],
     "--target host runs the engine built into tflm-host: no --firmware with it"),
    (["deploy", GOOD_PATH, "--port", "/dev/ttyACM0", "--no-romfs"], "--no-romfs goes with --dry-run"),
    (["install", "--port", "/dev/ttyACM97", "--mpy", "/nonexistent/tflm.mpy"], "--mpy /nonexistent/tflm.mpy: no such file"),
    (["prepare", GOOD_PATH, "-o", "/nonexistent/p.tflite", "--max-extra-macs", "20%"],
     "/nonexistent/p.tflite: no folder /nonexistent to write it into"),
])
def test_bad_options_refused_in_one_line(capsys, argv, message):
    """Option values a command cannot use: one line naming them, exit 2,
    before any work (a board is not reached, a file not written)."""
    assert message in check_refused(capsys, argv)


@pytest.mark.parametrize("argv,message", [
    (["deploy", GOOD_PATH, "--port", "", "--dry-run"], "argument --port: an empty port"),
    (["flash", "ESP32_GENERIC", "x.bin", "--baud", "-5", "--dry-run"], "argument --baud: -5: a baud rate is above 0"),
    # memory_plan()'s widest picture (the engine's TFLM_PLAN_MAX_WIDTH), not a wider one cut silently
    (["plan", GOOD_PATH, "--width", "100000"], f"argument --width: 100000 is more than {_engine.PLAN_MAX_WIDTH}"),
])
def test_bad_option_values_are_argparse_errors(capsys, argv, message):
    """argparse's errors: where the usage is, in one line (not the whole usage), then the error."""
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err.splitlines()
    assert e.value.code == 2 and len(err) == 2 and err[0] == f"usage: tflm-host {argv[0]} --help"
    assert err[1].startswith(f"tflm-host {argv[0]}: error: ") and message in err[1]


def test_built_with_empty_is_every_kernel(capsys):
    """--built-with "" is TFLM_OPS as make takes it empty: every kernel."""
    assert cli.main(["ops", GOOD_PATH, "--built-with", ""]) == 0
    assert capsys.readouterr().err == ""


def test_firmware_without_tflm_says_so(capsys, tmp_path):
    """run on a unix binary without the tflm module (the stock port), or one
    that prints nothing: one line saying so, not the device's traceback."""
    from tflm_host import device

    stock = device.build_dir() / "unix-stock" / "micropython"
    line = check_refused(capsys, ["run", GOOD_PATH, "--target", "unix", "--firmware", str(stock)])
    assert line == ("tflm-host run: unix: the firmware has no tflm module (stock MicroPython? `tflm-host install` "
                    "puts tflm.mpy on a board)")
    code, err = run_cli(capsys, ["run", GOOD_PATH, "--target", "unix", "--firmware", "/bin/true"])
    assert code == 2 and err.strip().endswith("unix printed nothing (no MicroPython with tflm?)")
