"""Models: networks built from JSON configs, loaded from checkpoints or imported from ONNX."""
from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi
from ._core import (Handle, Interruptible, Options, Ref, check, dumps, new_ref, options_json, path_bytes,
                    read_json, read_value)
from .array import Array, from_numpy, wrap_numpy
from .dataset import Dataset, from_arrays
from .errors import DtypeError, InvalidArgumentError, ShapeError
from .evaluation import Evaluation
from .run_options import RunOptions, run_call

if TYPE_CHECKING:
    from .trainer import Trainer  # trainer.py imports this module


class Model(Handle):
    """A network and its parameters (nnrt_model). Made by Context.model(), Context.load_model() and
    Context.import_onnx(). predict and evaluate may run from many threads at once, also while a
    trainer trains the model. The model keeps its context alive."""

    _kind = "model"

    def __init__(self, ref: Ref, ctx: Ref):
        super().__init__(ref)
        self._ctx = ctx  # to make input arrays

    # --- inference ----------------------------------------------------------------------------------
    def predict(self, x: Any, *, run_options: Optional[RunOptions] = None) -> np.ndarray:
        """The model's first output for the batch `x` [N, <input shape>] (NumPy, any numeric dtype,
        or an Array), as a float32 NumPy array [N, <output shape>]: class probabilities for a softmax
        output. A float32 NumPy x is read in place, whatever its strides (see predict_array); the
        output is copied into NumPy (predict_into writes into an array of yours instead).
        run_options (RunOptions) can stop the call: CancelledError, DeadlineExceededError."""
        return self.predict_array(x, run_options=run_options).numpy()

    def predict_array(self, x: Any, *, run_options: Optional[RunOptions] = None) -> Array:
        """As predict, returning the output as an nnrt Array (no copy back to the host). A float32
        NumPy x is lent to nnrt for the call (nnrt_array_wrap_host), not copied, where its strides
        are whole elements and not negative and the backend keeps arrays in host memory; other
        input is copied into an nnrt array first."""
        arr, temporary = self._input(x)
        out = ctypes.c_void_p()
        lib = _capi.lib()
        try:
            if run_options is None:
                check(lib.nnrt_model_predict(self._ptr, arr._ptr, ctypes.byref(out)))
            else:
                run_call(run_options, lambda o: lib.nnrt_model_predict_ex(self._ptr, arr._ptr, o, ctypes.byref(out)))
        finally:
            if temporary:
                arr.close()  # the prediction keeps no reference: this releases the memory lent
        return Array(new_ref(out, "nnrt_array_release"))

    def predict_into(self, x: Any, out: np.ndarray, *, run_options: Optional[RunOptions] = None) -> np.ndarray:
        """Writes the prediction for the batch `x` (as predict takes it) into `out`, a writable
        float32 NumPy array shaped output_shape(len(x)), and returns out (nnrt_model_predict_into).
        x and out are used in place for the duration of the call, whatever their strides (a slice,
        a transpose): nnrt reads x's memory and writes out's, and keeps neither afterwards. Where
        nnrt cannot (strides that are negative or not whole elements, another dtype of x, x and out
        in the same memory, a GPU backend) the binding copies instead, with the same result. On
        failure out's contents are unspecified. run_options as predict's."""
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a NumPy array, not {type(out).__name__}")
        if out.dtype.kind != "f" or out.dtype.itemsize != 4:
            raise DtypeError(f"out must be float32 (nnrt's predictions are F32), not {out.dtype}")
        if not out.flags.writeable:
            raise InvalidArgumentError("out is read-only")
        lib = _capi.lib()
        arr, temporary = self._input(x)
        try:
            # Memory that x shares would be read after nnrt began writing it: such an out is copied.
            shared = isinstance(x, np.ndarray) and np.may_share_memory(x, out)
            target = None if shared else wrap_numpy(self._ctx, out, for_call=True)
            if target is not None:
                try:
                    run_call(run_options, lambda o: lib.nnrt_model_predict_into(self._ptr, arr._ptr, target._ptr, o))
                finally:
                    target.close()
            else:
                # nnrt cannot write out's memory: predict into its own array and copy.
                want = self.output_shape(arr.shape[0] if arr.shape else 0)
                if tuple(out.shape) != want:
                    raise ShapeError(f"out has shape {list(out.shape)}; the prediction for this batch has shape "
                                     f"{list(want)}")
                result = ctypes.c_void_p()
                run_call(run_options,
                         lambda o: lib.nnrt_model_predict_ex(self._ptr, arr._ptr, o, ctypes.byref(result)))
                out[...] = Array(new_ref(result, "nnrt_array_release")).numpy()
        finally:
            if temporary:
                arr.close()
        return out

    def predict_many(self, inputs: Union[Sequence[Any], Dict[str, Any]], *, outputs: Optional[int] = None,
                     run_options: Optional[RunOptions] = None) -> List[np.ndarray]:
        """The outputs of a model of one or several inputs (a config's "inputs"), as float32 NumPy
        arrays in the config's "outputs" order (the first `outputs` of them; default all), for one
        batch per input: a list in the order of `inputs_info()`, or a dict by input name. Each
        batch is taken as predict takes x (float32 NumPy lent in place, else copied), all with the
        same number of examples (nnrt_model_predict_many). run_options as predict's."""
        info = self.inputs_info()
        if isinstance(inputs, dict):
            unknown = sorted(set(inputs) - {name for name, _ in info})
            missing = [name for name, _ in info if name not in inputs]
            if unknown or missing:
                raise InvalidArgumentError(f"inputs: the model takes {[name for name, _ in info]}; "
                                           f"missing {missing}, unknown {unknown}")
            inputs = [inputs[name] for name, _ in info]
        inputs = list(inputs)
        count = self.output_count() if outputs is None else int(outputs)
        lib = _capi.lib()
        held: List[Tuple[Array, bool]] = []
        results = (ctypes.c_void_p * max(count, 1))()
        try:
            for x in inputs:
                held.append(self._input(x))
            pointers = (ctypes.c_void_p * max(len(held), 1))(*[arr._ptr for arr, _ in held])
            run_call(run_options, lambda o: lib.nnrt_model_predict_many(self._ptr, pointers, len(held), o, results, count))
        finally:
            for arr, temporary in held:
                if temporary:
                    arr.close()
        return [Array(new_ref(ctypes.c_void_p(results[j]), "nnrt_array_release")).numpy() for j in range(count)]

    def inputs_info(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """Each input's name and the shape of one example (nnrt_model_input_count, nnrt_model_input):
        [("input", (1, 28, 28))] for a config with "input"."""
        lib = _capi.lib()
        count = ctypes.c_int32()
        check(lib.nnrt_model_input_count(self._ptr, ctypes.byref(count)))
        info = []
        for k in range(count.value):
            length = ctypes.c_size_t()
            ndim = ctypes.c_int32()
            shape = (ctypes.c_int64 * _capi.MAX_DIMS)()
            check(lib.nnrt_model_input(self._ptr, k, None, 0, ctypes.byref(length), ctypes.byref(ndim), shape))
            buf = ctypes.create_string_buffer(length.value + 1)
            check(lib.nnrt_model_input(self._ptr, k, buf, len(buf), ctypes.byref(length), ctypes.byref(ndim), shape))
            info.append((buf.value.decode("utf-8"), tuple(shape[: ndim.value])))
        return info

    def output_count(self) -> int:
        """How many outputs the model gives (nnrt_model_output_count)."""
        count = ctypes.c_int32()
        check(_capi.lib().nnrt_model_output_count(self._ptr, ctypes.byref(count)))
        return count.value

    def output_shape(self, batch: int) -> Tuple[int, ...]:
        """The shape of the prediction for a batch of `batch` examples: (batch, <output shape>)
        (nnrt_model_output_shape), e.g. to make predict_into's out."""
        ndim = ctypes.c_int32()
        shape = (ctypes.c_int64 * _capi.MAX_DIMS)()
        check(_capi.lib().nnrt_model_output_shape(self._ptr, int(batch), ctypes.byref(ndim), shape))
        return tuple(shape[: ndim.value])

    def _input(self, x: Any) -> Tuple[Array, bool]:
        """(an Array holding the batch x, whether it is the binding's own, to close after the call):
        x itself when it is an Array; x's memory, lent, when it is float32 NumPy that nnrt can use
        in place; else a copy."""
        if isinstance(x, Array):
            return x, False
        if isinstance(x, np.ndarray) and x.dtype == np.float32:
            wrapped = wrap_numpy(self._ctx, x, for_call=True)  # closed by the caller within its call
            if wrapped is not None:
                return wrapped, True
        return from_numpy(self._ctx, x), True

    def evaluate(self, data: Union[Dataset, Any], labels: Any = None, *,
                 run_options: Optional[RunOptions] = None) -> Evaluation:
        """Evaluates on a Dataset, or on NumPy features and labels (made into a dataset first).
        run_options (RunOptions) can stop it between batches and ops."""
        dataset = data if isinstance(data, Dataset) else from_arrays(self._ctx, data, labels)
        out = ctypes.c_void_p()
        lib = _capi.lib()
        if run_options is None:
            check(lib.nnrt_model_evaluate(self._ptr, dataset._ptr, ctypes.byref(out)))
        else:
            run_call(run_options, lambda o: lib.nnrt_model_evaluate_ex(self._ptr, dataset._ptr, o, ctypes.byref(out)))
        return Evaluation(new_ref(out, "nnrt_evaluation_release"))

    def generate(self, prompt: Sequence[int], max_tokens: int, *, temperature: float = 0.0, top_k: int = 0,
                 seed: Optional[int] = None, stop: Iterable[int] = (), when_full: str = "slide",
                 cache: bool = True, on_token: Optional[Callable[[int], Any]] = None) -> List[int]:
        """Continues `prompt` (token ids) with up to max_tokens tokens of a token model
        (nnrt_model_generate: greedy at temperature 0, else sampled among the top_k scores with the
        seed's random stream). on_token(token) sees each token as it is chosen; returning True stops
        generation, and an exception it raises stops it and is raised here. Returns the new tokens."""
        prompt_arr = np.ascontiguousarray(np.asarray(prompt, dtype=np.int64).reshape(-1))
        options: Dict[str, Any] = {"temperature": temperature, "top_k": top_k, "stop": [int(t) for t in stop],
                                   "when_full": when_full, "cache": cache}
        if seed is not None:
            options["seed"] = seed
        tokens = np.zeros(max(int(max_tokens), 1), dtype=np.int64)
        n = ctypes.c_size_t()
        raised: List[BaseException] = []
        interrupt = Interruptible()

        def trampoline(token: int, _user) -> int:
            try:
                if interrupt.seen:
                    return 1
                return 1 if on_token is not None and on_token(token) else 0
            except BaseException as e:  # noqa: BLE001 - raised again once the C call returns
                raised.append(e)
                return 1

        # Set even without on_token, so that Ctrl-C stops generation (see Interruptible).
        callback = _capi.TOKEN_FN(trampoline)
        with interrupt:
            status = _capi.lib().nnrt_model_generate(
                self._ptr, prompt_arr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), prompt_arr.size,
                dumps(options).encode(), tokens.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                int(max_tokens), ctypes.byref(n), callback, None)
        if raised:
            raise raised[0]
        check(status)
        return tokens[: n.value].tolist()

    # --- files --------------------------------------------------------------------------------------
    def save(self, path: Union[str, os.PathLike]) -> None:
        """Saves config and parameters as one safetensors file, atomically (nnrt_model_save)."""
        check(_capi.lib().nnrt_model_save(self._ptr, path_bytes(path)))

    def export_onnx(self, path: Union[str, os.PathLike]) -> None:
        """Writes the model as ONNX (opset 17), atomically; Context.import_onnx reads it back."""
        check(_capi.lib().nnrt_model_export_onnx(self._ptr, path_bytes(path)))

    # --- description and parameters -------------------------------------------------------------------
    def summary(self) -> Dict[str, Any]:
        """nnrt_model_summary as a dict: input, backend, dtype, layers (output shapes, parameters,
        which backend ran each op), outputs, total_params, trainable_params."""
        return read_json(_capi.lib().nnrt_model_summary, self._ptr)

    describe = summary

    def share(self) -> "Model":
        """Another model of the same config on the same context whose parameters are this model's
        memory, not a copy, so that many instances cost the parameters once (nnrt_model_share).
        Parameters are copied on write: a model that is trained or has a parameter set gets its own
        copy first, so the others never see the change."""
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_model_share(self._ptr, ctypes.byref(out)))
        return Model(new_ref(out, "nnrt_model_release"), self._ctx)

    def quantize(self, calibration: Union[Dataset, Any], options: Options = None, **kwargs: Any) -> "Model":
        """An int8 copy of this model for inference (nnrt_model_quantize: post-training static
        quantization), calibrated on `calibration`: a Dataset, or the features [N, <input shape>]
        alone (NumPy or an Array; the labels are not used, so the binding pairs them with zeros).
        Options as a dict, JSON text or keyword arguments: batches (default 8; 0: all), batch_size
        (32), weight_bits (7 or 8) and exclude (layer names kept in float), e.g.
        model.quantize(x, weight_bits=8, exclude=["conv1"]). Its dense and conv2d layers get int8
        weights (DType.I8; get_param gives them as float32, set_param takes int8); it predicts,
        evaluates, saves and shares, but trainer() and export_onnx() raise UnsupportedError."""
        if isinstance(calibration, Dataset):
            dataset = calibration
        else:
            features = calibration if isinstance(calibration, Array) else from_numpy(self._ctx, calibration)
            count = features.shape[0] if features.shape else 0
            dataset = from_arrays(self._ctx, features, np.zeros(count, np.int64))
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_model_quantize(self._ptr, dataset._ptr, options_json(options, kwargs),
                                              ctypes.byref(out)))
        return Model(new_ref(out, "nnrt_model_release"), self._ctx)

    @property
    def param_count(self) -> int:
        """Elements of every weight, bias and statistic."""
        return read_value(_capi.lib().nnrt_model_param_count, ctypes.c_int64, self._ptr)

    @property
    def param_names(self) -> List[str]:
        """The parameters' names ("conv1.weight", ...), in layer order."""
        return [p["name"] for layer in self.summary()["layers"] for p in layer.get("params", [])]

    def get_param(self, name: str) -> np.ndarray:
        """A copy of a parameter as float32 NumPy, in PyTorch's layout (a quantized weight's
        integers too)."""
        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_model_get_param(self._ptr, name.encode(), ctypes.byref(out)))
        return Array(new_ref(out, "nnrt_array_release")).numpy()

    def set_param(self, name: str, value: Any) -> None:
        """Copies `value` (NumPy or Array, the parameter's shape, a float dtype; int8 for a quantized
        layer's weight, within [-63, 63] for 7-bit weights) into a parameter."""
        arr = value if isinstance(value, Array) else from_numpy(self._ctx, value)
        check(_capi.lib().nnrt_model_set_param(self._ptr, name.encode(), arr._ptr))

    def parameters(self) -> Dict[str, np.ndarray]:
        """Every parameter by name, copied into NumPy."""
        return {name: self.get_param(name) for name in self.param_names}

    # --- training -----------------------------------------------------------------------------------
    def trainer(self, options: Options = None, **kwargs: Any) -> "Trainer":
        """A Trainer for this model (nnrt_trainer_create), options as a dict, JSON text or keyword
        arguments: model.trainer(optimizer={"type": "adam", "learning_rate": 1e-3}, batch_size=32)."""
        from .trainer import Trainer

        out = ctypes.c_void_p()
        check(_capi.lib().nnrt_trainer_create(self._ptr, options_json(options, kwargs), ctypes.byref(out)))
        return Trainer(new_ref(out, "nnrt_trainer_release"), self, self._ctx)

    def __repr__(self) -> str:
        return "<nnrt.Model closed>" if self.closed else f"<nnrt.Model {self.param_count} parameters>"
