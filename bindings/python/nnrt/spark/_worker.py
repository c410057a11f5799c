"""What runs on the executors: data-parallel training, one stage of epochs per barrier task, and
scoring.

Each barrier task of a stage is one rank of a Gloo group (see _rendezvous.py). It restores the
training state the driver broadcast (an nnrt trainer checkpoint: parameters and optimizer state as
safetensors bytes), trains its partition's block for each epoch's steps with nnrt_trainer_step,
which is collective ("allreduce": gradients summed every step; "average": parameters and optimizer
state averaged every averaging_frequency steps), and rank 0 sends the state after each epoch back.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import statistics
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ._blocks import Columns, batch_features

# Contexts live as long as the Python worker process, which Spark reuses from task to task: making
# one loads the backend plugins, which is worth doing once.
_contexts: Dict[str, Any] = {}
_models: Dict[str, Any] = {}  # spark_predict's models, by the broadcast's key, the newest last
_KEEP_MODELS = 4  # models a process keeps loaded for spark_predict calls to come


def context(options_json: str) -> Any:
    import nnrt

    ctx = _contexts.get(options_json)
    if ctx is None:
        ctx = _contexts[options_json] = nnrt.Context(options_json)
    return ctx


@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything an epoch's tasks need besides the state: broadcast once per fit."""

    model_config: str
    trainer_options: Dict[str, Any]  # with mode, averaging_frequency and distributed
    context_options: str
    columns: Columns
    batch_size: int
    examples: int      # per worker and epoch: the smallest partition's size
    steps: int         # per worker and epoch
    averaging_frequency: int
    mode: str
    shuffle: bool
    seed: int
    prefetch: int
    timeout_s: float


def _batches(x: np.ndarray, y: np.ndarray, plan: Plan, order: np.ndarray) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    for s in range(plan.steps):
        idx = order[s * plan.batch_size:(s + 1) * plan.batch_size]
        yield batch_features(x[idx], plan.columns.scale), y[idx]


