"""Python's ctypes loads libnnrt.so.1 and calls it from several threads at once."""
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib.nnrt_version_string.restype = ctypes.c_char_p
lib.nnrt_last_error.restype = ctypes.c_char_p
lib.nnrt_abi_version.restype = ctypes.c_uint32
lib.nnrt_context_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.nnrt_context_release.argtypes = [ctypes.c_void_p]
lib.nnrt_array_from_host.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64),
                                     ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
lib.nnrt_array_to_host.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
lib.nnrt_array_release.argtypes = [ctypes.c_void_p]
lib.nnrt_op.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32,
                        ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32]
F32 = 1

assert lib.nnrt_abi_version() == 1, lib.nnrt_abi_version()
print("nnrt", lib.nnrt_version_string().decode())

ctx = ctypes.c_void_p()
assert lib.nnrt_context_create(b'{"threads": 2}', ctypes.byref(ctx)) == 0, lib.nnrt_last_error()
errors = []


def worker(k):
    try:
        shape = (ctypes.c_int64 * 2)(3, 3)
        data = (ctypes.c_float * 9)(*[float(k + i) for i in range(9)])
        for _ in range(200):
            a = ctypes.c_void_p()
            assert lib.nnrt_array_from_host(ctx, F32, 2, shape, data, 36, ctypes.byref(a)) == 0
            ins = (ctypes.c_void_p * 2)(a, a)
            out = ctypes.c_void_p()
            assert lib.nnrt_op(ctx, b"matmul", ins, 2, None, ctypes.byref(out), 1) == 0, lib.nnrt_last_error()
            got = (ctypes.c_float * 9)()
            assert lib.nnrt_array_to_host(out, got, 36) == 0
            m = [[k + 3 * r + c for c in range(3)] for r in range(3)]
            want = [sum(m[r][j] * m[j][c] for j in range(3)) for r in range(3) for c in range(3)]
            assert list(got) == want, (list(got), want)
            # an error on this thread names this thread's mistake
            assert lib.nnrt_op(ctx, b"nope", ins, 1, None, ctypes.byref(out), 1) == 5
            assert b"nope" in lib.nnrt_last_error()
            lib.nnrt_array_release(out)
            lib.nnrt_array_release(a)
    except Exception as e:  # reported below; a thread cannot fail the test by itself
        errors.append(repr(e))


threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
lib.nnrt_context_release(ctx)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("8 threads x 200 matmuls: ok")
