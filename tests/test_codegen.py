"""The engine's generated C tables match the schema facts in host_tools."""

from __future__ import annotations

import re

from conftest import ROOT
from tflm_host import cli, schema


def test_generated_files_are_current():
    assert cli.main(["codegen", "--check"]) == 0


def test_op_codes_in_header():
    header = (ROOT / "micropython_mod" / "engine" / "ops.h").read_text()
    codes = dict(re.findall(r"#define TFLM_OP_(\w+) \((\d+)\)", header))
    for name, code in schema.OP_CODES.items():
        assert int(codes[name]) == code
    assert int(codes["COUNT"]) == len(schema.BUILTIN_OPS)


def test_kernel_ops_exist():
    registry = (ROOT / "micropython_mod" / "kernels" / "registry.c").read_text()
    names = re.findall(r"\{ TFLM_OP_(\w+),", registry)  # the kernel entries
    assert len(names) > 100
    for name in names:
        assert name in schema.OP_CODES


def test_the_engine_lists_the_kernel_table():
    """The host asks the engine for its kernels: they are those of the table."""
    from tflm_host import arena
    from tflm_dev import codegen

    table = codegen.kernel_table(ROOT / "micropython_mod")
    assert arena.kernel_ops() == {k.op: k.alias.lower() for k in table}


def test_options_types_match_the_schema_package():
    import tflite

    for code, name in enumerate(schema.BUILTIN_OPTIONS):
        assert getattr(tflite.BuiltinOptions, name) == code
