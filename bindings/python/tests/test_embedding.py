"""Embedding: predictions that read NumPy memory in place and write into the caller's array
(predict_into, nnrt_array_wrap_host), and calls stopped by RunOptions (cancel, timeout, abort
callback), from the calling thread and from another one."""
import threading

import numpy as np
import pytest

import nnrt
from nnrt import array as nnrt_array
from conftest import MLP, onnx_converter

# 8 dense layers: a pass of many ops, each checked against the run options before it runs.
DEEP = {"input": [4], "seed": 3, "layers": [
    {"type": "dense", "units": 8, "activation": "relu" if i % 2 else "tanh"} for i in range(7)] + [
    {"type": "output", "units": 3, "activation": "softmax", "loss": "nll"}]}


def lends_host_memory(ctx):
    """Skips a test that watches nnrt use NumPy memory in place on a backend that cannot (a GPU:
    nnrt_array_wrap_host is unsupported there, and the binding copies)."""
    probe = nnrt_array.wrap_numpy(ctx._hold(), np.zeros(2, np.float32))
    if probe is None:
        pytest.skip(f"the {ctx.backend} backend keeps no arrays in host memory; the binding copies")
    probe.close()


def batch(n, features=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, features)).astype(np.float32)


def reference(model, x):
    """The prediction of a contiguous copy of x made into an nnrt array: no memory lent."""
    return model.predict(model_array(model, np.ascontiguousarray(x, dtype=np.float32)))


def model_array(model, x):
    return nnrt_array.from_numpy(model._ctx, x)


# --- predict_into and lent memory -------------------------------------------------------------------

def test_output_shape(ctx):
    model = ctx.model(MLP)
    assert model.output_shape(5) == (5, 3)
    assert model.output_shape(0) == (0, 3)
    with pytest.raises(nnrt.InvalidArgumentError):
        model.output_shape(-1)


def test_predict_into_gives_the_numbers_of_predict(ctx):
    model = ctx.model(MLP)
    x = batch(6)
    out = np.empty(model.output_shape(6), np.float32)
    for _ in range(2):  # the first call records the prediction plan, the second replays it
        out[...] = np.nan
        assert model.predict_into(x, out) is out
        np.testing.assert_array_equal(out, reference(model, x))
        np.testing.assert_array_equal(out, model.predict(x))
    assert not nnrt_array._LENT  # nnrt released both arrays it was lent


def test_changing_the_input_in_place_changes_the_next_prediction(ctx):
    model = ctx.model(MLP)
    x = batch(5)
    out = np.empty((5, 3), np.float32)
    first = model.predict_into(x, out).copy()
    x *= -2.0
    x += 0.25
    model.predict_into(x, out)
    assert not np.array_equal(out, first)
    np.testing.assert_array_equal(out, reference(model, x))
    np.testing.assert_array_equal(model.predict(x), reference(model, x))


@pytest.mark.parametrize("how", ["predict_into", "predict"])
def test_the_input_is_read_in_place_not_copied(ctx, how):
    """The abort callback runs inside the call before its first op: an input copied at the
    boundary would not see what it changes there; memory lent to nnrt does."""
    lends_host_memory(ctx)
    model = ctx.model(MLP)
    x = batch(4)
    before = reference(model, x)
    changed = (x * -3.0 + 1.0).astype(np.float32)
    calls = []

    def change_the_input():
        if not calls:
            x[...] = changed
        calls.append(1)
        return False

    with nnrt.RunOptions(abort=change_the_input) as options:
        if how == "predict":
            got = model.predict(x, run_options=options)
        else:
            got = model.predict_into(x, np.empty((4, 3), np.float32), run_options=options)
    assert calls
    np.testing.assert_array_equal(got, reference(model, changed))
    assert not np.array_equal(got, before)


