#!/usr/bin/env python3
"""The peers' side of bench/predict: one runtime, one model, one batch size and thread count, timed
the way predict_bench times nnrt (20 warm-up calls, then calls for a while; the median latency).
Prints one JSON line.

    predict_peer.py <torch|onnxruntime> <lenet|mlp> <threads> <batch> <seconds> [model.onnx]

torch runs the same network as examples/lenet.json (bench/torch_peer.py's definition, with the
softmax of nnrt's output layer) in inference mode; onnxruntime runs the ONNX file nnrt exported.
"""
import json
import sys
import time

import numpy as np


def timed(call, seconds, warmup=20, least=10):
    """The sorted latencies of calls made for `seconds` (at least `least`), after `warmup` calls."""
    for _ in range(warmup):
        call()
    latencies = []
    start = time.perf_counter()
    while (time.perf_counter() - start < seconds or len(latencies) < least) and len(latencies) < 65536:
        t = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - t)
    latencies.sort()
    return latencies


def main():
    runtime, model, threads, batch, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    x = np.random.default_rng(7).random((batch, 1, 28, 28), dtype=np.float32)
    if runtime == "torch":
        import torch
        from torch import nn
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from torch_peer import lenet, mlp
        torch.set_num_threads(threads)
        net = nn.Sequential(lenet() if model == "lenet" else mlp(), nn.Softmax(dim=1)).eval()
        xt = torch.from_numpy(x)

        def call():
            with torch.inference_mode():
                return net(xt)
        cpu = getattr(torch.backends, "cpu", None)  # PyTorch 2.x says which kernels it picked
        name = f"pytorch {torch.__version__}" + (f" ({cpu.get_cpu_capability()})" if cpu else "")
    else:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(sys.argv[6], options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}

        def call():
            return session.run(None, feed)
        name = f"onnxruntime {ort.__version__}"
    latencies = timed(call, seconds)
    n = len(latencies)
    print(json.dumps({"runtime": name, "model": model, "threads": threads, "batch": batch, "calls": n,
                      "latency_us": round(latencies[n // 2] * 1e6, 1),
                      "latency_p90_us": round(latencies[n * 9 // 10] * 1e6, 1),
                      "images_per_second": round(batch / latencies[n // 2], 1)}))


if __name__ == "__main__":
    main()
