"""nnrt.spark on a real Spark cluster (see conftest.py): training in both modes, equivalence with
one process, scoring, refusals, and an executor killed mid-training."""
from __future__ import annotations

import os
import pathlib
import signal
import threading
import time

import numpy as np
import pytest

import nnrt
from conftest import FASHION_MNIST, executor_pids

spark_module = pytest.importorskip("nnrt.spark", reason="PySpark is not importable by this Python")
SparkTrainer, spark_predict = spark_module.SparkTrainer, spark_module.spark_predict

MLP = {"input": [4], "seed": 3, "layers": [
    {"type": "dense", "units": 8, "activation": "tanh"},
    {"type": "output", "units": 3, "activation": "softmax", "loss": "nll"}]}
LENET = pathlib.Path(__file__).resolve().parents[3] / "examples" / "lenet.json"


def blobs(n=256, seed=5):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, size=(3, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=n)
    return (centres[labels] + rng.normal(0, 0.7, size=(n, 4))).astype(np.float32), labels.astype(np.int64)


def fashion_mnist(split, limit):
    import gzip

    images = os.path.join(FASHION_MNIST, f"{split}-images-idx3-ubyte.gz")
    labels = images.replace("images-idx3", "labels-idx1")
    if not os.path.exists(images):
        pytest.skip(f"Fashion-MNIST is not in {FASHION_MNIST} (Debian: dataset-fashion-mnist)")
    with gzip.open(images) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:limit]
    with gzip.open(labels) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)[:limit].astype(np.int64)
    return x, y


def image_frame(spark, x, y, partitions=2):
    rows = [(bytearray(x[i].tobytes()), int(y[i])) for i in range(len(y))]
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions), ["features", "label"])


def wait_for_running_tasks(trainer, tracker, tasks):
    """Returns once an epoch has ended and a stage after it runs `tasks` tasks at once: the barrier
    stage of a later epoch, its tasks started (a stage lasts about 2 s, most of it in its tasks)."""
    while True:
        if trainer.history:
            for stage in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage)
                if info is not None and info.numActiveTasks >= tasks:
                    return
        time.sleep(0.02)


def one_process_double_batch(options, x, y, batch, steps):
    """What SparkTrainer with 2 workers and no shuffle should equal: one trainer whose step s takes
    worker 0's batch s followed by worker 1's (each worker holds one contiguous half)."""
    half = len(y) // 2
    with nnrt.Context(threads=1) as ctx, ctx.model(MLP) as model, model.trainer(dict(options, seed=1)) as t:
        for s in range(steps):
            a = slice(s * batch, (s + 1) * batch)
            b = slice(half + s * batch, half + (s + 1) * batch)
            t.step(np.concatenate([x[a], x[b]]), np.concatenate([y[a], y[b]]))
        return model.parameters()


@pytest.mark.parametrize("mode", ["average", "allreduce"])
def test_two_workers_equal_one_process_at_twice_the_batch(spark, mode):
    # SGD without momentum: averaging the parameters after every step (or summing the gradients)
    # gives the step of the mean gradient over both batches.
    x, y = blobs(256)
    options = {"optimizer": {"type": "sgd", "learning_rate": 0.1}}
    rdd = spark.sparkContext.parallelize(list(zip(x, y.tolist())), 2)  # two contiguous halves
    trainer = SparkTrainer(MLP, options, workers=2, batch_size_per_worker=16, averaging_frequency=1, mode=mode,
                           shuffle=False)
    model = trainer.fit(rdd, epochs=1)
    steps = trainer.history[0]["workers"][0]["steps"]
    assert steps == 8
    expected = one_process_double_batch(options, x, y, 16, steps)
    got = model.parameters()
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=2e-5, atol=2e-6, err_msg=name)
    assert [r["rank"] for r in trainer.history[0]["workers"]] == [0, 1]


def test_averaging_frequency_makes_whole_rounds(spark):
    x, y = blobs(200)
    rdd = spark.sparkContext.parallelize(list(zip(x, y.tolist())), 2)
    trainer = SparkTrainer(MLP, {"optimizer": {"type": "adam", "learning_rate": 0.01}}, workers=2,
                           batch_size_per_worker=8, averaging_frequency=5)
    trainer.fit(rdd, epochs=2, validation=(x, y))
    # 100 examples per worker: 12 batches of 8, cut to 10, two rounds of 5.
    assert [r["steps"] for r in trainer.history[0]["workers"]] == [10, 10]
    assert trainer.history[1]["validation_score"] > trainer.history[0]["validation_score"] - 0.05
    assert trainer.history[1]["state_bytes"] > 0


