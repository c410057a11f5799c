"""nnrt against PyTorch, through ctypes and the public C API.

    pytorch_parity_test.py LIBNNRT [BACKEND...]      (backends: default "reference")

The LeNet of examples/lenet.json, a sequence model (embedding, two LSTMs, batchnorm), a decoder
(transposed convolutions), a token model (layer and RMS normalization), an encoder (multi-head
self-attention, plain and causal) and a language model (causal attention, a prediction and a label
per position) get the same weights in both. Checked, on every backend that loads here:
predict against the module's forward pass, and one trainer step with plain SGD and learning rate 1
on a batch of 8, whose weight change is minus the gradient, against autograd's gradients (and
batchnorm's running statistics). Relative tolerance 1e-4 (nnrt computes in F32, PyTorch here in F64). Every backend named must open: one
that does not is a failure, never a silent skip (meson names oneDNN only where its plugin is
built). Exits 77 (skipped) without torch; prints "nnrt-test-counts:" with one case per comparison.
"""
import ctypes
import json
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

TOLERANCE = 1e-4
F32, I64 = 1, 6

lib = ctypes.CDLL(sys.argv[1])
lib.nnrt_last_error.restype = ctypes.c_char_p
P = ctypes.c_void_p
lib.nnrt_context_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
lib.nnrt_context_release.argtypes = [P]
lib.nnrt_array_from_host.argtypes = [P, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p,
                                     ctypes.c_size_t, ctypes.POINTER(P)]
lib.nnrt_array_to_host.argtypes = [P, ctypes.c_void_p, ctypes.c_size_t]
lib.nnrt_array_info.argtypes = [P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int32),
                                ctypes.POINTER(ctypes.c_int64)]
lib.nnrt_array_release.argtypes = [P]
lib.nnrt_model_create.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
lib.nnrt_model_release.argtypes = [P]
lib.nnrt_model_predict.argtypes = [P, P, ctypes.POINTER(P)]
lib.nnrt_model_get_param.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
lib.nnrt_model_set_param.argtypes = [P, ctypes.c_char_p, P]


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed ({status}): {lib.nnrt_last_error().decode()}")


def to_nnrt(ctx, a):
    a = np.ascontiguousarray(a)
    dtype = {np.dtype(np.float32): F32, np.dtype(np.int64): I64}[a.dtype]
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    out = P()
    check(lib.nnrt_array_from_host(ctx, dtype, a.ndim, shape, a.ctypes.data, a.nbytes, ctypes.byref(out)),
          "nnrt_array_from_host")
    return out


def to_numpy(arr):
    ndim = ctypes.c_int32()
    shape = (ctypes.c_int64 * 8)()
    check(lib.nnrt_array_info(arr, None, ctypes.byref(ndim), shape), "nnrt_array_info")
    out = np.empty(tuple(shape[:ndim.value]), dtype=np.float32)
    check(lib.nnrt_array_to_host(arr, out.ctypes.data, out.nbytes), "nnrt_array_to_host")
    return out


def relative_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = max(np.abs(got).max(), np.abs(want).max())
    return float(np.abs(got - want).max() / scale) if scale > 0 else 0.0


# ---- the two models, in both frameworks ---------------------------------------------------------

# The one LeNet definition, shared with the examples, the C tests and the benchmarks.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "lenet.json")) as f:
    LENET = json.load(f)


class LeNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 20, 5)
        self.conv2 = torch.nn.Conv2d(20, 50, 5, stride=2)
        self.fc = torch.nn.Linear(200, 200)
        self.out = torch.nn.Linear(200, 10)

    def forward(self, x):  # the logits
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.out(F.relu(self.fc(x.flatten(1))))

    def names(self):  # nnrt's parameter name -> this module's tensor
        return {"conv1.weight": self.conv1.weight, "conv1.bias": self.conv1.bias,
                "conv2.weight": self.conv2.weight, "conv2.bias": self.conv2.bias,
                "fc1.weight": self.fc.weight, "fc1.bias": self.fc.bias,
                "out.weight": self.out.weight, "out.bias": self.out.bias}


