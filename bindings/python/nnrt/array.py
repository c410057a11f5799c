"""nnrt arrays and their dtypes, to and from NumPy.

Where copies happen: an Array made from a NumPy array (Context.array) is one copy, made by
nnrt_array_from_host straight from the NumPy array's memory when it is C-contiguous, native-endian
and of an nnrt dtype (otherwise NumPy makes a contiguous copy first, a second one); Array.numpy() is
one copy, nnrt_array_to_host writing straight into the new NumPy array's memory. wrap_numpy makes an
Array over a NumPy array's own memory, strides and all, with no copy (nnrt_array_wrap_host); the
model's predictions use it for their float32 inputs and predict_into's output.
"""
from __future__ import annotations

import ctypes
import enum
import itertools
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _capi
from ._core import Handle, Ref, check, dumps, new_ref, read_value
from .errors import DtypeError, Status


class DType(enum.IntEnum):
    """nnrt_dtype (nnrt.h)."""

    F32 = 1
    F64 = 2
    F16 = 3
    BF16 = 4  # the upper half of an f32; NumPy has no such type, so it comes out as float32
    I32 = 5
    I64 = 6
    U8 = 7
    BOOL = 8
    I8 = 9  # signed bytes: quantized weights (Model.quantize); copied and converted, not computed on

    @property
    def itemsize(self) -> int:
        """Bytes per element (nnrt_dtype_size)."""
        return int(_capi.lib().nnrt_dtype_size(int(self)))

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype Array.numpy() returns for this dtype (float32 for BF16)."""
        return _NUMPY[self]


_NUMPY = {
    DType.F32: np.dtype(np.float32), DType.F64: np.dtype(np.float64), DType.F16: np.dtype(np.float16),
    DType.BF16: np.dtype(np.float32), DType.I32: np.dtype(np.int32), DType.I64: np.dtype(np.int64),
    DType.U8: np.dtype(np.uint8), DType.BOOL: np.dtype(np.bool_), DType.I8: np.dtype(np.int8),
}
_FROM_NUMPY = {v: k for k, v in _NUMPY.items() if k != DType.BF16}
_NAMES = {"f32": DType.F32, "f64": DType.F64, "f16": DType.F16, "bf16": DType.BF16, "i32": DType.I32,
          "i64": DType.I64, "u8": DType.U8, "bool": DType.BOOL, "i8": DType.I8}

DTypeLike = Union[DType, str, np.dtype, type]


def as_dtype(dtype: DTypeLike) -> DType:
    """A DType from a DType, an nnrt name ("f32", "bf16") or a NumPy dtype; DtypeError otherwise."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype.lower() in _NAMES:
        return _NAMES[dtype.lower()]
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        np_dtype = None
    if np_dtype is not None and np_dtype.newbyteorder("=") in _FROM_NUMPY:
        return _FROM_NUMPY[np_dtype.newbyteorder("=")]
    raise DtypeError(f"nnrt has no dtype for {dtype!r}; it takes float32, float64, float16, int32, int64, "
                     "uint8, int8 and bool (and bf16 by name)")


def _shape_arg(shape) -> Tuple[int, Any]:
    shape = tuple(int(d) for d in shape)
    return len(shape), (ctypes.c_int64 * max(len(shape), 1))(*shape)


