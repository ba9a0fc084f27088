"""Data-movement kernels: RESHAPE, SQUEEZE, EXPAND_DIMS (kernels/reshape.c),
CONCATENATION, PAD, PADV2, STRIDED_SLICE, SLICE, SPLIT, SPLIT_V (split.c),
PACK, UNPACK (pack.c), TRANSPOSE, GATHER, CAST. None uses scratch memory."""

from . import register


def _fixed(size: int):
    return lambda model, sg, op: size


# reshape_data_t: the byte count to copy.
for _op in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
    register(_op, _fixed(4))

# concat_data_t (outer, count) and the bytes each input adds per outer step.
register("CONCATENATION", lambda model, sg, op: 8 + 4 * len(op.inputs))

# pad_data_t: sizes, pad value, 5-D output shape and copy window.
register("PAD", _fixed(68))
register("PADV2", _fixed(68))

# ss_data_t: element size, 5-D shape, start, stop and stride.
register("STRIDED_SLICE", _fixed(84))

# slice_data_t: flags, output count, 5-D shape, start and stop.
register("SLICE", _fixed(68))

# split_data_t (outer, count) and the bytes each output takes per outer step.
register("SPLIT", lambda model, sg, op: 8 + 4 * len(op.outputs))
register("SPLIT_V", lambda model, sg, op: 8 + 4 * len(op.outputs))

# pack_data_t: outer, count, bytes per piece.
register("PACK", _fixed(12))
register("UNPACK", _fixed(12))

# transpose_data_t: element size, 5-D output shape, input strides.
register("TRANSPOSE", _fixed(44))

# gather_data_t: batch, outer, coords, axis size, inner bytes.
register("GATHER", _fixed(20))

# cast_data_t: types and count.
register("CAST", _fixed(8))
