"""nnrt -> ONNX: nnrt's own LeNet (examples/lenet.json), a graph model (residual add, batched
matmul, concat, batchnorm, global pooling, dropout), a decoder (transposed convolutions) and a
sequence model (stacked LSTMs, every step's output and the last, a slice) and token models (layer
and RMS normalization) exported with
nnrt_model_export_onnx, then checked by a peer:

  checker      onnx.checker.check_model(full_check=True) (with shape inference) accepts the file,
               which declares opset 17 and a symbolic batch dim; nnrt imports it back and gives
               the same outputs
  reference    onnx.reference.ReferenceEvaluator gives nnrt's outputs to 1e-4
  onnxruntime  ONNX Runtime gives nnrt's outputs to 1e-4

Exits 77 (skipped) when the peer is not installed (onnx.reference needs onnx >= 1.13; Debian 12
ships 1.12, so scripts/setup installs a pinned onnx in a virtualenv that meson runs this mode with).
Usage: export_check.py <mode> <libnnrt.so> <examples/lenet.json>"""
import json
import os
import sys
import tempfile

mode, lib_path, lenet_path = sys.argv[1:4]
try:
    import numpy as np
    import onnx
except ImportError as e:
    print("SKIP: needs numpy and onnx (Debian python3-onnx):", e)
    sys.exit(77)

run = None
if mode == "reference":
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError as e:
        print("SKIP: onnx.reference is not available (onnx %s; it needs 1.13 or newer): %s" % (onnx.__version__, e))
        sys.exit(77)

    def run(path, x):
        return ReferenceEvaluator(path).run(None, {"input": x})[0]
elif mode == "onnxruntime":
    try:
        import onnxruntime
    except ImportError as e:
        print("SKIP: ONNX Runtime is not installed (pip install onnxruntime):", e)
        sys.exit(77)

    def run(path, x):
        return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
elif mode != "checker":
    sys.exit("unknown mode " + mode)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import Nnrt  # noqa: E402

GRAPH = {
    "input": [3, 10, 10], "seed": 7,
    "nodes": [
        {"name": "stem", "type": "conv2d", "inputs": ["input"], "filters": 6, "kernel": 3, "padding": "same",
         "activation": "relu"},
        {"name": "bn", "type": "batchnorm", "inputs": ["stem"]},
        {"name": "branch", "type": "conv2d", "inputs": ["bn"], "filters": 6, "kernel": 3, "padding": 1,
         "activation": "leaky_relu"},
        {"name": "sum", "type": "add", "inputs": ["bn", "branch"]},
        {"name": "mix", "type": "binary", "op": "matmul", "inputs": ["stem", "stem"]},
        {"name": "cat", "type": "concat", "inputs": ["sum", "mix"], "axis": 0},
        {"name": "pool", "type": "avgpool2d", "inputs": ["cat"], "kernel": 2},
        {"name": "gap", "type": "global_maxpool2d", "inputs": ["pool"]},
        {"name": "drop", "type": "dropout", "inputs": ["gap"], "rate": 0.3},
        {"name": "hidden", "type": "dense", "inputs": ["drop"], "units": 16, "activation": "tanh"},
        {"name": "out", "type": "output", "inputs": ["hidden"], "units": 4, "loss": "nll"},
    ],
}

# Transposed convolutions: stride with output_padding, groups, dilation and uneven padding.
DECODER = {
    "input": [2, 6, 6], "seed": 5,
    "layers": [
        {"type": "conv2d", "filters": 4, "kernel": 3, "stride": 2, "activation": "relu"},
        {"type": "conv2d_transpose", "filters": 4, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1,
         "activation": "relu"},
        {"type": "conv2d_transpose", "filters": 2, "kernel": 3, "groups": 2, "dilation": [2, 1],
         "padding": [1, 0, 2, 1], "activation": "sigmoid"},
        {"type": "output", "units": 3, "loss": "nll"},
    ],
}
# onnx.reference (1.17 to 1.19 at least) reshapes a grouped ConvTranspose's weights wrongly and
# fails on any group > 1; ONNX Runtime runs the grouped DECODER. Here, the same decoder ungrouped.
DECODER_UNGROUPED = json.loads(json.dumps(DECODER))
del DECODER_UNGROUPED["layers"][2]["groups"]

