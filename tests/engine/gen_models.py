"""Writes generated models for the engine's fuzzer: the first case of every
generator of tests/opgen, and more of those whose int64 data sits at 4
modulo 8 (int16 convolutions and transpose convolutions as older converters
wrote them), and prepared copies (tflm-host prepare: kernel data in the
metadata) of those the host engine can prepare and of small shared models,
copies of convolution chains with a patch-based first stage
(TflmPatchSchedule metadata, engine/patch.h), prepared and not, and small
shared models with an offline plan whose buffers overlap (an op's output over
its dying input, engine/overlap.h) for the validator.
    python gen_models.py OUT_DIR [SHARED_MODELS_DIR]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the generators
import opgen  # noqa: E402


def main(out: Path, shared: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.tflite"):
        old.unlink()
    cases = opgen.cases(1) + [c for c in opgen.cases(4, only="bias64_4_mod_8") if not c.name.endswith("/0")]
    from tflm_host.prepare import prepare_model

    prepared = 0
    sources = [(case.name.replace("/", "_"), case.model) for case in cases]
    for name, model in sources:
        (out / (name + ".tflite")).write_bytes(model)
    if shared is not None:
        sources += [(p.stem, p.read_bytes()) for p in sorted(shared.glob("*.tflite")) if p.stem in SMALL_SHARED]
    for name, model in sources:
        try:
            data = prepare_model(model)
        except (ValueError, NotImplementedError):
            continue  # ops the host engine lacks (test kernels), or models it refuses
        (out / ("prepared_" + name + ".tflite")).write_bytes(data)
        prepared += 1
    from tflm_host.patches import KEEP, ROWS, with_schedule

    patched = 0
    for case in opgen.cases(4, only="PATCH/chain_int8"):
        name = case.name.replace("/", "_")
        scheduled = with_schedule(case.model, case.params["split"], *case.params["grid"])
        (out / ("patched_" + name + ".tflite")).write_bytes(scheduled)
        (out / ("patched_prepared_" + name + ".tflite")).write_bytes(prepare_model(scheduled))
        # The same stage in bands of rows (patch.h's rows mode).
        banded = with_schedule(case.model, case.params["split"], case.params["grid"][0], 1, 0, ROWS)
        (out / ("banded_" + name + ".tflite")).write_bytes(banded)
        # And in patches keeping their halos (keep mode).
        kept = with_schedule(case.model, case.params["split"], *case.params["grid"], 0, KEEP)
        (out / ("kept_" + name + ".tflite")).write_bytes(kept)
        (out / ("kept_prepared_" + name + ".tflite")).write_bytes(prepare_model(kept))
        patched += 5
    # Windows, strides and dilations that differ between rows and columns.
    for case in opgen.cases(4, only="PATCH/chain_uneven"):
        name = case.name.replace("/", "_")
        for kind, mode in (("patched_", 0), ("kept_", KEEP)):
            (out / (kind + name + ".tflite")).write_bytes(
                with_schedule(case.model, case.params["split"], *case.params["grid"], 0, mode))
            patched += 1
    # (And bands through residual blocks: ADDs of maps the stage makes.)
    for case in opgen.cases(3, only="PATCH/chain_fc_int8") + opgen.cases(3, only="PATCH/residual_int8"):
        name = case.name.replace("/", "_")
        banded = with_schedule(case.model, case.params["split"], case.params["grid"][0], 1, 0, ROWS)
        (out / ("banded_" + name + ".tflite")).write_bytes(banded)
        (out / ("banded_prepared_" + name + ".tflite")).write_bytes(prepare_model(banded))
        patched += 2
    planned = 0
    if shared is not None:
        from tflm_host.planning import plan_model
        for name in OVERLAPPED_SHARED:
            result = plan_model((shared / (name + ".tflite")).read_bytes(), reorder=False, time_limit=0.5)
            (out / ("overlap_plan_" + name + ".tflite")).write_bytes(result.embedded())
            planned += 1
    print(f"{len(cases)} generated models, {prepared} prepared models, {patched} patched models, "
          f"{planned} with overlapped plans in {out}")


# Shared models small enough to fuzz prepared at the generated models' rate.
SMALL_SHARED = ("hello_world_int8", "kws_ref_model", "trained_lstm_int8", "test_conv_model", "keyword_scrambled_8bit")

# Shared models whose offline plan overlaps buffers (fuzzed at the same rate).
OVERLAPPED_SHARED = ("kws_ref_model", "test_conv_model")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
