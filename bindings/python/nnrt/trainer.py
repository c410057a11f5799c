"""Trainers: an optimizer, its state and the training loop, with progress callbacks and
cancellation."""
from __future__ import annotations

import ctypes
import dataclasses
import math
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from . import _capi
from ._core import Handle, Interruptible, Ref, check, path_bytes, read_json
from .array import Array, from_numpy
from .dataset import Dataset, from_arrays
from .errors import ClosedError, InvalidArgumentError

if TYPE_CHECKING:
    from .model import Model

@dataclasses.dataclass(frozen=True)
class Progress:
    """What a progress callback receives (nnrt_progress): after every minibatch, and once more after
    every epoch with epoch_end True and validation_score filled in. Members a library too old to
    fill are None; the device ones are None where the backend cannot tell (a CPU)."""

    epoch: int  #: 0-based
    iteration: int  #: minibatches so far, over all epochs
    examples_seen: int
    loss: float  #: of the last minibatch
    learning_rate: float
    examples_per_second: float
    epoch_end: bool
    validation_score: Optional[float]  #: None when there is none
    batches_per_epoch: Optional[int] = None
    batch: Optional[int] = None  #: 0-based minibatch within the epoch
    device_utilization_percent: Optional[int] = None
    device_temperature_celsius: Optional[int] = None
    device_memory_used_bytes: Optional[int] = None
    device_memory_total_bytes: Optional[int] = None

    @classmethod
    def _from_c(cls, p: _capi.Progress) -> "Progress":
        later: Dict[str, Any] = {}
        for name, _ in _capi.Progress._fields_[9:]:
            field = getattr(_capi.Progress, name)
            if p.struct_size >= field.offset + field.size:
                value = getattr(p, name)
                later[name] = None if name.startswith("device_") and value < 0 else value
        score = p.validation_score
        return cls(epoch=p.epoch, iteration=p.iteration, examples_seen=p.examples_seen, loss=p.loss,
                   learning_rate=p.learning_rate, examples_per_second=p.examples_per_second,
                   epoch_end=bool(p.epoch_end), validation_score=None if math.isnan(score) else score, **later)


ProgressFn = Callable[[Progress], Any]


