#!/usr/bin/env python3
"""The timed side of bench/transformer and bench/models: one runtime running one exported model (an
encoder, a convolutional network) at one batch size and thread count (3 warm-up calls, then calls
for a while: the median latency). Prints one JSON line. nnrt is driven through its C API with
ctypes (one call costs microseconds; a model's call milliseconds).

    transformer_peer.py nnrt <libnnrt.so> <model.onnx> <threads> <batch> <seconds> [<calibration.npy>]
    transformer_peer.py onnxruntime - <model.onnx> <threads> <batch> <seconds>

With a calibration file (examples as NumPy), nnrt runs the model quantized to int8 by
nnrt_model_quantize on those examples (bench/int8).
"""
import json
import os
import resource
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from predict_peer import timed  # noqa: E402


def main():
    runtime, lib, model, threads, batch, seconds = sys.argv[1:7]
    threads, batch, seconds = int(threads), int(batch), float(seconds)
    import onnx  # the input's shape, from the file
    dims = [d.dim_value for d in onnx.load(model, load_external_data=False).graph.input[0].type.tensor_type.shape.dim[1:]]
    x = np.random.default_rng(7).standard_normal([batch] + dims).astype(np.float32)
    if runtime == "nnrt":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx"))
        from nnrt_ctypes import Nnrt
        nnrt = Nnrt(lib, json.dumps({"threads": threads}))
        m = nnrt.import_onnx(model)
        if len(sys.argv) > 7:
            m = nnrt.quantize(m, np.load(sys.argv[7]), json.dumps({"batches": 0}))

        def call():
            return nnrt.predict(m, x)
        name = "nnrt"
    else:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}

        def call():
            return session.run(None, feed)[0]
        name = f"onnxruntime {ort.__version__}"
    latencies = timed(call, seconds, warmup=3, least=5)
    median = latencies[len(latencies) // 2]
    print(json.dumps({"runtime": name, "threads": threads, "batch": batch, "calls": len(latencies),
                      "latency_ms": median * 1e3, "sequences_per_s": batch / median,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
