"""The parts of the docs that a make target writes (`make fuzz`, `make
soak`): the text between `<!-- NAME:begin (written by make TARGET) -->`
and `<!-- NAME:end -->`."""

from __future__ import annotations

from pathlib import Path


def markers(name: str, target: str) -> tuple[str, str]:
    return f"<!-- {name}:begin (written by make {target}) -->", f"<!-- {name}:end -->"


def _split(doc: Path, name: str, target: str) -> tuple[str, str, str]:
    """The doc's text before the section (with its begin marker), the
    section, and the rest (from its end marker on)."""
    begin, end = markers(name, target)
    body = doc.read_text()
    if begin not in body or end not in body.split(begin, 1)[1]:
        raise SystemExit(f"{doc} has no {begin} ... {end} markers")
    head, rest = body.split(begin, 1)
    section, tail = rest.split(end, 1)
    return head + begin, section, end + tail


def read_marked(doc: Path, name: str, target: str) -> str:
    """The text of the doc's section NAME (the newline after its begin marker first)."""
    return _split(doc, name, target)[1]


def write_marked(doc: Path, name: str, target: str, text: str) -> None:
    """Replaces the doc's section NAME by `text` (on the line after the begin marker)."""
    head, _, tail = _split(doc, name, target)
    doc.write_text(head + "\n" + text + tail)


def report(text: str, doc: Path | None, name: str, target: str) -> None:
    """Prints the text and, given a doc, puts it in the doc's section NAME."""
    print(text, end="")
    if doc:
        write_marked(doc, name, target, text)
