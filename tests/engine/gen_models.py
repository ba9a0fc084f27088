"""Writes generated models for the engine's fuzzer: the first case of every
generator of tests/opgen, and more of those whose int64 data sits at 4
modulo 8 (int16 convolutions and transpose convolutions as older converters
wrote them).
    python gen_models.py OUT_DIR"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the generators
import opgen  # noqa: E402


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.tflite"):
        old.unlink()
    cases = opgen.cases(1) + [c for c in opgen.cases(4, only="bias64_4_mod_8") if not c.name.endswith("/0")]
    for case in cases:
        (out / (case.name.replace("/", "_") + ".tflite")).write_bytes(case.model)
    print(f"{len(cases)} generated models in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