class Array(Handle):
    """A typed n-dimensional array on a context's device (nnrt_array). Made by Context.array(),
    Context.zeros() and Context.op(); immutable once made and safe to read from many threads.
    np.asarray(array) works too (a copy)."""

    _kind = "array"

    def __init__(self, ref: Ref):
        super().__init__(ref)

    def _info(self):
        dtype, ndim = ctypes.c_int(), ctypes.c_int32()
        shape = (ctypes.c_int64 * _capi.MAX_DIMS)()
        check(_capi.lib().nnrt_array_info(self._ptr, ctypes.byref(dtype), ctypes.byref(ndim), shape))
        return DType(dtype.value), tuple(shape[: ndim.value])

    @property
    def dtype(self) -> DType:
        return self._info()[0]

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._info()[1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return read_value(_capi.lib().nnrt_array_nbytes, ctypes.c_size_t, self._ptr)

    def numpy(self) -> np.ndarray:
        """A new NumPy array holding a copy of the elements (waits for pending device work). BF16
        elements come out as float32, exactly (a bfloat16 is the upper half of a float32)."""
        dtype, shape = self._info()
        if dtype == DType.BF16:
            bits = np.empty(shape, dtype=np.uint16)
            check(_capi.lib().nnrt_array_to_host(self._ptr, bits.ctypes.data, bits.nbytes))
            return (bits.astype(np.uint32) << 16).view(np.float32)
        out = np.empty(shape, dtype=_NUMPY[dtype])
        check(_capi.lib().nnrt_array_to_host(self._ptr, out.ctypes.data, out.nbytes))
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d nnrt array")
        return shape[0]

    def __repr__(self) -> str:
        if self.closed:
            return "<nnrt.Array closed>"
        dtype, shape = self._info()
        return f"<nnrt.Array {dtype.name.lower()} {list(shape)}>"


def from_numpy(ctx: Ref, data: Any, dtype: Optional[DTypeLike] = None) -> Array:
    """A new Array on the context `ctx` holding a copy of `data` (a NumPy array or anything
    np.asarray takes), converted to `dtype` first when one is given."""
    target = as_dtype(dtype) if dtype is not None else None
    if target == DType.BF16:
        # No NumPy bfloat16: the f32 values go in and nnrt rounds them (to nearest even).
        f32 = from_numpy(ctx, data, DType.F32)
        return _cast(ctx, f32, "bf16")
    a = np.asarray(data, dtype=target.numpy if target is not None else None)
    if a.dtype.kind == "O" or (target is None and a.dtype.newbyteorder("=") not in _FROM_NUMPY):
        raise DtypeError(f"nnrt has no dtype for NumPy's {a.dtype}; convert it first (float32, float64, "
                         "float16, int32, int64, uint8, int8 or bool), or pass dtype=")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.c_contiguous:
        a = a.copy(order="C")  # (not np.ascontiguousarray: it makes a 0-d array 1-d)
    ndim, shape = _shape_arg(a.shape)
    out = ctypes.c_void_p()
    check(_capi.lib().nnrt_array_from_host(ctx.ptr, int(_FROM_NUMPY[a.dtype]), ndim, shape,
                                           a.ctypes.data if a.size else None, a.nbytes, ctypes.byref(out)))
    return Array(new_ref(out, "nnrt_array_release"))


# NumPy arrays lent to nnrt by wrap_numpy, by the token passed to nnrt as the release callback's
# `user`: each stays here, alive, until nnrt calls _on_release for it (once, when no nnrt array uses
# its memory any more). The ctypes callback is made once and lives as long as the module.
_LENT: Dict[int, np.ndarray] = {}
_tokens = itertools.count(1)


def _on_release(_data, user) -> None:
    try:
        _LENT.pop(user, None)
    except Exception:  # noqa: BLE001 - at interpreter exit the module may be half gone
        pass


_RELEASE = _capi.RELEASE_FN(_on_release)


def element_strides(a: np.ndarray) -> Optional[Tuple[int, ...]]:
    """a's strides counted in elements, as nnrt_array_wrap_host takes them; None when one is
    negative or not a whole number of elements (such memory must be copied)."""
    item = a.itemsize
    if any(s < 0 or s % item for s in a.strides):
        return None
    return tuple(s // item for s in a.strides)


_NO_RELEASE = _capi.RELEASE_FN()  # NULL: nnrt calls no function when it lets go


def wrap_numpy(ctx: Ref, a: Any, for_call: bool = False) -> Optional[Array]:
    """An Array over the memory of the NumPy array `a`, used in place (nnrt_array_wrap_host): reads
    see a's current elements and nnrt_model_predict_into writes into them. `a` is kept alive until
    nnrt lets go of the memory (closing the Array does, unless an nnrt view of it lives on). The
    caller must not change `a` while nnrt may read it.

    Returns None where nnrt cannot use the memory in place, for the caller to copy instead: not an
    ndarray of an nnrt dtype in native byte order, empty, misaligned, of strides that are negative
    or not whole elements, or a context whose arrays are not in host memory (a GPU backend).

    for_call: the caller closes the Array within one call of its own, before `a` can go, and lends
    it only to nnrt calls that keep no reference (predictions): then no release callback is needed,
    which saves its cost per call."""
    if not isinstance(a, np.ndarray) or a.size == 0 or a.ndim > _capi.MAX_DIMS:
        return None
    data = a.__array_interface__["data"][0]
    if not a.dtype.isnative or a.dtype not in _FROM_NUMPY or data % a.itemsize:
        return None
    strides = element_strides(a)
    if strides is None:
        return None
    ndim, shape = _shape_arg(a.shape)
    c_strides = (ctypes.c_int64 * max(ndim, 1))(*strides)
    extent = sum((d - 1) * s for d, s in zip(a.shape, a.strides)) + a.itemsize
    token = None if for_call else next(_tokens)
    if token is not None:
        _LENT[token] = a
    out = ctypes.c_void_p()
    lib = _capi.lib()
    status = lib.nnrt_array_wrap_host(ctx.ptr, int(_FROM_NUMPY[a.dtype]), ndim, shape, c_strides, data, extent,
                                      _NO_RELEASE if for_call else _RELEASE, token, ctypes.byref(out))
    if status != 0:
        _LENT.pop(token, None)  # on failure nnrt keeps nothing and never calls release
        if status == Status.UNSUPPORTED:
            return None
        check(status)
    return Array(new_ref(out, "nnrt_array_release"))


def zeros(ctx: Ref, shape, dtype: DTypeLike = DType.F32) -> Array:
    ndim, c_shape = _shape_arg(shape)
    out = ctypes.c_void_p()
    check(_capi.lib().nnrt_array_create(ctx.ptr, int(as_dtype(dtype)), ndim, c_shape, ctypes.byref(out)))
    return Array(new_ref(out, "nnrt_array_release"))


def run_op(ctx: Ref, name: str, inputs, attrs: Optional[dict], n_outputs: int):
    """nnrt_op: inputs are Arrays (or NumPy data, copied in first); returns the new Arrays."""
    arrays = [x if isinstance(x, Array) else from_numpy(ctx, x) for x in inputs]
    c_inputs = (ctypes.c_void_p * max(len(arrays), 1))(*[a._ptr for a in arrays])
    c_outputs = (ctypes.c_void_p * max(n_outputs, 1))()
    attrs_json = dumps(attrs).encode() if attrs else None
    check(_capi.lib().nnrt_op(ctx.ptr, name.encode(), c_inputs, len(arrays), attrs_json, c_outputs, n_outputs))
    return [Array(Ref(c_outputs[i], _capi.lib().nnrt_array_release)) for i in range(n_outputs)]


def _cast(ctx: Ref, a: Array, dtype_name: str) -> Array:
    return run_op(ctx, "cast", [a], {"dtype": dtype_name}, 1)[0]
