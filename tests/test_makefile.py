"""`make help` is the Makefile's own list: each `## make TARGET ...: what`
line stands above the rule it describes, every target a user is told about
(README, docs) has one, and every listed target has a rule."""

from __future__ import annotations

import re
import subprocess

from conftest import ROOT

MAKEFILES = [ROOT / "Makefile", ROOT / "port_boards" / "boards.mk"]
DOCS = [ROOT / "README.md", ROOT / "host_tools" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def help_lines() -> list[str]:
    out = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "help"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return out.splitlines()


def documented_targets() -> dict[str, str]:
    """Target -> the Makefile that documents it, from the `## make` lines."""
    found: dict[str, str] = {}
    for mk in MAKEFILES:
        for m in re.finditer(r"^## make ([a-z][a-z0-9-]*)", mk.read_text(), re.M):
            found[m.group(1)] = mk.name
    return found


def rules(mk_text: str) -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):(?!=)", mk_text, re.M))


def test_every_listed_target_has_a_rule_below_its_line():
    for mk in MAKEFILES:
        text = mk.read_text()
        for m in re.finditer(r"^## make ([a-z][a-z0-9-]*)[^\n]*\n", text, re.M):
            target = m.group(1)
            # The rule follows (past conditionals and other comments).
            rest = text[m.end():]
            first_rule = re.search(r"^([a-z][a-z0-9-]*):(?!=)", rest, re.M)
            assert first_rule and first_rule.group(1) == target, f"{mk.name}: `## make {target}` is not above its rule"


def test_help_prints_every_documented_target():
    printed = {m.group(1) for line in help_lines() if (m := re.match(r"  make ([a-z][a-z0-9-]*)", line))}
    assert printed == set(documented_targets())
    assert len(printed) >= 25


def test_every_make_target_the_docs_name_is_in_help():
    documented = documented_targets()
    all_rules = set().union(*(rules(mk.read_text()) for mk in MAKEFILES))
    named = set()
    for doc in DOCS:
        for m in re.finditer(r"`make ([a-z][a-z0-9-]*)", doc.read_text()):
            named.add((doc.name, m.group(1)))
    assert named, "the docs name no make target"
    for doc, target in sorted(named):
        assert target in all_rules, f"{doc} names `make {target}`, which has no rule"
        assert target in documented, f"{doc} names `make {target}`, which `make help` does not list"


def test_help_names_the_boards_of_port_boards():
    header = help_lines()[0]
    boards = {p.name for p in (ROOT / "port_boards").iterdir() if (p / "mpconfigboard.h").exists()
              or (p / "mpconfigboard.mk").exists() or (p / "mpconfigboard.cmake").exists()}
    assert boards, "no board folders"
    for b in boards:
        assert b in header, f"make help does not name board {b}"
