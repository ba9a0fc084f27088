"""Builds MicroPython ROMFS images whose file data is aligned.

ROMFS (MicroPython 1.25) is a tree of records, each a varuint kind, a varuint
payload length and the payload. A varuint is big-endian base-128 with the top
bit set on all bytes but the last, and may be padded with leading 0x80 bytes.
This builder gives every container record a fixed 4-byte length and pads the
length of each file's data record so the data starts on an `align`-byte
boundary of the image: a model mapped from flash is then aligned for the
kernels, with no copy.
"""

from __future__ import annotations

from pathlib import Path

KIND_PADDING = 1
KIND_DATA = 2
KIND_DIRECTORY = 4
KIND_FILE = 5
KIND_FILESYSTEM = 0x14A6B1
_LEN_WIDTH = 4  # bytes of every container's length field (up to 256 MiB)


def varuint(value: int, width: int = 0) -> bytes:
    """Encodes `value`, padded with 0x80 bytes to at least `width` bytes."""
    if value < 0:
        raise ValueError("varuint must be non-negative")
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(value & 0x7F)
        value >>= 7
    while len(groups) < width:
        groups.append(0)
    out = bytes(g | 0x80 for g in reversed(groups[1:])) + bytes([groups[0]])
    return out


class _Writer:
    def __init__(self, align: int) -> None:
        self.out = bytearray()
        self.align = align

    def open(self, kind: int) -> int:
        self.out += varuint(kind)
        at = len(self.out)
        self.out += bytes(_LEN_WIDTH)
        return at

    def close(self, at: int) -> None:
        length = len(self.out) - (at + _LEN_WIDTH)
        if length >= 1 << (7 * _LEN_WIDTH):
            raise ValueError("ROMFS record too large")
        self.out[at:at + _LEN_WIDTH] = varuint(length, _LEN_WIDTH)

    def name(self, name: str) -> None:
        raw = name.encode()
        self.out += varuint(len(raw)) + raw

    def data(self, data: bytes) -> None:
        self.out += varuint(KIND_DATA)
        length = varuint(len(data))
        pad = -(len(self.out) + len(length)) % self.align
        self.out += b"\x80" * pad + length + data

    def tree(self, entries: dict[str, bytes | dict]) -> None:
        for name in sorted(entries):
            value = entries[name]
            if isinstance(value, dict):
                at = self.open(KIND_DIRECTORY)
                self.name(name)
                self.tree(value)
            else:
                at = self.open(KIND_FILE)
                self.name(name)
                self.data(value)
            self.close(at)


# File data alignments an image can have: at least what models need for
# their int32 and float data, at most a flash page.
MIN_ALIGN, MAX_ALIGN = 4, 4096


def check_align(align: int) -> int:
    if not MIN_ALIGN <= align <= MAX_ALIGN or align & (align - 1):
        raise ValueError(f"alignment must be a power of two from {MIN_ALIGN} to {MAX_ALIGN}, not {align}")
    return align


def build_image(files: dict[str, bytes], align: int = 16) -> bytes:
    """An image holding `files` ({"dir/name.tflite": bytes}), data `align`-aligned."""
    check_align(align)
    tree: dict[str, bytes | dict] = {}
    for path, data in files.items():
        parts = [p for p in path.strip("/").split("/") if p]
        if not parts:
            raise ValueError(f"bad ROMFS path {path!r}")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"{path!r}: {part!r} is a file")
        node[parts[-1]] = bytes(data)
    w = _Writer(align)
    at = w.open(KIND_FILESYSTEM)
    w.tree(tree)
    # The whole filesystem record must have an even size; a 3-byte padding
    # record fixes an odd one (padding records are at least 2 bytes).
    if (len(w.out)) % 2:
        w.out += varuint(KIND_PADDING) + varuint(1) + b"\x00"
    w.close(at)
    return bytes(w.out)


def build_from_dir(root: Path, align: int = 16) -> bytes:
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return build_image(files, align)


def list_image(image: bytes) -> dict[str, tuple[int, int]]:
    """Maps each file path in an image to (data offset, data length)."""

    def read_varuint(pos: int, end: int) -> tuple[int, int]:
        value = 0
        while True:
            if pos >= end:
                raise ValueError("truncated ROMFS varuint")
            b = image[pos]
            pos += 1
            value = (value << 7) | (b & 0x7F)
            if not b & 0x80:
                return value, pos

    found: dict[str, tuple[int, int]] = {}

    def walk(pos: int, end: int, prefix: str) -> None:
        while pos < end:
            kind, pos = read_varuint(pos, end)
            length, pos = read_varuint(pos, end)
            nxt = pos + length
            if kind in (KIND_DIRECTORY, KIND_FILE):
                name_len, p = read_varuint(pos, nxt)
                name = image[p:p + name_len].decode()
                p += name_len
                if kind == KIND_DIRECTORY:
                    walk(p, nxt, prefix + name + "/")
                else:
                    while p < nxt:
                        k, p = read_varuint(p, nxt)
                        n, p = read_varuint(p, nxt)
                        if k == KIND_DATA:
                            found[prefix + name] = (p, n)
                        p += n
            pos = nxt

    kind, pos = read_varuint(0, len(image))
    if kind != KIND_FILESYSTEM:
        raise ValueError("not a ROMFS image")
    length, pos = read_varuint(pos, len(image))
    walk(pos, pos + length, "")
    return found
