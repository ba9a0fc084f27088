"""Host tools for the tflm MicroPython module."""

__version__ = "0.1.0"
