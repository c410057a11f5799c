"""The few nnrt C API calls the ONNX peer tests need, through ctypes."""
import ctypes

import numpy as np

F32 = 1
I64 = 6
BOOL = 8


class Nnrt:
    def __init__(self, path, context_options='{"backend": "reference"}'):
        lib = ctypes.CDLL(path)
        lib.nnrt_last_error.restype = ctypes.c_char_p
        lib.nnrt_status_name.restype = ctypes.c_char_p
        vp = ctypes.c_void_p
        lib.nnrt_context_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp)]
        lib.nnrt_context_release.argtypes = [vp]
        lib.nnrt_model_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
        lib.nnrt_model_import_onnx.argtypes = [vp, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(vp)]
        lib.nnrt_model_export_onnx.argtypes = [vp, ctypes.c_char_p]
        lib.nnrt_model_predict.argtypes = [vp, vp, ctypes.POINTER(vp)]
        lib.nnrt_model_release.argtypes = [vp]
        lib.nnrt_array_from_host.argtypes = [vp, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64),
                                             ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(vp)]
        lib.nnrt_array_info.argtypes = [vp, vp, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int64)]
        lib.nnrt_array_to_host.argtypes = [vp, ctypes.c_void_p, ctypes.c_size_t]
        lib.nnrt_array_release.argtypes = [vp]
        lib.nnrt_model_get_param.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
        lib.nnrt_dataset_from_arrays.argtypes = [vp, vp, vp, ctypes.POINTER(vp)]
        lib.nnrt_dataset_release.argtypes = [vp]
        lib.nnrt_model_quantize.argtypes = [vp, vp, ctypes.c_char_p, ctypes.POINTER(vp)]
        lib.nnrt_model_summary.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.nnrt_model_predict_many.argtypes = [vp, ctypes.POINTER(vp), ctypes.c_int32, vp, ctypes.POINTER(vp),
                                                ctypes.c_int32]
        self.lib = lib
        self.ctx = vp()
        self.check(lib.nnrt_context_create(context_options.encode(), ctypes.byref(self.ctx)), "context")

    def check(self, status, what):
        if status != 0:
            raise RuntimeError("%s: %s: %s" % (what, self.lib.nnrt_status_name(status).decode(),
                                               self.lib.nnrt_last_error().decode()))

    def create(self, config_json):
        m = ctypes.c_void_p()
        self.check(self.lib.nnrt_model_create(self.ctx, config_json.encode(), ctypes.byref(m)), "model_create")
        return m

    def import_onnx(self, path, options=None):
        m = ctypes.c_void_p()
        opts = options.encode() if options else None
        self.check(self.lib.nnrt_model_import_onnx(self.ctx, path.encode(), opts, ctypes.byref(m)), "import " + path)
        return m

    def export_onnx(self, m, path):
        self.check(self.lib.nnrt_model_export_onnx(m, path.encode()), "export " + path)

    def quantize(self, m, x, options=None):
        """nnrt_model_quantize calibrated on the examples x (labels unused)."""
        a, labels = self.from_numpy(x, F32), self.from_numpy(np.zeros(len(x), dtype=np.int64), I64)
        d, q = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.nnrt_dataset_from_arrays(self.ctx, a, labels, ctypes.byref(d)), "dataset")
        try:
            opts = options.encode() if options else None
            self.check(self.lib.nnrt_model_quantize(m, d, opts, ctypes.byref(q)), "quantize")
        finally:
            self.lib.nnrt_dataset_release(d)
            self.lib.nnrt_array_release(a)
            self.lib.nnrt_array_release(labels)
        return q

    def from_numpy(self, x, dtype):
        x = np.ascontiguousarray(x, dtype={F32: np.float32, I64: np.int64, BOOL: np.bool_}[dtype])
        shape = (ctypes.c_int64 * x.ndim)(*x.shape)
        a = ctypes.c_void_p()
        self.check(self.lib.nnrt_array_from_host(self.ctx, dtype, x.ndim, shape, x.ctypes.data, x.nbytes,
                                                 ctypes.byref(a)), "array")
        return a

    def predict(self, m, x):
        a, out = self.from_numpy(x, F32), ctypes.c_void_p()
        self.check(self.lib.nnrt_model_predict(m, a, ctypes.byref(out)), "predict")
        y = self.array(out)
        self.lib.nnrt_array_release(a)
        self.lib.nnrt_array_release(out)
        return y

    def predict_many(self, m, xs):
        """The first output for one batch per model input: (array, nnrt dtype) pairs."""
        arrays = [self.from_numpy(x, dtype) for x, dtype in xs]
        out = ctypes.c_void_p()
        try:
            self.check(self.lib.nnrt_model_predict_many(m, (ctypes.c_void_p * len(arrays))(*arrays), len(arrays), None,
                                                        ctypes.byref(out), 1), "predict_many")
            y = self.array(out)
            self.lib.nnrt_array_release(out)
        finally:
            for a in arrays:
                self.lib.nnrt_array_release(a)
        return y

    def array(self, a):
        ndim = ctypes.c_int32()
        dims = (ctypes.c_int64 * 8)()
        self.check(self.lib.nnrt_array_info(a, None, ctypes.byref(ndim), dims), "info")
        y = np.empty([dims[i] for i in range(ndim.value)], dtype=np.float32)
        self.check(self.lib.nnrt_array_to_host(a, y.ctypes.data, y.nbytes), "to_host")
        return y

    def param(self, m, name):
        a = ctypes.c_void_p()
        self.check(self.lib.nnrt_model_get_param(m, name.encode(), ctypes.byref(a)), "get_param " + name)
        value = self.array(a)
        self.lib.nnrt_array_release(a)
        return value

    def summary(self, m):
        n = ctypes.c_size_t()
        self.lib.nnrt_model_summary(m, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        self.check(self.lib.nnrt_model_summary(m, buf, n.value + 1, ctypes.byref(n)), "summary")
        return buf.value.decode()

    def release(self, m):
        self.lib.nnrt_model_release(m)
