"""Contexts: the backend, device, threads and memory cache that everything else is made on."""
from __future__ import annotations

import ctypes
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _capi
from ._core import Handle, Options, check, dumps, new_ref, options_json, path_bytes, read_json
from .array import Array, DType, DTypeLike, from_numpy, run_op, zeros
from .dataset import Dataset, from_arrays
from .errors import UnsupportedError
from .model import Model
from .run_options import RunOptions, run_call


class Context(Handle):
    """A backend, a device, a thread pool and a memory cache (nnrt_context_create).

    Options come as a dict (or JSON text) and as keyword arguments, which win::

        ctx = nnrt.Context(backend="reference", threads=2, seed=1)
        ctx = nnrt.Context({"backend": "onednn", "cache": {"max_cached_bytes": 1 << 28}})

    Keys are those of nnrt_context_create in nnrt.h (backend, device, strict, threads, deterministic,
    seed, default_dtype, map_checkpoints, cache); an unknown key raises InvalidArgumentError naming it. A context may
    be shared between threads. Everything made from it keeps it alive, so it may be closed first.
    """

    _kind = "context"

    def __init__(self, options: Options = None, **kwargs: Any):
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_context_create(options_json(options, kwargs), ctypes.byref(out)))
        super().__init__(new_ref(out, "nnrt_context_release"))

    # --- description ------------------------------------------------------------------------------
    def describe(self) -> Dict[str, Any]:
        """nnrt_context_describe as a dict: version, backend, device, threads, backends, plugins
        (with the reason one did not load), devices, cache statistics, the ONNX converter."""
        return read_json(_capi.lib().nnrt_context_describe, self._ptr)

    @property
    def backend(self) -> str:
        """The selected backend's name ("onednn", "reference", ...)."""
        return self.describe()["backend"]

    @property
    def threads(self) -> int:
        return int(self.describe()["threads"])

    # --- arrays -------------------------------------------------------------------------------------
    def array(self, data: Any, dtype: Optional[DTypeLike] = None) -> Array:
        """A new Array holding a copy of `data` (a NumPy array, or anything np.asarray takes),
        converted to `dtype` first when given ("f32", DType.BF16, np.float32, ...). A NumPy dtype
        nnrt has no counterpart for (complex, int16, object) raises DtypeError."""
        return from_numpy(self._hold(), data, dtype)

    def zeros(self, shape: Sequence[int], dtype: DTypeLike = DType.F32) -> Array:
        """A new zero-filled Array (nnrt_array_create)."""
        return zeros(self._hold(), shape, dtype)

    def op(self, name: str, *inputs: Any, outputs: int = 1, **attrs: Any) -> Union[Array, List[Array]]:
        """Runs nnrt_op `name` (add, matmul, softmax, cast, conv2d, ...; nnrt.h lists them) on the
        inputs (Arrays, or NumPy data copied in first) with attributes as keyword arguments::

            ctx.op("matmul", a, b, transpose_b=True)
            ctx.op("sum", a, axes=[1], keepdims=True)

        Returns the output Array, or a list of them when outputs > 1."""
        result = run_op(self._hold(), name, inputs, attrs, outputs)
        return result[0] if outputs == 1 else result

    # --- models -------------------------------------------------------------------------------------
    def model(self, config: Union[Dict[str, Any], str, os.PathLike]) -> Model:
        """Builds a model (nnrt_model_create) from a config dict, JSON text, or a path to a JSON file
        (a pathlib.Path or other os.PathLike; a plain str is taken as JSON text)."""
        if isinstance(config, os.PathLike):
            with open(config, encoding="utf-8") as f:
                text = f.read()
        elif isinstance(config, str):
            text = config
        else:
            text = dumps(config)
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_model_create(self._ptr, text.encode("utf-8"), ctypes.byref(out)))
        return Model(new_ref(out, "nnrt_model_release"), self._hold())

    def load_model(self, path: Union[str, os.PathLike], *, run_options: Optional[RunOptions] = None) -> Model:
        """Loads a model saved by Model.save or Trainer.save (a safetensors file) onto this context.
        run_options (RunOptions) can stop the load between its stages: CancelledError,
        DeadlineExceededError (no model is made)."""
        out = ctypes.c_void_p()
        lib = _capi.lib()
        if run_options is None:
            check(lib.nnrt_model_load(self._ptr, path_bytes(path), ctypes.byref(out)))
        else:
            run_call(run_options, lambda o: lib.nnrt_model_load_ex(self._ptr, path_bytes(path), o, ctypes.byref(out)))
        return Model(new_ref(out, "nnrt_model_release"), self._hold())

    def import_onnx(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview],
                    options: Options = None, *, run_options: Optional[RunOptions] = None, **kwargs: Any) -> Model:
        """Imports an ONNX model from a file path, or from the bytes of one (bytes or a writable
        buffer are read in place; external data then cannot be read). Options (nnrt.h,
        nnrt_model_import_onnx): batch, batch_axis, input, loss, e.g. import_onnx(path, loss="nll")
        to train it. run_options (RunOptions) can stop an import from a path between its stages
        (nnrt has none for an import from memory, which raises UnsupportedError with them)."""
        opts = options_json(options, kwargs)
        out = ctypes.c_void_p()
        lib = _capi.lib()
        if isinstance(source, (bytes, bytearray, memoryview)):
            if run_options is not None:
                raise UnsupportedError("run_options stop an ONNX import from a file only: nnrt has no run options "
                                       "for nnrt_model_import_onnx_memory")
            # bytes go in as they are; a writable buffer through from_buffer; only a read-only
            # buffer other than bytes is copied (ctypes cannot point into it).
            if isinstance(source, bytes):
                data, nbytes = source, len(source)
            else:
                view = memoryview(source).cast("B")
                nbytes = view.nbytes
                if view.readonly:
                    data = bytes(view)
                else:
                    data = ctypes.addressof((ctypes.c_char * nbytes).from_buffer(view)) if nbytes else None
            check(lib.nnrt_model_import_onnx_memory(self._ptr, data, nbytes, opts, ctypes.byref(out)))
        elif run_options is None:
            check(lib.nnrt_model_import_onnx(self._ptr, path_bytes(source), opts, ctypes.byref(out)))
        else:
            run_call(run_options,
                     lambda o: lib.nnrt_model_import_onnx_ex(self._ptr, path_bytes(source), opts, o, ctypes.byref(out)))
        return Model(new_ref(out, "nnrt_model_release"), self._hold())

    # --- datasets -----------------------------------------------------------------------------------
    def dataset(self, features: Any, labels: Any) -> Dataset:
        """A Dataset from NumPy arrays whose first dimension counts the examples: features [N, ...]
        of a numeric dtype, labels [N] class indices (int32, int64 or uint8) or [N, ...] float
        targets (nnrt_dataset_from_arrays; the data is copied, so the arrays may change after)."""
        return from_arrays(self._hold(), features, labels)

    def load_dataset(self, spec: Options = None, **kwargs: Any) -> Dataset:
        """A Dataset from a spec (nnrt_dataset_load): format "idx", "csv" or "text" with its keys,
        as a dict, JSON text or keyword arguments::

            ctx.load_dataset(format="csv", path="train.csv", label_column=-1, header=True)
        """
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_dataset_load(self._ptr, options_json(spec, kwargs) or b"{}", ctypes.byref(out)))
        return Dataset(new_ref(out, "nnrt_dataset_release"), self._hold())
