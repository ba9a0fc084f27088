"""Release artifacts (`make dist`): what the builds made, copied into one
folder with names that say version and board or architecture, a checksum
file and a manifest.

  python -m tflm_dev.dist --build build --pkg build/pkg --out build/dist --micropython 1.25.0 --archs x64 armv6m ... \
      --core-ops ADD CONV_2D ... --core armv6m=build/natmod/armv6m-cfg-<hash>/tflm.mpy ...

The folder holds:

  tflm-<version>-<BOARD>.<ext>    each release board's firmware (board_info.release_boards()),
                                  the file `make firmware BOARD=...` writes (board.json's build_output)
  mpy/<ARCH>/tflm.mpy             the module with every kernel for stock firmware (`make natmod ARCH=...`)
  mpy/<ARCH>/package.json         its mip package: `mpremote mip install DIST/mpy/<ARCH>/package.json`
  mpy/<ARCH>/core/tflm.mpy        for NATMOD_CORE_ARCHS (armv6m: the RP2040), the module with the
                                  core ops only (NATMOD_CORE_OPS), for a heap too small for every kernel
  mpy/<ARCH>/core/package.json    its mip package
  tflm_host-<version>-*.whl       the host package: the wheel built from its sdist,
  tflm-host-<version>.tar.gz      the sdist (setuptools' names)
  examples/                       the device scripts (run with `mpremote run`, not installed by mip:
                                  a script in /lib would run when imported)
  SHA256SUMS                      `sha256sum -c SHA256SUMS` checks every other file
  manifest.json                   versions, commit, and per file: kind, board or arch, what it
                                  holds, size, sha256, and for firmware its heap and flash left

Nothing is built here: `make dist` builds what is missing first. The
firmware's figures are those `make firmware` checks (tflm_host.boards).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tflm_host import __version__, board_info, boards, install

MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"
EXAMPLES = "examples"


@dataclass
class Artifact:
    file: str  # relative to the folder, with "/"
    kind: str  # firmware, mpy, mip-package, wheel, sdist, example
    holds: str
    size: int = 0
    sha256: str = ""
    board: str | None = None
    arch: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def record(self) -> dict[str, object]:
        d = {k: v for k, v in asdict(self).items() if k != "extra" and v is not None}
        return d | self.extra


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_commit(root: Path) -> dict[str, object]:
    """The checkout's commit and whether its files differ from it, new files counted (None: no git checkout)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                               capture_output=True, text=True, timeout=30, check=True).stdout.strip() != ""
    except (OSError, subprocess.SubprocessError):
        return {"commit": None}
    return {"commit": head, "modified": dirty}


def board_variant(folder: Path) -> str:
    """The board variant a CMake port's build folder was configured with ("": none)."""
    cache = folder / "CMakeCache.txt"
    text = cache.read_text(errors="replace") if cache.is_file() else ""
    m = re.search(r"^MICROPY_BOARD_VARIANT:\w+=(\w*)$", text, re.M)
    return m.group(1) if m else ""


def firmware_artifacts(build: Path, micropython: str) -> list[tuple[Path, Artifact]]:
    out = []
    for name in board_info.release_boards():
        b = board_info.get(name)
        assert b.flash is not None  # a real board's board.json has a flash entry (board_info checks it)
        source = build / name / Path(b.flash.build_output).name  # build_output: build/<BOARD>/<file>
        if not source.is_file():
            raise FileNotFoundError(f"{source} missing: run `make firmware BOARD={name}`")
        fig = boards.figures(name, build / name)
        variant = board_variant(build / name)
        built_as = f", its {variant} variant (port_boards/{name}/mpconfigvariant_{variant}.cmake)" if variant else ""
        out.append((source, Artifact(
            f"tflm-{__version__}-{name}{source.suffix}", "firmware",
            f"MicroPython {micropython} for {name} ({b.chip}, {b.port} port){built_as} with the tflm module built "
            f"in, every kernel; `tflm-host flash {name} FILE` writes it ({' or '.join(b.flash.tools)})",
            board=name, extra={"port": b.port, "chip": b.chip, **({"variant": variant} if variant else {}),
                               "heap_bytes": fig.heap, "flash_left_bytes": fig.text_left,
                               "flash_region": fig.text.name})))
    return out


def natmod_artifacts(build: Path, archs: list[str], micropython: str, core: dict[str, Path],
                     core_ops: list[str]) -> list[tuple[Path, Artifact]]:
    """tflm.mpy with every kernel for each of `archs` and, for those in
    `core`, the build with `core_ops` only (make dist-natmod built both)."""
    builds = [(arch, build / "natmod" / arch / "tflm.mpy", f"mpy/{arch}", "every kernel", "every") for arch in archs]
    builds += [(arch, path, f"mpy/{arch}/core", f"the core ops' kernels ({' '.join(core_ops)})", "core")
               for arch, path in core.items()]
    out = []
    for arch, source, folder, kernels, which in builds:
        if not source.is_file():
            raise FileNotFoundError(f"{source} missing: run `make dist-natmod`")
        mpy = install.file_format(source.read_bytes()[:4], str(source))
        out.append((source, Artifact(
            f"{folder}/tflm.mpy", "mpy",
            f"the tflm module as a dynamic native module for stock MicroPython {micropython} firmware on {arch}, "
            f"{kernels} (loaded into RAM on import: docs/natmod.md)",
            arch=arch, extra={"kernels": which, "mpy_version": f"{mpy.version}.{mpy.sub_version}", "mpy_arch": mpy.arch})))
    return out