def test_strided_inputs_give_the_right_result(ctx):
    model = ctx.model(MLP)
    wide = batch(6, features=9, seed=1)
    inputs = {
        "transposed": batch(4, features=7, seed=2).T,  # 7 examples, column-major
        "fortran": np.asfortranarray(batch(5, seed=3)),
        "every other column": wide[:, ::2][:, :4],
        "every other row": batch(10, seed=4)[::2],
        "a column block": wide[1:5, 3:7],
    }
    for name, x in inputs.items():
        assert x.shape[1] == 4, name
        assert not x.flags.c_contiguous, name
        want = reference(model, x)
        out = np.empty(model.output_shape(x.shape[0]), np.float32)
        np.testing.assert_allclose(model.predict_into(x, out), want, rtol=1e-6, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(model.predict(x), want, rtol=1e-6, atol=1e-7, err_msg=name)
    assert not nnrt_array._LENT


def test_a_strided_input_is_read_in_place(ctx):
    lends_host_memory(ctx)
    model = ctx.model(MLP)
    base = batch(4, features=9, seed=5)
    x = base[:, 1::2]  # strides of 2 elements
    changed = batch(4, seed=6)
    calls = []

    def change_the_input():
        if not calls:
            x[...] = changed
        calls.append(1)
        return False

    with nnrt.RunOptions(abort=change_the_input) as options:
        got = model.predict(x, run_options=options)
    np.testing.assert_allclose(got, reference(model, changed), rtol=1e-6, atol=1e-7)


def test_strided_outputs_are_written_in_place(ctx):
    model = ctx.model(MLP)
    x = batch(5, seed=7)
    want = reference(model, x)
    padded = np.full((5, 4), 42.0, np.float32)
    np.testing.assert_allclose(model.predict_into(x, padded[:, :3]), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(padded[:, 3], np.full(5, 42.0, np.float32))  # the padding is left alone
    column_major = np.empty((3, 5), np.float32).T
    np.testing.assert_allclose(model.predict_into(x, column_major), want, rtol=1e-6, atol=1e-7)


def test_layouts_nnrt_cannot_lend_are_copied(ctx):
    model = ctx.model(MLP)
    x = batch(6, seed=8)
    want = reference(model, x)
    # Byte strides that are not whole float32 elements, on misaligned memory.
    raw = np.zeros(6 * 17 + 8, np.uint8)
    odd = np.ndarray((6, 4), np.float32, buffer=raw, offset=1, strides=(17, 4))
    odd[...] = x
    reversed_rows = x[::-1].copy()[::-1]  # negative strides
    cases = {"odd strides": odd, "negative strides": reversed_rows, "float64": x.astype(np.float64),
             "big-endian": x.astype(">f4"), "a list": x.tolist()}
    for name, data in cases.items():
        out = np.empty((6, 3), np.float32)
        np.testing.assert_allclose(model.predict_into(data, out), want, rtol=1e-6, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(model.predict(data), want, rtol=1e-6, atol=1e-7, err_msg=name)
    backwards = np.empty((6, 3), np.float32)[::-1]
    np.testing.assert_allclose(model.predict_into(x, backwards), want, rtol=1e-6, atol=1e-7)
    raw_out = np.zeros(6 * 13 + 8, np.uint8)
    odd_out = np.ndarray((6, 3), np.float32, buffer=raw_out, offset=2, strides=(13, 4))
    np.testing.assert_allclose(model.predict_into(x, odd_out), want, rtol=1e-6, atol=1e-7)
    # An out sharing the input's memory.
    both = np.zeros((6, 7), np.float32)
    both[:, :4] = x
    np.testing.assert_allclose(model.predict_into(both[:, :4], both[:, 4:]), want, rtol=1e-6, atol=1e-7)
    assert not nnrt_array._LENT


def test_predict_into_checks_its_output(ctx):
    model = ctx.model(MLP)
    x = batch(3)
    with pytest.raises(nnrt.ShapeError):
        model.predict_into(x, np.empty((3, 4), np.float32))
    with pytest.raises(nnrt.ShapeError):
        model.predict_into(x, np.empty((4, 3), np.float32)[::-1])  # the copying path checks too
    with pytest.raises(nnrt.DtypeError):
        model.predict_into(x, np.empty((3, 3), np.float64))
    read_only = np.empty((3, 3), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(nnrt.InvalidArgumentError, match="read-only"):
        model.predict_into(x, read_only)
    with pytest.raises(TypeError):
        model.predict_into(x, [[0.0] * 3] * 3)
    with pytest.raises(nnrt.ShapeError):
        model.predict_into(batch(3, features=5), np.empty((3, 3), np.float32))
    assert not nnrt_array._LENT  # nothing stays lent after a failed call either


def test_predict_into_from_several_threads(ctx):
    model = ctx.model(MLP)
    failures = []

    def work(seed):
        x = batch(8, seed=seed)
        want = reference(model, x)
        out = np.empty((8, 3), np.float32)
        for _ in range(30):
            if not np.array_equal(model.predict_into(x, out), want):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


# --- run options ----------------------------------------------------------------------------------

def test_a_cancelled_run_options_stops_calls_until_reset(ctx, tmp_path, blobs):
    model = ctx.model(MLP)
    x = blobs[0][:8]
    model.save(tmp_path / "m.safetensors")
    with nnrt.RunOptions() as options:
        options.cancel()
        with pytest.raises(nnrt.CancelledError) as info:
            model.predict(x, run_options=options)
        assert info.value.status == nnrt.Status.CANCELLED
        with pytest.raises(nnrt.CancelledError):
            model.predict_into(x, np.empty((8, 3), np.float32), run_options=options)
        with pytest.raises(nnrt.CancelledError):
            model.predict_array(x, run_options=options)
        with pytest.raises(nnrt.CancelledError):
            model.evaluate(*blobs, run_options=options)
        with pytest.raises(nnrt.CancelledError):
            ctx.load_model(tmp_path / "m.safetensors", run_options=options)
        options.reset()
        np.testing.assert_array_equal(model.predict(x, run_options=options), model.predict(x))
        out = np.empty((8, 3), np.float32)
        np.testing.assert_array_equal(model.predict_into(x, out, run_options=options), model.predict(x))
        assert 0 <= model.evaluate(*blobs, run_options=options).accuracy <= 1
        loaded = ctx.load_model(tmp_path / "m.safetensors", run_options=options)
        np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert not nnrt_array._LENT


def test_onnx_import_takes_run_options(ctx, tmp_path, blobs):
    onnx_converter(ctx)
    model = ctx.model(MLP)
    model.export_onnx(tmp_path / "m.onnx")
    with nnrt.RunOptions() as options:
        options.cancel()
        with pytest.raises(nnrt.CancelledError):
            ctx.import_onnx(tmp_path / "m.onnx", run_options=options)
        options.reset()
        imported = ctx.import_onnx(tmp_path / "m.onnx", run_options=options, loss="nll")
        np.testing.assert_allclose(imported.predict(blobs[0]), model.predict(blobs[0]), rtol=1e-5, atol=1e-6)
        with pytest.raises(nnrt.UnsupportedError):
            ctx.import_onnx((tmp_path / "m.onnx").read_bytes(), run_options=options)


def test_a_tiny_timeout_is_deadline_exceeded(ctx):
    model = ctx.model(DEEP)
    x = batch(4)
    with nnrt.RunOptions(timeout=1e-9) as options:
        assert options.timeout == 1e-9
        with pytest.raises(nnrt.DeadlineExceededError) as info:
            model.predict(x, run_options=options)
        e = info.value
        assert isinstance(e, nnrt.Error) and e.status == nnrt.Status.DEADLINE_EXCEEDED
        assert str(e).startswith("NNRT_ERR_DEADLINE_EXCEEDED: ") and e.message
        with pytest.raises(nnrt.DeadlineExceededError):
            model.predict_into(x, np.empty((4, 3), np.float32), run_options=options)
        options.timeout = 600
        assert model.predict(x, run_options=options).shape == (4, 3)
        options.timeout = None
        assert options.timeout is None
        assert model.predict(x, run_options=options).shape == (4, 3)
        with pytest.raises(nnrt.InvalidArgumentError):
            options.timeout = -1


def test_cancel_from_another_thread_stops_a_loop_of_predictions(ctx):
    model = ctx.model(DEEP)
    x = batch(16)
    options = nnrt.RunOptions()
    running = threading.Event()
    outcome = []

    def loop():
        try:
            for i in range(1_000_000):
                model.predict(x, run_options=options)
                running.set()
            outcome.append("the loop ran to its end")
        except nnrt.CancelledError as e:
            outcome.append(e)
        except BaseException as e:  # noqa: BLE001 - reported below
            outcome.append(e)

    thread = threading.Thread(target=loop)
    thread.start()
    assert running.wait(60)
    options.cancel()
    thread.join(60)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], nnrt.CancelledError), outcome
    options.reset()
    assert model.predict(x, run_options=options).shape == (16, 3)
    options.close()


def test_an_abort_callback_stops_a_prediction_at_its_third_call(ctx):
    model = ctx.model(DEEP)
    x = batch(4)
    calls = []
    with nnrt.RunOptions(abort=lambda: calls.append(1) or len(calls) >= 3) as options:
        for _ in range(2):  # recording the plan, then replaying it
            calls.clear()
            with pytest.raises(nnrt.CancelledError):
                model.predict(x, run_options=options)
            assert len(calls) == 3
        options.set_abort_callback(lambda: calls.append(1) and False)
        calls.clear()
        np.testing.assert_array_equal(model.predict(x, run_options=options), model.predict(x))
        assert len(calls) > 3  # a whole pass checks more often: the stopped one ended early
        options.set_abort_callback(None)
        assert options.abort is None
        np.testing.assert_array_equal(model.predict(x, run_options=options), model.predict(x))


def test_an_exception_in_the_abort_callback_stops_the_call(ctx):
    model = ctx.model(DEEP)
    x = batch(4)

    def broken():
        raise KeyError("no such key")

    with nnrt.RunOptions(abort=broken) as options:
        with pytest.raises(nnrt.CancelledError) as info:
            model.predict(x, run_options=options)
        assert isinstance(info.value.__cause__, KeyError)
        with pytest.raises(nnrt.CancelledError) as info:
            model.predict_into(x, np.empty((4, 3), np.float32), run_options=options)
        assert isinstance(info.value.__cause__, KeyError)
        # The options still work, and the exception does not leak into a later call.
        options.set_abort_callback(lambda: False)
        assert model.predict(x, run_options=options).shape == (4, 3)
    assert not nnrt_array._LENT


def test_an_abort_callback_may_cancel_its_options(ctx):
    model = ctx.model(DEEP)
    options = nnrt.RunOptions()
    options.set_abort_callback(lambda: options.cancel())  # returns None: only the cancel stops it
    with pytest.raises(nnrt.CancelledError):
        model.predict(batch(2), run_options=options)
    options.set_abort_callback(None)
    with pytest.raises(nnrt.CancelledError):  # cancelled until reset
        model.predict(batch(2), run_options=options)
    options.reset()
    assert model.predict(batch(2), run_options=options).shape == (2, 3)


def test_run_options_close_and_bad_arguments(ctx):
    model = ctx.model(MLP)
    options = nnrt.RunOptions()
    assert "RunOptions" in repr(options)
    options.close()
    options.close()
    with pytest.raises(nnrt.ClosedError):
        options.cancel()
    with pytest.raises(nnrt.ClosedError):
        model.predict(batch(2), run_options=options)
    with pytest.raises(TypeError):
        model.predict(batch(2), run_options="soon")
    with pytest.raises(TypeError):
        nnrt.RunOptions(abort=3)


def test_shared_models_copy_parameters_on_write(ctx):
    model = ctx.model(MLP)
    x = batch(8, seed=6)
    before = reference(model, x)
    shared = model.share()
    twice = shared.share()
    np.testing.assert_array_equal(reference(twice, x), before)
    shared.set_param("layer1.bias", np.array([1, -2, 3], np.float32))
    assert not np.array_equal(reference(shared, x), before)
    np.testing.assert_array_equal(reference(model, x), before)
    model.close()
    np.testing.assert_array_equal(reference(twice, x), before)
    shared.close()
    twice.close()


def mappings_of(path) -> int:
    with open("/proc/self/maps") as f:
        return sum(str(path) in line for line in f)


@pytest.mark.parametrize("mapped", [True, False])
def test_loaded_models_map_the_checkpoint_unless_asked_not_to(tmp_path, mapped):
    path = tmp_path / "mlp.safetensors"
    x = batch(8, seed=4)
    with nnrt.Context(threads=2, map_checkpoints=mapped) as c:
        assert c.describe()["map_checkpoints"] is mapped
        model = c.model(MLP)
        model.save(path)
        first, second = c.load_model(path), c.load_model(path)
        host = c.backend in ("reference", "onednn")
        assert mappings_of(path) == (1 if mapped and host else 0)
        np.testing.assert_array_equal(reference(first, x), reference(model, x))
        first.set_param("layer1.bias", np.array([1, -2, 3], np.float32))
        np.testing.assert_array_equal(reference(second, x), reference(model, x))
        for m in (model, first, second):
            m.close()
        assert mappings_of(path) == 0
