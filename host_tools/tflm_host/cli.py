"""The tflm-host command line."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

from . import (__version__, _engine, arena, board_info, board_time, boards, device, divergence, install, patches,
               plot, prepare, progress, romfs, schema, shape_fold)
from .demo import EXAMPLES, run_demo
from .deploy import deploy
from .flash import add_parser as add_flash_parser
from .host_run import HostTarget
from .model import Model, load_model
from .planning import plan_model
from .planning.formats import c_header, read_plan_file
from .prepare import prepare_model, prepare_searched
from .reference import reference_outputs
from .runner import make_inputs, run_model


def _quant_text(t) -> str:
    if not t.quantization:
        return ""
    q = t.quantization
    if q.per_channel:
        return f" per-channel q: {len(q.scales)} scales on dim {q.dimension}"
    return f" q: scale={q.scales[0]:.6g} zp={q.zero_points[0]}"


def kernel_check(used: list[str], built_with: list[str] | None = None) -> dict:
    """Which of the ops `used` a firmware runs: those no kernel of tflm
    implements (no build setting adds them), and, for a firmware built with
    TFLM_OPS=`built_with` (flags), those it was built without; `tflm_ops`:
    the setting that builds in every op of `used` that has a kernel."""
    known = arena.kernel_ops()
    have = set(built_with) if built_with is not None else None
    return {
        "unimplemented": [op for op in used if op not in known],
        "left_out": [op for op in used if op in known and have is not None and schema.flag_name(op) not in have],
        "tflm_ops": " ".join(sorted({schema.flag_name(op) for op in used if op in known})),
    }


def kernel_types(models: list[Model]) -> str:
    """The TFLM_TYPES setting that builds the kernels of the models' ops for
    the tensor types their operators read and write (inputs and outputs, of
    the types the engine names), as the engine's message writes it:
    "CONV_2D:int32,int8 SOFTMAX:int8", ops by flag, types by type code."""
    known = arena.kernel_ops()
    names = arena.type_names()
    used: dict[str, set[int]] = {}
    for model in models:
        for sg in model.subgraphs:
            for op in sg.operators:
                if op.opcode not in known:
                    continue
                types = used.setdefault(schema.flag_name(op.opcode), set())
                codes = (schema.TENSOR_TYPES.index(sg.tensors[i].dtype) for i in (*op.inputs, *op.outputs) if i >= 0)
                types.update(code for code in codes if code < len(names))
    return " ".join(f"{flag}:{','.join(names[t] for t in sorted(types))}"
                    for flag, types in sorted(used.items()) if types)


def parse_types(setting: str) -> list[tuple[str, list[str]]]:
    """A TFLM_TYPES setting ("CONV_2D:int32,int8 SOFTMAX:int8") as (op flag,
    its types) pairs, in its order."""
    pairs = []
    for entry in setting.split():
        op, _, types = entry.partition(":")
        pairs.append((op, [t for t in types.split(",") if t]))
    return pairs


def types_cflags(setting: str) -> list[str]:
    """A TFLM_TYPES setting as compiler flags (as micropython.mk writes them)."""
    return [f"-DTFLM_TYPES_{op}=0" + "".join(f"+TFLM_T_{t}" for t in types)
            for op, types in parse_types(setting.upper())]


def kernel_lines(check: dict, built_with: list[str] | None) -> list[str]:
    """kernel_check() in words."""
    lines = []
    if check["left_out"]:
        lines.append(f"a firmware built with TFLM_OPS=\"{' '.join(built_with or [])}\" lacks "
                     f"{', '.join(check['left_out'])}: build it with TFLM_OPS=\"{check['tflm_ops']}\"")
    if check["unimplemented"]:
        lines.append(f"no kernel of tflm implements {', '.join(check['unimplemented'])} "
                     "(no TFLM_OPS setting builds them in)")
    return lines


def engine_check(model: Model) -> dict:
    """The engine's own verdict (the firmware's C code, built into this
    package): whether every kernel's prepare() takes the model (types,
    shapes, options), and the arena it needs; else its message."""
    try:
        layout = arena.plan_layout(model)
    except (ValueError, MemoryError, NotImplementedError) as e:
        return {"accepted": False, "message": f"{type(e).__name__}: {e}", "arena_size": None, "planner": None}
    return {"accepted": True, "message": "", "arena_size": layout.needed, "planner": layout.planner}


def inspect_text(model: Model, name: str, built_with: list[str] | None = None) -> str:
    lines = [f"model: {name} ({len(model.raw)} bytes, schema v{model.version}, "
             f"{len(model.subgraphs)} subgraph{'s' if len(model.subgraphs) != 1 else ''})"]
    if model.description:
        lines.append(f"description: {model.description}")
    if model.metadata:
        lines.append("metadata: " + ", ".join(f"{k} ({len(v)} bytes)" for k, v in model.metadata.items()))
    lines.append("ops: " + ", ".join(f"{k}x{v}" for k, v in model.op_counts().items()))
    check = kernel_check(list(model.op_counts()), built_with)
    problems = kernel_lines(check, built_with)
    lines += [f"kernels: {p}" for p in problems] or [
        f"kernels: tflm has every op (TFLM_OPS=\"{check['tflm_ops']}\" links only these)"]
    note = shape_fold.prepare_note(model.raw)
    if note:
        lines.append(f"prepare: {note}")
    lines += [f"not TensorFlow's: {line}" for line in divergence.not_tensorflows(model)]
    if not check["unimplemented"]:
        verdict = engine_check(model)
        lines.append(f"engine: every operator's prepare() accepts it: {verdict['arena_size']} B of arena "
                     f"({verdict['planner']} planner)" if verdict["accepted"]
                     else f"engine: refuses it: {verdict['message']}")
    for sg in model.subgraphs:
        lines.append(f"subgraph {sg.index} {sg.name!r}: {len(sg.tensors)} tensors, {len(sg.operators)} operators")
        for label, indices in (("inputs", sg.inputs), ("outputs", sg.outputs)):
            for i in indices:
                t = sg.tensors[i]
                lines.append(f"  {label[:-1]} [{i}] {t.name} {t.dtype.lower()} {list(t.shape)}{_quant_text(t)}")
        lines.append("  operators:")
        for op in sg.operators:
            opts = " ".join(f"{k}={v}" for k, v in op.options.items())
            lines.append(f"    {op.index:3d} {op.opcode} in {list(op.inputs)} out {list(op.outputs)}"
                         + (f"  {opts}" if opts else ""))
        lines.append("  tensors:")
        for t in sg.tensors:
            kind = "const" if t.is_constant else ("var" if t.is_variable else "act")
            lines.append(f"    {t.index:3d} {kind:5s} {t.dtype.lower():7s} {str(list(t.shape)):18s} "
                         f"{t.nbytes:7d} B  {t.name}{_quant_text(t)}")
    return "\n".join(lines)


def inspect_json(model: Model, name: str, built_with: list[str] | None = None) -> dict:
    def tensor(t):
        return {"index": t.index, "name": t.name, "dtype": t.dtype.lower(), "shape": list(t.shape),
                "bytes": t.nbytes, "constant": t.is_constant, "variable": t.is_variable,
                "quantization": None if not t.quantization else {
                    "scales": t.quantization.scales, "zero_points": t.quantization.zero_points,
                    "dimension": t.quantization.dimension}}

    return {
        "model": name, "bytes": len(model.raw), "version": model.version, "description": model.description,
        "metadata": {k: len(v) for k, v in model.metadata.items()}, "ops": model.op_counts(),
        "kernels": kernel_check(list(model.op_counts()), built_with),
        "engine": engine_check(model) if not kernel_check(list(model.op_counts()))["unimplemented"] else None,
        "subgraphs": [{
            "index": sg.index, "name": sg.name, "inputs": list(sg.inputs), "outputs": list(sg.outputs),
            "operators": [{"index": op.index, "op": op.opcode, "inputs": list(op.inputs),
                           "outputs": list(op.outputs), "options": op.options} for op in sg.operators],
            "tensors": [tensor(t) for t in sg.tensors],
        } for sg in model.subgraphs],
    }


def _built_with(args) -> list[str] | None:
    """--built-with: a firmware's TFLM_OPS (flags, or op names as in models);
    empty, as make takes TFLM_OPS, is every kernel."""
    if args.built_with is None or not args.built_with.strip():
        return None
    names = args.built_with.replace(",", " ").split()
    known = {schema.flag_name(op) for op in arena.kernel_ops()}
    unknown = [n for n in names if schema.flag_name(n) not in known]
    if unknown:
        raise ValueError(f"--built-with: no kernel of tflm is named {', '.join(unknown)} "
                         "(TFLM_OPS takes the names `tflm-host ops` prints, such as CONV_2D)")
    return [schema.flag_name(op) for op in names]


def cmd_inspect(args) -> int:
    model = load_model(args.model)
    built_with = _built_with(args)
    if args.json:
        print(json.dumps(inspect_json(model, Path(args.model).name, built_with), indent=1))
    else:
        print(inspect_text(model, Path(args.model).name, built_with))
    return 0


def _samples(args, model: Model):
    return make_inputs(model, args.inputs, args.seed, args.count)


def _target(args):
    """The target to run on: the host's own engine, or a board."""
    if args.port:
        if args.target not in (None, "unix") or args.firmware:
            raise ValueError("--port runs on the board at that port as it is: no --target or --firmware with it")
        return device.PortTarget(args.port)
    if args.target == "host":
        if args.firmware:
            raise ValueError("--target host runs the engine built into tflm-host: no --firmware with it")
        return HostTarget()
    try:
        return device.target(args.target or "unix", args.firmware)
    except (RuntimeError, FileNotFoundError) as e:
        if args.target is None and args.firmware is None:  # the unix port by default: say what needs none
            raise type(e)(f"{e} (or --target host: the engine built into tflm-host)") from None
        raise


