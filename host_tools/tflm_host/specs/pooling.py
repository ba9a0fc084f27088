"""AVERAGE_POOL_2D and MAX_POOL_2D (kernels/pooling.c)."""

from . import register


def _data(model, sg, op) -> int:
    # pool_data_t: 16 bytes of window geometry, six int32 sizes, the clamp range.
    return 48


register("AVERAGE_POOL_2D", _data)
register("MAX_POOL_2D", _data)
