"""Mutants of a .tflite model, as the engine's fuzzer makes them
(tests/engine/fuzz_model.c) but in Python: half of the mutations hit the
words the readers follow (tests/model_spots.py: vector lengths, shapes,
tensor and buffer indices, types, opcode indices, option fields) with edge
values, the others are blind (bytes flipped, words overwritten, vtable
entries nudged, the file truncated)."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator

from model_spots import Spot, spots

EDGES = (0, 1, 2, 3, 4, 7, 8, 9, 16, 64, 200, 255, 256, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
         0xFFFFFFFE, 0xFFFFFF00)


def _edge(rng: random.Random, old: int, bits: int) -> int:
    mask = (1 << bits) - 1
    kind = rng.randrange(4)
    if kind == 0:
        return (old + 1) & mask
    if kind == 1:
        return (old - 1) & mask
    if kind == 2:
        return old ^ (1 << rng.randrange(bits))
    return rng.choice(EDGES) & mask


def _at_spot(buf: bytearray, rng: random.Random, s: Spot) -> None:
    if s.pos + s.size > len(buf):
        return
    if s.size == 1:
        buf[s.pos] = _edge(rng, buf[s.pos], 8)
    else:
        (old,) = struct.unpack_from("<I", buf, s.pos)
        struct.pack_into("<I", buf, s.pos, _edge(rng, old, 32))


def _blind(buf: bytearray, rng: random.Random) -> bytearray:
    n = len(buf)
    if n < 8:
        return buf
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(1 + rng.randrange(4)):
            buf[rng.randrange(n)] ^= 1 + rng.randrange(255)
    elif kind == 1:
        struct.pack_into("<I", buf, 4 * rng.randrange(n // 4), rng.getrandbits(32))
    elif kind == 2:
        struct.pack_into("<I", buf, 4 * rng.randrange(n // 4), rng.choice(EDGES))
    elif kind == 3:
        at = 2 * rng.randrange(n // 2)
        (v,) = struct.unpack_from("<H", buf, at)
        struct.pack_into("<H", buf, at, (v + rng.choice((4, -4))) & 0xFFFF)
    else:
        del buf[rng.randrange(n):]
    return buf


def mutants(data: bytes, seed: int, count: int) -> Iterator[bytes]:
    """`count` mutants of `data`, the same ones for the same seed."""
    rng = random.Random(seed)
    where = spots(data)
    for _ in range(count):
        buf = bytearray(data)
        for _ in range(1 + (rng.randrange(3) == 0)):
            if where and rng.randrange(2):
                _at_spot(buf, rng, rng.choice(where))
            else:
                buf = _blind(buf, rng)
        yield bytes(buf)