def _prefetched(batches: Iterator[Any], depth: int) -> Iterator[Any]:
    """The batches, made `depth` ahead on a thread (NumPy's copies run without the GIL)."""
    if depth <= 0:
        yield from batches
        return
    q: "queue.Queue[Any]" = queue.Queue(depth)
    done = object()
    failure: List[BaseException] = []
    stop = threading.Event()

    def produce() -> None:
        try:
            for b in batches:
                while not stop.is_set():
                    try:
                        q.put(b, timeout=0.1)
                        break
                    except queue.Full:
                        pass
                if stop.is_set():
                    return
        except BaseException as e:  # noqa: BLE001 - raised on the consuming side
            failure.append(e)
        q.put(done)

    thread = threading.Thread(target=produce, name="nnrt-spark-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            b = q.get()
            if b is done:
                if failure:
                    raise failure[0]
                return
            yield b
    finally:
        stop.set()


def _averaging_seconds(durations: List[float], plan: Plan) -> float:
    """In "average" mode, what the steps that averaged took beyond an ordinary step (the median of
    the others): an estimate of the time spent averaging parameters and optimizer state."""
    if plan.mode != "average" or not durations:
        return 0.0
    k = plan.averaging_frequency
    averaging = [d for s, d in enumerate(durations) if (s + 1) % k == 0]
    ordinary = [d for s, d in enumerate(durations) if (s + 1) % k != 0]
    if not averaging:
        return 0.0
    typical = statistics.median(ordinary) if ordinary else 0.0
    return max(0.0, sum(averaging) - typical * len(averaging))


def _train_one_epoch(trainer: Any, x: np.ndarray, y: np.ndarray, plan: Plan, epoch: int, rank: int) -> Dict[str, Any]:
    if plan.shuffle:
        order = np.random.default_rng([plan.seed, epoch, rank]).permutation(len(y))[:plan.examples]
    else:
        order = np.arange(plan.examples)
    losses, sizes, durations = [], [], []
    start = time.perf_counter()
    for bx, by in _prefetched(_batches(x, y, plan, order), plan.prefetch):
        t = time.perf_counter()
        losses.append(trainer.step(bx, by))
        durations.append(time.perf_counter() - t)
        sizes.append(len(by))
    return {
        "epoch": epoch, "examples": int(sum(sizes)), "steps": len(losses),
        "loss": float(np.average(losses, weights=sizes)) if losses else float("nan"),
        "train_seconds": time.perf_counter() - start,
        "step_seconds": statistics.median(durations) if durations else 0.0,
        "averaging_seconds": _averaging_seconds(durations, plan),
    }


def train_stage(blocks: Iterator[Tuple[np.ndarray, np.ndarray]], plan: Plan, state: bytes, first_epoch: int,
                epochs: int) -> Iterator[Dict[str, Any]]:
    """One barrier task: one rank's `epochs` epochs from `first_epoch` on. Yields one record: the
    rank's setup timings and, per epoch, its loss and timings; on rank 0 also the trainer
    checkpoint after each epoch ("states")."""
    from pyspark import BarrierTaskContext

    from ._rendezvous import BarrierRendezvous

    start = time.perf_counter()
    barrier = BarrierTaskContext.get()
    received = list(blocks)
    if len(received) != 1:
        raise RuntimeError(f"expected one block per partition, got {len(received)}")
    x, y = received[0]
    data_seconds = time.perf_counter() - start
    ctx = context(plan.context_options)
    with ctx.model(plan.model_config) as model, tempfile.TemporaryDirectory(prefix="nnrt-spark-") as tmp:
        t = time.perf_counter()
        with BarrierRendezvous(barrier, plan.timeout_s) as rendezvous:
            trainer = model.trainer(dict(plan.trainer_options))
        rendezvous_seconds = time.perf_counter() - t
        if rendezvous.error is not None:
            raise RuntimeError(f"the rendezvous through the barrier context failed: {rendezvous.error}")
        with trainer:
            path = os.path.join(tmp, "state.safetensors")
            with open(path, "wb") as f:
                f.write(state)
            trainer.restore(path)
            record: Dict[str, Any] = {
                "rank": rendezvous.rank, "host": rendezvous.host, "pid": os.getpid(),
                "data_seconds": data_seconds, "rendezvous_seconds": rendezvous_seconds,
                "setup_seconds": time.perf_counter() - start - data_seconds, "epochs": [], "states": [],
            }
            for epoch in range(first_epoch, first_epoch + epochs):
                done = _train_one_epoch(trainer, x, y, plan, epoch, rendezvous.rank)
                if rendezvous.rank == 0:
                    t = time.perf_counter()
                    trainer.save(path)
                    with open(path, "rb") as f:
                        record["states"].append(f.read())
                    done["state_seconds"] = time.perf_counter() - t
                record["epochs"].append(done)
            record["comm_wait_seconds"] = float(trainer.result.get("comm_wait_seconds") or 0.0)
    yield record


def predict_partition(rows: Iterator[Any], model_key: str, model_bytes: Any, context_options: str, columns: Columns,
                      output: str, batch_size: int) -> Iterator[Tuple[Any, ...]]:
    """spark_predict's mapPartitions function: the rows with one more value, the prediction."""
    ctx = context(context_options)
    model = _models.get(model_key)
    if model is None:
        with tempfile.TemporaryDirectory(prefix="nnrt-spark-") as tmp:
            path = os.path.join(tmp, "model.safetensors")
            with open(path, "wb") as f:
                f.write(model_bytes.value)
            model = _models[model_key] = ctx.load_model(path)
        while len(_models) > _KEEP_MODELS:  # the oldest ones, whose calls are most likely over
            _models.pop(next(iter(_models))).close()

    def flush(chunk: List[Any]) -> Iterator[Tuple[Any, ...]]:
        from ._blocks import to_block

        x, _ = to_block(chunk, dataclasses.replace(columns, label=None))
        scores = model.predict(batch_features(x, columns.scale))
        values = scores.argmax(axis=1).tolist() if output == "class" else scores.tolist()
        for row, value in zip(chunk, values):
            yield tuple(row) + (value,)

    chunk: List[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == batch_size:
            yield from flush(chunk)
            chunk = []
    if chunk:
        yield from flush(chunk)
