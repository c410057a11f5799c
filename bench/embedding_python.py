#!/usr/bin/env python3
"""bench/embedding_python.py: what one prediction costs a Python caller by the way its NumPy data
reaches nnrt, through the Python binding (bindings/python), on LeNet and the MLP 784-1024-1024-10:

    copy          x copied into an nnrt array, predict, the output copied into a new NumPy array
                  (how the binding predicted before caller-owned buffers)
    predict       model.predict(x): x lent to nnrt in place, the output copied into NumPy
    predict_into  model.predict_into(x, out): x read and out written in place

Each round runs each way for --seconds (the order turns every round) and keeps the median call;
the table gives the median over rounds and the time saved against copy. Figures only.

    python3 bench/embedding_python.py [--batches 1,64] [--threads 1] [--rounds 7] [--seconds 0.3]

The binding finds libnnrt as its README says (NNRT_LIB_DIR, or the checkout's build/ folder).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bindings", "python"))
import nnrt  # noqa: E402
from nnrt import array as nnrt_array  # noqa: E402

MLP = {"input": [1, 28, 28], "seed": 123, "layers": [
    {"type": "dense", "units": 1024, "activation": "relu", "init": "xavier"},
    {"type": "dense", "units": 1024, "activation": "relu", "init": "xavier"},
    {"type": "output", "units": 10, "activation": "softmax", "loss": "nll", "init": "xavier"}]}


def cpu_line():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "below AVX2"
    extra = "".join(f" +{name}" for flag, name in ((" avx512_bf16", "BF16"), (" amx_tile", "AMX")) if flag in flags)
    return (f"CPU: {model}, {os.cpu_count()} cores; ISA: {isa}{extra}; "
            f"DNNL_MAX_CPU_ISA={os.environ.get('DNNL_MAX_CPU_ISA', 'unset')}; load average {os.getloadavg()[0]:.2f}; "
            f"nnrt {nnrt.version()}")


def median_call(fn, seconds):
    samples = []
    start = time.perf_counter()
    while len(samples) < 10 or time.perf_counter() - start < seconds:
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", default="1,64")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--seconds", type=float, default=0.3)
    args = p.parse_args()
    print(cpu_line())
    print(f"{'model':6} {'batch':>5} {'threads':>7} | {'way':13} {'median us':>10} {'saved us':>9}")
    with open(os.path.join(root, "examples", "lenet.json")) as f:
        lenet = json.load(f)
    with nnrt.Context(threads=args.threads) as ctx:
        for name, config in (("lenet", lenet), ("mlp", MLP)):
            model = ctx.model(config)
            for batch in (int(b) for b in args.batches.split(",")):
                x = np.random.default_rng(7).random((batch, 1, 28, 28), dtype=np.float32)
                out = np.empty(model.output_shape(batch), np.float32)

                def copy():
                    a = nnrt_array.from_numpy(ctx._hold(), x)
                    model.predict(a)
                    a.close()

                ways = {"copy": copy, "predict": lambda: model.predict(x),
                        "predict_into": lambda: model.predict_into(x, out)}
                for fn in ways.values():  # warm-up: plans, primitives, caches
                    for _ in range(20):
                        fn()
                medians = {w: [] for w in ways}
                names = list(ways)
                for r in range(args.rounds):
                    for k in range(len(names)):
                        w = names[(k + r) % len(names)]
                        medians[w].append(median_call(ways[w], args.seconds))
                copy_us = statistics.median(medians["copy"]) * 1e6
                for w in names:
                    us = statistics.median(medians[w]) * 1e6
                    print(f"{name:6} {batch:5} {args.threads:7} | {w:13} {us:10.1f} {copy_us - us:9.1f}")
            model.close()


if __name__ == "__main__":
    main()