def test_stages_of_several_epochs_train_the_same_model(spark):
    # Three epochs in one barrier stage give the same parameters as three stages of one epoch (the
    # same shuffles, the same averaging); early stopping still sees every epoch.
    x, y = blobs(200)
    rdd = spark.sparkContext.parallelize(list(zip(x, y.tolist())), 2)
    options = {"optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9}}
    models = []
    for per_stage in (1, 3):
        trainer = SparkTrainer(MLP, options, workers=2, batch_size_per_worker=8, averaging_frequency=2,
                               epochs_per_stage=per_stage)
        seen = []
        models.append(trainer.fit(rdd, epochs=3, validation=(x, y), progress=seen.append).parameters())
        assert [r["epoch"] for r in seen] == [0, 1, 2]
        assert len({r["stage"]["first_epoch"] for r in trainer.history}) == 4 - per_stage
    for name, value in models[0].items():
        np.testing.assert_allclose(models[1][name], value, rtol=1e-6, atol=1e-7, err_msg=name)
    # A stop inside a stage drops the epochs the stage trained past it.
    trainer = SparkTrainer(MLP, options, workers=2, batch_size_per_worker=8, averaging_frequency=2,
                           epochs_per_stage=3)
    stopped = trainer.fit(rdd, epochs=3, progress=lambda r: r["epoch"] == 1).parameters()
    assert [r["epoch"] for r in trainer.history] == [0, 1] and trainer.history[1]["stage"]["epochs"] == 3
    two = SparkTrainer(MLP, options, workers=2, batch_size_per_worker=8, averaging_frequency=2).fit(rdd, epochs=2)
    for name, value in two.parameters().items():
        np.testing.assert_allclose(stopped[name], value, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("mode", ["average", "allreduce"])
def test_lenet_on_fashion_mnist(spark, mode, tmp_path):
    x, y = fashion_mnist("train", 6000)
    tx, ty = fashion_mnist("t10k", 1000)
    df = image_frame(spark, x, y)
    trainer = SparkTrainer(LENET, {"optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9}},
                           workers=2, batch_size_per_worker=32, averaging_frequency=5, mode=mode,
                           early_stopping={"metric": "accuracy", "patience": 1})
    seen = []
    model = trainer.fit(df, epochs=2, validation=(tx, ty), feature_scale=1 / 255, progress=seen.append)
    assert len(seen) == 2 and seen[-1]["validation_score"] > 0.6, seen
    accuracy = model.evaluate(tx.astype(np.float32) / 255, ty).accuracy
    assert accuracy == pytest.approx(max(r["validation_score"] for r in seen), abs=2e-3)
    # An ordinary model: saved, loaded, exported.
    model.save(tmp_path / "lenet.safetensors")
    with nnrt.Context(threads=1) as ctx, ctx.load_model(tmp_path / "lenet.safetensors") as loaded:
        assert loaded.evaluate(tx.astype(np.float32) / 255, ty).accuracy == pytest.approx(accuracy)
    model.export_onnx(tmp_path / "lenet.onnx")
    assert (tmp_path / "lenet.onnx").stat().st_size > 100_000


def test_spark_predict_matches_local_predictions(spark):
    x, y = fashion_mnist("t10k", 500)
    with nnrt.Context(threads=1) as ctx, ctx.model(LENET) as model:
        scored = spark_predict(model, image_frame(spark, x, y, 3), feature_scale=1 / 255, batch_size=64)
        assert scored.columns == ["features", "label", "prediction"]
        rows = scored.collect()
        assert len(rows) == 500
        got = np.array([r.prediction for r in rows])
        xs = np.stack([np.frombuffer(bytes(r.features), np.uint8) for r in rows]).reshape(-1, 1, 28, 28)
        expected = model.predict(xs.astype(np.float32) / 255).argmax(axis=1)
        np.testing.assert_array_equal(got, expected)
        scores = spark_predict(model, image_frame(spark, x[:10], y[:10], 1), output="scores", feature_scale=1 / 255)
        first = scores.collect()[0].prediction
        assert len(first) == 10 and abs(sum(first) - 1) < 1e-4


@pytest.mark.parametrize("kind", ["array", "vector"])
def test_dataframe_columns_of_arrays_and_vectors_repartitioned(spark, kind):
    # Features as array<double> or ML vectors, labels as doubles (Spark ML's habit), 3 partitions for
    # 2 workers (repartitioned before the barrier stage).
    from pyspark.ml.linalg import Vectors

    x, y = blobs(240)
    make = (lambda v: [float(a) for a in v]) if kind == "array" else (lambda v: Vectors.dense(v))
    df = spark.createDataFrame([(make(x[i]), float(y[i])) for i in range(len(y))], ["f", "y"]).repartition(3)
    trainer = SparkTrainer(MLP, {"optimizer": {"type": "adam", "learning_rate": 0.02}}, workers=2,
                           batch_size_per_worker=8, averaging_frequency=3, mode="allreduce")
    model = trainer.fit(df, epochs=3, features_col="f", label_col="y", validation=df)
    assert sum(r["examples"] for r in trainer.history[0]["workers"]) == 240
    assert trainer.history[-1]["validation_score"] > 0.8
    assert model.evaluate(x, y).accuracy == pytest.approx(trainer.history[-1]["validation_score"])


def test_refusals(spark):
    with pytest.raises(ValueError, match="batch_size_per_worker"):
        SparkTrainer(MLP, {"batch_size": 32})
    with pytest.raises(ValueError, match="threads_per_worker"):
        SparkTrainer(MLP, context={"threads": 4})
    with pytest.raises(ValueError, match="mode"):
        SparkTrainer(MLP, mode="ring")
    with pytest.raises(ValueError, match="early_stopping"):
        SparkTrainer(MLP, early_stopping={"metric": "f1"})
    x, y = blobs(40)
    rdd = spark.sparkContext.parallelize(list(zip(x, y.tolist())), 2)
    with pytest.raises(ValueError, match="at least averaging_frequency"):
        SparkTrainer(MLP, workers=2, batch_size_per_worker=8, averaging_frequency=5).fit(rdd)
    bad = spark.sparkContext.parallelize([(x[i, :3], int(y[i])) for i in range(40)], 2)
    with pytest.raises(RuntimeError, match="expected 4 values per example"):
        SparkTrainer(MLP, workers=2, batch_size_per_worker=4, averaging_frequency=1).fit(bad)


def test_executor_killed_mid_training(spark):
    # A lost executor fails the barrier stage; fit runs the stage again from its starting state once
    # the standalone worker has started a new executor: never a hang or a smaller average.
    x, y = fashion_mnist("train", 8000)
    df = image_frame(spark, x, y)
    trainer = SparkTrainer(LENET, {"optimizer": {"type": "sgd", "learning_rate": 0.05}}, workers=2,
                           batch_size_per_worker=16, averaging_frequency=2, timeout_s=10)
    tracker = spark.sparkContext.statusTracker()
    killed = []

    def kill_one() -> None:
        # Into a later epoch's stage while its tasks run (an executor lost between stages fails no
        # stage: the next one waits for its replacement).
        wait_for_running_tasks(trainer, tracker, 2)
        time.sleep(0.5)
        pids = executor_pids(spark)
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match="epoch [12] failed .*running it again"):
        trainer.fit(df, epochs=3, feature_scale=1 / 255)
    killer.join(5)
    assert killed, "no executor was found to kill"
    assert time.monotonic() - start < 400
    assert len(trainer.history) == 3
    failed = [h["stage"]["failed_attempts"] for h in trainer.history if h["stage"]["failed_attempts"]]
    assert len(failed) == 1 and "ExecutorLostFailure" in failed[0][0], failed
    # Every epoch, the one run again too, trained both workers' full share (a whole number of
    # averaging rounds of 2 batches of 16 out of about 4000 examples each).
    shares = [[(w["examples"], w["steps"]) for w in h["workers"]] for h in trainer.history]
    assert shares[1] == shares[0] == shares[2], shares
    assert shares[0][0][0] == shares[0][0][1] * 16 > 3900, shares


def test_cancel_stops_a_running_fit(spark):
    x, y = fashion_mnist("train", 8000)
    df = image_frame(spark, x, y)
    trainer = SparkTrainer(LENET, {"optimizer": {"type": "sgd", "learning_rate": 0.05}}, workers=2,
                           batch_size_per_worker=16, averaging_frequency=2)
    tracker = spark.sparkContext.statusTracker()
    after_first = []

    def cancel_in_second_epoch() -> None:
        wait_for_running_tasks(trainer, tracker, 2)
        after_first.append(trainer.model.parameters())
        time.sleep(0.5)
        trainer.cancel()

    canceller = threading.Thread(target=cancel_in_second_epoch, daemon=True)
    canceller.start()
    start = time.monotonic()
    with pytest.raises(nnrt.CancelledError, match="cancelled during epoch 1"):
        trainer.fit(df, epochs=3, feature_scale=1 / 255)
    canceller.join(5)
    assert time.monotonic() - start < 120 and len(trainer.history) == 1
    for name, value in after_first[0].items():  # the last finished epoch's parameters
        np.testing.assert_array_equal(trainer.model.parameters()[name], value, err_msg=name)
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
    # The cancel was spent: the next fit trains.
    trainer.fit(df, epochs=1, feature_scale=1 / 255)
    assert len(trainer.history) == 2


def test_every_attempt_failing_raises(spark):
    # A worker that cannot train (here: labels outside the model's classes) fails every attempt;
    # fit raises with the executor's reason.
    x, y = blobs(64)
    rdd = spark.sparkContext.parallelize(list(zip(x, (y + 5).tolist())), 2)
    trainer = SparkTrainer(MLP, workers=2, batch_size_per_worker=8, averaging_frequency=1, max_attempts=2,
                           timeout_s=5)
    with pytest.warns(RuntimeWarning), pytest.raises(RuntimeError, match="epoch 0 failed 2 times.*InvalidArgument"):
        trainer.fit(rdd)
