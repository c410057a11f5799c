"""int8 quantization (Model.quantize) and int8 arrays (DType.I8 <-> np.int8)."""
import numpy as np
import pytest

import nnrt

# 1x8x8 images: a convolution, then two dense layers.
CNN = {"input": [1, 8, 8], "seed": 11, "layers": [
    {"type": "conv2d", "name": "c1", "filters": 4, "kernel": 3, "padding": "same", "activation": "relu"},
    {"type": "flatten"},
    {"type": "dense", "name": "d1", "units": 16, "activation": "relu"},
    {"type": "output", "name": "out", "units": 3, "activation": "softmax", "loss": "nll"}]}


@pytest.fixture
def images():
    """64 random images (float32 [64, 1, 8, 8]) and labels (int64 [64])."""
    rng = np.random.default_rng(3)
    return rng.random((64, 1, 8, 8), dtype=np.float32), rng.integers(0, 3, size=64)


def test_quantized_model_predicts_like_the_float_one(ctx, images):
    x, y = images
    model = ctx.model(CNN)
    quantized = model.quantize(ctx.dataset(x, y), batches=0, batch_size=16)
    assert isinstance(quantized, nnrt.Model) and quantized is not model
    worst = np.abs(quantized.predict(x) - model.predict(x)).max()
    assert worst < 0.05, f"largest probability difference {worst}"
    # 7-bit weights by default: integers within [-63, 63], with a positive scale per unit or filter.
    for name in ("c1.weight", "d1.weight"):
        w = quantized.get_param(name)
        assert w.dtype == np.float32 and w.shape == model.get_param(name).shape
        np.testing.assert_array_equal(w, np.round(w))
        assert np.abs(w).max() <= 63
    assert (quantized.get_param("d1.weight_scale") > 0).all()
    # The float model is unchanged, and the two are independent.
    assert not np.array_equal(model.get_param("d1.weight"), np.round(model.get_param("d1.weight")))


def test_a_quantized_model_cannot_be_trained_nor_exported(ctx, images, tmp_path):
    x, y = images
    quantized = ctx.model(CNN).quantize(ctx.dataset(x, y))
    with pytest.raises(nnrt.UnsupportedError, match="quantized") as info:
        quantized.trainer(optimizer={"type": "sgd", "learning_rate": 0.1})
    assert info.value.status == nnrt.Status.UNSUPPORTED
    with pytest.raises(nnrt.UnsupportedError):
        quantized.export_onnx(tmp_path / "q.onnx")
    with pytest.raises(nnrt.UnsupportedError, match="already quantized"):
        quantized.quantize(x)


def test_quantize_takes_features_alone_and_options(ctx, images):
    x, _ = images
    model = ctx.model(CNN)
    eight = model.quantize(x, {"weight_bits": 8}, batches=0)  # a dict and keyword arguments together
    w = eight.get_param("d1.weight")
    np.testing.assert_array_equal(w, np.round(w))
    assert 63 < np.abs(w).max() <= 127
    assert np.abs(eight.predict(x) - model.predict(x)).max() < 0.05
    kept = model.quantize(ctx.array(x), '{"exclude": ["c1"]}')  # an Array and JSON text
    np.testing.assert_array_equal(kept.get_param("c1.weight"), model.get_param("c1.weight"))
    with pytest.raises(nnrt.InvalidArgumentError, match="c1.weight_scale"):
        kept.get_param("c1.weight_scale")
    with pytest.raises(nnrt.InvalidArgumentError, match="bits"):
        model.quantize(x, bits=8)
    with pytest.raises(nnrt.InvalidArgumentError, match="nope"):
        model.quantize(x, exclude=["nope"])
    with pytest.raises(nnrt.ShapeError):
        model.quantize(np.zeros((4, 1, 6, 6), np.float32))


def test_quantized_weights_are_set_as_int8(ctx, images):
    x, y = images
    quantized = ctx.model(CNN).quantize(ctx.dataset(x, y))
    shape = quantized.get_param("d1.weight").shape
    w = np.random.default_rng(1).integers(-63, 64, size=shape).astype(np.int8)
    quantized.set_param("d1.weight", w)
    np.testing.assert_array_equal(quantized.get_param("d1.weight"), w.astype(np.float32))
    with pytest.raises(nnrt.DtypeError, match="i8"):
        quantized.set_param("d1.weight", w.astype(np.float32))
    w[0, 0] = 64
    with pytest.raises(nnrt.InvalidArgumentError, match="63"):
        quantized.set_param("d1.weight", w)


def test_a_quantized_model_saves_loads_and_shares(ctx, images, tmp_path):
    x, y = images
    quantized = ctx.model(CNN).quantize(ctx.dataset(x, y))
    want = quantized.predict(x)
    quantized.save(tmp_path / "q.safetensors")
    np.testing.assert_array_equal(ctx.load_model(tmp_path / "q.safetensors").predict(x), want)
    np.testing.assert_array_equal(quantized.share().predict(x), want)


def test_int8_arrays_round_trip(ctx):
    data = np.array([[-128, -63, -1], [0, 63, 127]], np.int8)
    a = ctx.array(data)
    assert a.dtype == nnrt.DType.I8 and a.dtype.numpy == np.int8 and a.dtype.itemsize == 1
    assert a.shape == (2, 3) and a.nbytes == 6
    back = a.numpy()
    assert back.dtype == np.int8
    np.testing.assert_array_equal(back, data)
    assert ctx.array([1.0, -2.0], dtype="i8").dtype == nnrt.DType.I8  # converted by NumPy first
    np.testing.assert_array_equal(ctx.zeros([2, 2], np.int8).numpy(), np.zeros((2, 2), np.int8))
