"""The few nnrt C API calls the ONNX peer tests need, through ctypes."""
import ctypes

import numpy as np

F32 = 1


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

    def predict(self, m, x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        shape = (ctypes.c_int64 * x.ndim)(*x.shape)
        a, out = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.nnrt_array_from_host(self.ctx, F32, x.ndim, shape, x.ctypes.data, x.nbytes,
                                                 ctypes.byref(a)), "array")
        self.check(self.lib.nnrt_model_predict(m, a, ctypes.byref(out)), "predict")
        y = self.array(out)
        self.lib.nnrt_array_release(a)
        self.lib.nnrt_array_release(out)
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

    def release(self, m):
        self.lib.nnrt_model_release(m)
