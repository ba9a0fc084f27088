"""MEAN and SUM (kernels/reduce.c)."""

import numpy as np

from . import register, tensor


def _data(model, sg, op) -> int:
    # red_data_t is 24 bytes, then an extent and a stride per folded loop
    # (kept and reduced dimensions, dimensions of extent 1 dropped).
    inp, axis = tensor(sg, op, 0), tensor(sg, op, 1)
    nd = len(inp.shape)
    reduced = [False] * nd
    if nd and axis.data is not None:
        for a in np.frombuffer(axis.data, dtype="<i4"):
            reduced[int(a) + nd if a < 0 else int(a)] = True
    loops, last = 0, None
    for e, r in zip(inp.shape, reduced):
        if e == 1:
            continue
        if last != r:
            loops += 1
        last = r
    return 24 + 8 * loops


register("MEAN", _data)
register("SUM", _data)