SEQUENCE = {"input": [6], "seed": 5, "layers": [
    {"type": "embedding", "name": "emb", "vocab": 11, "units": 4},
    {"type": "lstm", "name": "rnn1", "units": 5, "return_sequences": True},
    {"type": "lstm", "name": "rnn2", "units": 3},
    {"type": "batchnorm", "name": "bn"},
    {"type": "output", "name": "out", "units": 3, "loss": "nll"}]}


class Sequence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 4)
        self.rnn1 = torch.nn.LSTM(4, 5, batch_first=True)
        self.rnn2 = torch.nn.LSTM(5, 3, batch_first=True)
        self.bn = torch.nn.BatchNorm1d(3)
        self.out = torch.nn.Linear(3, 3)
        with torch.no_grad():  # statistics that are not the defaults, so inference shows their use
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        h, _ = self.rnn1(self.emb(x.long()))
        _, (h, _) = self.rnn2(h)
        return self.out(self.bn(h[0]))

    def names(self):
        names = {"emb.weight": self.emb.weight, "out.weight": self.out.weight, "out.bias": self.out.bias,
                 "bn.weight": self.bn.weight, "bn.bias": self.bn.bias}
        for rnn in ("rnn1", "rnn2"):
            for p in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
                names[f"{rnn}.{p}"] = getattr(getattr(self, rnn), p)
        return names

    def state(self):
        return {"bn.running_mean": self.bn.running_mean, "bn.running_var": self.bn.running_var}


DECODER = {"input": [2, 7, 7], "seed": 3, "layers": [
    {"type": "conv2d", "name": "enc", "filters": 4, "kernel": 3, "stride": 2},
    {"type": "conv2d_transpose", "name": "up1", "filters": 4, "kernel": 3, "stride": 2, "padding": 1,
     "output_padding": 1, "activation": "relu"},
    {"type": "conv2d_transpose", "name": "up2", "filters": 2, "kernel": 3, "dilation": 2, "padding": [1, 0],
     "groups": 2},
    {"type": "output", "name": "out", "units": 3, "loss": "nll"}]}


class Decoder(torch.nn.Module):
    """Transposed convolutions with stride, output_padding, dilation, groups and uneven padding."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Conv2d(2, 4, 3, stride=2)
        self.up1 = torch.nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1)
        self.up2 = torch.nn.ConvTranspose2d(4, 2, 3, dilation=2, padding=(1, 0), groups=2)
        self.out = torch.nn.Linear(2 * 8 * 10, 3)

    def forward(self, x):
        return self.out(self.up2(F.relu(self.up1(self.enc(x)))).flatten(1))

    def names(self):
        return {f"{m}.{p}": getattr(getattr(self, m), p) for m in ("enc", "up1", "up2", "out") for p in ("weight", "bias")}


TOKENS = {"input": [5, 8], "seed": 9, "layers": [
    {"type": "layer_norm", "name": "ln"},
    {"type": "rms_norm", "name": "rms", "normalized_dims": 2, "eps": 1e-6},
    {"type": "layer_norm", "name": "plain", "affine": False, "eps": 1e-3},
    {"type": "flatten"},
    {"type": "output", "name": "out", "units": 3, "loss": "nll"}]}


class Tokens(torch.nn.Module):
    """Layer normalization of each token ([5 tokens, 8 features]), RMS normalization over the whole
    example (torch 1.13 has no RMSNorm: its formula), layer normalization without parameters."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.rms_weight = torch.nn.Parameter(torch.empty(5, 8))
        self.out = torch.nn.Linear(40, 3)
        with torch.no_grad():  # parameters that are not the defaults, so their use shows
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)
            self.rms_weight.uniform_(0.5, 1.5)

    def forward(self, x):
        h = self.ln(x)
        h = h * torch.rsqrt(h.pow(2).mean(dim=(1, 2), keepdim=True) + 1e-6) * self.rms_weight
        h = F.layer_norm(h, [8], eps=1e-3)
        return self.out(h.flatten(1))

    def names(self):
        return {"ln.weight": self.ln.weight, "ln.bias": self.ln.bias, "rms.weight": self.rms_weight,
                "out.weight": self.out.weight, "out.bias": self.out.bias}


