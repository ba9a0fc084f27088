"""Host tools for the tflm MicroPython module."""

from ._engine import VERSION as __version__  # engine/version.h: the module's own number

__all__ = ["__version__"]
