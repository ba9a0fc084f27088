"""Progress of the CLI's long steps on stderr: a bar for counted work (the
patch stage search, flash blocks) and a ticking line with the seconds spent
for a step of unknown length (a subprocess writing flash, a board's check).

Shown when stderr is a terminal, unless `--quiet`; the environment
variable TFLM_PROGRESS=1 shows it anyway (tests, logs), TFLM_PROGRESS=0
never. Nothing is drawn for a step that ends within SHOW_AFTER seconds.
Lines are redrawn with a carriage return and ended when the step ends, so
the command's own output on stdout stays as it is.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

# A step shorter than this draws nothing.
SHOW_AFTER = 1.0
# Seconds between redraws of a ticking step.
TICK = 0.25
BAR_WIDTH = 30

_quiet = False


def set_quiet(quiet: bool) -> None:
    """--quiet: no progress, whatever stderr is."""
    global _quiet
    _quiet = quiet


def enabled() -> bool:
    forced = os.environ.get("TFLM_PROGRESS", "")
    if forced in ("0", "1"):
        return forced == "1" and not _quiet
    return not _quiet and sys.stderr.isatty()


def _draw(text: str) -> None:
    sys.stderr.write("\r" + text + "\x1b[K" if sys.stderr.isatty() else "\r" + text)
    sys.stderr.flush()


@contextmanager
def step(label: str) -> Iterator[None]:
    """A step of unknown length: after SHOW_AFTER seconds, a line with its
    label and the seconds spent, redrawn until it ends, then its time."""
    if not enabled():
        yield
        return
    start = time.monotonic()
    done = threading.Event()
    shown = [False]

    def tick() -> None:
        while not done.wait(TICK):
            elapsed = time.monotonic() - start
            if elapsed >= SHOW_AFTER:
                shown[0] = True
                _draw(f"{label} ... {elapsed:.0f} s")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    ok = False
    try:
        yield
        ok = True
    finally:
        done.set()
        thread.join()
        elapsed = time.monotonic() - start
        if shown[0] or elapsed >= SHOW_AFTER:
            _draw(f"{label}: {'done' if ok else 'stopped'} in {elapsed:.1f} s")
            sys.stderr.write("\n")
            sys.stderr.flush()


class Bar:
    """Counted work: update(i) after i of n parts (update(i, n) when n is
    known only then); drawn once SHOW_AFTER seconds have passed, ended by
    close()."""

    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = max(total, 1)
        self.start = time.monotonic()
        self.on = enabled()
        self.shown = False
        self.last = 0.0
        self.drawn = -1

    def update(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = max(total, 1)
        if not self.on:
            return
        now = time.monotonic()
        if now - self.start < SHOW_AFTER or (now - self.last < TICK and done < self.total):
            return
        self.last = now
        self.shown = True
        self.drawn = done
        filled = BAR_WIDTH * min(done, self.total) // self.total
        _draw(f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{self.total} "
              f"{now - self.start:.0f} s")

    def close(self) -> None:
        if self.shown:
            if self.drawn != self.total:
                self.last = 0.0
                self.update(self.total)
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False


@contextmanager
def bar(label: str, total: int = 1) -> Iterator[Callable[..., None]]:
    """A Bar as a context: yields its update(done, total=None)."""
    b = Bar(label, total)
    try:
        yield b.update
    finally:
        b.close()