def cmd_run(args) -> int:
    model = load_model(args.model)
    samples = _samples(args, model)
    result = run_model(args.model, _target(args), samples, args.planner)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    print(f"model {Path(args.model).name} on {result.target} ({args.inputs} inputs, "
          f"{len(samples)} run{'s' if len(samples) != 1 else ''})")
    print(f"arena_used_bytes {result.arena_used_bytes} (head {result.head_bytes}, tail {result.tail_bytes})")
    for r, outs in enumerate(result.runs):
        for k, out in enumerate(outs):
            prefix = f"run {r} " if len(result.runs) > 1 else ""
            print(f"{prefix}output {k} {out.dtype} {list(out.shape)}: "
                  f"{np.array2string(out.ravel(), threshold=16, max_line_width=200)}")
    return 0


def compare_outputs(ours: list[list[np.ndarray]], ref: list[list[np.ndarray]]) -> tuple[bool, list[str]]:
    """Bit-exact comparison, output by output over all runs."""
    lines = []
    same = True
    for k in range(len(ref[0])):
        diffs = []
        for r, (a, b) in enumerate(zip(ours, ref)):
            x, y = a[k], np.asarray(b[k]).astype(a[k].dtype, copy=False).reshape(a[k].shape)
            if x.tobytes() != y.tobytes():
                diffs.append((r, x, y))
        t = ref[0][k]
        head = f"output {k} ({t.dtype}, shape {list(t.shape)})"
        if not diffs:
            lines.append(f"{head}: bit-exact on {len(ref)} of {len(ref)} input sets")
            continue
        same = False
        r, x, y = diffs[0]
        xs, ys = x.ravel(), y.ravel()
        bad = [j for j in range(xs.size) if xs[j:j + 1].tobytes() != ys[j:j + 1].tobytes()]
        i = int(bad[0])
        lines.append(f"{head}: DIFFERS on {len(diffs)} of {len(ref)} input sets; first at set {r}, "
                     f"{len(bad)} of {x.size} values differ, first at index {i}: "
                     f"ours {x.ravel()[i]!r}, TFLM {y.ravel()[i]!r}")
    return same, lines


def cmd_compare(args) -> int:
    model = load_model(args.model)
    samples = _samples(args, model)
    ours = run_model(args.model, _target(args), samples, args.planner)
    # TFLM plans its own arena: the model's plan may be one for this runtime only.
    ref = reference_outputs(Path(args.model), samples, offline_plan=False)
    same, lines = compare_outputs(ours.runs, ref)
    if args.json:
        print(json.dumps({"target": ours.target, "bit_exact": same, "input_sets": len(samples),
                          "report": lines, "arena_used_bytes": ours.arena_used_bytes,
                          "head_bytes": ours.head_bytes, "tail_bytes": ours.tail_bytes}))
    else:
        print(f"model {Path(args.model).name} on {ours.target} vs TFLM reference, "
              f"{len(samples)} {args.inputs} input set{'s' if len(samples) != 1 else ''}")
        for line in lines:
            print("  " + line)
        print("result: " + ("bit-exact" if same else "DIFFERENT"))
    return 0 if same else 1


def board_fit(path: Path, board: str, max_extra_macs: float = 0.2) -> list[tuple[str, int, int, bool]]:
    """Whether the model and its arena fit a board, each way it can go there:
    (how, heap bytes needed, ROMFS bytes needed, fits). The arena is the
    engine's (arena_size: prepare()'s peak); a model read into RAM takes its
    bytes of the heap too. The patch search (prepare --max-extra-macs) is
    tried only when no cheaper way fits."""
    b = boards.budget(board)
    data = path.read_bytes()
    plain = arena.plan_layout(load_model(data)).needed
    prepared = prepare_model(data)
    ways = [("in RAM (tflm.load from a filesystem)", plain + len(data), 0),
            ("in ROMFS flash, in place (tflm-host deploy)", plain, len(romfs.build_image({path.name: data}))),
            ("prepared (tflm-host prepare), in ROMFS", arena.plan_layout(load_model(prepared)).needed,
             len(romfs.build_image({path.name: prepared})))]
    rows = [(how, heap, rom, heap <= b.heap and rom <= b.romfs) for how, heap, rom in ways]
    if not any(fits for *_, fits in rows):
        with progress.bar("searching patch-based stages (stages tried)") as tick:
            patched = prepare_model(data, max_extra_macs=max_extra_macs, progress=tick)
        if patches.METADATA_NAME in load_model(patched).metadata:
            heap = arena.plan_layout(load_model(patched)).needed
            rom = len(romfs.build_image({path.name: patched}))
            rows.append((f"prepared with patches (prepare --max-extra-macs {max_extra_macs:.0%}), in ROMFS", heap, rom,
                         heap <= b.heap and rom <= b.romfs))
    return rows


def board_text(path: Path, board: str) -> list[str]:
    b = boards.budget(board)
    lines = [f"{board}: MicroPython heap {b.heap:,} B ({b.heap_source}), ROMFS region {b.romfs:,} B"]
    rows = board_fit(path, board)
    for how, heap, rom, fits in rows:
        lines.append(f"  {'fits' if fits else 'does NOT fit'}: {how}: {heap:,} B of heap"
                     + (f", {rom:,} B of ROMFS" if rom else ""))
    first = next((how for how, *_, fits in rows if fits), None)
    lines.append(f"{path.name} fits {board} " + (f"{first}" if first else "in none of these ways: a board with more RAM, "
                                                 "or a smaller model"))
    return lines


