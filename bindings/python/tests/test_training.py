"""Datasets, trainers, progress callbacks, cancellation, checkpoints and evaluation."""
import os
import signal
import threading

import numpy as np
import pytest

import nnrt
from conftest import MLP, fashion_mnist_spec

ADAM = {"optimizer": {"type": "adam", "learning_rate": 0.02}, "batch_size": 32, "seed": 1}
LENET = {"input": [1, 28, 28], "seed": 123, "layers": [
    {"type": "conv2d", "filters": 8, "kernel": [5, 5], "activation": "relu"},
    {"type": "maxpool2d", "kernel": [2, 2]},
    {"type": "conv2d", "filters": 16, "kernel": [5, 5], "activation": "relu"},
    {"type": "maxpool2d", "kernel": [2, 2]},
    {"type": "dense", "units": 64, "activation": "relu"},
    {"type": "output", "units": 10, "activation": "softmax", "loss": "nll"}]}


def test_mlp_learns_the_blobs(ctx, blobs):
    x, y = blobs
    model = ctx.model(MLP)
    train, test = ctx.dataset(x[:240], y[:240]), ctx.dataset(x[240:], y[240:])
    before = model.evaluate(test).accuracy
    with model.trainer(ADAM) as trainer:
        result = trainer.fit(train, test, epochs=5)
    after = model.evaluate(test)
    assert result["stop_reason"] == "completed" and result["epochs"] == 5
    assert len(result["history"]) == 5 and result["history"][-1]["validation_score"] == after.accuracy
    assert after.accuracy > 0.9 and after.accuracy > before
    assert after.confusion_matrix.shape == (3, 3) and after.confusion_matrix.sum() == 60
    assert after["examples"] == 60 and len(after.report["per_class"]) == 3


def test_lenet_on_fashion_mnist_improves(ctx):
    train = ctx.load_dataset(fashion_mnist_spec("train", 2000))
    test = ctx.load_dataset(**fashion_mnist_spec("t10k", 500))
    assert len(train) == 2000 and test.size == 500
    features, labels = test.examples(0, 3)
    assert features.shape == (3, 1, 28, 28) and features.dtype == np.float32 and 0 <= features.min() <= 1
    assert labels.dtype == np.int64 and labels.shape == (3,)
    model = ctx.model(LENET)
    before = model.evaluate(test).accuracy
    model.trainer(optimizer={"type": "adam", "learning_rate": 0.003}, batch_size=64).fit(train, epochs=1)
    after = model.evaluate(test).accuracy
    assert after > 0.6 and after > before + 0.3


def test_progress_reaches_the_callback(ctx, blobs):
    seen = []
    trainer = ctx.model(MLP).trainer(ADAM)
    trainer.fit(blobs, (blobs[0][:50], blobs[1][:50]), epochs=2, progress=seen.append)
    steps = [p for p in seen if not p.epoch_end]
    ends = [p for p in seen if p.epoch_end]
    assert len(steps) == 2 * 10 and [p.epoch for p in ends] == [0, 1]
    assert all(isinstance(p, nnrt.Progress) and p.loss > 0 for p in steps)
    assert steps[0].batches_per_epoch == 10 and steps[0].batch == 0 and steps[-1].iteration == 20
    assert steps[0].validation_score is None and 0 <= ends[-1].validation_score <= 1
    assert steps[0].device_utilization_percent is None  # a CPU backend cannot tell


def test_a_callback_returning_true_stops_training(ctx, blobs):
    trainer = ctx.model(MLP).trainer(ADAM)
    calls = []
    result = trainer.fit(blobs, epochs=50, progress=lambda p: calls.append(p) or True)
    assert len(calls) == 1 and result["stop_reason"] == "callback" and result["iterations"] == 1


def test_an_exception_in_the_callback_stops_training_and_is_raised(ctx, blobs):
    trainer = ctx.model(MLP).trainer(ADAM)

    def progress(p):
        if p.iteration == 3:
            raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        trainer.fit(blobs, epochs=50, progress=progress)
    assert trainer.result["iterations"] == 3 and trainer.result["stop_reason"] == "callback"
    # The callback is gone afterwards: the next fit runs to its end.
    assert trainer.fit(blobs, epochs=1)["stop_reason"] == "completed"


def test_a_callback_may_predict_and_cancel_but_not_call_its_trainer(ctx, blobs):
    model = ctx.model(MLP)
    trainer = model.trainer(ADAM)
    shapes = []
    trainer.fit(blobs, epochs=1, progress=lambda p: shapes.append(model.predict(blobs[0][:2]).shape))
    assert shapes == [(2, 3)] * 11
    with pytest.raises(nnrt.InvalidArgumentError, match="must not call its own trainer"):
        trainer.fit(blobs, epochs=1, progress=lambda p: trainer.step(blobs[0][:4], blobs[1][:4]))
    with pytest.raises(nnrt.CancelledError):
        trainer.fit(blobs, epochs=5, progress=lambda p: trainer.cancel())
    assert trainer.result["stop_reason"] == "cancelled"


