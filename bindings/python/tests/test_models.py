"""Models: configs, prediction, bad input, parameters, save/load, ONNX, generation."""
import json
import pathlib
import threading

import numpy as np
import pytest

import nnrt
from conftest import MLP, onnx_converter

TOKEN_MODEL = {"input": [8], "seed": 2, "layers": [
    {"type": "embedding", "vocab": 11, "units": 8},
    {"type": "position_embedding"},
    {"type": "multi_head_attention", "heads": 2, "causal": True},
    {"type": "output", "units": 11, "loss": "nll", "flatten": False}]}


def test_model_from_dict_json_text_and_path(ctx, tmp_path):
    path = tmp_path / "mlp.json"
    path.write_text(json.dumps(MLP))
    models = [ctx.model(MLP), ctx.model(json.dumps(MLP)), ctx.model(path), ctx.model(pathlib.Path(path))]
    x = np.ones((2, 4), np.float32)
    first = models[0].predict(x)
    for m in models:
        assert m.param_count == 4 * 16 + 16 + 16 * 3 + 3
        np.testing.assert_array_equal(m.predict(x), first)  # the config's seed fixes the weights


def test_numpy_values_in_configs_and_options(ctx, blobs):
    config = dict(MLP, input=np.array([4]))
    model = ctx.model(config)
    trainer = model.trainer(batch_size=np.int64(32), optimizer={"type": "sgd", "learning_rate": np.float32(0.1)})
    assert trainer.fit(blobs, epochs=np.int32(1))["epochs"] == 1
    assert ctx.op("sum", blobs[0], axes=np.array([1])).shape == (300,)


def test_bad_config_names_the_key(ctx):
    with pytest.raises(nnrt.InvalidArgumentError) as info:
        ctx.model({"input": [4], "layers": [{"type": "dense", "units": 3, "colour": "red"}]})
    assert "colour" in info.value.message
    with pytest.raises(nnrt.InvalidArgumentError):
        ctx.model("{not json")


ENCODER_WITH_MASK = {"inputs": [{"name": "ids", "shape": [6]}, {"name": "attention_mask", "shape": [6]}], "seed": 3,
                     "nodes": [
    {"name": "emb", "type": "embedding", "inputs": ["ids"], "vocab": 11, "units": 8},
    {"name": "attn", "type": "multi_head_attention", "inputs": ["emb", "attention_mask"], "heads": 2, "mask": "keep"},
    {"name": "out", "type": "output", "inputs": ["attn"], "units": 3, "loss": "nll"}],
    "outputs": ["out", "attn"]}


def test_predict_many_takes_named_inputs_and_gives_every_output(ctx):
    model = ctx.model(ENCODER_WITH_MASK)
    assert model.inputs_info() == [("ids", (6,)), ("attention_mask", (6,))]
    assert model.output_count() == 2
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 11, (4, 6))  # int64: copied and converted
    mask = np.ones((4, 6), np.float32)
    mask[:, 4:] = 0
    probs, hidden = model.predict_many([ids, mask])
    assert probs.shape == (4, 3) and hidden.shape == (4, 6, 8)
    np.testing.assert_allclose(probs.sum(axis=1), np.ones(4), rtol=1e-5)
    by_name = model.predict_many({"attention_mask": mask, "ids": ids}, outputs=1)
    assert len(by_name) == 1
    np.testing.assert_array_equal(by_name[0], probs)
    # Padding tokens do not change what the others see.
    other = ids.copy()
    other[:, 4:] = (other[:, 4:] + 1) % 11
    np.testing.assert_array_equal(model.predict_many([other, mask])[1][:, :4], hidden[:, :4])
    with pytest.raises(nnrt.InvalidArgumentError, match="predict_many"):
        model.predict(ids)
    with pytest.raises(nnrt.InvalidArgumentError, match="missing"):
        model.predict_many({"ids": ids})
    with pytest.raises(nnrt.ShapeError, match="the same examples"):
        model.predict_many([ids, mask[:2]])
    with pytest.raises(nnrt.UnsupportedError, match="one input"):
        model.trainer()


def test_predict_gives_probabilities(ctx):
    model = ctx.model(MLP)
    p = model.predict(np.random.default_rng(0).normal(size=(5, 4)))  # float64 in is converted
    assert p.shape == (5, 3) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(axis=1), np.ones(5), rtol=1e-5)
    out = model.predict_array(ctx.array(np.zeros((2, 4), np.float32)))
    assert isinstance(out, nnrt.Array) and out.shape == (2, 3)