# LSTMs: every step (return_sequences) into a slice of the last step and into a second LSTM's last
# hidden state, both into the output layer.
SEQUENCE = {
    "input": [6, 4], "seed": 3,
    "nodes": [
        {"name": "steps", "type": "lstm", "inputs": ["input"], "units": 5, "return_sequences": True},
        {"name": "last", "type": "slice", "inputs": ["steps"], "axis": 0, "start": 5},
        {"name": "flat", "type": "flatten", "inputs": ["last"]},
        {"name": "summary", "type": "lstm", "inputs": ["steps"], "units": 3},
        {"name": "cat", "type": "concat", "inputs": ["flat", "summary"], "axis": 0},
        {"name": "out", "type": "output", "inputs": ["cat"], "units": 2, "loss": "nll"},
    ],
}

# Normalizations of tokens [5, 8]: layer_norm as LayerNormalization (with and without parameters),
# rms_norm as its formula (ONNX has RMSNormalization only from opset 23).
NORMS = {
    "input": [5, 8], "seed": 11,
    "layers": [
        {"type": "layer_norm", "name": "ln"},
        {"type": "layer_norm", "name": "plain", "normalized_dims": 2, "affine": False},
        {"type": "output", "units": 3, "loss": "nll"},
    ],
}
RMS = {
    "input": [5, 8], "seed": 13,
    "layers": [
        {"type": "rms_norm", "name": "rms", "bias": True},
        {"type": "rms_norm", "name": "plain", "normalized_dims": 2, "affine": False},
        {"type": "output", "units": 3, "loss": "nll"},
    ],
}
# What nnrt's importer cannot read back (it has no Sqrt): the checker only validates the file.
NOT_REIMPORTED = {"rms": "rms_norm's formula uses Sqrt, which nnrt does not import"}


def main():
    nnrt = Nnrt(lib_path)
    rng = np.random.default_rng(0)
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for name, config in (("lenet", open(lenet_path).read()), ("graph", json.dumps(GRAPH)),
                             ("decoder", json.dumps(DECODER_UNGROUPED if mode == "reference" else DECODER)),
                             ("sequence", json.dumps(SEQUENCE)), ("norms", json.dumps(NORMS)),
                             ("rms", json.dumps(RMS))):
            model = nnrt.create(config)
            path = os.path.join(work, name + ".onnx")
            nnrt.export_onnx(model, path)
            example = json.loads(config)["input"]
            x = rng.standard_normal([5] + example).astype(np.float32)
            want = nnrt.predict(model, x)
            if mode == "checker":
                proto = onnx.load(path)
                onnx.checker.check_model(proto, full_check=True)
                opset = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
                batch = proto.graph.input[0].type.tensor_type.shape.dim[0]
                assert opset == [17], opset
                assert batch.dim_param and not batch.HasField("dim_value"), batch
                if name in NOT_REIMPORTED:
                    print("%s: valid ONNX; not imported back: %s" % (name, NOT_REIMPORTED[name]))
                    nnrt.release(model)
                    continue
                back = nnrt.import_onnx(path)
                got = nnrt.predict(back, x)
                nnrt.release(back)
                peer = "nnrt re-import"
            else:
                got = run(path, x)
                peer = mode
            diff = float(np.max(np.abs(got - want)))
            print("%s: %d nodes, %d initializers; max |%s - nnrt| = %.3g" % (
                name, len(onnx.load(path).graph.node), len(onnx.load(path).graph.initializer), peer, diff))
            if got.shape != want.shape or diff > 1e-4:
                print("FAIL: %s differs" % name)
                ok = False
            nnrt.release(model)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
