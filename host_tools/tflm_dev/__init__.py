"""The maintainers' tools of the checkout, on top of tflm_host: benchmarks
(bench, opbench, cycles), the docs/boards.md report (boards_report), the
test and benchmark model builder (builder) and the generated C sources
(codegen). Not in the tflm-host wheel: they need the checkout (its firmware
builds, emulators, anchors and sources). `make venv` puts this folder's
parent on the virtual environment's path; `tflm-host bench` and `codegen`
import them from the checkout."""
