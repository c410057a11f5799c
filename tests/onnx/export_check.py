"""nnrt -> ONNX: nnrt's own LeNet (examples/lenet.json), a graph model (residual add, batched
matmul, concat, batchnorm, global pooling, dropout), a decoder (transposed convolutions) and a
sequence model (stacked LSTMs, every step's output and the last, a slice), token models (layer
and RMS normalization) and transformer blocks (attention, position embeddings, per-position
outputs) exported with
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
# A pre-norm transformer block over tokens [6, 8]: per-token dense, learned position embedding,
# causal multi-head attention, residual adds, a GELU feed-forward and a per-position softmax; and
# one with the sinusoidal table and attention without a mask or biases. nnrt's import reads the
# attention, GELU and RMS norm back as those layers.
TRANSFORMER = {
    "input": [6, 8], "seed": 17,
    "nodes": [
        {"name": "embed", "type": "dense", "inputs": ["input"], "units": 16, "flatten": False},
        {"name": "tokens", "type": "position_embedding", "inputs": ["embed"]},
        {"name": "norm1", "type": "layer_norm", "inputs": ["tokens"]},
        {"name": "attention", "type": "multi_head_attention", "inputs": ["norm1"], "heads": 4, "causal": True},
        {"name": "residual1", "type": "add", "inputs": ["tokens", "attention"]},
        {"name": "norm2", "type": "rms_norm", "inputs": ["residual1"]},
        {"name": "expand", "type": "dense", "inputs": ["norm2"], "units": 32, "flatten": False, "activation": "gelu"},
        {"name": "contract", "type": "dense", "inputs": ["expand"], "units": 16, "flatten": False},
        {"name": "residual2", "type": "add", "inputs": ["residual1", "contract"]},
        {"name": "next", "type": "output", "inputs": ["residual2"], "units": 5, "loss": "nll", "flatten": False},
    ],
    "outputs": ["next"],
}
ENCODER = {
    "input": [5, 8], "seed": 19,
    "nodes": [
        {"name": "tokens", "type": "position_embedding", "inputs": ["input"], "sinusoidal": True},
        {"name": "attention", "type": "multi_head_attention", "inputs": ["tokens"], "heads": 2, "bias": False},
        {"name": "residual", "type": "add", "inputs": ["tokens", "attention"]},
        {"name": "flat", "type": "flatten", "inputs": ["residual"]},
        {"name": "out", "type": "output", "inputs": ["flat"], "units": 3, "loss": "nll"},
    ],
    "outputs": ["out"],
}


# The activations of mobile networks and of transformers: SiLU and hard-swish convolutions (one
# depthwise), squeeze-and-excitation gated by a hard sigmoid, then tanh GELU, softplus, swish with
# another alpha, a hard sigmoid with ONNX's default slope, and erf.
MOBILE = {
    "input": [3, 8, 8], "seed": 11,
    "nodes": [
        {"name": "expand", "type": "conv2d", "inputs": ["input"], "filters": 8, "kernel": 1, "activation": "silu"},
        {"name": "dw", "type": "conv2d", "inputs": ["expand"], "filters": 8, "kernel": 3, "padding": 1, "groups": 8,
         "activation": "hardswish"},
        {"name": "squeeze", "type": "global_avgpool2d", "inputs": ["dw"]},
        {"name": "reduce", "type": "dense", "inputs": ["squeeze"], "units": 4, "activation": "silu"},
        {"name": "gate", "type": "dense", "inputs": ["reduce"], "units": 8, "activation": "hardsigmoid"},
        {"name": "gate4d", "type": "reshape", "inputs": ["gate"], "shape": [8, 1, 1]},
        {"name": "excite", "type": "binary", "op": "mul", "inputs": ["dw", "gate4d"]},
        {"name": "h1", "type": "dense", "inputs": ["excite"], "units": 16, "activation": "gelu_tanh"},
        {"name": "h2", "type": "dense", "inputs": ["h1"], "units": 16, "activation": "softplus"},
        {"name": "h3", "type": "dense", "inputs": ["h2"], "units": 16, "activation": "swish", "alpha": 1.5},
        {"name": "h4", "type": "dense", "inputs": ["h3"], "units": 16, "activation": "hardsigmoid", "alpha": 0.2},
        {"name": "h5", "type": "activation", "inputs": ["h4"], "activation": "erf"},
        {"name": "out", "type": "output", "inputs": ["h5"], "units": 4, "loss": "nll"},
    ],
}


def main():
    nnrt = Nnrt(lib_path)
    rng = np.random.default_rng(0)
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for name, config in (("lenet", open(lenet_path).read()), ("graph", json.dumps(GRAPH)),
                             ("decoder", json.dumps(DECODER_UNGROUPED if mode == "reference" else DECODER)),
                             ("sequence", json.dumps(SEQUENCE)), ("norms", json.dumps(NORMS)),
                             ("rms", json.dumps(RMS)), ("transformer", json.dumps(TRANSFORMER)),
                             ("encoder", json.dumps(ENCODER)), ("mobile", json.dumps(MOBILE))):
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
