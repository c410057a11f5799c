"""Run options (nnrt_run_options): stopping a long call early, from another thread, after a
timeout, or when an abort callback says so.

    with nnrt.RunOptions(timeout=0.5) as options:
        threading.Timer(0.1, options.cancel).start()     # cancel() is safe from any thread
        model.predict(x, run_options=options)            # CancelledError or DeadlineExceededError

Model.predict, predict_array, predict_into and evaluate, and Context.load_model and import_onnx
(from a path) take `run_options=`.
"""
from __future__ import annotations

import ctypes
import datetime
import threading
from typing import Any, Callable, List, Optional, Union

from . import _capi
from ._core import Handle, Ref, check
from .errors import Status, error_for

Seconds = Union[None, float, int, datetime.timedelta]


class _OptionsRef(Ref):
    """The C run options and the ctypes callbacks handed to them, which must live as long as the C
    side may call them: as long as this reference (calls running with the options hold it too)."""

    __slots__ = ("callbacks",)

    def __init__(self, ptr: int, release: Callable[[int], None]):
        super().__init__(ptr, release)
        self.callbacks: List[Any] = []


class RunOptions(Handle):
    """Cancellation, a timeout and an abort callback for the calls that can run long
    (nnrt_run_options). One RunOptions may serve any number of calls on any threads at once.

    - cancel() stops every call running with these options, and every later one, until reset();
      they raise CancelledError. It is safe from any thread (and from the abort callback).
    - timeout (seconds, or a datetime.timedelta; None or 0 for none) limits each call, counted from
      its start; a call past it raises DeadlineExceededError. Calls already running keep theirs.
    - abort, a callable with no arguments, is asked before every op and stage of a call, on the
      thread making the call; a true result stops the call with CancelledError. An exception it
      raises stops the call too: the call then raises CancelledError with that exception as its
      __cause__ (KeyboardInterrupt and other BaseExceptions are raised as they are). It must not call
      nnrt (cancel() excepted) and should be quick: it runs very often.

    A stopped call gives no output and leaves the model as it was. Use as a context manager, or
    close(); closing while calls still run with the options is safe (they keep them alive)."""

    _kind = "run options"

    def __init__(self, timeout: Seconds = None, abort: Optional[Callable[[], Any]] = None):
        lib = _capi.lib()
        out = ctypes.c_void_p()
        check(lib.nnrt_run_options_create(ctypes.byref(out)))
        super().__init__(_OptionsRef(out.value, lib.nnrt_run_options_release))
        self._timeout: Optional[float] = None
        self._abort: Optional[Callable[[], Any]] = None
        # Per thread: the exception the abort callback raised during this thread's current call.
        self._raised = threading.local()
        if timeout is not None:
            self.timeout = timeout
        if abort is not None:
            self.set_abort_callback(abort)

    def cancel(self) -> None:
        """Cancels every call running with these options and every later one, until reset()."""
        check(_capi.lib().nnrt_run_options_cancel(self._ptr))

    def reset(self) -> None:
        """Clears a cancellation, so that later calls run again (a stopped call stays stopped)."""
        check(_capi.lib().nnrt_run_options_reset(self._ptr))

    @property
    def timeout(self) -> Optional[float]:
        """The limit each call gets, in seconds; None for none."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: Seconds) -> None:
        if isinstance(seconds, datetime.timedelta):
            seconds = seconds.total_seconds()
        value = 0.0 if seconds is None else float(seconds)
        check(_capi.lib().nnrt_run_options_set_timeout(self._ptr, value))
        self._timeout = value or None

    @property
    def abort(self) -> Optional[Callable[[], Any]]:
        """The abort callback, or None."""
        return self._abort

    def set_abort_callback(self, fn: Optional[Callable[[], Any]]) -> None:
        """Sets the abort callback (None removes it); see the class. Set it before starting calls
        with these options."""
        ref = self._hold()
        lib = _capi.lib()
        if fn is None:
            check(lib.nnrt_run_options_set_abort_callback(ref.ptr, _capi.ABORT_FN(), None))
            self._abort = None
            return
        if not callable(fn):
            raise TypeError(f"the abort callback must be callable, not {type(fn).__name__}")
        raised = self._raised  # not self: the callback must not keep this object (and its Ref) in a cycle

        def trampoline(_user) -> int:
            try:
                return 1 if fn() else 0
            except BaseException as e:  # noqa: BLE001 - raised by the call once it has returned
                if getattr(raised, "error", None) is None:
                    raised.error = e
                return 1

        callback = _capi.ABORT_FN(trampoline)
        # Kept with the C options, never dropped before them: a call may still be running with the
        # previous callback when it is replaced.
        ref.callbacks.append(callback)
        check(lib.nnrt_run_options_set_abort_callback(ref.ptr, callback, None))
        self._abort = fn

    def __repr__(self) -> str:
        if self.closed:
            return "<nnrt.RunOptions closed>"
        return f"<nnrt.RunOptions timeout={self._timeout} abort={self._abort is not None}>"


def run_call(options: Optional[RunOptions], call: Callable[[Optional[int]], int]) -> None:
    """Runs call(pointer to the C run options, or None without options), a C call that takes run
    options and returns a status, and raises its error. The options are held for the duration of
    the call, so closing them on another thread meanwhile does not release them under it."""
    if options is None:
        check(call(None))
        return
    if not isinstance(options, RunOptions):
        raise TypeError(f"run_options must be an nnrt.RunOptions, not {type(options).__name__}")
    ref = options._hold()
    local = options._raised
    local.error = None
    try:
        status = call(ref.ptr)
        # Read at once: the next nnrt call on this thread may replace the message.
        message = _capi.lib().nnrt_last_error().decode("utf-8", "replace") if status else ""
    finally:
        raised, local.error = getattr(local, "error", None), None
    if raised is not None and not isinstance(raised, Exception):
        raise raised  # KeyboardInterrupt, SystemExit: not the callback's to turn into a cancellation
    if status:
        error = error_for(status, message)
        if raised is not None and status == Status.CANCELLED:
            raise error from raised
        raise error