def mip_package(version: str) -> bytes:
    """A package file mpremote's mip installs from the folder it lies in (URLs relative to it)."""
    return (json.dumps({"urls": [["tflm.mpy", "tflm.mpy"]], "version": version}, indent=2) + "\n").encode()


def package_artifacts(pkg: Path) -> list[tuple[Path, Artifact]]:
    """The sdist and the wheel of this version in `pkg` (make dist-pkg)."""
    found = []
    for suffix, kind, holds in (
            (".tar.gz", "sdist", "the host package's source, with the engine's C sources"),
            (".whl", "wheel", "the host package (tflm-host), built from the sdist: "
                              "`pip install FILE`, then `tflm-host arena MODEL`")):
        # setuptools names the sdist tflm-host-VERSION, the wheel tflm_host-VERSION-...
        files = [p for p in sorted(pkg.iterdir()) if p.name.endswith(suffix)
                 and p.name.replace("-", "_").startswith(f"tflm_host_{__version__}")]
        if len(files) != 1:
            raise FileNotFoundError(f"{pkg}: {len(files)} {kind} files of version {__version__}: run `make dist-pkg`")
        found.append((files[0], Artifact(files[0].name, kind, holds)))
    return found


def example_artifacts(root: Path) -> list[tuple[Path, Artifact]]:
    return [(p, Artifact(f"{EXAMPLES}/{p.name}", "example",
                         "a device script (`mpremote run FILE`, its model in /rom: tflm-host deploy)"
                         if p.suffix == ".py" else "a file the device scripts read"))
            for p in sorted((root / EXAMPLES).iterdir()) if p.is_file()]


def clear(out: Path) -> None:
    """Empties a folder this module wrote before (it has a manifest); any other must be empty."""
    if not out.exists():
        return
    if (out / MANIFEST).is_file():
        shutil.rmtree(out)
    elif any(out.iterdir()):
        raise ValueError(f"{out} holds files and no {MANIFEST}: give an empty or new folder (DIST=...)")


def write(build: Path, pkg: Path, out: Path, micropython: str, archs: list[str], root: Path,
          core: dict[str, Path] | None = None, core_ops: list[str] | None = None) -> dict:
    todo = firmware_artifacts(build, micropython) + natmod_artifacts(build, archs, micropython, core or {},
                                                                     core_ops or []) \
        + package_artifacts(pkg) + example_artifacts(root)
    clear(out)
    out.mkdir(parents=True, exist_ok=True)
    artifacts = []
    for source, art in todo:
        dest = out / art.file
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        artifacts.append(art)
        if art.kind == "mpy":
            folder = art.file.rsplit("/", 1)[0]
            package = Artifact(f"{folder}/package.json", "mip-package",
                               f"the mip package of {art.file}: `mpremote mip install {folder}/package.json`",
                               arch=art.arch, extra={"kernels": art.extra["kernels"]})
            (out / package.file).write_bytes(mip_package(__version__))
            artifacts.append(package)
    for art in artifacts:
        path = out / art.file
        art.size, art.sha256 = path.stat().st_size, sha256(path)
    manifest = {"project": "tflm-micropython", "version": __version__, "micropython": micropython,
                **git_commit(root), "artifacts": [a.record() for a in artifacts]}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    # sha256sum's text format: the hash, two spaces, the path.
    (out / SUMS).write_text("".join(f"{a.sha256}  {a.file}\n" for a in artifacts)
                            + f"{sha256(out / MANIFEST)}  {MANIFEST}\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tflm_dev.dist", description=__doc__.split("\n\n")[0])
    p.add_argument("--build", type=Path, required=True, help="the build folder (build/)")
    p.add_argument("--pkg", type=Path, required=True, help="where make dist-pkg put the sdist and wheel")
    p.add_argument("--out", type=Path, required=True, help="the folder to write (emptied if it holds a manifest)")
    p.add_argument("--micropython", required=True, help="the MicroPython version the firmware is built from")
    p.add_argument("--archs", nargs="+", required=True, help="the architectures of tflm.mpy (NATMOD_ARCHS)")
    p.add_argument("--core-ops", nargs="+", default=[], help="the core build's ops (NATMOD_CORE_OPS)")
    p.add_argument("--core", nargs="+", default=[], metavar="ARCH=FILE", help="the core build of each architecture")
    args = p.parse_args(argv)
    root = Path(__file__).resolve().parents[2]
    core = {arch: Path(path).resolve() for arch, _, path in (c.partition("=") for c in args.core)}
    try:
        manifest = write(args.build.resolve(), args.pkg.resolve(), args.out.resolve(), args.micropython,
                         args.archs, root, core, args.core_ops)
    except (OSError, ValueError) as e:
        print(f"make dist: {e}", file=sys.stderr)
        return 1
    total = sum(a["size"] for a in manifest["artifacts"])
    print(f"dist: {len(manifest['artifacts'])} files, {total:,} bytes, in {args.out} ({MANIFEST}, {SUMS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