class Trainer(Handle):
    """An optimizer, its state and the training loop for one model (nnrt_trainer), made by
    Model.trainer(). Used by one thread at a time, except cancel(), which any thread may call. The
    trainer keeps its model alive and updates its parameters in place."""

    _kind = "trainer"

    def __init__(self, ref: Ref, model: "Model", ctx: Ref):
        super().__init__(ref)
        self._model = model
        self._ctx = ctx  # to make the arrays step() trains on
        self._fitting_thread: Optional[int] = None

    @property
    def _ptr(self) -> int:
        # nnrt.h: a progress callback must not call its trainer's functions (cancel excepted).
        if self._fitting_thread == threading.get_ident():
            raise InvalidArgumentError("a progress callback must not call its own trainer; return True to stop "
                                       "training, or call cancel()")
        return super()._ptr

    @property
    def model(self) -> "Model":
        """The Model this trainer trains (as it was handed over: closing it does not stop training)."""
        return self._model

    def fit(self, train: Union[Dataset, Tuple[Any, Any]], validation: Union[Dataset, Tuple[Any, Any], None] = None,
            epochs: int = 1, *, progress: Optional[ProgressFn] = None) -> Dict[str, Any]:
        """Trains for `epochs` passes over `train` (a Dataset or a (features, labels) pair of NumPy
        arrays), evaluating on `validation` after each (nnrt_trainer_fit). Calling fit again goes on
        where it stopped.

        progress(p: Progress) is called after every minibatch and every epoch on this thread;
        returning True stops training (stop reason "callback"), and an exception it raises stops
        training and is raised here. It may predict with the model, but must not call this trainer
        except cancel() (InvalidArgumentError). Ctrl-C stops training and raises KeyboardInterrupt.
        Returns Trainer.result. Raises CancelledError after cancel(), from any thread."""
        train_set = self._as_dataset(train)
        validation_set = None if validation is None else self._as_dataset(validation)
        raised: List[BaseException] = []
        interrupt = Interruptible()

        def trampoline(p, _user) -> int:
            try:
                if interrupt.seen:
                    return 1
                return 1 if progress is not None and progress(Progress._from_c(p.contents)) else 0
            except BaseException as e:  # noqa: BLE001 - raised again once fit returns
                raised.append(e)
                return 1

        # A callback is set even without `progress`: Python then runs between minibatches, so that
        # Ctrl-C stops training instead of waiting for fit to end.
        callback = _capi.PROGRESS_FN(trampoline)
        lib = _capi.lib()
        # Held for the call: a close() from another thread must not release the trainer under fit.
        hold = self._hold()
        check(lib.nnrt_trainer_set_progress(hold.ptr, callback, None))
        validation_ptr = validation_set._ptr if validation_set is not None else None
        self._fitting_thread = threading.get_ident()
        try:
            with interrupt:
                status = lib.nnrt_trainer_fit(hold.ptr, train_set._ptr, validation_ptr, int(epochs))
        finally:
            self._fitting_thread = None
            lib.nnrt_trainer_set_progress(hold.ptr, _capi.PROGRESS_FN(), None)
        if raised:
            raise raised[0]
        check(status)
        return self.result

    def step(self, x: Any, y: Any) -> float:
        """One optimisation step on a minibatch (NumPy or Arrays): x [N, <input shape>], y class
        indices [N] (int32/int64) or float targets. Returns the minibatch's mean loss before the
        update (nnrt_trainer_step)."""
        xa = x if isinstance(x, Array) else from_numpy(self._ctx, x)
        ya = y if isinstance(y, Array) else from_numpy(self._ctx, y)
        loss = ctypes.c_double()
        check(_capi.lib().nnrt_trainer_step(self._ptr, xa._ptr, ya._ptr, ctypes.byref(loss)))
        return loss.value

    def cancel(self) -> None:
        """Asks a running fit to stop after its current minibatch (it then raises CancelledError).
        Safe from any thread; before fit, the next fit stops at once."""
        ref = self._ref  # not self._ptr: a progress callback may cancel its own trainer
        if ref is None:
            raise ClosedError("this trainer is closed")
        check(_capi.lib().nnrt_trainer_cancel(ref.ptr))

    @property
    def result(self) -> Dict[str, Any]:
        """nnrt_trainer_result as a dict: epochs, iterations, stop_reason, best_epoch, best_score,
        last_loss, examples_per_second, history (per epoch), ..."""
        return read_json(_capi.lib().nnrt_trainer_result, self._ptr)

    @property
    def rank(self) -> int:
        """This process's rank when training with "distributed"; 0 otherwise."""
        return self._rank()[0]

    @property
    def world_size(self) -> int:
        """The number of ranks training together; 1 without "distributed"."""
        return self._rank()[1]

    def _rank(self) -> Tuple[int, int]:
        rank, world = ctypes.c_int32(), ctypes.c_int32()
        check(_capi.lib().nnrt_trainer_rank(self._ptr, ctypes.byref(rank), ctypes.byref(world)))
        return rank.value, world.value

    # --- checkpoints --------------------------------------------------------------------------------
    def save(self, path: Union[str, os.PathLike]) -> None:
        """Saves the model and the training state (optimizer state, epochs, steps, learning rate,
        seeds) atomically; Context.load_model reads the file too."""
        check(_capi.lib().nnrt_trainer_save(self._ptr, path_bytes(path)))

    def restore(self, path: Union[str, os.PathLike]) -> None:
        """Restores a checkpoint saved by save() (same model config and optimizer type), so that
        training goes on exactly where it stopped."""
        check(_capi.lib().nnrt_trainer_restore(self._ptr, path_bytes(path)))

    def _as_dataset(self, data: Union[Dataset, Tuple[Any, Any]]) -> Dataset:
        if isinstance(data, Dataset):
            return data
        try:
            features, labels = data
        except (TypeError, ValueError):
            raise TypeError("expected a Dataset or a (features, labels) pair") from None
        return from_arrays(self._ctx, features, labels)

    def __repr__(self) -> str:
        return "<nnrt.Trainer closed>" if self.closed else "<nnrt.Trainer>"
