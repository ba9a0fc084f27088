"""Host tools for the tflm MicroPython module."""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Looked up on use: the firmware build's fit check (tflm_host.boards)
    # runs from a checkout before the engine extension is built.
    if name == "__version__":
        from ._engine import VERSION  # engine/version.h: the module's own number

        return VERSION
    raise AttributeError(f"module 'tflm_host' has no attribute {name!r}")