ENCODER = {"input": [5, 8], "seed": 21, "layers": [
    {"type": "multi_head_attention", "name": "attn", "heads": 2},
    {"type": "layer_norm", "name": "ln"},
    {"type": "multi_head_attention", "name": "masked", "heads": 4, "causal": True, "bias": False},
    {"type": "flatten"},
    {"type": "output", "name": "out", "units": 3, "loss": "nll"}]}


class Encoder(torch.nn.Module):
    """nn.MultiheadAttention: self-attention with 2 heads, layer normalization, causal
    self-attention with 4 heads and no biases."""

    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.ln = torch.nn.LayerNorm(8)
        self.masked = torch.nn.MultiheadAttention(8, 4, bias=False, batch_first=True)
        self.out = torch.nn.Linear(40, 3)
        with torch.no_grad():  # biases that are not zero, so their use shows
            self.attn.in_proj_bias.uniform_(-0.5, 0.5)
            self.attn.out_proj.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h, _ = self.attn(x, x, x, need_weights=False)
        h = self.ln(h)
        causal = torch.triu(torch.full((5, 5), float("-inf"), dtype=h.dtype), diagonal=1)
        h, _ = self.masked(h, h, h, attn_mask=causal, need_weights=False)
        return self.out(h.flatten(1))

    def names(self):
        return {"attn.in_proj_weight": self.attn.in_proj_weight, "attn.in_proj_bias": self.attn.in_proj_bias,
                "attn.out_proj.weight": self.attn.out_proj.weight, "attn.out_proj.bias": self.attn.out_proj.bias,
                "ln.weight": self.ln.weight, "ln.bias": self.ln.bias,
                "masked.in_proj_weight": self.masked.in_proj_weight,
                "masked.out_proj.weight": self.masked.out_proj.weight,
                "out.weight": self.out.weight, "out.bias": self.out.bias}


LANGUAGE = {"input": [6], "seed": 23, "layers": [
    {"type": "embedding", "name": "emb", "vocab": 11, "units": 8},
    {"type": "multi_head_attention", "name": "attn", "heads": 2, "causal": True},
    {"type": "output", "name": "out", "units": 11, "loss": "nll", "flatten": False}]}


class Language(torch.nn.Module):
    """A language model's shape: the next token's logits at every position ("flatten": false),
    trained on a label per position with the mean cross-entropy over all positions."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 8)
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.out = torch.nn.Linear(8, 11)

    def forward(self, x):
        h = self.emb(x.long())
        causal = torch.triu(torch.full((6, 6), float("-inf"), dtype=h.dtype), diagonal=1)
        h, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        return self.out(h)  # [N, T, 11]

    def names(self):
        return {"emb.weight": self.emb.weight, "attn.in_proj_weight": self.attn.in_proj_weight,
                "attn.in_proj_bias": self.attn.in_proj_bias, "attn.out_proj.weight": self.attn.out_proj.weight,
                "attn.out_proj.bias": self.attn.out_proj.bias, "out.weight": self.out.weight, "out.bias": self.out.bias}


MASKED = {"inputs": [{"name": "tokens", "shape": [6]}, {"name": "padding", "shape": [6]}], "seed": 29, "nodes": [
    {"type": "embedding", "name": "emb", "inputs": ["tokens"], "vocab": 11, "units": 8},
    {"type": "multi_head_attention", "name": "attn", "inputs": ["emb", "padding"], "heads": 2, "mask": "padding"},
    {"type": "output", "name": "out", "inputs": ["attn"], "units": 3, "loss": "nll"}]}


class Masked(torch.nn.Module):
    """Two inputs: token ids and PyTorch's key_padding_mask (nonzero: a padding token)."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 8)
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.out = torch.nn.Linear(48, 3)

    def forward(self, x, padding):
        h = self.emb(x.long())
        h, _ = self.attn(h, h, h, key_padding_mask=padding.bool(), need_weights=False)
        return self.out(h.flatten(1))

    def names(self):
        return {"emb.weight": self.emb.weight, "attn.in_proj_weight": self.attn.in_proj_weight,
                "attn.in_proj_bias": self.attn.in_proj_bias, "attn.out_proj.weight": self.attn.out_proj.weight,
                "attn.out_proj.bias": self.attn.out_proj.bias, "out.weight": self.out.weight, "out.bias": self.out.bias}