def cmd_arena(args) -> int:
    if args.board:
        given = [flag for flag, value in (("--planner", args.planner), ("--plan", args.plan),
                                          ("--preallocate", args.preallocate), ("-v", args.verbose)) if value]
        if given:
            raise ValueError(f"--board weighs each way the model can go on the board as the device builds it; "
                             f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for the arena figures "
                             "without --board")
        progress.set_quiet(args.quiet)
        if args.json:
            b = boards.budget(args.board)
            ways = board_fit(Path(args.model), args.board)
            first = next((how for how, *_, fits in ways if fits), None)
            print(json.dumps({"model": Path(args.model).name, "board": args.board, "heap_bytes": b.heap,
                              "heap_source": b.heap_source, "romfs_bytes": b.romfs, "fits": first,
                              "ways": [{"how": how, "heap_bytes": heap, "romfs_bytes": rom, "fits": fits}
                                       for how, heap, rom, fits in ways]}))
        else:
            print("\n".join(board_text(Path(args.model), args.board)))
        return 0

    model = load_model(args.model)
    plan = read_plan_file(args.plan, sum(len(sg.tensors) for sg in model.subgraphs)) if args.plan else None
    layout = arena.plan_layout(model, args.planner, plan=plan, preallocated=_preallocated(model, args.preallocate))
    args.planner = layout.planner
    if args.json:
        print(json.dumps({"model": Path(args.model).name, "planner": args.planner, "arena_used_bytes": layout.used,
                          "arena_size": layout.needed, "head_bytes": layout.head, "tail_bytes": layout.tail,
                          "kernel_data_in_model": layout.model_data,
                          "index_lists_in_model": layout.model_lists,
                          "tensor_records_in_model": layout.model_records,
                          "node_records_in_model": layout.model_nodes, "allocations": layout.audit_dict(),
                          "patch_stage": _patch_stage(layout)}))
        return 0
    print(f"{Path(args.model).name}, {args.planner} planner: {layout.needed} bytes "
          f"(head {layout.head} + tail {layout.tail})")
    if layout.needed > layout.used:
        print(f"  ({layout.used} bytes after allocation; prepare() needs {layout.needed} at its peak)")
    if args.verbose:
        width = max(len(name) for name in layout.audit)
        for name, a in layout.audit.items():
            print(f"  {name:{width}s} {a.used:8d} used {a.requested:8d} requested {a.count:6d} allocations")
    if layout.model_data:
        print(f"  kernel data in the model: {layout.model_data} bytes, read in place (flash in ROMFS), "
              "not in the arena")
    if layout.model_lists:
        print(f"  index lists in the model: {layout.model_lists} bytes, read in place too")
    if layout.model_records:
        print(f"  tensor records in the model: {layout.model_records} bytes (the constants'), read in place too")
    if layout.model_nodes:
        print(f"  node records in the model: {layout.model_nodes} bytes (the subgraphs' and operators'), read in "
              "place too")
    stage = _patch_stage(layout)
    if stage:
        print(f"  patch-based stage: operators {stage[4]}-{stage[0] - 1} in "
              f"{_stage_grid(stage[1], stage[2], stage[5])} ({stage[3]:+d} MACs)")
    return 0


def _patch_stage(layout: arena.Layout) -> list[int] | None:
    """The model's patch-based stage: [the operator after it, grid rows, grid columns, extra MACs, its first
    operator, its mode (engine/patch.h: 0 patches, 1 bands of rows keeping their halos, 2 patches keeping
    them)], or None."""
    ip = layout.picture
    if ip is None or not getattr(ip, "patch", (0,))[0]:
        return None
    return [*ip.patch, ip.patch_macs - ip.patch_whole_macs, ip.patch_start, ip.patch_mode]


def _stage_grid(grid_h: int, grid_w: int, mode: int) -> str:
    """'4x4 patches', '6x6 patches (halos kept)' or '24 bands of rows (halos kept)'."""
    if mode == patches.ROWS:
        return f"{patches.layout_text(grid_h, grid_w, mode)} of rows (halos kept)"
    return f"{grid_h}x{grid_w} patches" + (" (halos kept)" if mode == patches.KEEP else "")


def _preallocated(model: Model, names: list[str] | None) -> tuple[int, ...]:
    """Tensor indices from --preallocate: numbers, or "input"/"output" (all of them)."""
    out: list[int] = []
    for name in names or []:
        for part in name.split(","):
            if part == "input":
                out += list(model.main.inputs)
            elif part == "output":
                out += list(model.main.outputs)
            elif part.strip().isdigit():
                out.append(int(part))
            else:
                raise ValueError(f"--preallocate takes tensor indices, input or output, not {part!r}")
    return tuple(dict.fromkeys(out))


def _output_paths(*paths: str | None) -> None:
    """Files a command will write, checked before any work: each one's folder
    exists and the path is no folder (nothing is written when one is wrong)."""
    for p in paths:
        if p is None:
            continue
        path = Path(p)
        if path.is_dir():
            raise ValueError(f"{path} is a folder: name a file to write")
        if not path.parent.is_dir():
            raise ValueError(f"{path}: no folder {path.parent} to write it into")


# --planner's choices: the engine's planners and the offline plan.
PLANNER_CHOICES = sorted(arena.PLANNERS) + ["offline"]
# Seconds plan's exact search takes at most (--time-limit).
PLAN_TIME_LIMIT = 5.0
# plan's options that only the offline planner (the default) takes.
_OFFLINE_ONLY = (("no_alias", "--no-alias"), ("no_reorder", "--no-reorder"), ("embed", "--embed"),
                 ("prepare", "--prepare"), ("backward", "--backward"), ("output", "-o"),
                 ("shim_out", "--shim-out"), ("c_header", "--c-header"), ("json", "--json"))


def cmd_plan(args) -> int:
    if args.planner != "offline":
        given = [flag for attr, flag in _OFFLINE_ONLY if getattr(args, attr)]
        if args.time_limit != PLAN_TIME_LIMIT:
            given.append("--time-limit")
        if given:
            raise ValueError(f"--planner {args.planner} shows the device's own plan; {', '.join(given)} "
                             f"{'is' if len(given) == 1 else 'are'} for the plan computed here (--planner "
                             "offline, the default)")
    if (args.embed or args.prepare) and not args.output:
        raise ValueError(f"{'--embed' if args.embed else '--prepare'} needs -o OUT.tflite")
    _output_paths(args.output, args.shim_out, args.c_header, args.png)
    if args.png:
        plot.require_matplotlib()
    # With --json, stdout is the one object: what else the command says goes to stderr.
    say = functools.partial(print, file=sys.stderr) if args.json else print
    model = load_model(args.model)
    name = Path(args.model).name
    missing = arena.missing_ops(model)
    prealloc = _preallocated(model, args.preallocate)
    if args.planner != "offline":
        layout = arena.plan_layout(model, args.planner, kernels=not missing, preallocated=prealloc)
        print(f"{name}, {args.planner} planner: head {layout.head} bytes, "
              f"bound {arena.bound(model)} bytes (most bytes live at one operator)")
        if missing:
            print(f"(no kernels here for {', '.join(missing)}: planned without their scratch buffers)")
        print(layout.memory_plan(args.width), end="")
        if args.png:
            plot.plot_plans([(args.planner, layout)], Path(args.png), name)
            print(f"plan drawn in {args.png}")
        return 0
    if missing:
        raise NotImplementedError(arena.missing_ops_message(model))
    data = model.raw
    was_prepared = prepare.is_prepared(data)
    if was_prepared:
        # Prepared data follows the operator order: planned without it, made again for the written model.
        data = prepare.unprepared(data)
        model = load_model(data)
    greedy = arena.plan_layout(model, "tflm", preallocated=prealloc)
    overlapped = arena.plan_layout(model, "greedy", preallocated=prealloc)
    result = plan_model(data, alias=not args.no_alias, reorder=not args.no_reorder,
                        time_limit=args.time_limit, preallocated=prealloc, backward=args.backward)
    if (args.shim_out or args.c_header) and result.order and not args.output:
        raise ValueError("the plan runs the operators in a new order: write that model with -o OUT.tflite "
                         "(or plan with --no-reorder)")
    if args.json:
        print(json.dumps({"model": name, "bound": result.bound, "tflm_greedy_head": greedy.head,
                          "greedy_head": overlapped.head,
                          "head": result.head, "proven_optimal": result.proven, "method": result.method,
                          "aliases": result.aliases, "order": result.order,
                          "arena_used_bytes": result.layout.used, "tensors": result.plan.tensors,
                          "scratch": result.plan.scratch}))
    else:
        print(f"{name}: {len(result.layout.buffers)} buffers in the head, {len(result.layout.nodes)} operators"
              + (f", tensors {', '.join(map(str, prealloc))} pre-allocated outside the arena" if prealloc else ""))
        print(f"  bound (most bytes alive at one operator)  {result.bound:8d}")
        print(f"  TFLM's greedy plan (TFLM's order)          {greedy.head:8d}")
        print(f"  our greedy plan (overlapped buffers)       {overlapped.head:8d}")
        proof = "proven optimal" if result.proven else "not proven optimal"
        print(f"  this plan                                  {result.head:8d}  ({result.method}; {proof})")
        below = []
        if result.aliases:
            below.append(f"{result.aliases} tensor{'s' if result.aliases != 1 else ''} sharing an input's bytes")
        if result.order:
            below.append("operators reordered: " + " ".join(map(str, result.order)))
        if below:
            print("  below the bound by: " + "; ".join(below))
        print(f"  arena_used_bytes {result.layout.used} (head {result.layout.head} + tail {result.layout.tail}), "
              f"greedy: {overlapped.used}, TFLM's greedy: {greedy.used}")
        print(result.layout.memory_plan(args.width), end="")
    if not args.backward and overlapped.head < result.head and (args.embed or not args.json):
        # An embedded plan is the device's default for the model: say what it costs there.
        say(f"note: the device's own greedy plan, {overlapped.head} bytes, also puts outputs above their "
            "inputs (its int8 convolutions run backward, TFLM's do not)"
            + (f"; the plan embedded takes {result.head - overlapped.head} bytes more on this runtime"
               if args.embed else "") + ": --backward plans that way, for this runtime only")
    # Every file once the plan is made, none before.
    if args.png:
        plot.plot_plans([("TFLM's greedy", greedy), ("this plan", result.layout)], Path(args.png), name)
        say(f"plans drawn in {args.png}")
    if args.backward and args.embed:
        say("note: the plan embedded lets int8 convolutions write outputs above their inputs: TFLM's kernels "
            "would not run the model right with it, this runtime's do")
    if args.output:
        out = result.embedded() if args.embed else result.model
        if args.prepare or was_prepared:
            out = prepare.prepare_model(out)
            used = arena.plan_layout(load_model(out)).used
            say(f"kernel data stored in the model (prepared): arena_used_bytes {used}")
        if len(model.subgraphs) > 1 and args.embed:
            print("note: TFLM reads offline plans of models with several subgraphs with subgraph-local "
                  "indices; this runtime reads them as documented", file=sys.stderr)
        Path(args.output).write_bytes(out)
        what = "with the plan in its metadata" if args.embed else "in the plan's operator order"
        say(f"model {what} written to {args.output}")
    if args.shim_out:
        Path(args.shim_out).write_bytes(result.plan.to_bytes())
        say(f"plan written to {args.shim_out} (tflm.Interpreter(model, plan={Path(args.shim_out).name!r}))")
    if args.c_header:
        Path(args.c_header).write_text(c_header(result.plan, name, result.head))
        say(f"C header written to {args.c_header} (make firmware BOARD=... PLAN={args.c_header})")
    return 0


