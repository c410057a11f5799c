"""nnrt on Apache Spark: data-parallel training where the data lives, and scoring of DataFrames.

    from nnrt.spark import SparkTrainer, spark_predict

    trainer = SparkTrainer(lenet_config, {"optimizer": {"type": "sgd", "learning_rate": 0.05,
                           "momentum": 0.9}}, workers=2, batch_size_per_worker=64, averaging_frequency=5)
    model = trainer.fit(df, epochs=3, validation=(x_test, y_test), feature_scale=1 / 255)
    print(trainer.history[-1]["validation_score"]); model.save("lenet.safetensors")
    scored = spark_predict(model, test_df, output_col="prediction", feature_scale=1 / 255)

How it trains: the data set is cut into `workers` partitions, converted once to NumPy blocks and
cached by Spark. Each epoch (or each `epochs_per_stage` epochs) is one barrier stage of `workers`
tasks, which form a group over nnrt's Gloo communicator (the rendezvous goes through the barrier
context) and train their own partitions with the same number of steps:
  - mode "average" (DL4J's parameter averaging): each task trains its own replica, and every
    `averaging_frequency` steps the parameters and the optimizer state are replaced by their mean
    over the tasks (an epoch is a whole number of such rounds);
  - mode "allreduce": the gradients are summed every step (N workers at batch b train as one
    process at batch N*b).
After each epoch rank 0 keeps the state (parameters and optimizer state, as the safetensors bytes of
an nnrt trainer checkpoint) and sends it to the driver with the stage's result; the driver evaluates
it, decides early stopping, and broadcasts the last one to the next stage's tasks. A task that fails (an executor lost) fails the stage, which
Spark does not retry for a barrier stage: fit runs the epoch again from its starting state (up to
max_attempts times), and raises when the last attempt fails too.

The executors need the nnrt package and libnnrt (pip install it on every node, or ship it with
--py-files and set NNRT_LIB_DIR through spark.executorEnv), and the Gloo communicator plugin beside
libnnrt. The tasks of a barrier stage run at once: the cluster needs `workers` free task slots.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import time
import uuid
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

try:
    import pyspark  # noqa: F401
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("nnrt.spark needs PySpark (pip install pyspark) and a Java runtime (OpenJDK 17)") from e

import numpy as np

from .._core import dumps
from ..context import Context
from ..errors import CancelledError
from ..model import Model
from ._blocks import Columns, batch_features, blocks_of, to_block
from ._worker import Plan, predict_partition, train_stage

__all__ = ["SparkTrainer", "spark_predict"]

# Trainer options that SparkTrainer sets itself, or that mean nothing when the steps come from it.
_OWN_OPTIONS = {
    "workers": "workers=", "mode": "mode=", "averaging_frequency": "averaging_frequency=",
    "distributed": "timeout_s= (the Gloo group is formed by SparkTrainer)", "batch_size": "batch_size_per_worker=",
    "prefetch": "prefetch=", "shuffle": "shuffle=", "seed": "seed=", "early_stopping": "early_stopping=",
    "schedule": "nothing yet: a learning-rate schedule by epoch is not applied on Spark; set learning_rate",
}

ProgressFn = Callable[[Dict[str, Any]], Any]


def _as_json(config: Union[Dict[str, Any], str, os.PathLike]) -> str:
    if isinstance(config, dict):
        return dumps(config)
    if isinstance(config, os.PathLike) or (isinstance(config, str) and not config.lstrip().startswith("{")):
        with open(config, encoding="utf-8") as f:
            return f.read()
    return str(config)


class SparkTrainer:
    """Trains an nnrt model on a Spark DataFrame or RDD with `workers` tasks (see the module's text).

    model: the model's JSON config (a dict, JSON text or a path). trainer_options: nnrt trainer
    options (optimizer, l1, l2, weight_decay, clip_norm, clip_value, precision, seed; see nnrt.h);
    the keys SparkTrainer sets itself are refused with what to use instead. early_stopping:
    {"metric": "accuracy" | "loss", "patience", "min_delta", "max_epochs"} evaluated on the driver
    after each epoch (accuracy on the validation set; the training loss without one); the model
    then holds the best epoch's parameters. context: nnrt context options for the executors
    ("threads" is threads_per_worker); driver_threads: the driver's context, which evaluates.
    timeout_s bounds the rendezvous and every collective: a worker that dies or hangs makes the
    others fail within it. epochs_per_stage: epochs trained by one barrier stage (one Spark job, one
    rendezvous: about 2 s here) before the driver sees their states; the driver still evaluates and
    decides early stopping for each epoch, dropping the epochs a stage trained past a stop. A stage
    whose Spark job fails (an executor lost, a worker timed out) runs again from its starting state,
    up to max_attempts times in all; then fit raises RuntimeError with the reason."""

    def __init__(self, model: Union[Dict[str, Any], str, os.PathLike], trainer_options: Optional[Dict[str, Any]] = None,
                 *, workers: Optional[int] = None, batch_size_per_worker: int = 64, averaging_frequency: int = 5,
                 mode: str = "average", prefetch: int = 2, threads_per_worker: int = 1, shuffle: bool = True,
                 seed: int = 1, early_stopping: Optional[Dict[str, Any]] = None, timeout_s: float = 60.0,
                 max_attempts: int = 3, epochs_per_stage: int = 1,
                 context: Optional[Dict[str, Any]] = None, driver_threads: int = 1):
        options = dict(trainer_options or {})
        for key, instead in _OWN_OPTIONS.items():
            if key in options:
                raise ValueError(f"trainer option {key!r} is SparkTrainer's to set: use {instead}")
        if mode not in ("average", "allreduce"):
            raise ValueError(f"mode: expected 'average' or 'allreduce', got {mode!r}")
        for name, value, low in (("batch_size_per_worker", batch_size_per_worker, 1),
                                 ("averaging_frequency", averaging_frequency, 1), ("prefetch", prefetch, 0),
                                 ("threads_per_worker", threads_per_worker, 1), ("driver_threads", driver_threads, 1),
                                 ("max_attempts", max_attempts, 1), ("epochs_per_stage", epochs_per_stage, 1)):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers: expected an integer >= 1, got {workers!r}")
        self._stopping = self._check_early_stopping(early_stopping)
        self._config = _as_json(model)
        self._options = options
        self.workers = workers
        self.batch_size_per_worker = batch_size_per_worker
        self.averaging_frequency = averaging_frequency
        self.mode = mode
        self.prefetch = prefetch
        self.shuffle = shuffle
        self.seed = seed
        self.timeout_s = float(timeout_s)
        self.max_attempts = max_attempts
        self.epochs_per_stage = epochs_per_stage
        if context and "threads" in context:
            raise ValueError("context option 'threads' is SparkTrainer's to set: use threads_per_worker=")
        self._executor_context = dict(context or {}, threads=threads_per_worker)
        # The driver's own model: it holds the state between epochs, evaluates, and is what fit returns.
        self._ctx = Context(threads=driver_threads)
        self._model = self._ctx.model(self._config)
        self._trainer = self._model.trainer(dict(options, seed=seed))
        self._state_bytes: Optional[bytes] = None  # what the driver's trainer holds, once known
        #: Per epoch: "epoch", "loss", "validation_score", "seconds" (its share of its stage's time on
        #: the driver), "train_seconds" (the slowest worker's steps), "overhead_seconds" (the rest:
        #: Spark's task scheduling, moving the blocks and the state, the rendezvous),
        #: "averaging_seconds", "state_bytes", "state_seconds" (saving, moving and restoring the
        #: state), "evaluate_seconds" (the driver's validation, not in "seconds"), "stage" (its first epoch, epochs, seconds, the slowest worker's data, rendezvous
        #: and setup seconds, and "failed_attempts": the reasons of the tries that failed), "workers"
        #: (per rank: host, examples, steps, loss, the time of each part).
        self.history: List[Dict[str, Any]] = []
        #: The last fit's conversion of the data set to cached blocks, in seconds.
        self.convert_seconds = 0.0
        self._job_group = f"nnrt-spark-{uuid.uuid4().hex}"
        self._cancelled = False
        self._sc: Any = None

    @staticmethod
    def _check_early_stopping(spec: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        if spec is None:
            return None
        unknown = set(spec) - {"metric", "patience", "min_delta", "max_epochs"}
        if unknown:
            raise ValueError(f"early_stopping: unknown key {sorted(unknown)[0]!r} (known: metric, patience, "
                             "min_delta, max_epochs)")
        metric = spec.get("metric", "accuracy")
        if metric not in ("accuracy", "loss"):
            raise ValueError(f"early_stopping.metric: expected 'accuracy' or 'loss', got {metric!r}")
        return {"metric": metric, "patience": int(spec.get("patience", 2)),
                "min_delta": float(spec.get("min_delta", 0.0)), "max_epochs": spec.get("max_epochs")}

    @property
    def model(self) -> Model:
        """The driver's model: after fit, the trained (or best) parameters."""
        return self._model

    def _state(self) -> bytes:
        """The driver trainer's state as checkpoint bytes: the ones last restored, else saved now."""
        if self._state_bytes is None:
            with tempfile.TemporaryDirectory(prefix="nnrt-spark-") as tmp:
                path = os.path.join(tmp, "state.safetensors")
                self._trainer.save(path)
                with open(path, "rb") as f:
                    self._state_bytes = f.read()
        return self._state_bytes

    def _restore(self, state: bytes) -> None:
        with tempfile.TemporaryDirectory(prefix="nnrt-spark-") as tmp:
            path = os.path.join(tmp, "state.safetensors")
            with open(path, "wb") as f:
                f.write(state)
            self._trainer.restore(path)
        self._state_bytes = state

    def cancel(self) -> None:
        """Stops a running fit from another thread: its Spark job is cancelled (the tasks are
        interrupted) and fit raises nnrt.CancelledError; the model keeps the last finished epoch's
        parameters. A cancel before fit makes the next fit stop at once."""
        self._cancelled = True
        if self._sc is not None:
            self._sc.cancelJobGroup(self._job_group)

    def fit(self, data: Any, epochs: int = 1, *, validation: Any = None, features_col: str = "features",
            label_col: str = "label", feature_scale: float = 1.0, binary_dtype: str = "uint8",
            progress: Optional[ProgressFn] = None) -> Model:
        """Trains for `epochs` epochs (fewer with early stopping) on `data`: a DataFrame with a
        features column (array of numbers, an ML vector, or binary: raw `binary_dtype` values) and a
        label column (class indices), or an RDD of (features, label) pairs. Features are multiplied
        by feature_scale. validation: (features, labels) NumPy arrays, an nnrt.Dataset, or a
        DataFrame of the same columns (collected to the driver). progress(record) is called on the
        driver after each epoch with that epoch's history record; returning True stops. Calling fit
        again goes on from where it stopped. Returns the driver's model."""
        if not isinstance(epochs, int) or epochs < 0:
            raise ValueError(f"epochs: expected an integer >= 0, got {epochs!r}")
        sc = data.rdd.context if hasattr(data, "rdd") else data.context
        self._sc = sc
        self._state_bytes = None  # the model may have been changed since the last fit
        workers = self.workers or sc.defaultParallelism
        input_shape = tuple(self._model.summary()["input"])
        columns = Columns(features_col, label_col, input_shape, binary_dtype, float(feature_scale))
        validation_set = self._validation(validation, columns)

        blocks = blocks_of(data, columns, workers).persist()
        try:
            t = time.perf_counter()
            try:
                sizes = blocks.map(lambda b: len(b[1])).collect()
            except Exception as e:
                raise RuntimeError(f"converting the training set failed: {_spark_reason(e)}") from e
            self.convert_seconds = time.perf_counter() - t
            plan = self._plan(columns, workers, sizes)
            plan_b = sc.broadcast(plan)
            best: Optional[Tuple[float, bytes]] = None
            waited = 0
            stop = False
            end = len(self.history) + epochs
            while not stop and len(self.history) < end:
                n = min(self.epochs_per_stage, end - len(self.history))
                for record, state in self._stage(sc, blocks, plan_b, len(self.history), n, validation_set):
                    self.history.append(record)
                    stop = bool(progress(record)) if progress is not None else False
                    if self._stopping is not None:
                        score = self._score(record)
                        if best is None or score > best[0] + self._stopping["min_delta"]:
                            best, waited = (score, state), 0
                        else:
                            waited += 1
                        max_epochs = self._stopping["max_epochs"]
                        stop = (stop or waited > self._stopping["patience"] or not math.isfinite(score) or
                                (max_epochs is not None and len(self.history) >= max_epochs))
                    if stop:
                        # The epochs this stage trained beyond this one are dropped.
                        self._restore(state)
                        break
            if best is not None:
                self._restore(best[1])
            plan_b.unpersist()
        finally:
            blocks.unpersist()
        return self._model

    def _score(self, record: Dict[str, Any]) -> float:
        """The early-stopping score, larger is better."""
        assert self._stopping is not None
        if self._stopping["metric"] == "accuracy" and record["validation_score"] is not None:
            return float(record["validation_score"])
        return -float(record["loss"])

    def _validation(self, validation: Any, columns: Columns) -> Any:
        if validation is None:
            return None
        if hasattr(validation, "rdd") and hasattr(validation, "columns"):
            x, y = to_block(validation.select(columns.features, columns.label).collect(), columns)
            return self._ctx.dataset(batch_features(x, columns.scale), y)
        if isinstance(validation, tuple):
            x, y = validation
            return self._ctx.dataset(batch_features(np.asarray(x), columns.scale), np.asarray(y))
        return validation  # an nnrt.Dataset

    def _plan(self, columns: Columns, workers: int, sizes: Sequence[int]) -> Plan:
        b, k = self.batch_size_per_worker, self.averaging_frequency
        smallest = min(sizes)
        if self.mode == "average":
            steps = smallest // (b * k) * k
            if steps == 0:
                raise ValueError(f"each of the {workers} workers needs at least averaging_frequency x "
                                 f"batch_size_per_worker = {k * b} examples for one averaging round, and one "
                                 f"partition has {smallest}: use fewer workers or smaller batches")
        else:
            steps = math.ceil(smallest / b)
            if steps == 0:
                raise ValueError(f"a partition of the training set is empty ({list(sizes)} examples per worker)")
        options = dict(self._options, seed=self.seed, mode=self.mode, averaging_frequency=k,
                       distributed={"comm": "gloo", "timeout_s": self.timeout_s})
        return Plan(model_config=self._config, trainer_options=options,
                    context_options=dumps(self._executor_context), columns=columns, batch_size=b,
                    examples=smallest, steps=steps, averaging_frequency=k, mode=self.mode, shuffle=self.shuffle,
                    seed=self.seed, prefetch=self.prefetch, timeout_s=self.timeout_s)

    def _stage(self, sc: Any, blocks: Any, plan_b: Any, first: int, epochs: int,
               validation_set: Any) -> List[Tuple[Dict[str, Any], bytes]]:
        """Epochs first .. first+epochs-1 as one barrier stage; per epoch its history record and state."""
        start = time.perf_counter()
        state_b = sc.broadcast(self._state())
        try:
            job = blocks.barrier().mapPartitions(lambda it: train_stage(it, plan_b.value, state_b.value, first, epochs))
            failures: List[str] = []
            while True:
                if self._cancelled:
                    self._cancelled = False  # one cancel stops one fit
                    raise CancelledError(f"nnrt.spark: fit cancelled before epoch {first}")
                try:
                    with _job_group(sc, self._job_group):
                        ranks = sorted(job.collect(), key=lambda r: r["rank"])
                    break
                except Exception as e:  # Py4J's error: keep the reason, not the Java stack
                    if self._cancelled:
                        self._cancelled = False
                        raise CancelledError(f"nnrt.spark: fit cancelled during epoch {first}") from e
                    failures.append(_spark_reason(e))
                    if len(failures) >= self.max_attempts:
                        raise RuntimeError(f"epoch {first} failed {len(failures)} times (max_attempts="
                                           f"{self.max_attempts}); the last time: {failures[-1]}") from e
                    # Spark does not run a failed barrier result stage again: run the stage again
                    # from its starting state (a lost executor's blocks are recomputed from lineage).
                    warnings.warn(f"nnrt.spark: epoch {first} failed ({failures[-1]}); running it again from its "
                                  "starting state", RuntimeWarning, stacklevel=4)
        finally:
            state_b.unpersist()
        states = ranks[0].pop("states")
        seconds = time.perf_counter() - start
        setup = {k: max(r[k] for r in ranks) for k in ("data_seconds", "rendezvous_seconds", "setup_seconds")}
        out = []
        for i, state in enumerate(states):
            per_rank = [dict(r["epochs"][i], rank=r["rank"], host=r["host"], pid=r["pid"]) for r in ranks]
            t = time.perf_counter()
            self._restore(state)
            state_seconds = per_rank[0].pop("state_seconds") + time.perf_counter() - t
            score = None
            t = time.perf_counter()
            if validation_set is not None:
                with self._model.evaluate(validation_set) as evaluation:
                    score = evaluation.accuracy
            evaluate_seconds = time.perf_counter() - t
            examples = sum(r["examples"] for r in per_rank)
            share = seconds / len(states)
            train_seconds = max(r["train_seconds"] for r in per_rank)
            out.append(({
                "epoch": first + i, "loss": per_rank[0]["loss"], "validation_score": score, "examples": examples,
                "seconds": share, "examples_per_second": examples / share if share > 0 else 0.0,
                "train_seconds": train_seconds, "overhead_seconds": share - train_seconds,
                "averaging_seconds": max(r["averaging_seconds"] for r in per_rank),
                "comm_wait_seconds": max(r["comm_wait_seconds"] for r in ranks),
                "state_bytes": len(state), "state_seconds": state_seconds, "evaluate_seconds": evaluate_seconds,
                "stage": {"first_epoch": first, "epochs": epochs, "seconds": seconds, **setup,
                          "failed_attempts": failures},
                "workers": per_rank,
            }, state))
        return out


@contextlib.contextmanager
def _job_group(sc: Any, group: str):
    """Runs the jobs started inside in Spark job group `group` (so that cancel() can stop them,
    interrupting their tasks), then gives this thread back the group it had."""
    keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    before = {k: sc.getLocalProperty(k) for k in keys}
    sc.setJobGroup(group, "nnrt.spark fit", interruptOnCancel=True)
    try:
        yield
    finally:
        for k, v in before.items():
            sc.setLocalProperty(k, v)


def _spark_reason(e: BaseException) -> str:
    """What went wrong, from a Py4J error's text: the Python exception an executor raised, else
    Spark's reason for the failed stage."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip() and not line.strip().startswith("at ")]
    python = [line for line in lines if re.match(r"^[\w.]+(Error|Exception): ", line)
              and not line.startswith(("py4j.", "org.apache.spark.SparkException"))]
    if python:
        return python[-1]
    for i, line in enumerate(lines):
        if "Job aborted due to stage failure:" in line:
            return " ".join([line.split("Job aborted due to stage failure:", 1)[1].strip()] + lines[i + 1:i + 2])
    return lines[-1] if lines else type(e).__name__


def spark_predict(model: Model, data: Any, *, features_col: str = "features", output_col: str = "prediction",
                  output: str = "class", batch_size: int = 256, feature_scale: float = 1.0,
                  binary_dtype: str = "uint8", threads_per_worker: int = 1) -> Any:
    """Scores a DataFrame in parallel: every partition is predicted by the model on its executor,
    in batches of `batch_size`. Returns the DataFrame with one more column, output_col: the class
    index (LongType) for output="class", or the model's outputs (array of floats) for
    output="scores". The model travels as its saved safetensors bytes, loaded once per executor
    process."""
    from pyspark.sql.types import ArrayType, FloatType, LongType, StructField, StructType

    if output not in ("class", "scores"):
        raise ValueError(f"output: expected 'class' or 'scores', got {output!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size: expected an integer >= 1, got {batch_size!r}")
    if features_col not in data.columns:
        raise ValueError(f"the DataFrame has no column {features_col!r} (it has {data.columns})")
    if output_col in data.columns:
        raise ValueError(f"the DataFrame already has a column {output_col!r}")
    input_shape = tuple(model.summary()["input"])
    columns = Columns(features_col, None, input_shape, binary_dtype, float(feature_scale))
    with tempfile.TemporaryDirectory(prefix="nnrt-spark-") as tmp:
        path = os.path.join(tmp, "model.safetensors")
        model.save(path)
        with open(path, "rb") as f:
            saved = f.read()
    sc = data.rdd.context
    model_b = sc.broadcast(saved)
    key = uuid.uuid4().hex
    context_options = json.dumps({"threads": threads_per_worker})
    kind = LongType() if output == "class" else ArrayType(FloatType(), containsNull=False)
    schema = StructType(data.schema.fields + [StructField(output_col, kind, nullable=False)])
    rows = data.rdd.mapPartitions(
        lambda it: predict_partition(it, key, model_b, context_options, columns, output, batch_size))
    return data.sparkSession.createDataFrame(rows, schema)