# ---- the checks -------------------------------------------------------------------------------

def get_param(model, name):
    arr = P()
    check(lib.nnrt_model_get_param(model, name.encode(), ctypes.byref(arr)), f"get_param {name}")
    value = to_numpy(arr)
    lib.nnrt_array_release(arr)
    return value


compared = mismatched = 0


def compare(failures, what, got, want):
    global compared, mismatched
    compared += 1
    err = relative_error(got, want)
    print(f"  {what}: relative error {err:.2e}")
    if not err < TOLERANCE:
        mismatched += 1
        failures.append(f"{what}: relative error {err:.2e}")


def open_model(backend, config, module, failures):
    """(context, nnrt model, the module in float64) with the module's weights in both, as F32
    rounds them; None when the backend did not open (a failure)."""
    ctx = P()
    if lib.nnrt_context_create(json.dumps({"backend": backend}).encode(), ctypes.byref(ctx)) != 0:
        failures.append(f"the {backend} backend did not open: {lib.nnrt_last_error().decode()}")
        return None
    model = P()
    check(lib.nnrt_model_create(ctx, json.dumps(config).encode(), ctypes.byref(model)), "nnrt_model_create")
    module = module.double()
    tensors = dict(module.names(), **getattr(module, "state", dict)())
    for name, t in tensors.items():
        value = to_nnrt(ctx, t.detach().numpy().astype(np.float32))
        check(lib.nnrt_model_set_param(model, name.encode(), value), f"set_param {name}")
        lib.nnrt_array_release(value)
    with torch.no_grad():  # PyTorch gets the weights as F32 rounded them
        for t in tensors.values():
            t.copy_(t.float().double())
    return ctx, model, module


def run(backend, config, module, x, labels, failures):
    print(f"{module.__class__.__name__} on {backend}:")
    opened = open_model(backend, config, module, failures)
    if opened is None:
        return
    ctx, model, module = opened

    # predict: inference mode on both sides
    module.eval()
    xs = to_nnrt(ctx, x)
    out = P()
    check(lib.nnrt_model_predict(model, xs, ctypes.byref(out)), "nnrt_model_predict")
    with torch.no_grad():
        want = F.softmax(module(torch.from_numpy(x).double()), dim=-1).numpy()
    compare(failures, "predict", to_numpy(out), want)
    lib.nnrt_array_release(out)

    # one SGD step, learning rate 1: the weight change is minus the gradient
    if not all(hasattr(lib, f) for f in ("nnrt_trainer_create", "nnrt_trainer_step", "nnrt_trainer_release")):
        failures.append("libnnrt has no nnrt_trainer_create / nnrt_trainer_step: gradients not checked")
    else:
        lib.nnrt_trainer_create.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(P)]
        lib.nnrt_trainer_step.argtypes = [P, P, P, ctypes.POINTER(ctypes.c_double)]
        lib.nnrt_trainer_release.argtypes = [P]
        trainer = P()
        options = {"optimizer": {"type": "sgd", "learning_rate": 1.0}, "batch_size": len(x), "shuffle": False}
        check(lib.nnrt_trainer_create(model, json.dumps(options).encode(), ctypes.byref(trainer)), "trainer_create")
        before = {name: get_param(model, name) for name in module.names()}
        ys = to_nnrt(ctx, labels)
        loss = ctypes.c_double()
        check(lib.nnrt_trainer_step(trainer, xs, ys, ctypes.byref(loss)), "nnrt_trainer_step")

        module.train()
        module.zero_grad()
        logits = module(torch.from_numpy(x).double())  # [N, classes], or [N, T, classes]: the mean over positions
        want_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(labels).reshape(-1))
        want_loss.backward()
        compare(failures, "loss", loss.value, want_loss.item())
        for name, t in module.names().items():
            compare(failures, f"gradient of {name}", before[name] - get_param(model, name), t.grad.numpy())
        for name, t in getattr(module, "state", dict)().items():
            compare(failures, name, get_param(model, name), t.numpy())
        lib.nnrt_array_release(ys)
        lib.nnrt_trainer_release(trainer)
    lib.nnrt_array_release(xs)
    lib.nnrt_model_release(model)
    lib.nnrt_context_release(ctx)


