"""Library loading, contexts, arrays to and from NumPy, ops, errors and handle lifetimes."""
import pickle

import numpy as np
import pytest

import nnrt
from nnrt import _capi


def test_library_version_and_abi():
    assert nnrt.abi_version() == 1
    assert nnrt.version().count(".") == 2
    assert "libnnrt" in nnrt.library_path()


def test_load_library_refuses_a_second_library(tmp_path):
    assert nnrt.load_library(nnrt.library_path()) is _capi.lib()
    (tmp_path / "libnnrt.so").write_bytes(b"")
    with pytest.raises(RuntimeError, match="already loaded"):
        nnrt.load_library(tmp_path)


def test_lib_dir_set_but_wrong_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("NNRT_LIB_DIR", str(tmp_path))
    with pytest.raises(OSError, match="holds no libnnrt.so"):
        _capi.candidates()


def test_status_names():
    assert nnrt.status_name(nnrt.Status.SHAPE) == "NNRT_ERR_SHAPE"
    assert nnrt.status_name(nnrt.Status.DEADLINE_EXCEEDED) == "NNRT_ERR_DEADLINE_EXCEEDED"
    assert nnrt.status_name(999) == "NNRT_ERR_UNKNOWN"
    assert len(nnrt.Status) == 14
    for status in nnrt.Status:  # every status has its C name, and an exception class of its own
        name = "NNRT_OK" if status == nnrt.Status.OK else f"NNRT_ERR_{status.name}"
        assert nnrt.status_name(status) == name
        if status != nnrt.Status.OK:
            e = nnrt.errors.error_for(int(status), "m")
            assert type(e) is not nnrt.Error and e.status == status and e.status_name == name
    assert issubclass(nnrt.DeadlineExceededError, nnrt.Error)
    assert type(nnrt.errors.error_for(13, "late")) is nnrt.DeadlineExceededError


def test_context_options_from_dict_and_keywords():
    with nnrt.Context({"threads": 1}, backend="reference", seed=4) as c:
        described = c.describe()
        assert described["backend"] == "reference" == c.backend
        assert c.threads == 1
        assert any(b["name"] == "reference" for b in described["backends"])


def test_unknown_context_option_raises_with_the_key():
    with pytest.raises(nnrt.InvalidArgumentError) as info:
        nnrt.Context(colour="blue")
    assert info.value.status == nnrt.Status.INVALID_ARGUMENT
    assert "colour" in info.value.message
    assert str(info.value).startswith("NNRT_ERR_INVALID_ARGUMENT: ")
    assert isinstance(info.value, ValueError)


def test_unknown_backend_is_an_error():
    with pytest.raises(nnrt.Error) as info:
        nnrt.Context(backend="no-such-backend")
    assert "no-such-backend" in info.value.message


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.int8,
                                   np.bool_])
def test_array_round_trip(ctx, dtype):
    data = (np.arange(24).reshape(2, 3, 4) % 2 == 0) if dtype is np.bool_ else np.arange(24).reshape(2, 3, 4)
    data = data.astype(dtype)
    a = ctx.array(data)
    assert a.shape == (2, 3, 4) and a.ndim == 3 and a.size == 24 and len(a) == 2
    assert a.dtype == nnrt.DType.BOOL if dtype is np.bool_ else a.dtype.numpy == np.dtype(dtype)
    assert a.nbytes == data.nbytes
    back = a.numpy()
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, data)
    np.testing.assert_array_equal(np.asarray(a), data)


def test_bf16_rounds_and_comes_back_as_float32(ctx):
    a = ctx.array(np.array([1.0, 1.00390625, 3.14159], dtype=np.float32), dtype="bf16")
    assert a.dtype == nnrt.DType.BF16 and a.nbytes == 6
    np.testing.assert_array_equal(a.numpy(), np.array([1.0, 1.0, 3.140625], dtype=np.float32))


def test_non_contiguous_and_big_endian_inputs(ctx):
    base = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.testing.assert_array_equal(ctx.array(base[:, ::2]).numpy(), base[:, ::2])
    np.testing.assert_array_equal(ctx.array(base.T).numpy(), base.T)
    big = base.astype(">f4")
    np.testing.assert_array_equal(ctx.array(big).numpy(), base)


def test_scalar_empty_and_converted_arrays(ctx):
    assert ctx.array(np.float32(2.5)).shape == ()
    assert ctx.array(np.float32(2.5)).numpy() == np.float32(2.5)
    assert ctx.array(np.zeros((0, 3), np.float32)).shape == (0, 3)
    a = ctx.array([[1, 2], [3, 4]], dtype=np.float32)
    assert a.dtype == nnrt.DType.F32
    z = ctx.zeros([2, 2], "i64")
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 2), np.int64))


@pytest.mark.parametrize("data", [np.ones(3, np.complex64), np.ones(3, np.int16), np.array([object()])])
def test_dtypes_nnrt_lacks_are_refused(ctx, data):
    with pytest.raises(nnrt.DtypeError) as info:
        ctx.array(data)
    assert info.value.status == nnrt.Status.DTYPE
    assert isinstance(info.value, TypeError)


def test_ops_agree_with_numpy(ctx):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    got = ctx.op("matmul", a, ctx.array(b), transpose_b=True).numpy()
    np.testing.assert_allclose(got, a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ctx.op("softmax", a, axis=1).numpy().sum(axis=1), np.ones(3), rtol=1e-6)
    assert ctx.op("argmax", a, axis=1).numpy().tolist() == a.argmax(axis=1).tolist()


def test_op_shape_mismatch_raises_shape_error_with_the_c_message(ctx):
    with pytest.raises(nnrt.ShapeError) as info:
        ctx.op("matmul", np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    assert info.value.status == nnrt.Status.SHAPE
    assert "3" in info.value.message and info.value.message == str(info.value).split(": ", 1)[1]


def test_unknown_op_is_unsupported(ctx):
    with pytest.raises(nnrt.UnsupportedError, match="nope"):
        ctx.op("nope", np.ones(2, np.float32))


def test_errors_pickle_with_their_status():
    e = pickle.loads(pickle.dumps(nnrt.ShapeError("shapes differ", 3)))
    assert type(e) is nnrt.ShapeError and e.status == nnrt.Status.SHAPE and e.message == "shapes differ"


def test_close_twice_is_harmless_and_use_after_close_raises(ctx):
    a = ctx.array(np.ones(3, np.float32))
    a.close()
    a.close()
    assert a.closed and "closed" in repr(a)
    with pytest.raises(nnrt.ClosedError):
        a.numpy()
    with pytest.raises(nnrt.ClosedError):
        ctx.op("neg", a)


def test_with_closes_and_closed_handles_cannot_be_entered():
    with nnrt.Context(backend="reference") as c:
        pass
    assert c.closed
    with pytest.raises(nnrt.ClosedError):
        c.describe()
    with pytest.raises(nnrt.ClosedError):
        with c:
            pass


def test_arrays_outlive_their_closed_context():
    c = nnrt.Context(backend="reference")
    a = c.array(np.arange(4, dtype=np.float32))
    c.close()
    np.testing.assert_array_equal(a.numpy(), np.arange(4, dtype=np.float32))


def test_log_callback_receives_messages():
    seen = []
    nnrt.set_log_callback(lambda level, message: seen.append((level, message)), nnrt.LOG_DEBUG)
    try:
        with nnrt.Context(backend="reference"):
            pass
    finally:
        nnrt.set_log_callback(None)
    assert seen and all(isinstance(m, str) and 0 <= level <= 3 for level, m in seen)
