"""Short versions of `make soak` and of the binding's API fuzz in `make fuzz`
(tests/soak.py, tests/api_fuzz.py): seconds, not hours."""

from __future__ import annotations

import pytest

import api_fuzz
import soak
from conftest import MODELS


@pytest.mark.parametrize("target, invokes, interpreters",
                         [("unix", 3000, 60), ("NETDUINO2", 400, 20), ("RPI_PICO", 100, 20)])
def test_soak_short(target, invokes, interpreters):
    r = soak.soak(target, invokes, interpreters, MODELS)
    assert r.problems == []
    # The checks ran: samples of the stateful sequence, heap figures.
    assert len(r.tflm_samples) >= 5 and len(r.stateless_heap) == 9 and len(r.interpreter_heap) == 10


def test_api_fuzz_short():
    """Random calls on the unix port: every one returns or raises a Python
    exception (a crash would end the script before its last line)."""
    outcomes = api_fuzz.run("unix", 4000, 1, MODELS)
    assert sum(outcomes.values()) == 4000
    assert outcomes["ok"] > 500 and outcomes["TypeError"] > 500 and outcomes["ValueError"] > 0
