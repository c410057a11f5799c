#!/usr/bin/env python3
r"""LeNet on Fashion-MNIST trained on Apache Spark with nnrt.spark, beside one process training the
same model on the same machine: prints each epoch's accuracy and time (and what Spark's own part
cost), then the accuracy difference and the speed ratio.

    # after scripts/setup (PySpark into ~/.cache/nnrt/spark-venv) and the build (README), on a Spark
    # cluster started on this machine (a master and 2 workers of 1 core, loopback only):
    ~/.cache/nnrt/spark-venv/bin/python3 examples/spark_lenet.py --epochs 3
    # an existing cluster (the nnrt package and libnnrt on every node, Fashion-MNIST on the driver):
    spark-submit --master spark://host:7077 --conf spark.executorEnv.PYTHONPATH=$PWD/bindings/python \
      --conf spark.executorEnv.NNRT_LIB_DIR=$PWD/build examples/spark_lenet.py --master '' --workers 2

The data set is read on the driver from Debian's dataset-fashion-mnist and handed to Spark as a
DataFrame of (features: 784 raw bytes, label).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))  # a checkout: the package beside it

import nnrt  # noqa: E402

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def load(split: str, limit: int):
    with gzip.open(os.path.join(FASHION_MNIST, f"{split}-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(FASHION_MNIST, f"{split}-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    return x[:limit], y[:limit]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--master", default="local-cluster[2,1,1024]",
                   help="Spark master URL ('' to take spark-submit's); default: a cluster on this machine")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads-per-worker", type=int, default=1)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64, help="batch size per worker, and of the single process")
    p.add_argument("--averaging-frequency", type=int, default=5)
    p.add_argument("--mode", choices=["average", "allreduce"], default="average")
    p.add_argument("--epochs-per-stage", type=int, default=1,
                   help="epochs per Spark barrier stage (the driver still evaluates every epoch)")
    p.add_argument("--limit", type=int, default=60000, help="training examples")
    p.add_argument("--single-threads", type=int, default=2, help="threads of the single-process run (0: skip it)")
    args = p.parse_args()

    config = pathlib.Path(HERE, "lenet.json")
    optimizer = {"optimizer": {"type": "adam", "learning_rate": 0.002}}
    x, y = load("train", args.limit)
    tx, ty = load("t10k", 10000)
    test_x = tx.astype(np.float32) / 255
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"machine: {cpu}, {os.cpu_count()} cores; nnrt {nnrt.version()}; {len(y)} training examples, "
          f"{args.epochs} epochs, batch {args.batch}")

    single = None
    if args.single_threads > 0:
        with nnrt.Context(threads=args.single_threads) as ctx, ctx.model(config) as model:
            trainer = model.trainer(dict(optimizer, batch_size=args.batch, seed=1))
            start = time.perf_counter()
            trainer.fit((x.astype(np.float32) / 255, y), epochs=args.epochs)
            seconds = time.perf_counter() - start
            single = (model.evaluate(test_x, ty).accuracy, seconds)
        print(f"one process, {args.single_threads} threads: accuracy {single[0]:.4f}, {seconds:.1f} s "
              f"({seconds / args.epochs:.2f} s per epoch)")

    from pyspark.sql import SparkSession

    from nnrt.spark import SparkTrainer

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName("nnrt-spark-lenet")
    if args.master:
        builder = builder.master(args.master)
        if args.master.startswith("local-cluster"):  # executors started here: tell them where nnrt is
            builder = (builder.config("spark.executorEnv.PYTHONPATH", os.path.join(HERE, "..", "bindings", "python"))
                       .config("spark.executorEnv.NNRT_LIB_DIR", os.path.dirname(nnrt.library_path()))
                       .config("spark.driver.host", "127.0.0.1").config("spark.ui.showConsoleProgress", "false"))
    start = time.perf_counter()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rows = [(bytearray(x[i].tobytes()), int(y[i])) for i in range(len(y))]
    df = spark.createDataFrame(spark.sparkContext.parallelize(rows, args.workers), ["features", "label"]).cache()
    df.count()  # in Spark's memory, as a DataFrame read from storage would be once cached
    startup = time.perf_counter() - start

    trainer = SparkTrainer(config, optimizer, workers=args.workers, batch_size_per_worker=args.batch,
                           averaging_frequency=args.averaging_frequency, mode=args.mode,
                           threads_per_worker=args.threads_per_worker, epochs_per_stage=args.epochs_per_stage,
                           driver_threads=2)

    def report(r):
        print(f"epoch {r['epoch']}: loss {r['loss']:.4f}, accuracy {r['validation_score']:.4f}, {r['seconds']:.2f} s "
              f"(steps {r['train_seconds']:.2f} s, of which averaging ~{r['averaging_seconds']:.2f} s; Spark and "
              f"data {r['overhead_seconds']:.2f} s; its stage: {r['stage']['seconds']:.2f} s for "
              f"{r['stage']['epochs']} epochs, setup {r['stage']['setup_seconds']:.2f} s of which rendezvous "
              f"{r['stage']['rendezvous_seconds']:.2f} s, blocks {r['stage']['data_seconds']:.2f} s; state {r['state_bytes'] / 1e6:.2f} MB "
              f"in {r['state_seconds'] * 1000:.0f} ms)")

    start = time.perf_counter()
    model = trainer.fit(df, epochs=args.epochs, validation=(tx, ty), feature_scale=1 / 255, progress=report)
    fit_seconds = time.perf_counter() - start
    accuracy = model.evaluate(test_x, ty).accuracy
    epochs = sum(r["seconds"] for r in trainer.history)
    print(f"Spark, {args.workers} workers x {args.threads_per_worker} thread, {args.mode} every "
          f"{args.averaging_frequency} steps, {args.epochs_per_stage} epochs per stage: accuracy {accuracy:.4f}, "
          f"{fit_seconds:.1f} s in fit ({epochs:.1f} s in epochs, {trainer.convert_seconds:.1f} s converting the "
          f"DataFrame to blocks, {sum(r['evaluate_seconds'] for r in trainer.history):.1f} s evaluating); "
          f"cluster start and DataFrame {startup:.1f} s")
    summary = {"spark_accuracy": accuracy, "spark_fit_seconds": fit_seconds,
               "median_epoch_seconds": statistics.median(r["seconds"] for r in trainer.history)}
    if single:
        summary.update(single_accuracy=single[0], single_seconds=single[1],
                       accuracy_difference=accuracy - single[0], speed_ratio=single[1] / fit_seconds,
                       speed_ratio_epochs=single[1] / epochs)
        print(f"accuracy {accuracy - single[0]:+.4f} against one process; speed {single[1] / fit_seconds:.2f}x "
              f"one process's, fit against fit ({single[1] / epochs:.2f}x, epochs only)")
    print(json.dumps(summary))
    spark.stop()


if __name__ == "__main__":
    main()
