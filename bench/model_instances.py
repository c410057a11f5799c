#!/usr/bin/env python3
"""bench/model_instances.py: load time and memory of 1 and 8 instances of a 100 MB model in one
process, nnrt beside ONNX Runtime.

The model is an MLP 1024-4096-4096-1024 (25.2M parameters, 100.7 MB of F32), made by nnrt with a
fixed seed, saved as an nnrt checkpoint (safetensors) and exported to ONNX, whose predictions are
checked to agree before anything is timed. Each configuration runs in a fresh Python process (the
binding or onnxruntime already imported, a baseline taken) that loads N instances, predicts one
example on each (so that every weight has been read), and reports:

    load      seconds to make all N instances (the file in the page cache: not a cold disk)
    RSS       resident memory grown (VmRSS): counts a mapped file's pages once per mapping
    anon      anonymous memory grown (RssAnon): the copies a runtime made of the weights
    PSS       proportional set size grown (smaps_rollup): each page divided among the mappings
              and processes sharing it, the memory this process really costs

Configurations, taking turns over --rounds (medians):
    nnrt load      nnrt_model_load N times (each maps the file; the parameters are its pages)
    nnrt share     nnrt_model_load once, nnrt_model_share N - 1 times
    nnrt read      nnrt_model_load N times with "map_checkpoints": false (each copies the weights)
    ORT            N onnxruntime.InferenceSession of the .onnx file (default session options)

    python3 bench/model_instances.py [--instances 1,8] [--rounds 5] [--threads 1]

Run it with a Python that has onnxruntime and numpy (bench/peers/setup makes bench/peers/venv);
the binding finds libnnrt as its README says (NNRT_LIB_DIR, or the checkout's build/ folder).
Figures only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bindings", "python"))

MODEL = {"input": [1024], "seed": 11, "layers": [
    {"type": "dense", "units": 4096, "activation": "relu"},
    {"type": "dense", "units": 4096, "activation": "relu"},
    {"type": "output", "units": 1024, "activation": "softmax", "loss": "nll"}]}
WAYS = ["nnrt load", "nnrt share", "nnrt read", "ORT"]


def memory():
    """VmRSS, RssAnon and Pss of this process, in MB."""
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon"):
            out[key] = int(value.split()[0]) / 1e3
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Pss:"):
            out["Pss"] = int(line.split()[1]) / 1e3
    return out


def child(way, n, folder, threads):
    """Runs in a fresh process: loads n instances `way`'s way and prints the figures as JSON."""
    x = np.linspace(-1, 1, 1024, dtype=np.float32).reshape(1, 1024)
    if way == "ORT":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        path = os.path.join(folder, "model.onnx")
        make = lambda: ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])  # noqa: E731
        run = lambda s: s.run(None, {s.get_inputs()[0].name: x})[0]  # noqa: E731
        base = memory()
        start = time.perf_counter()
        instances = [make() for _ in range(n)]
    else:
        import nnrt
        ctx = nnrt.Context(threads=threads, map_checkpoints=(way != "nnrt read"))
        path = os.path.join(folder, "model.safetensors")
        run = lambda m: m.predict(x)  # noqa: E731
        base = memory()
        start = time.perf_counter()
        if way == "nnrt share":
            first = ctx.load_model(path)
            instances = [first] + [first.share() for _ in range(n - 1)]
        else:
            instances = [ctx.load_model(path) for _ in range(n)]
    load = time.perf_counter() - start
    for m in instances:
        run(m)
    grown = {k: v - base[k] for k, v in memory().items()}
    print(json.dumps({"load": load, "rss": grown["VmRSS"], "anon": grown["RssAnon"], "pss": grown["Pss"]}))


def cpu_line():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "below AVX2"
    return f"CPU: {model}, {os.cpu_count()} cores; ISA: {isa}; load average {os.getloadavg()[0]:.2f}"


def prepare(folder):
    """Saves the model both ways and checks that ONNX Runtime predicts what nnrt does."""
    import nnrt
    import onnxruntime as ort
    ctx = nnrt.Context(threads=1)
    m = ctx.model(MODEL)
    m.save(os.path.join(folder, "model.safetensors"))
    m.export_onnx(os.path.join(folder, "model.onnx"))
    x = np.random.default_rng(0).standard_normal((4, 1024)).astype(np.float32)
    s = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
    got = s.run(None, {s.get_inputs()[0].name: x})[0]
    diff = float(np.max(np.abs(got - m.predict(x))))
    if diff > 1e-5:
        sys.exit(f"ONNX Runtime and nnrt disagree by {diff}")
    size = os.path.getsize(os.path.join(folder, "model.safetensors")) / 1e6
    print(f"model: MLP 1024-4096-4096-1024, {m.param_count / 1e6:.1f}M parameters, checkpoint {size:.1f} MB, "
          f"ONNX {os.path.getsize(os.path.join(folder, 'model.onnx')) / 1e6:.1f} MB; predictions agree within {diff:.1e}")
    print(f"nnrt {nnrt.version()}, onnxruntime {ort.__version__}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", default="1,8")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--child", nargs=3, metavar=("WAY", "N", "FOLDER"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2], args.threads)
        return
    counts = [int(n) for n in args.instances.split(",")]
    print(cpu_line())
    with tempfile.TemporaryDirectory() as folder:
        prepare(folder)
        results = {(w, n): [] for w in WAYS for n in counts}
        for r in range(args.rounds):
            ways = WAYS[r % len(WAYS):] + WAYS[:r % len(WAYS)]  # the order turns every round
            for n in counts:
                for w in ways:
                    out = subprocess.run([sys.executable, __file__, "--threads", str(args.threads), "--child", w,
                                          str(n), folder], check=True, capture_output=True, text=True).stdout
                    results[(w, n)].append(json.loads(out.strip().splitlines()[-1]))
        print(f"\n{args.rounds} rounds, medians; memory grown over the process's baseline, MB\n")
        print("| instances | runtime | load | RSS | anon | PSS |")
        print("|---|---|---|---|---|---|")
        for n in counts:
            for w in WAYS:
                med = {k: statistics.median(x[k] for x in results[(w, n)]) for k in ("load", "rss", "anon", "pss")}
                print(f"| {n} | {w} | {med['load'] * 1e3:.1f} ms | {med['rss']:.0f} | {med['anon']:.0f} | "
                      f"{med['pss']:.0f} |")


if __name__ == "__main__":
    main()