def test_cancel_from_another_thread(ctx, blobs):
    trainer = ctx.model(MLP).trainer(ADAM)
    started = threading.Event()
    raised = []

    def train():
        try:
            trainer.fit(blobs, epochs=100000, progress=lambda p: started.set())
        except BaseException as e:  # noqa: BLE001 - inspected below
            raised.append(e)

    worker = threading.Thread(target=train)
    worker.start()
    assert started.wait(60)
    trainer.cancel()
    worker.join(60)
    assert not worker.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], nnrt.CancelledError)
    assert raised[0].status == nnrt.Status.CANCELLED
    assert trainer.result["stop_reason"] == "cancelled"


def test_ctrl_c_stops_fit_without_a_callback(ctx, blobs):
    trainer = ctx.model(MLP).trainer(ADAM)
    interrupt = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    interrupt.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            trainer.fit(blobs, epochs=100000)
    finally:
        interrupt.join()
    assert trainer.result["stop_reason"] == "callback" and trainer.result["iterations"] > 0


def test_step_lowers_the_loss(ctx, blobs):
    x, y = blobs
    trainer = ctx.model(MLP).trainer(ADAM)
    losses = [trainer.step(x[:64], y[:64]) for _ in range(30)]
    assert losses[-1] < losses[0] / 2
    with pytest.raises(nnrt.ShapeError):
        trainer.step(x[:64, :3], y[:64])
    with pytest.raises(nnrt.InvalidArgumentError):
        trainer.step(x[:4], np.array([0, 1, 2, 7]))  # a class the output does not have


def test_checkpoints_continue_exactly(ctx, blobs, tmp_path):
    first = ctx.model(MLP).trainer(ADAM)
    first.fit(blobs, epochs=1)
    first.save(tmp_path / "ckpt.safetensors")
    first.fit(blobs, epochs=1)
    resumed = ctx.model(MLP).trainer(ADAM)
    resumed.restore(tmp_path / "ckpt.safetensors")
    resumed.fit(blobs, epochs=1)
    for name, value in first.model.parameters().items():
        np.testing.assert_array_equal(resumed.model.get_param(name), value)
    assert resumed.result["epochs"] == 2
    # nnrt_model_load reads a trainer's checkpoint too.
    loaded = ctx.load_model(tmp_path / "ckpt.safetensors")
    assert loaded.param_count == first.model.param_count
    with pytest.raises(nnrt.InvalidArgumentError):
        ctx.model(MLP).trainer(optimizer={"type": "sgd"}).restore(tmp_path / "ckpt.safetensors")


def test_trainer_options_are_checked(ctx):
    model = ctx.model(MLP)
    with pytest.raises(nnrt.InvalidArgumentError, match="colour"):
        model.trainer(colour=1)
    with pytest.raises(nnrt.InvalidArgumentError):
        model.trainer(optimizer={"type": "adam", "learning_rate": -1})
    trainer = model.trainer('{"batch_size": 8}')
    assert (trainer.rank, trainer.world_size) == (0, 1)


def test_trainer_keeps_its_model_after_the_model_is_closed(ctx, blobs):
    model = ctx.model(MLP)
    trainer = model.trainer(ADAM)
    model.close()
    ctx.close()
    assert trainer.fit(blobs, epochs=1)["epochs"] == 1
    trainer.close()
    trainer.close()
    with pytest.raises(nnrt.ClosedError):
        trainer.fit(blobs)
    with pytest.raises(nnrt.ClosedError):
        trainer.cancel()


def test_datasets_from_arrays(ctx, blobs):
    x, y = blobs
    data = ctx.dataset(x, y)
    assert len(data) == 300
    fx, fy = data.examples(10, 5)
    np.testing.assert_array_equal(fx, x[10:15])
    np.testing.assert_array_equal(fy, y[10:15])
    with pytest.raises(nnrt.ShapeError):
        ctx.dataset(x, y[:10])
    with pytest.raises(nnrt.InvalidArgumentError):
        ctx.dataset(np.full((2, 4), np.nan, np.float32), np.array([0, 1]))
    with pytest.raises(nnrt.DtypeError):
        ctx.dataset(x, y.astype(np.complex64))
    with pytest.raises(TypeError):
        ctx.model(MLP).trainer().fit("not data")


def test_regression_evaluation(ctx):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(200, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32))
    model = ctx.model({"input": [3], "layers": [{"type": "output", "units": 1, "activation": "identity",
                                                  "loss": "mse"}]})
    before = model.evaluate(x, y)["mse"]
    model.trainer(optimizer={"type": "sgd", "learning_rate": 0.1}, batch_size=20).fit((x, y), epochs=10)
    evaluation = model.evaluate(x, y)
    assert np.isnan(evaluation.accuracy) and evaluation.confusion_matrix is None
    assert evaluation["mse"] < before / 100 and evaluation["r2"] > 0.99


def test_datasets_from_specs(ctx, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n" + "".join(f"{i},{-i},{i % 2}\n" for i in range(10)))
    data = ctx.load_dataset({"format": "csv", "path": str(path), "header": True}, label_column=-1)
    assert len(data) == 10
    features, labels = data.examples()
    np.testing.assert_array_equal(features[:, 0], np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(labels, np.arange(10) % 2)
    with pytest.raises(nnrt.IoError):
        ctx.load_dataset(format="csv", path=str(tmp_path / "missing.csv"))
    with pytest.raises(nnrt.InvalidArgumentError, match="colour"):
        ctx.load_dataset(format="csv", path=str(path), colour=1)
    path.write_text("1,2\n3\n")
    with pytest.raises(nnrt.CorruptError):
        ctx.load_dataset(format="csv", path=str(path))
