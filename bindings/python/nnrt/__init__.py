"""nnrt for Python: a thin ctypes layer over nnrt's C API (include/nnrt/nnrt.h, which stays the
reference for what every call does), with NumPy arrays in and out.

    import numpy as np, nnrt

    with nnrt.Context(threads=2) as ctx:
        model = ctx.model({"input": [4], "layers": [
            {"type": "dense", "units": 16, "activation": "relu"},
            {"type": "output", "units": 3, "loss": "nll"}]})
        trainer = model.trainer(optimizer={"type": "adam", "learning_rate": 0.01}, batch_size=16)
        trainer.fit((x, y), epochs=5, progress=lambda p: p.epoch_end and print(p.validation_score))
        print(model.evaluate(x, y).accuracy, model.predict(x[:2]))

Every handle (Context, Array, Model, Dataset, Trainer, Evaluation, RunOptions) has close() and works with
`with`; what is made from a handle keeps it alive, so any close order is safe. Failures raise
nnrt.Error subclasses carrying `.status` and `.message`. The library is found through NNRT_LIB_DIR,
pkg-config, the system loader, a copy bundled in the package, or the checkout's build folder, or
given to load_library().
"""
from __future__ import annotations

import ctypes
from typing import Callable, Optional

from . import _capi
from ._capi import load_library
from .array import Array, DType
from .context import Context
from .dataset import Dataset
from .errors import (BackendError, CancelledError, ClosedError, CorruptError, DeadlineExceededError, DtypeError, Error,
                     InternalError, InvalidArgumentError, IoError, NoDeviceError, OutOfMemoryError, ShapeError,
                     Status, UnsupportedError, VersionError)
from .evaluation import Evaluation
from .model import Model
from .run_options import RunOptions
from .trainer import Progress, Trainer

__version__ = "0.1.0"

__all__ = [
    "Array", "BackendError", "CancelledError", "ClosedError", "Context", "CorruptError", "DType", "Dataset",
    "DeadlineExceededError", "DtypeError", "Error", "Evaluation", "InternalError", "InvalidArgumentError", "IoError",
    "Model", "NoDeviceError", "OutOfMemoryError", "Progress", "RunOptions", "ShapeError", "Status", "Trainer",
    "UnsupportedError", "VersionError", "LOG_DEBUG", "LOG_INFO", "LOG_WARN", "LOG_ERROR", "abi_version", "library_path",
    "load_library", "set_log_callback", "status_name", "version",
]

LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR = 0, 1, 2, 3


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _capi.lib().nnrt_version_string().decode()


def abi_version() -> int:
    """The ABI major the library was built with (this package needs 1)."""
    return int(_capi.lib().nnrt_abi_version())


def library_path() -> str:
    """Where the loaded libnnrt came from (loading it if need be)."""
    return _capi.lib().path


def status_name(status: int) -> str:
    """nnrt_status_name: "NNRT_ERR_SHAPE" for 3, "NNRT_ERR_UNKNOWN" for a value that is no status."""
    return _capi.lib().nnrt_status_name(int(status)).decode()


_log_callback = None  # the ctypes callback nnrt holds: it must outlive its registration


def set_log_callback(fn: Optional[Callable[[int, str], None]], min_level: int = LOG_WARN) -> None:
    """Sends nnrt's log messages of level >= min_level to fn(level, message), process-wide; None
    restores the default (lines on stderr). fn may be called from any thread nnrt runs, must not
    call nnrt, and should not raise (an exception is printed and dropped). For Python's logging:
    set_log_callback(lambda level, msg: logger.log(10 * (level + 1), msg), nnrt.LOG_DEBUG)."""
    global _log_callback
    lib = _capi.lib()
    if fn is None:
        lib.nnrt_set_log_callback(_capi.LOG_FN(), None, int(min_level))
        _log_callback = None
        return

    def trampoline(level: int, message: bytes, _user) -> None:
        fn(level, message.decode("utf-8", "replace"))

    callback = _capi.LOG_FN(trampoline)
    lib.nnrt_set_log_callback(callback, None, int(min_level))
    _log_callback = callback


def _restore_log_default() -> None:
    # nnrt's own threads may log after the interpreter is gone; they must not call into it.
    if _log_callback is not None and _capi._lib is not None:
        _capi._lib.nnrt_set_log_callback(_capi.LOG_FN(), None, LOG_WARN)


import atexit  # noqa: E402

atexit.register(_restore_log_default)
del ctypes