def run_many(backend, config, module, inputs, failures):
    """Prediction only (models of several inputs do not train in this version), through
    nnrt_model_predict_many."""
    print(f"{module.__class__.__name__} on {backend} (nnrt_model_predict_many):")
    if not hasattr(lib, "nnrt_model_predict_many"):
        failures.append("libnnrt has no nnrt_model_predict_many")
        return
    opened = open_model(backend, config, module, failures)
    if opened is None:
        return
    ctx, model, module = opened
    module.eval()
    lib.nnrt_model_predict_many.argtypes = [P, ctypes.POINTER(P), ctypes.c_int32, P, ctypes.POINTER(P), ctypes.c_int32]
    arrays = [to_nnrt(ctx, a) for a in inputs]
    out = P()
    check(lib.nnrt_model_predict_many(model, (P * len(arrays))(*arrays), len(arrays), None, ctypes.byref(out), 1),
          "nnrt_model_predict_many")
    with torch.no_grad():
        want = F.softmax(module(*[torch.from_numpy(a).double() for a in inputs]), dim=-1).numpy()
    compare(failures, "predict", to_numpy(out), want)
    lib.nnrt_array_release(out)
    for a in arrays:
        lib.nnrt_array_release(a)
    lib.nnrt_model_release(model)
    lib.nnrt_context_release(ctx)


def main(backends):
    failures = []
    for backend in backends:
        torch.manual_seed(0)
        rng = np.random.default_rng(0)
        run(backend, LENET, LeNet(), rng.random((8, 1, 28, 28), dtype=np.float32),
            rng.integers(0, 10, 8).astype(np.int64), failures)
        run(backend, SEQUENCE, Sequence(), rng.integers(0, 11, (8, 6)).astype(np.float32),
            rng.integers(0, 3, 8).astype(np.int64), failures)
        run(backend, DECODER, Decoder(), rng.standard_normal((8, 2, 7, 7), dtype=np.float32),
            rng.integers(0, 3, 8).astype(np.int64), failures)
        run(backend, TOKENS, Tokens(), 3 * rng.standard_normal((8, 5, 8), dtype=np.float32) + 1,
            rng.integers(0, 3, 8).astype(np.int64), failures)
        run(backend, ENCODER, Encoder(), rng.standard_normal((8, 5, 8), dtype=np.float32),
            rng.integers(0, 3, 8).astype(np.int64), failures)
        run(backend, LANGUAGE, Language(), rng.integers(0, 11, (8, 6)).astype(np.float32),
            rng.integers(0, 11, (8, 6)).astype(np.int64), failures)
        # Each example pads its last 0 to 5 tokens (never all 6: PyTorch gives NaN for a query
        # whose keys are all masked, nnrt their average).
        padding = (np.arange(6)[None, :] >= 6 - rng.integers(0, 6, 8)[:, None]).astype(np.int64)
        run_many(backend, MASKED, Masked(), [rng.integers(0, 11, (8, 6)).astype(np.int64), padding], failures)
    # Cases: the comparisons, and each backend that did not open.
    print(f"nnrt-test-counts: passed={compared - mismatched} failed={len(failures)} skipped=0")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    if compared == 0:
        print("FAILED: nothing was compared")
        return 1
    print(f"nnrt matches PyTorch on {', '.join(backends)} ({compared} comparisons)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:] or ["reference"]))
