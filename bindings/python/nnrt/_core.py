"""What every handle class shares: checked calls, strings and JSON out of nnrt, JSON into it, and
the reference that owns a C handle."""
from __future__ import annotations

import ctypes
import json
import os
import signal
import threading
from typing import Any, Callable, Mapping, Optional, Union

from . import _capi
from .errors import ClosedError, error_for

Options = Union[None, str, Mapping[str, Any]]


def check(status: int) -> None:
    """Raises the exception for a failed call, with this thread's nnrt_last_error() message (read at
    once: the next nnrt call on this thread may replace it)."""
    if status != 0:
        raise error_for(status, _capi.lib().nnrt_last_error().decode("utf-8", "replace"))


def read_value(fn: Callable, ctype, *args):
    """Calls fn(*args, &out) with out of the ctypes type `ctype` and returns out's value."""
    out = ctype()
    check(fn(*args, ctypes.byref(out)))
    return out.value


def read_string(fn: Callable, *args) -> str:
    """Calls an nnrt function with the (buf, cap, len) string convention: asks the size, then reads.
    The text can grow between the two calls (a context's cache statistics), so it asks again then."""
    size = ctypes.c_size_t()
    check(fn(*args, None, 0, ctypes.byref(size)))
    while True:
        buf = ctypes.create_string_buffer(size.value + 1)
        check(fn(*args, buf, len(buf), ctypes.byref(size)))
        if size.value < len(buf):
            return buf.value.decode("utf-8")


def read_json(fn: Callable, *args) -> Any:
    return json.loads(read_string(fn, *args))


def _json_default(value: Any) -> Any:
    # NumPy scalars and arrays in options and configs (batch_size=np.int64(32), "input": shape).
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> str:
    """JSON text of a config or options object; NumPy scalars and arrays become numbers and lists."""
    return json.dumps(value, default=_json_default)


def options_json(options: Options, extra: Mapping[str, Any]) -> Optional[bytes]:
    """JSON text for an options argument: a dict (or JSON text) merged with keyword arguments; None
    when both are empty, which nnrt reads as the defaults."""
    if isinstance(options, str):
        if not extra:
            return options.encode("utf-8")
        options = json.loads(options)
    merged = dict(options or {})
    merged.update(extra)
    return dumps(merged).encode("utf-8") if merged else None


def path_bytes(path: Union[str, os.PathLike]) -> bytes:
    return os.fsencode(path)


class Interruptible:
    """Lets Ctrl-C stop a long C call that calls back into Python (fit, generate). Python runs a
    signal handler at the start of the next Python function on the main thread, which is the ctypes
    callback itself: a KeyboardInterrupt raised there would be outside the callback's own try, and
    ctypes would print and drop it. So, on the main thread and while SIGINT has Python's default
    handler, a handler that only notes the signal stands in for the call; the callback then asks
    the C call to stop, and KeyboardInterrupt is raised once it has returned."""

    def __init__(self):
        self.seen = False
        self._previous = None

    def _note(self, signum, frame) -> None:
        self.seen = True

    def __enter__(self) -> "Interruptible":
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._note)
        return self

    def __exit__(self, exc_type, *rest) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        if self.seen and exc_type is None:
            raise KeyboardInterrupt


class Ref:
    """One owned reference to a C handle, released when the last Python object holding it goes.
    Objects made from a handle hold its Ref when they call with it later (a Model holds its
    context's, to make its input arrays), so that closing the parent first is safe, as in C: the
    parent's close() drops its own hold, and the C release waits for the children's."""

    __slots__ = ("ptr", "_release", "__weakref__")

    def __init__(self, ptr: int, release: Callable[[int], None]):
        self.ptr = ptr
        self._release = release

    def __del__(self):
        # At interpreter exit the library may already be gone; a handle then dies with the process.
        try:
            self._release(self.ptr)
        except Exception:  # noqa: BLE001 - nothing can be reported from a finalizer
            pass


def new_ref(ptr: ctypes.c_void_p, release_name: str) -> Ref:
    fn = getattr(_capi.lib(), release_name)
    return Ref(ptr.value, fn)


class Handle:
    """Base of the public handle classes: close() (idempotent), `with`, and a check that the handle
    is still open before every call."""

    _kind = "handle"

    def __init__(self, ref: Ref):
        self._ref: Optional[Ref] = ref

    @property
    def _ptr(self) -> int:
        ref = self._ref
        if ref is None:
            raise ClosedError(f"this {self._kind} is closed")
        return ref.ptr

    def _hold(self) -> Ref:
        """The Ref, for a caller that keeps the handle alive through a long call."""
        self._ptr  # noqa: B018 - raises ClosedError
        return self._ref

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._ref is None

    def close(self) -> None:
        """Lets go of the C handle: it is released now unless an object made from it still needs it
        (a model its context, a trainer its model), which then releases it when it goes. Using this
        object afterwards raises ClosedError; closing twice is harmless."""
        self._ref = None

    def __enter__(self):
        self._ptr  # noqa: B018 - entering a closed handle is an error at once
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._ref is None else f"0x{self._ref.ptr:x}"
        return f"<nnrt.{type(self).__name__} {state}>"