def test_predict_from_several_threads_at_once(ctx, blobs):
    model = ctx.model(MLP)
    x = blobs[0]
    want = model.predict(x)
    failures = []

    def predict():
        for _ in range(20):
            if not np.array_equal(model.predict(x), want):
                failures.append("differs")

    threads = [threading.Thread(target=predict) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_predict_with_the_wrong_shape_raises_shape_error(ctx):
    model = ctx.model(MLP)
    with pytest.raises(nnrt.ShapeError) as info:
        model.predict(np.zeros((2, 5), np.float32))
    assert "5" in info.value.message and "4" in info.value.message


def test_predict_reads_a_bool_input_as_zeros_and_ones(ctx):
    model = ctx.model(MLP)
    x = np.array([[True, False, True, True], [False, False, False, True]])
    np.testing.assert_array_equal(model.predict(x), model.predict(x.astype(np.float32)))


def test_summary_and_parameters(ctx):
    model = ctx.model(MLP)
    summary = model.summary()
    assert summary["total_params"] == model.param_count
    assert [layer["type"] for layer in summary["layers"]] == ["dense", "output"]
    assert model.param_names == ["layer0.weight", "layer0.bias", "layer1.weight", "layer1.bias"]
    params = model.parameters()
    assert params["layer0.weight"].shape == (16, 4)  # PyTorch's [out, in]
    model.set_param("layer1.bias", np.full(3, 0.5))
    np.testing.assert_array_equal(model.get_param("layer1.bias"), np.full(3, 0.5, np.float32))
    with pytest.raises(nnrt.ShapeError):
        model.set_param("layer1.bias", np.zeros(4, np.float32))
    with pytest.raises(nnrt.InvalidArgumentError, match="layer0.weight"):
        model.get_param("no.such")


def test_save_and_load_give_the_same_predictions(ctx, tmp_path, blobs):
    x, y = blobs
    model = ctx.model(MLP)
    model.trainer(batch_size=32).fit((x, y), epochs=1)
    model.save(tmp_path / "m.safetensors")
    loaded = ctx.load_model(str(tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert loaded.summary()["total_params"] == model.param_count


def test_loading_bad_files_raises_io_and_corrupt_errors(ctx, tmp_path):
    with pytest.raises(nnrt.IoError) as info:
        ctx.load_model(tmp_path / "missing.safetensors")
    assert "missing.safetensors" in info.value.message
    (tmp_path / "junk.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not a header")
    with pytest.raises(nnrt.CorruptError):
        ctx.load_model(tmp_path / "junk.safetensors")


def test_onnx_export_and_import_give_the_same_predictions(ctx, tmp_path, blobs):
    onnx_converter(ctx)
    x, _ = blobs
    model = ctx.model(MLP)
    model.export_onnx(tmp_path / "m.onnx")
    from_file = ctx.import_onnx(tmp_path / "m.onnx")
    np.testing.assert_allclose(from_file.predict(x), model.predict(x), rtol=1e-5, atol=1e-6)
    data = (tmp_path / "m.onnx").read_bytes()
    for source in (data, bytearray(data), memoryview(data)):
        np.testing.assert_allclose(ctx.import_onnx(source).predict(x), model.predict(x), rtol=1e-5, atol=1e-6)


def test_onnx_import_with_a_loss_trains(ctx, tmp_path, blobs):
    onnx_converter(ctx)
    x, y = blobs
    ctx.model(MLP).export_onnx(tmp_path / "m.onnx")
    imported = ctx.import_onnx(tmp_path / "m.onnx", loss="nll")
    before = imported.evaluate(x, y).accuracy
    imported.trainer(optimizer={"type": "adam", "learning_rate": 0.02}, batch_size=32).fit((x, y), epochs=3)
    assert imported.evaluate(x, y).accuracy > max(before, 0.8)


def test_onnx_import_of_garbage_raises(ctx):
    onnx_converter(ctx)
    with pytest.raises(nnrt.CorruptError):
        ctx.import_onnx(b"\xff\xff\xff\xff garbage")
    with pytest.raises(nnrt.InvalidArgumentError, match="colour"):
        ctx.import_onnx(b"\x08\x07", colour=1)


def test_generate_greedy_is_repeatable_and_callbacks_stop_it(ctx):
    model = ctx.model(TOKEN_MODEL)
    tokens = model.generate([1, 2, 3], 6)
    assert len(tokens) == 6 and all(0 <= t < 11 for t in tokens)
    assert model.generate([1, 2, 3], 6) == tokens
    assert model.generate([1, 2, 3], 6, cache=False) == tokens
    sampled = model.generate([1, 2, 3], 6, temperature=1.0, top_k=5, seed=9)
    assert model.generate([1, 2, 3], 6, temperature=1.0, top_k=5, seed=9) == sampled
    seen = []
    assert model.generate([1, 2, 3], 6, on_token=lambda t: seen.append(t) or len(seen) == 2) == tokens[:2]

    def boom(token):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        model.generate([1, 2, 3], 6, on_token=boom)
    with pytest.raises(nnrt.InvalidArgumentError):
        model.generate([1, 99], 3)  # a token outside the vocabulary


def test_model_outlives_its_closed_context(blobs):
    c = nnrt.Context(backend="reference")
    model = c.model(MLP)
    c.close()
    assert model.predict(blobs[0][:3]).shape == (3, 3)
    model.close()
    model.close()
    with pytest.raises(nnrt.ClosedError):
        model.predict(blobs[0][:3])