def cmd_prepare(args) -> int:
    _output_paths(args.output)
    model = load_model(args.model)  # what is wrong with the file, named as the other commands name it
    # The shapes first (the shape arithmetic and the DEQUANTIZEs prepare
    # folds away need no kernel), said below.
    data, changes, folded = shape_fold.fixed_shapes(model.raw)
    message = arena.missing_ops_message(load_model(data) if data is not model.raw else model)
    if message:
        raise NotImplementedError(message)

    bound = patches.parse_fraction(args.max_extra_macs) if args.max_extra_macs else None
    slowdown = patches.parse_fraction(args.max_slowdown, "--max-slowdown") if args.max_slowdown else None
    if args.cycles and args.port:
        raise ValueError("time the stages on an emulated board (--cycles BOARD) or on the board at a port "
                         "(--port PORT), not both")
    if args.on_board and not args.port:
        raise ValueError("--on-board names the model's copy on the board at --port PORT: give --port too")
    timer = args.cycles or args.port
    if slowdown is not None and not timer:
        raise ValueError("--max-slowdown bounds the cycles on a board: give --cycles BOARD (or --port PORT) too")
    if timer and not args.explain and slowdown is None:
        raise ValueError(f"{'--cycles' if args.cycles else '--port'} times the rows of --explain's table: "
                         "give --explain too")
    if args.cycles:
        dev_tool("bench", "prepare --cycles").check_timed(args.cycles)
    progress.set_quiet(args.quiet)
    if changes:
        moved = ", ".join(f"{c.tensor} {c.written} -> {c.batch}" for c in changes)
        print(f"note: converted with an unknown batch size: the batch that SPACE_TO_BATCH_ND gives the tensors "
              f"before BATCH_TO_SPACE_ND is written in their shapes (tensor {moved})", file=sys.stderr)
    if folded.summary():
        print(f"note: converted with an unknown batch size: {folded.summary()} "
              "(the shapes the model has with its inputs' written shapes)", file=sys.stderr)
    if folded.dequantized:
        print(f"note: float16 weights: {folded.dequantized} float16 constant(s) made float32 (neither TFLM nor "
              "this engine has float16 kernels)", file=sys.stderr)
    search = bound is not None or args.explain or slowdown is not None
    with progress.bar("searching patch-based stages (stages tried)") as tick:
        # With --max-slowdown the stage is chosen below, once the points are timed.
        out, found = prepare_searched(data, None if slowdown is not None else bound, tick if search else None,
                                      search=search)
    unit = "cycles"

    def time_points(points: list[patches.Schedule]) -> list[int | None]:
        """The model without a stage, then each point, on the board (cycles
        by the estimator, or the board's own clock at --port)."""
        nonlocal unit
        with progress.bar(f"timing {len(points) + 1} models on {timer} (models run)") as tick:
            tick(0, 1)
            if args.cycles:
                timed = dev_tool("bench", "prepare --cycles").front_cycles(args.cycles, out, points)
            else:
                board = board_time.time_stages(args.port, out, points, found, args.on_board)
                unit = board.clock
                timed = board.times
                for note in board.notes:
                    print(f"note: {note}", file=sys.stderr)
            tick(1, 1)
        return timed

    fast = fast_timed = chosen = None
    if slowdown is not None:
        fast = found.fast_front(bound)
        if fast:  # (else no stage lowers the arena: nothing to time)
            fast_timed = time_points(fast)
            chosen = patches.within_slowdown(fast, fast_timed, slowdown)
        if chosen is not None:  # (a schedule the search's engine accepted)
            out = patches.with_schedule(out, chosen.split, *chosen.grid, chosen.start, chosen.mode)
    elif found is not None and bound is not None:
        chosen = found.best(bound)
    before = arena.plan_layout(load_model(data))
    after = arena.plan_layout(load_model(out))
    Path(args.output).write_bytes(out)
    print(f"{Path(args.model).name} prepared: {after.model_data} bytes of kernel data, {after.model_lists} of index "
          f"lists, {after.model_records} of tensor records and {after.model_nodes} of node records in the model "
          f"({len(out) - len(data)} bytes more in "
          f"flash), written to {args.output}")
    print(f"  arena_used_bytes {before.used} -> {after.used} (tail {before.tail} -> {after.tail}, "
          f"head {before.head} -> {after.head}); arena_size {before.needed} -> {after.needed}")
    if bound is not None or slowdown is not None:
        ip = _engine_interp(out)
        split, gh, gw = ip.patch
        within = " and ".join(([f"{100 * bound:g}% extra MACs"] if bound is not None else [])
                              + ([f"{100 * slowdown:g}% more {unit} on {timer}"] if fast else []))
        if split:
            total = patches.model_macs(load_model(out))
            extra = ip.patch_macs - ip.patch_whole_macs
            grid = _stage_grid(gh, gw, ip.patch_mode)
            slower = ""
            if chosen is not None and fast_timed is not None:
                c = fast_timed[1 + fast.index(chosen)]
                slower = f"; {c:,} {unit} on {timer}, {100 * (c / fast_timed[0] - 1):+.2f}%"
            print(f"  patch-based stage: operators {ip.patch_start}-{split - 1} in {grid}, "
                  f"{extra} extra MACs" + (f" ({100 * extra / total:.1f}% of {total})" if total else "") + slower)
        else:
            print("  no patch-based stage lowers the arena" + (f" within {within}" if within else ""))
    if found is not None:
        if args.explain:  # (--max-extra-macs alone says the stage chosen, above)
            timed = time_points(found.front()) if timer and slowdown is None else None
            print("patch-based stages: the trade-off curve (no other stage and grid has both a smaller arena "
                  "and fewer extra MACs; --max-extra-macs with a row's percentage chooses it)")
            for line in patches.front_table(found, chosen, timed, timer or "", unit=unit):
                print("  " + line)
        if fast:
            print("patch-based stages timed for --max-slowdown (no other stage and grid" +
                  (" within --max-extra-macs" if bound is not None else "") +
                  " has a smaller arena, fewer extra MACs and fewer kernel runs together)")
            for line in patches.front_table(found, chosen, fast_timed, timer, fast, unit=unit):
                print("  " + line)
    return 0


def _engine_interp(data: bytes):
    return _engine.allocate(_engine.Model(data))


