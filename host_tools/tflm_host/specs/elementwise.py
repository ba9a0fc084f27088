"""ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM (kernels/add_sub.c, mul.c, div.c,
maximum_minimum.c, with the broadcast plan of kernels/broadcast.c)."""

from . import register, tensor


def broadcast_loops(a: tuple, b: tuple, out: tuple) -> int:
    """Loops of the broadcast plan, as tflm_bcast_plan() fuses them."""
    rank = max(len(a), len(b), len(out))

    def dim(shape, i):
        return shape[len(shape) - 1 - i] if i < len(shape) else 1

    acc1 = acc2 = 1
    loops: list[list[int]] = []  # [extent, step1, step2]
    empty = False
    for i in range(rank):
        o, d1, d2 = dim(out, i), dim(a, i), dim(b, i)
        if o == 0:
            empty = True
        if o == 1:
            continue
        s1 = 0 if d1 == 1 else acc1
        s2 = 0 if d2 == 1 else acc2
        if loops:
            p = loops[-1]
            ok1 = s1 == 0 if p[1] == 0 else (s1 == acc1 and s1 != 0)
            ok2 = s2 == 0 if p[2] == 0 else (s2 == acc2 and s2 != 0)
            if ok1 and ok2:
                p[0] *= o
                acc1 *= d1
                acc2 *= d2
                continue
        loops.append([o, s1, s2])
        acc1 *= d1
        acc2 *= d2
    if empty:
        return 0
    return max(len(loops), 1)


def _plan_bytes(sg, op) -> int:
    a, b, out = tensor(sg, op, 0), tensor(sg, op, 1), tensor(sg, op, 0, output=True)
    return 4 + 12 * broadcast_loops(tuple(a.shape), tuple(b.shape), tuple(out.shape))


# Kernel data structs: add_data_t/sub_data_t 40 bytes, mul_data_t/div_data_t
# 28, minmax_data_t 4; the broadcast plan follows.
register("ADD", lambda model, sg, op: 40 + _plan_bytes(sg, op))
register("SUB", lambda model, sg, op: 40 + _plan_bytes(sg, op))
register("MUL", lambda model, sg, op: 28 + _plan_bytes(sg, op))
register("DIV", lambda model, sg, op: 28 + _plan_bytes(sg, op))
register("MINIMUM", lambda model, sg, op: 4 + _plan_bytes(sg, op))
register("MAXIMUM", lambda model, sg, op: 4 + _plan_bytes(sg, op))
