"""The parts of nnrt's C API that the Python tests drive, through ctypes: contexts, arrays to and from
numpy, models' parameters, trainers and in-memory datasets. Every call is checked; a failure raises
NnrtError with the library's message."""
import ctypes
import json

import numpy as np

P = ctypes.c_void_p
F32, I64 = 1, 6
DTYPES = {np.dtype(np.float32): F32, np.dtype(np.int64): I64}


class NnrtError(RuntimeError):
    pass


class Nnrt:
    def __init__(self, path):
        lib = self.lib = ctypes.CDLL(path)
        lib.nnrt_last_error.restype = ctypes.c_char_p
        lib.nnrt_context_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
        lib.nnrt_array_from_host.argtypes = [P, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), P,
                                             ctypes.c_size_t, ctypes.POINTER(P)]
        lib.nnrt_array_to_host.argtypes = [P, P, ctypes.c_size_t]
        lib.nnrt_array_info.argtypes = [P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int32),
                                        ctypes.POINTER(ctypes.c_int64)]
        lib.nnrt_model_create.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
        lib.nnrt_model_get_param.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
        lib.nnrt_model_predict.argtypes = [P, P, ctypes.POINTER(P)]
        lib.nnrt_model_set_param.argtypes = [P, ctypes.c_char_p, P]
        lib.nnrt_trainer_create.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
        lib.nnrt_trainer_step.argtypes = [P, P, P, ctypes.POINTER(ctypes.c_double)]
        lib.nnrt_trainer_fit.argtypes = [P, P, P, ctypes.c_int32]
        lib.nnrt_trainer_result.argtypes = [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.nnrt_dataset_from_arrays.argtypes = [P, P, P, ctypes.POINTER(P)]
        for name in ("context", "array", "model", "trainer", "dataset"):
            getattr(lib, f"nnrt_{name}_release").argtypes = [P]

    def check(self, status, what):
        if status != 0:
            raise NnrtError(f"{what} failed ({status}): {self.lib.nnrt_last_error().decode()}")

    def context(self, options):
        ctx = P()
        self.check(self.lib.nnrt_context_create(json.dumps(options).encode(), ctypes.byref(ctx)), "nnrt_context_create")
        return ctx

    def array(self, ctx, a):
        """A new nnrt array holding a copy of the numpy array a (float32 or int64)."""
        a = np.ascontiguousarray(a)
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        out = P()
        self.check(self.lib.nnrt_array_from_host(ctx, DTYPES[a.dtype], a.ndim, shape, a.ctypes.data, a.nbytes,
                                                 ctypes.byref(out)), "nnrt_array_from_host")
        return out

    def numpy(self, arr):
        """An f32 nnrt array as a numpy array."""
        ndim = ctypes.c_int32()
        shape = (ctypes.c_int64 * 8)()
        self.check(self.lib.nnrt_array_info(arr, None, ctypes.byref(ndim), shape), "nnrt_array_info")
        out = np.empty(tuple(shape[:ndim.value]), dtype=np.float32)
        self.check(self.lib.nnrt_array_to_host(arr, out.ctypes.data, out.nbytes), "nnrt_array_to_host")
        return out

    def model(self, ctx, config):
        m = P()
        self.check(self.lib.nnrt_model_create(ctx, json.dumps(config).encode(), ctypes.byref(m)), "nnrt_model_create")
        return m

    def get_param(self, model, name):
        arr = P()
        self.check(self.lib.nnrt_model_get_param(model, name.encode(), ctypes.byref(arr)), f"get_param {name}")
        try:
            return self.numpy(arr)
        finally:
            self.lib.nnrt_array_release(arr)

    def set_param(self, ctx, model, name, value):
        arr = self.array(ctx, np.asarray(value, dtype=np.float32))
        try:
            self.check(self.lib.nnrt_model_set_param(model, name.encode(), arr), f"set_param {name}")
        finally:
            self.lib.nnrt_array_release(arr)

    def predict(self, ctx, model, x):
        """The model's output for the numpy batch x, as a numpy array."""
        xs, out = self.array(ctx, x), P()
        try:
            self.check(self.lib.nnrt_model_predict(model, xs, ctypes.byref(out)), "nnrt_model_predict")
            return self.numpy(out)
        finally:
            self.lib.nnrt_array_release(xs)
            self.lib.nnrt_array_release(out)

    def trainer(self, model, options):
        t = P()
        self.check(self.lib.nnrt_trainer_create(model, json.dumps(options).encode(), ctypes.byref(t)),
                   "nnrt_trainer_create")
        return t

    def step(self, ctx, trainer, x, y):
        xs, ys = self.array(ctx, x), self.array(ctx, y)
        loss = ctypes.c_double()
        try:
            self.check(self.lib.nnrt_trainer_step(trainer, xs, ys, ctypes.byref(loss)), "nnrt_trainer_step")
        finally:
            self.lib.nnrt_array_release(xs)
            self.lib.nnrt_array_release(ys)
        return loss.value

    def fit(self, ctx, trainer, x, y, epochs):
        xs, ys = self.array(ctx, x), self.array(ctx, y)
        data = P()
        try:
            self.check(self.lib.nnrt_dataset_from_arrays(ctx, xs, ys, ctypes.byref(data)), "nnrt_dataset_from_arrays")
            self.check(self.lib.nnrt_trainer_fit(trainer, data, None, epochs), "nnrt_trainer_fit")
        finally:
            self.lib.nnrt_dataset_release(data)
            self.lib.nnrt_array_release(xs)
            self.lib.nnrt_array_release(ys)

    def result(self, trainer):
        size = ctypes.c_size_t()
        self.check(self.lib.nnrt_trainer_result(trainer, None, 0, ctypes.byref(size)), "nnrt_trainer_result")
        buf = ctypes.create_string_buffer(size.value + 1)
        self.check(self.lib.nnrt_trainer_result(trainer, buf, len(buf), ctypes.byref(size)), "nnrt_trainer_result")
        return json.loads(buf.value.decode())

    def release(self, kind, handle):
        getattr(self.lib, f"nnrt_{kind}_release")(handle)