def dev_tool(name: str, command: str):
    """A maintainers' module of tflm_dev (host_tools/tflm_dev: benchmarks,
    code generation), which the checkout has and the wheel does not: from
    the path (`make venv` puts it there), else from the checkout
    (TFLM_CHECKOUT for an installed tflm-host)."""
    try:
        return importlib.import_module(f"tflm_dev.{name}")
    except ModuleNotFoundError as e:
        if e.name != "tflm_dev":
            raise
    sys.path.append(str(device.checkout(command) / "host_tools"))
    return importlib.import_module(f"tflm_dev.{name}")


def _bench_ops(args) -> int:
    """bench speed --ops: one-op models of the kernels real models spend time
    in, ours against TFLM's reference kernels (tflm_dev/opbench.py)."""
    bench, opbench = dev_tool("bench", "bench"), dev_tool("opbench", "bench")

    board = args.target if args.target != "unix" else "MPS2_AN385"
    progress = None if args.quiet else bench.progress_bar
    folder = device.build_dir() / "op-bench"
    rows = opbench.op_rows(board, args.runs, folder, args.only, progress)
    # newlib's expf/logf in the reference's loops, on the board (a lower bound of TFLM's reference there).
    libm = None
    if board in bench.CMSIS_CORES and any(r["name"] in opbench.LIBM_CASES for r in rows):
        libm = opbench.libm_rows(board, folder, Path(args.anchor) if args.anchor else None)
    table = opbench.op_markdown(rows, board, libm)
    print(table, end="")
    if args.out:
        only = f" --only {' '.join(args.only)}" if args.only else ""
        command = f"tflm-host bench speed --ops --target {board} --runs {args.runs}{only} --out FILE"
        opbench.write_ops_section(Path(args.out), table, command)
        print(f"written into {args.out}")
    return 0


def _profiled_boards(boards: list[str]) -> bool:
    """Whether the cycle estimator times every one of `boards` (bench
    profile), else says which it does not."""
    cycles = dev_tool("cycles", "bench")
    untimed = [b for b in boards if b not in cycles.BOARD_CORES]
    if untimed:
        print(f"bench profile: {', '.join(untimed)} not timed by the cycle estimator "
              f"(boards: {', '.join(cycles.BOARD_CORES)})", file=sys.stderr)
    return not untimed


def _bench_profile(args) -> int:
    """bench profile: where one invoke of each model file's cycles go, by
    function, under the cycle estimator on a QEMU Arm board."""
    bench = dev_tool("bench", "bench")
    board = args.target if args.target != "unix" else "MPS2_AN385"
    if not _profiled_boards([board]):
        return 2
    paths = [Path(m) for m in args.files]
    if not paths:
        print("bench profile: name the .tflite files (or --patches for the shared models' stages)", file=sys.stderr)
        return 2
    if args.out or args.boards:
        print("bench profile MODEL...: one board (--target) and no --out (those are --patches's)", file=sys.stderr)
        return 2
    rows = bench.profile_ours(board, paths, progress=None if args.quiet else bench.progress_bar)
    print(bench.profile_markdown(rows, board, args.top or 30), end="")
    return 0


def cmd_bench(args) -> int:
    bench = dev_tool("bench", "bench")

    if args.what == "speed" and args.ops:
        return _bench_ops(args)
    if args.files and args.what != "profile":
        print(f"bench {args.what}: takes no model files (--models DIR, --only NAME...)", file=sys.stderr)
        return 2
    if args.what == "profile" and not args.patches:
        return _bench_profile(args)
    args.models = args.models or shared_models("bench")
    models = sorted(Path(args.models).glob("*.tflite"))
    if args.only:
        models = [m for m in models if any(o in m.name for o in args.only)]
    if not models:
        print(f"no .tflite files in {args.models}", file=sys.stderr)
        return 2
    progress = None if args.quiet else bench.progress_bar
    if args.what == "profile":
        # Per function, each model without its patch-based stage and with it.
        boards = args.boards or ["MPS2_AN385"]
        if not _profiled_boards(boards):
            return 2
        table = "".join(bench.stage_profile_markdown(bench.stage_profile_rows(models, b, progress), b, args.top)
                        for b in boards)
        print(table, end="")
        if args.out:
            bench.write_profile(Path(args.out), table, boards, args.only)
            print(f"written into {args.out}")
        return 0
    if args.what == "sweep":
        # Single-layer models over the convolutions' shapes, ours / CMSIS-NN in cycles.
        boards = args.boards or list(bench.CMSIS_CORES)
        table = bench.sweep_markdown(bench.sweep_rows(boards, Path(args.anchor) if args.anchor else bench.ANCHOR_DIR,
                                                      2, progress), boards)
        print(table, end="")
        if args.out:
            bench.write_sweep(Path(args.out), table, boards)
            print(f"written into {args.out}")
        return 0
    if args.what == "size":
        # LABEL=BUILD_DIR pairs (`make size-report` passes them).
        builds = dict(b.rsplit("=", 1) for b in args.builds) if args.builds else {"all ops": device.build_dir() / args.target}
        board = args.target if args.target != "unix" else "NETDUINO2"
        title = "Firmware size of the module"
        table = bench.size_markdown({k: Path(v) for k, v in builds.items()}, board)
    elif args.what == "arena":
        title = "Arena use, model by model"
        rows = bench.arena_rows(models, args.target, progress)
        table = bench.arena_markdown(rows, args.target)
        if args.readme:
            bench.write_readme_table(Path(args.readme), bench.readme_table(rows, Path(args.models)))
            print(f"README table written to {args.readme}")
    elif args.what == "plans":
        title = "Offline plans against TFLM, model by model"
        table = bench.plan_markdown(bench.plan_rows(models, args.target, progress), args.target)
        pre = [m for m in models if m.name in ("person_detect.tflite", "vww_96_int8.tflite")]
        if pre:
            table += ("\n## Pre-allocated tensors\n\narena_used_bytes when tensors live in buffers of the "
                      "user's (`preallocated={index: buffer}`), as predicted by the host (the tests check the "
                      "device gives the same):\n\n" + bench.prealloc_markdown(bench.prealloc_rows(pre, args.target)))
    elif args.cycles:
        # Cycles next to instructions, ours and CMSIS-NN's (bench.py, cycles.py).
        title = "Speed: cycles and instructions per invoke, ours and CMSIS-NN's"
        boards = args.boards or [b for b in board_info.names() if bench.cmsis_board(b)]
        anchor = Path(args.anchor) if args.anchor else bench.ANCHOR_DIR
        chosen = models if args.only else [m for m in models if m.name in bench.CMSIS_MODELS]
        rows = bench.speed_cycles_rows([m for m in chosen if m.name in bench.CMSIS_MODELS] if args.out else chosen,
                                       boards, args.runs, anchor, 2, None if args.json else progress)
        if args.json:
            print(json.dumps(bench.speed_cycles_json(rows), indent=1))
            if not args.out:
                return 0
        if args.out:
            table = bench.speed_cycles_report(models, boards, args.runs, anchor, 2, progress, rows)
        else:
            table = bench.speed_cycles_markdown(rows)
        only = f" --only {' '.join(args.only)}" if args.only else ""
        table = (f"Written by `tflm-host bench speed --cycles --boards {' '.join(boards)} --runs {args.runs}{only} "
                 f"--out FILE`.\n\n" + table)
        if args.json:
            Path(args.out).write_text(f"# {title}\n\n" + table)
            return 0
    elif args.vs:
        # CMSIS-NN's instructions next to ours, same QEMU cores (bench.py).
        title = "Speed: instructions per invoke, ours and CMSIS-NN's"
        boards = args.boards or list(bench.CMSIS_CORES)
        label = args.baseline_label or "the baseline build folder's"
        table = bench.speed_report(models, boards, args.runs, Path(args.anchor) if args.anchor else bench.ANCHOR_DIR,
                                   Path(args.baseline) if args.baseline else None, 2, progress, label)
        command = ["tflm-host bench speed --vs cmsis-nn --boards", *boards, "--runs", str(args.runs)]
        if args.baseline:
            command += ["--baseline BUILD", f"--baseline-label '{label}'"]
        table = (f"Written by `{' '.join(command)} --out FILE`"
                 + (" (BUILD: a build folder holding the earlier firmware)" if args.baseline else "")
                 + ".\n\n" + table)
    elif args.patches:
        board = args.target if args.target != "unix" else "MPS2_AN385"
        title = "Speed cost of patch-based stages"
        only = f" --only {' '.join(args.only)}" if args.only else ""
        command = f"tflm-host bench speed --patches --target {board} --runs {args.runs}{only} --out FILE"
        table = (f"Written by `{command}`.\n\n"
                 + bench.patch_speed_markdown(bench.patch_speed_rows(models, board, args.runs, progress), board))
    elif args.target in device.PICO_BOARDS:
        # The real Pico firmware in the RP2040 emulator against CMSIS-NN's Cortex-M0 figure.
        title = "Speed on the Raspberry Pi Pico: the real firmware in the RP2040 emulator"
        table = bench.pico_speed_markdown(bench.pico_speed_rows(
            models, args.runs, Path(args.anchor) if args.anchor else bench.ANCHOR_DIR, 2, progress))
        table = (f"Written by `tflm-host bench speed --target {args.target} --runs {args.runs} --out FILE`.\n\n"
                 + table)
    else:
        board = args.target if args.target != "unix" else "MPS2_AN385"
        title = "Speed: instructions per invoke"
        table = bench.speed_markdown(bench.speed_rows(models, board, args.runs, progress), board)
    print(table, end="")
    if args.out:
        Path(args.out).write_text(bench.keep_sweep(Path(args.out), f"# {title}\n\n" + table))
        print(f"written to {args.out}")
    return 0


