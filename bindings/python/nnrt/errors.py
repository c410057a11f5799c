"""nnrt's status codes as exceptions: every failed call raises a subclass of Error that carries the
status and the library's message for that call."""
from __future__ import annotations

import enum
from typing import Dict, Optional, Type


class Status(enum.IntEnum):
    """nnrt_status (nnrt.h). Values never change meaning; new ones are appended."""

    OK = 0
    INVALID_ARGUMENT = 1
    OUT_OF_MEMORY = 2
    SHAPE = 3
    DTYPE = 4
    UNSUPPORTED = 5
    BACKEND = 6
    NO_DEVICE = 7
    IO = 8
    CORRUPT = 9
    VERSION = 10
    CANCELLED = 11
    INTERNAL = 12
    DEADLINE_EXCEEDED = 13


class Error(Exception):
    """A failed nnrt call. `status` is the Status (an int for a code this package does not know),
    `message` the text nnrt_last_error() gave for the call; str(error) is "NNRT_ERR_X: message"."""

    #: The status of this class's errors; Error itself stands for any status.
    default_status: int = -1

    def __init__(self, message: str, status: Optional[int] = None):
        if status is None:
            status = self.default_status
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.message = message
        super().__init__(message)

    def __reduce__(self):
        # Keeps the status across pickling (multiprocessing, a worker's error sent to its driver).
        return (self.__class__, (self.message, int(self.status)))

    @property
    def status_name(self) -> str:
        """The status's C name, e.g. "NNRT_ERR_SHAPE"."""
        if isinstance(self.status, Status):
            return "NNRT_OK" if self.status == Status.OK else f"NNRT_ERR_{self.status.name}"
        return "NNRT_ERR_UNKNOWN"

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}"


# Where a builtin exception says the same thing, the class derives from it too, so that code catching
# ValueError, TypeError or MemoryError catches nnrt's as well.
class InvalidArgumentError(Error, ValueError):
    """NNRT_ERR_INVALID_ARGUMENT: a bad value, malformed JSON, an unknown key, a wrong handle."""
    default_status = Status.INVALID_ARGUMENT


class ClosedError(InvalidArgumentError):
    """A handle used after close(). Raised by the package before any C call (a released handle is
    undefined behaviour in C), with the status nnrt gives a wrong handle."""


class OutOfMemoryError(Error, MemoryError):
    """NNRT_ERR_OUT_OF_MEMORY."""
    default_status = Status.OUT_OF_MEMORY


class ShapeError(Error, ValueError):
    """NNRT_ERR_SHAPE: shapes do not fit together; the message gives both."""
    default_status = Status.SHAPE


class DtypeError(Error, TypeError):
    """NNRT_ERR_DTYPE: a dtype the operation does not accept (also raised by the package for a NumPy
    dtype nnrt has no counterpart for)."""
    default_status = Status.DTYPE


class UnsupportedError(Error):
    """NNRT_ERR_UNSUPPORTED: a valid request this build or backend cannot do."""
    default_status = Status.UNSUPPORTED


class BackendError(Error):
    """NNRT_ERR_BACKEND: a backend failed to load or failed at run time."""
    default_status = Status.BACKEND


class NoDeviceError(Error):
    """NNRT_ERR_NO_DEVICE: the requested device does not exist here."""
    default_status = Status.NO_DEVICE


class IoError(Error):
    """NNRT_ERR_IO: a file could not be opened, read or written."""
    default_status = Status.IO


class CorruptError(Error):
    """NNRT_ERR_CORRUPT: a file or buffer is malformed, truncated or fails its checksum."""
    default_status = Status.CORRUPT


class VersionError(Error):
    """NNRT_ERR_VERSION: a file or plugin from an incompatible version."""
    default_status = Status.VERSION


class CancelledError(Error):
    """NNRT_ERR_CANCELLED: training stopped by Trainer.cancel(), or a call stopped by
    RunOptions.cancel() or its abort callback."""
    default_status = Status.CANCELLED


class InternalError(Error):
    """NNRT_ERR_INTERNAL: a bug in nnrt; please report it with the message."""
    default_status = Status.INTERNAL


class DeadlineExceededError(Error):
    """NNRT_ERR_DEADLINE_EXCEEDED: a call ran past its RunOptions' timeout; the message gives the
    limit and the time it ran."""
    default_status = Status.DEADLINE_EXCEEDED


BY_STATUS: Dict[int, Type[Error]] = {
    cls.default_status: cls
    for cls in (InvalidArgumentError, OutOfMemoryError, ShapeError, DtypeError, UnsupportedError,
                BackendError, NoDeviceError, IoError, CorruptError, VersionError, CancelledError,
                InternalError, DeadlineExceededError)
}


def error_for(status: int, message: str) -> Error:
    """The exception for a status: its class, or Error itself for a status this package predates."""
    return BY_STATUS.get(status, Error)(message, status)
