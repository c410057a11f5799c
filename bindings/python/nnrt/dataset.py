"""Datasets: examples and labels in host memory, ready for batching."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import numpy as np

from . import _capi
from ._core import Handle, Ref, check, new_ref, read_value
from .array import Array, from_numpy


class Dataset(Handle):
    """Examples and their labels (nnrt_dataset), made by Context.dataset() from NumPy arrays or
    Context.load_dataset() from IDX, CSV or text files. Immutable: many trainers and evaluations may
    read one at once. len(dataset) is the number of examples."""

    _kind = "dataset"

    def __init__(self, ref: Ref, ctx: Ref):
        super().__init__(ref)
        self._ctx = ctx  # to make the arrays examples() returns

    def __len__(self) -> int:
        return read_value(_capi.lib().nnrt_dataset_size, ctypes.c_int64, self._ptr)

    @property
    def size(self) -> int:
        """The number of examples."""
        return len(self)

    def examples(self, start: int = 0, count: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Examples [start, start + count) (to the end without count) as NumPy arrays: features as
        float32 (scaled as the dataset's spec says) and labels as int64 class indices or float32
        targets. Two copies each: into nnrt arrays (nnrt_dataset_examples), then into NumPy."""
        if count is None:
            count = len(self) - start
        features, labels = ctypes.c_void_p(), ctypes.c_void_p()
        check(_capi.lib().nnrt_dataset_examples(self._ctx.ptr, self._ptr, start, count, ctypes.byref(features),
                                                ctypes.byref(labels)))
        f = Array(new_ref(features, "nnrt_array_release"))
        y = Array(new_ref(labels, "nnrt_array_release"))
        return f.numpy(), y.numpy()

    def __repr__(self) -> str:
        return "<nnrt.Dataset closed>" if self.closed else f"<nnrt.Dataset {len(self)} examples>"


def from_arrays(ctx: Ref, features: Any, labels: Any) -> Dataset:
    """nnrt_dataset_from_arrays from NumPy data: each is copied into an nnrt Array, which the dataset
    copies again into its own host memory (the C API takes arrays, not host pointers)."""
    x = features if isinstance(features, Array) else from_numpy(ctx, features)
    y = labels if isinstance(labels, Array) else from_numpy(ctx, labels)
    out = ctypes.c_void_p()
    check(_capi.lib().nnrt_dataset_from_arrays(ctx.ptr, x._ptr, y._ptr, ctypes.byref(out)))
    return Dataset(new_ref(out, "nnrt_dataset_release"), ctx)