def used_ops(models: list[Model]) -> list[str]:
    """The ops these models use, each once, in the order they first come."""
    used: list[str] = []
    for model in models:
        for op in model.op_counts():
            if op not in used:
                used.append(op)
    return used


def patch_setting(models: list[Model]) -> str:
    """TFLM_PATCH of a build for these models: "0" (patch-based stages left
    out) when none has a schedule (prepare --max-extra-macs), else "" (the
    default: built in)."""
    return "" if any(patches.METADATA_NAME in model.metadata for model in models) else "0"


def build_settings(models: list[Model], ops: str) -> dict[str, str]:
    """The make settings of a build that runs these models (ops: their
    TFLM_OPS); an empty one is the default."""
    return {"TFLM_OPS": ops, "TFLM_TYPES": kernel_types(models), "TFLM_PATCH": patch_setting(models)}


def natmod_kernels(paths: list[Path]) -> dict[str, str]:
    """The make settings (TFLM_OPS, TFLM_TYPES, TFLM_PATCH) of a tflm.mpy
    with only these models' kernels (as `ops --natmod` builds it);
    ValueError when an op has no kernel."""
    models = [load_model(path) for path in paths]
    check = kernel_check(used_ops(models))
    problems = kernel_lines(check, None)
    if problems:
        raise ValueError("; ".join(problems))
    return build_settings(models, check["tflm_ops"])


def cmd_ops(args) -> int:
    if args.natmod is not None:
        archs = install.checkout_archs(device.checkout("ops --natmod"))
        if args.natmod not in archs:
            raise ValueError(f"--natmod {args.natmod!r}: make natmod builds {', '.join(archs)}")
    models = [load_model(path) for path in args.models]
    built_with = _built_with(args)
    check = kernel_check(used_ops(models), built_with)
    settings = build_settings(models, check["tflm_ops"])
    ops, types, patch = settings["TFLM_OPS"], settings["TFLM_TYPES"], settings["TFLM_PATCH"]
    names = ", ".join(Path(p).name for p in args.models)
    print(f"# kernels needed by {names}")
    print(f'TFLM_OPS="{ops}"')
    print("# the tensor types their operators use: each kernel built for those only")
    print(f'TFLM_TYPES="{types}"')
    if patch:
        print("# no patch-based stage (prepare --max-extra-macs) in these models: their code left out")
        print(f"TFLM_PATCH={patch}")
    make = f'TFLM_OPS="{ops}" TFLM_TYPES="{types}"' + (f" TFLM_PATCH={patch}" if patch else "")
    print(f"# make firmware BOARD=... {make}")
    print(f"# tflm.mpy for stock firmware, its code in RAM: make natmod ARCH=... {make} (docs/natmod.md)")
    print("# or compile with: " + " ".join(["-DTFLM_KERNELS_DEFAULT=0"] + [f"-DTFLM_KERNEL_{op}=1" for op in ops.split()]
                                          + types_cflags(types) + ([f"-DTFLM_PATCH={patch}"] if patch else [])))
    problems = kernel_lines(check, built_with)
    for line in problems:
        print(f"tflm-host ops: {line}", file=sys.stderr)
    if problems:
        return 1
    if args.natmod:
        return natmod_build(args.natmod, settings)
    return 0


def natmod_build(arch: str, settings: dict[str, str]) -> int:
    """`make natmod` in the checkout with these settings (build_settings);
    prints where tflm.mpy is."""
    try:
        path, size = install.make_natmod(arch, settings)
    except RuntimeError as e:
        print(f"tflm-host ops: {e}", file=sys.stderr)
        return 2
    print(f"# tflm.mpy for {arch} with these kernels ({size:,} bytes): {path}")
    return 0


def cmd_romfs(args) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        print(f"{root} is not a folder", file=sys.stderr)
        return 2
    image = romfs.build_from_dir(root, args.align)
    Path(args.output).write_bytes(image)
    for path, (offset, length) in romfs.list_image(image).items():
        print(f"{offset:8d} {length:8d}  {path}")
    print(f"{len(image)} bytes written to {args.output}")
    return 0


def cmd_deploy(args) -> int:
    if args.no_romfs and not args.dry_run:
        raise ValueError("--no-romfs goes with --dry-run: on a board, deploy asks the board whether it has ROMFS")
    progress.set_quiet(args.quiet)
    caps = None
    if args.dry_run and args.no_romfs:
        caps = (False, 0, True, False)
    return deploy([Path(m) for m in args.models], args.port, [Path(f) for f in args.file or []],
                  dry_run=args.dry_run, check=not args.no_check, caps=caps)


def cmd_install(args) -> int:
    # The files given, checked before the board is reached.
    for flag, given, want in (("--mpy", args.mpy, "file"), ("--dist", args.dist, "folder")):
        if given is not None and not (Path(given).is_file() if want == "file" else Path(given).is_dir()):
            raise ValueError(f"{flag} {given}: no such {want}")
    for m in args.model or ():
        load_model(m)  # a .tflite model, or its message now
    progress.set_quiet(args.quiet)
    source = install.Source(mpy=Path(args.mpy) if args.mpy else None, dist=Path(args.dist) if args.dist else None,
                            build=args.build, models=tuple(Path(m) for m in args.model or ()),
                            kernels=natmod_kernels)
    return install.install(args.port, source, args.target)


class _Stopped(Exception):
    """SIGTERM or SIGHUP reached `tflm-host qemu`."""


def cmd_qemu(args) -> int:
    image = None
    if args.romfs:
        src = Path(args.romfs)
        image = romfs.build_from_dir(src) if src.is_dir() else src.read_bytes()

    # SIGTERM and SIGHUP (a closed terminal) end the wait below like Ctrl-C:
    # the emulator is stopped and its temporary files removed on the way out.
    def stop(signum, frame):
        raise _Stopped(signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, stop)
    status = 0
    try:
        server = device.PicoServer(image) if args.board in device.PICO_BOARDS else device.QemuServer(args.board, image)
        with server as q:
            what = "the RP2040 emulator" if args.board in device.PICO_BOARDS else "QEMU"
            print(f"{args.board} running in {what}; its serial port: mpremote connect {q.url}  (Ctrl-C stops it)",
                  flush=True)
            try:
                while q.proc and q.proc.poll() is None:
                    time.sleep(0.5)
            except KeyboardInterrupt:
                pass
    except _Stopped as e:
        status = 128 + e.args[0]
    return status


def cmd_codegen(args) -> int:
    codegen = dev_tool("codegen", "codegen")
    mod = device.checkout("codegen") / "micropython_mod"
    if args.check:
        stale = [p for p, text in codegen.generated_files(mod).items()
                 if not p.exists() or p.read_text() != text]
        for p in stale:
            print(f"{p} is out of date: run tflm-host codegen", file=sys.stderr)
        return 1 if stale else 0
    for p in codegen.write(mod):
        print(f"wrote {p}")
    return 0


def shared_models(command: str) -> Path:
    """The shared models beside the checkout (../shared/models)."""
    return device.checkout(command).parent / "shared" / "models"


def cmd_demo(args) -> int:
    return run_demo(args.board, Path(args.models or shared_models("demo")), args.example, prepare=args.prepare)


def _port(text: str) -> str:
    """An argparse type: a serial port (or socket:// URL), not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty port: name the board's serial port (/dev/ttyACM0, COM3, "
                                         "socket://...)")
    return text


def _at_least(low: int, high: int | None = None):
    """An argparse type: an int of at least `low` (and at most `high`)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value} is more than {high}")
        return value
    return parse


# Input sets one `run` or `compare` takes: all are made (and sent to a board)
# before the first runs, so a mistyped count would only exhaust memory.
MAX_COUNT = 10000


def _alignment(text: str) -> int:
    try:
        return romfs.check_align(int(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e) if text.lstrip("-").isdigit() else f"{text!r} is not a whole number") \
            from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def _add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=".tflite file")
    p.add_argument("--target", default=None, choices=("host",) + tuple(device.TARGETS),
                   help="host: the module's engine on this computer, no board or firmware needed; a board: its "
                        "firmware on its emulator (default: unix, the unix port)")
    p.add_argument("--port", type=_port, help="run on the board at this serial port, with the firmware it has "
                   "(/dev/ttyACM0, COM3, or the socket://127.0.0.1:PORT `tflm-host qemu` prints): the model "
                   "and inputs go over the port into its RAM, nothing on the board is written")
    p.add_argument("--inputs", default="random", help="zeros, random or FILE.npz (input_0, input_1, ...)")
    p.add_argument("--seed", type=_at_least(0, 2**32 - 1), default=0, help="seed of random inputs")
    p.add_argument("--count", type=_at_least(1, MAX_COUNT), default=1,
                   help=f"input sets to run (zeros, random), at most {MAX_COUNT}")
    p.add_argument("--planner", default=None, choices=PLANNER_CHOICES,
                   help="memory planner on the device (default: offline for a model with a plan, else greedy)")
    p.add_argument("--firmware", type=Path, help="firmware or unix binary (default: the project's build)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def demo_examples() -> dict[str, str]:
    return EXAMPLES


QUIET_HELP = ("no progress on stderr (shown for steps over a second when stderr is a terminal, "
              "or with TFLM_PROGRESS=1)")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors say where the usage is in one line,
    then the error, last as argparse puts it (argparse prints the whole
    usage first)."""

    def error(self, message: str):
        self.exit(2, f"usage: {self.prog} --help\n{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tflm-host", description="Host tools for the tflm MicroPython module")
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True)

    built_with_help = ("the TFLM_OPS a firmware was built with: also say which of the model's ops it lacks "
                       "(the ops no kernel of tflm implements are flagged anyway)")
    p = sub.add_parser("inspect", help="ops (and whether tflm has kernels for them), tensors, shapes, quantization, "
                                       "metadata")
    p.add_argument("model")
    p.add_argument("--json", action="store_true")
    p.add_argument("--built-with", metavar="OPS", help=built_with_help)
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("run", help="run a model with our runtime on a target")
    _add_input_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("compare", help="run on a target and on TFLM; exit 1 unless bit-exact")
    _add_input_args(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("arena", help="exact arena bytes the device will use")
    p.add_argument("model")
    p.add_argument("--planner", default=None, choices=PLANNER_CHOICES,
                   help="default: as the device picks (offline for a model with a plan, else greedy)")
    p.add_argument("--plan", help="a plan file (tflm-host plan --shim-out) for the offline planner")
    p.add_argument("--preallocate", nargs="*", metavar="TENSOR", help="tensors outside the arena (indices, input, output)")
    p.add_argument("--json", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true", help="list the allocations by category")
    p.add_argument("--board", choices=board_info.names(),
                   help="whether model and arena fit this board's heap and ROMFS region: read into RAM, in ROMFS, "
                        "prepared, with patches (prepare --max-extra-macs 20%%) when nothing else fits")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    p.set_defaults(func=cmd_arena)

    p = sub.add_parser("plan", help="an offline memory plan better than TFLM's, as text, picture, metadata or C")
    p.add_argument("model")
    p.add_argument("--planner", default="offline", choices=PLANNER_CHOICES,
                   help="offline: compute a plan here (default); greedy, linear, tflm: show the device's own "
                        "plan (the options that write or change a plan are the offline planner's)")
    p.add_argument("--width", type=_at_least(8, _engine.PLAN_MAX_WIDTH), default=80,
                   help=f"columns of the text picture (8 to {_engine.PLAN_MAX_WIDTH}, as memory_plan() takes them)")
    p.add_argument("--png", help="also draw the plan (and TFLM's greedy plan beside it) into this PNG file")
    p.add_argument("--no-alias", action="store_true", help="no views or in-place ops sharing bytes")
    p.add_argument("--no-reorder", action="store_true", help="keep the model's operator order")
    p.add_argument("--time-limit", type=_positive_float, default=PLAN_TIME_LIMIT, help="seconds for the exact search")
    p.add_argument("--preallocate", nargs="*", metavar="TENSOR",
                   help="tensors kept outside the arena (indices, or input / output)")
    p.add_argument("--embed", action="store_true", help="write the plan into the model's metadata (needs -o)")
    p.add_argument("--prepare", action="store_true",
                   help="also store the kernels' data in the written model (tflm-host prepare; needs -o)")
    p.add_argument("--backward", action="store_true",
                   help="a plan for this runtime only: an int8 CONV_2D may write its output above its input, "
                        "which its kernel runs backward (TFLM's kernels would not run such a plan right)")
    p.add_argument("-o", "--output", help="write the model (reordered if the plan reorders it) here")
    p.add_argument("--shim-out", help="write the plan as a file for tflm.Interpreter(model, plan=...)")
    p.add_argument("--c-header", help="write the plan as a C header for `make firmware PLAN=...`")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("prepare", help="the kernels' data (multipliers, shifts, tables) computed here and "
                       "stored in the model, read in place from flash instead of the arena")
    p.add_argument("model")
    p.add_argument("-o", "--output", required=True, help="the prepared model")
    p.add_argument("--max-extra-macs", metavar="BOUND",
                   help="also run the first convolutions patch by patch (their big maps never whole in the "
                        "arena): the stage and grid with the smallest arena whose extra MACs stay within "
                        "BOUND of the model's (20%% or 0.2); 0: a stage that computes no MAC twice (bands of "
                        "rows, or patches keeping their halos)")
    p.add_argument("--explain", action="store_true",
                   help="print the patch stages' trade-off curve: each stage and grid no other beats on both "
                        "arena and extra MACs (with --max-extra-macs, '*' marks the one chosen; a row's "
                        "percentage given as BOUND chooses it)")
    p.add_argument("--cycles", metavar="BOARD",
                   help="with --explain: time the model without a stage and each row of the curve on an "
                        "emulated board (the cycle estimator on the QEMU Arm boards, the RP2040 emulator on "
                        "RPI_PICO; its firmware built: make firmware BOARD=..., and make deps), and print "
                        "each row's cycles per invoke and how much slower it is")
    p.add_argument("--port", metavar="PORT",
                   help="instead of --cycles: time them on the board at this serial port (/dev/ttyACM0, COM3, "
                        "or the socket://127.0.0.1:PORT `tflm-host qemu` prints) by its own clock, "
                        "time.ticks_us() (the QEMU boards: qemuboard's instruction count), the least of 3 "
                        "invokes each, as tflm.Interpreter(model, stage=...) runs them: the model goes into "
                        "its RAM over the port, nothing on the board is written")
    p.add_argument("--on-board", metavar="PATH",
                   help="with --port: the model is already on the board at PATH (what `prepare` wrote, put "
                        "in its flash by `tflm-host deploy`, e.g. /rom/model.tflite), for a model its RAM "
                        "cannot hold")
    p.add_argument("--max-slowdown", metavar="BOUND",
                   help="with --cycles BOARD or --port PORT: of the stages and grids timed on the board, the "
                        "one with the smallest arena whose invoke is at most BOUND slower than the model's "
                        "without a stage (5%% or 0.05); those timed are the ones within --max-extra-macs (when "
                        "given) that no other beats on arena, extra MACs and kernel runs (operators times "
                        "patches) together, printed with their figures (the curve's table is then printed "
                        "without them)")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("bench", help="arena use or speed of every model, ours next to TFLM's, or the module's firmware size, as Markdown")
    p.add_argument("what", choices=["arena", "plans", "speed", "size", "sweep", "profile"])
    p.add_argument("files", nargs="*", help="profile: the .tflite files, each timed by function (the cycle "
                   "estimator, --target a QEMU Arm board), named right after `profile`")
    p.add_argument("--top", type=_at_least(1), help="profile: the functions shown (default 30; --patches: 12 a "
                   "model)")
    p.add_argument("--models", help="the models' folder (default: ../shared/models beside the checkout)")
    p.add_argument("--only", nargs="*", help="only models whose file name contains one of these")
    p.add_argument("--runs", type=_at_least(1), default=3, help="invokes measured per model (speed)")
    p.add_argument("--target", default="unix", choices=device.TARGETS)
    p.add_argument("--out", help="also write the table to this Markdown file")
    p.add_argument("--builds", nargs="*", help="size: LABEL=FIRMWARE_BUILD_DIR pairs (split at the last =)")
    p.add_argument("--readme", help="arena: also write the README's table into this file (between its markers)")
    p.add_argument("--vs", choices=["cmsis-nn"], help="speed: Arm's CMSIS-NN kernels on the same QEMU cores, "
                   "model by model and layer by layer, then every model on every board")
    p.add_argument("--boards", nargs="*", help="speed --vs: the QEMU boards, and RPI_PICO for the real Pico "
                   "firmware in the RP2040 emulator (default: MPS2_AN385 NETDUINOPLUS2 MICROBIT)")
    p.add_argument("--anchor", help="speed --vs: the CMSIS-NN anchor folder (its source tarball and harness; "
                   "default ../shared/anchors/cmsis-nn beside the checkout)")
    p.add_argument("--baseline", help="speed --vs: a build folder with <BOARD>/firmware.elf of another "
                   "version, measured too (before / after)")
    p.add_argument("--baseline-label", help="speed --vs: what the baseline firmware is, for the report")
    p.add_argument("--patches", action="store_true",
                   help="speed: prepared models with and without a patch-based stage (--max-extra-macs 20%%); "
                   "profile: the same by function on each of --boards (default MPS2_AN385), with --out a "
                   "section of FILE")
    p.add_argument("--cycles", action="store_true",
                   help="speed: cycles next to instructions, ours and CMSIS-NN's (the cycle estimator on the QEMU "
                   "Arm boards, the RP2040 emulator on RPI_PICO; ESP32_GENERIC: instructions only), per model, "
                   "board and layer type, with milliseconds at the real boards' clocks; with --out, the whole of "
                   "docs/speed.md")
    p.add_argument("--json", action="store_true", help="speed --cycles: a JSON list, one object per model and board")
    p.add_argument("--ops", action="store_true",
                   help="speed: one-op models (resize, batch matmul, reductions, exp, log-softmax, squared "
                   "difference, PRELU; written to build/op-bench) on the board and the host, ours against TFLM's "
                   "reference kernels; --only picks cases by name; with --out, a section of FILE")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("ops", help="the TFLM_OPS build setting that links only the kernels these models need, and "
                                   "the TFLM_TYPES that builds them for their tensor types only; "
                                   "exit 1 when an op has no kernel (or one the --built-with firmware lacks)")
    p.add_argument("models", nargs="+")
    p.add_argument("--built-with", metavar="OPS", help=built_with_help)
    p.add_argument("--natmod", metavar="ARCH", help="also build tflm.mpy, the module for stock firmware, with only "
                   "these kernels and types, for ARCH as `make natmod ARCH=...` in the checkout takes it")
    p.set_defaults(func=cmd_ops)

    p = sub.add_parser("romfs", help="build a ROMFS image with aligned file data")
    p.add_argument("dir")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--align", type=_alignment, default=16,
                   help=f"file data alignment, a power of two from {romfs.MIN_ALIGN} to {romfs.MAX_ALIGN}")
    p.set_defaults(func=cmd_romfs)

    p = sub.add_parser("deploy", help="models into a board's ROMFS flash (mpremote), then a check on the board")
    p.add_argument("models", nargs="+", help=".tflite files (labels next to them, MODEL.labels, go too)")
    p.add_argument("--port", required=True, type=_port, help="the board's serial port, as mpremote takes it "
                   "(/dev/ttyACM0, COM3, or the socket://127.0.0.1:PORT `tflm-host qemu` prints)")
    p.add_argument("--file", nargs="*", help="more files to put beside the models (example scripts)")
    p.add_argument("--no-check", action="store_true", help="do not run the models on the board afterwards")
    p.add_argument("--dry-run", action="store_true", help="print the mpremote commands, run nothing, write no file")
    p.add_argument("--no-romfs", action="store_true", help="with --dry-run: as for a board without ROMFS")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    p.set_defaults(func=cmd_deploy)

    p = sub.add_parser("install", help="tflm.mpy, the module for stock firmware, onto a board for the architecture "
                                       "it reports, then a check there (mpremote)")
    p.add_argument("--port", required=True, type=_port, help="the board's serial port, as mpremote takes it "
                   "(/dev/ttyACM0, COM3, or the socket://127.0.0.1:PORT `tflm-host qemu` prints)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--mpy", metavar="FILE", help="this tflm.mpy (checked against the board first)")
    source.add_argument("--dist", metavar="DIR", help="from a release folder: DIR/mpy/<ARCH>/tflm.mpy, or its "
                        "core build (DIR/mpy/<ARCH>/core/) when the board's heap would not hold every kernel and "
                        "a model")
    source.add_argument("--build", action="store_true", help="in the checkout: `make natmod ARCH=...` first")
    source.add_argument("--model", nargs="+", metavar="MODEL", help="in the checkout: a tflm.mpy with only these "
                        "models' kernels, built as `ops MODEL... --natmod ARCH` builds it")
    p.add_argument("--target", metavar="DIR", help="the board's folder to put it in (default: the first .../lib "
                   "folder on its sys.path outside /rom, as mip's)")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    p.set_defaults(func=cmd_install)

    add_flash_parser(sub)

    p = sub.add_parser("qemu", help="run an emulated board (a QEMU board, or RPI_PICO's firmware in the RP2040 "
                                    "emulator) with its serial port on a TCP socket (for mpremote, run --port)")
    p.add_argument("board", choices=device.EMULATED_BOARDS)
    p.add_argument("--romfs", help="a ROMFS image, or a folder to build one from, in the board's ROMFS region")
    p.set_defaults(func=cmd_qemu)

    p = sub.add_parser("codegen", help="write the module's generated C sources (op tables, kernel lists)")
    p.add_argument("--check", action="store_true", help="only check they are up to date")
    p.set_defaults(func=cmd_codegen)

    p = sub.add_parser("demo", help="the demo: a model from flash on an emulated board")
    p.add_argument("--board", default="NETDUINO2", choices=device.EMULATED_BOARDS,
                   help="a QEMU board, or RPI_PICO: the Pico's firmware in the RP2040 emulator")
    p.add_argument("--models", help="the models' folder (default: ../shared/models beside the checkout)")
    p.add_argument("--example", default="person_detect", choices=list(demo_examples()),
                   help="examples/<name>.py and its model")
    p.add_argument("--prepare", action="store_true",
                   help="the model prepared (tflm-host prepare): its kernels' data read from flash, not the arena")
    p.set_defaults(func=cmd_demo)
    return parser


class _Stdout:
    """stdout for `tflm-host ... | head`: once the reader has gone, the rest
    of the output goes to the null device (the stream's file descriptor
    too, which Python flushes at exit), so the command still writes its
    files (-o, --shim-out) and ends as it would have, without a word."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _reader_gone(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._stream.fileno())
        os.close(null)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _prepare_hint(args) -> str:
    """What prepare would write in the model a command refused (a model
    converted with an unknown batch size), as the end of its error line."""
    model = getattr(args, "model", None)
    if args.command in ("prepare", "deploy") or not isinstance(model, str):
        return ""
    try:
        note = shape_fold.prepare_note(Path(model).read_bytes())
    except OSError:
        return ""
    return f" ({note})" if note else ""


def main(argv: list[str] | None = None) -> int:
    if argv is None and hasattr(signal, "SIGPIPE"):
        # A write into a pipe with no reader raises BrokenPipeError (Python's
        # own setting, which another program embedding it may have changed).
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        sys.stdout = _Stdout(sys.stdout)
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OSError as e:  # a folder, an unreadable file, a full disk: one line, no traceback
        text = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        print(f"tflm-host {args.command}: {text}", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, NotImplementedError, MemoryError) as e:
        print(f"tflm-host {args.command}: {e}{_prepare_hint(args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        print(f"tflm-host {args.command}: interrupted", file=sys.stderr)
        return 130
