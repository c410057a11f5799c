"""PyTorch -> ONNX -> nnrt: the LeNet of examples/lenet.json, a small residual network, an
upsampler (transposed convolutions), the activations of mobile networks (SiLU, hard swish, hard
sigmoid, squeeze-and-excitation, fused into the convolutions) and of transformers (both GELUs), layer normalizations (opset 17) and transformers (self-attention,
encoder and causal decoder stacks, opsets 14 and 17; an encoder with a key padding mask, a second
input), exported with torch.onnx.export (dynamic
batch), imported into nnrt, give PyTorch's outputs to 1e-4; so do nn.LSTM models exported the same way
(batch_first and time-major: torch writes a layout-0 LSTM, Transposes around it and a zero state
computed from Shape), and an ONNX LSTM of layout 1 written by hand.
Exits 77 (skipped) without torch, onnx or numpy.

Usage: torch_round_trip.py <libnnrt.so> <examples/lenet.json>"""
import json
import os
import sys
import tempfile

try:
    import numpy as np
    import onnx
    import torch
    from torch import nn
except ImportError as e:
    print("SKIP: needs numpy, onnx and torch (Debian python3-onnx, python3-torch):", e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import BOOL, F32, Nnrt  # noqa: E402


def lenet_from_json(path):
    """The LeNet of examples/lenet.json, layer by layer, in PyTorch."""
    config = json.load(open(path))
    layers, channels, features = [], config["input"][0], None
    for layer in config["layers"]:
        t = layer["type"]
        if t == "conv2d":
            layers += [nn.Conv2d(channels, layer["filters"], layer["kernel"], layer.get("stride", 1))]
            channels = layer["filters"]
        elif t == "maxpool2d":
            layers += [nn.MaxPool2d(layer["kernel"], layer.get("stride"))]
        elif t in ("dense", "output"):
            if features is None:
                layers += [nn.Flatten()]
                with torch.no_grad():
                    features = nn.Sequential(*layers)(torch.zeros([1] + config["input"])).shape[1]
            layers += [nn.Linear(features, layer["units"])]
            features = layer["units"]
        act = layer.get("activation", "softmax" if t == "output" else "identity")
        if act == "relu":
            layers += [nn.ReLU()]
        elif act == "softmax":
            layers += [nn.Softmax(dim=1)]
    return nn.Sequential(*layers), config["input"]


class Residual(nn.Module):
    """conv-bn-relu, a residual block, global average pooling, a linear classifier."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.fc(torch.flatten(self.pool(x), 1))


class Upsampler(nn.Module):
    """A convolution, then transposed convolutions (stride with output_padding, groups, dilation)."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 4, 3, stride=2)
        self.up = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1)
        self.mix = nn.ConvTranspose2d(4, 6, (3, 2), groups=2, dilation=(1, 2), padding=(0, 1))
        self.fc = nn.Linear(6 * 14 * 12, 5)

    def forward(self, x):
        x = self.mix(torch.relu(self.up(self.down(x))))
        return self.fc(torch.flatten(torch.sigmoid(x), 1))


def matches(name, batch, got, want):
    """Prints the largest difference; False (and says so) beyond 1e-4 or for another shape."""
    diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    print("%s, batch %d: output %s, max |nnrt - torch| = %.3g" % (name, batch, list(got.shape), diff))
    if diff > 1e-4:
        print("FAIL: %s differs from PyTorch" % name)
        return False
    return True


def check(nnrt, name, net, example, work, opset=13, summary_has=()):
    """net exported, imported and run at batch 1 and 7 matches PyTorch; the imported model's summary
    holds each string of `summary_has` (a fusion that must have happened)."""
    torch.manual_seed(0)
    net.eval()
    # Non-trivial batchnorm statistics, as a trained network has.
    for m in net.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(net, torch.randn([2] + example), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=opset)
    model = nnrt.import_onnx(path)
    summary = nnrt.summary(model)
    for s in summary_has:
        if s not in summary:
            print("FAIL: %s: the imported model's summary lacks %s:\n%s" % (name, s, summary))
            return False
    for batch in (1, 7):
        x = torch.randn([batch] + example)
        with torch.no_grad():
            want = net(x).numpy()
        if not matches(name, batch, nnrt.predict(model, x.numpy()), want):
            return False
    nnrt.release(model)
    return True


class MobileBlock(nn.Module):
    """The activations of EfficientNet and MobileNetV3: a SiLU convolution, a depthwise hard-swish
    one, squeeze-and-excitation with a hard sigmoid gate, then tanh GELU, softplus and erf GELU."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(3, 8, 1), nn.BatchNorm2d(8), nn.SiLU())
        self.depthwise = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.BatchNorm2d(8), nn.Hardswish())
        self.squeeze = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 4, 1), nn.SiLU(), nn.Conv2d(4, 8, 1),
                                     nn.Hardsigmoid())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(8 * 6 * 6, 16), nn.GELU(approximate="tanh"),
                                  nn.Linear(16, 16), nn.Softplus(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))

    def forward(self, x):
        x = self.depthwise(self.expand(x))
        return self.head(x * self.squeeze(x))


class SelfAttention(nn.Module):
    """nn.MultiheadAttention over its input (query, key and value the same)."""

    def __init__(self, width, heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class CausalDecoder(nn.Module):
    """A GPT-style stack: pre-norm encoder layers under a causal mask (a constant in the graph)."""

    def __init__(self, tokens, width, heads, layers):
        super().__init__()
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(tokens))

    def forward(self, x):
        return self.layers(x, mask=self.mask)


def check_transformers(nnrt, work):
    """PyTorch's attention (time-major inside, the batch merged with the heads), erf GELU and layer
    norm (one node at opset 17, decomposed at 14) import as nnrt's multi_head_attention, gelu and
    layer_norm layers, the feed-forward products as dense layers with their bias and activation."""
    ok = check(nnrt, "self_attention", SelfAttention(32, 4), [6, 32], work, opset=17)
    encoder_layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True)
    # The feed-forward MatMul, Add of its bias and activation are one dense layer on the last dim.
    ok &= check(nnrt, "transformer_encoder", nn.TransformerEncoder(encoder_layer, 2), [7, 32], work, opset=17,
                summary_has=['"activation":"gelu","bias":true,"flatten":false'])
    relu_layer = nn.TransformerEncoderLayer(32, 2, 48, dropout=0.0, batch_first=True)
    ok &= check(nnrt, "transformer_encoder_opset14", relu_layer, [5, 32], work, opset=14,
                summary_has=['"activation":"relu","bias":true,"flatten":false'])
    ok &= check(nnrt, "causal_decoder", CausalDecoder(9, 32, 4, 2), [9, 32], work, opset=17)
    # A mask nnrt's layer does not have is refused with that reason, not imported without it.
    other_mask = CausalDecoder(9, 32, 4, 1).eval()
    other_mask.mask.copy_(torch.randn(9, 9))
    path = os.path.join(work, "other_mask.onnx")
    torch.onnx.export(other_mask, torch.randn(2, 9, 32), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    try:
        nnrt.import_onnx(path)
        print("FAIL: an attention mask other than the causal one was imported")
        ok = False
    except RuntimeError as e:
        print("other mask refused:", e)
        if "attention mask other than the causal one" not in str(e):
            print("FAIL: the refusal does not say why")
            ok = False
    return ok


class CausalPadded(nn.Module):
    """One encoder layer called with a causal src_mask and a src_key_padding_mask."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(6))

    def forward(self, x, padding):
        return self.layer(x, src_mask=self.causal, src_key_padding_mask=padding)


class PaddedEncoder(nn.Module):
    """An encoder stack called with src_key_padding_mask: a second, bool input [N, T]."""

    def __init__(self, layers):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x, padding):
        return self.layers(x, src_key_padding_mask=padding)


def check_key_padding_mask(nnrt, work):
    """The key padding mask becomes the attention layers' second input, the graph's mask input a
    model input, and the model run with nnrt_model_predict_many matches PyTorch, with a causal mask
    too."""
    ok = True
    for opset in (14, 17):
        torch.manual_seed(0)
        net = PaddedEncoder(2).eval()
        path = os.path.join(work, "padded_encoder_%d.onnx" % opset)
        padding = torch.zeros(2, 6, dtype=torch.bool)
        padding[0, 4:] = True
        torch.onnx.export(net, (torch.randn(2, 6, 32), padding), path, input_names=["x", "padding"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "padding": {0: "batch"}, "y": {0: "batch"}},
                          opset_version=opset)
        model = nnrt.import_onnx(path)
        summary = nnrt.summary(model)
        if summary.count('"mask":"padding"') != 2:
            print("FAIL: padded_encoder opset %d: the attention layers do not take the mask:\n%s" % (opset, summary))
            ok = False
        for batch in (1, 5):
            x = torch.randn(batch, 6, 32)
            pad = torch.arange(6)[None, :] >= torch.randint(1, 7, (batch, 1))  # at least one token kept
            with torch.no_grad():
                want = net(x, pad).numpy()
            got = nnrt.predict_many(model, [(x.numpy(), F32), (pad.numpy(), BOOL)])
            ok &= matches("padded_encoder opset %d" % opset, batch, got, want)
        nnrt.release(model)
    # A causal mask with the key padding mask: PyTorch fills the padding into the causal mask.
    torch.manual_seed(0)
    both = CausalPadded().eval()
    path = os.path.join(work, "causal_padded.onnx")
    torch.onnx.export(both, (torch.randn(2, 6, 32), torch.zeros(2, 6, dtype=torch.bool)), path,
                      input_names=["x", "padding"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "padding": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    model = nnrt.import_onnx(path)
    summary = nnrt.summary(model)
    if '"causal":true' not in summary or '"mask":"padding"' not in summary:
        print("FAIL: causal_padded: the attention does not take both masks:\n%s" % summary)
        ok = False
    x = torch.randn(3, 6, 32)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] * 2 + [True] * 4])
    with torch.no_grad():
        want = both(x, pad).numpy()
    ok &= matches("causal_padded", 3, nnrt.predict_many(model, [(x.numpy(), F32), (pad.numpy(), BOOL)]), want)
    nnrt.release(model)
    return ok


class Recurrent(nn.Module):
    """Linear -> nn.LSTM (of `layers` layers) -> the last step (y[:, -1], y[-1], or h_n[-1]) or every
    step -> Linear."""

    def __init__(self, batch_first, last, layers=1):
        super().__init__()
        self.batch_first, self.last = batch_first, last
        self.embed = nn.Linear(3, 4)
        self.lstm = nn.LSTM(4, 5, num_layers=layers, batch_first=batch_first)
        self.fc = nn.Linear(5, 2)
        with torch.no_grad():
            for p in self.lstm.parameters():  # larger than the default init, so every gate's order shows
                p.uniform_(-0.8, 0.8)

    def forward(self, x):
        y, (h, _) = self.lstm(torch.tanh(self.embed(x)))
        if self.last == "h":
            return self.fc(h[-1])
        if self.last == "y":
            return self.fc(y[:, -1] if self.batch_first else y[-1])
        return self.fc(y)  # every step


def check_torch_lstm(nnrt, work):
    """nn.LSTM exported by torch.onnx.export: batch-first input [N, T, F] imported as it is; a
    time-major one [T, N, F] imported with {"batch_axis": 1}, nnrt then taking [N, T, F]. Stacked
    layers slice the zero state per layer."""
    ok = True
    for batch_first, last, layers in ((True, "y", 1), (True, "h", 1), (True, "all", 1), (False, "y", 1), (False, "h", 1),
                                      (True, "y", 2), (False, "y", 2)):
        torch.manual_seed(2)
        net = Recurrent(batch_first, last, layers).eval()
        batch_dim = 0 if batch_first else 1
        example = torch.randn([2, 6, 3] if batch_first else [6, 2, 3])
        path = os.path.join(work, "recurrent.onnx")
        torch.onnx.export(net, example, path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {batch_dim: "batch"}, "y": {0: "batch"}}, opset_version=14)
        name = "torch lstm (batch_first=%s, %s, %d layers)" % (batch_first, last, layers)
        model = nnrt.import_onnx(path, None if batch_first else '{"batch_axis": 1}')
        for batch in (1, 7):
            x = torch.randn(batch, 6, 3)  # nnrt's input: the batch first
            with torch.no_grad():
                want = net(x if batch_first else x.transpose(0, 1)).numpy()
            ok &= matches(name, batch, nnrt.predict(model, x.numpy()), want)
        nnrt.release(model)
    return ok


def lstm_onnx(lstm, head, path, sequences):
    """nn.LSTM (batch_first) written as ONNX by hand: an LSTM node with layout 1 (torch.onnx.export
    writes layout 0 between Transposes, checked by check_torch_lstm), its weights in ONNX's gate
    order i, o, f, c. With `sequences` the
    graph gives Y [N, T, 1, H], else the last hidden state through `head` (a Linear)."""
    from onnx import TensorProto, helper, numpy_helper

    def onnx_order(t):  # PyTorch's gate blocks i, f, g, o -> ONNX's i, o, f, c
        i, f, g, o = np.split(t.detach().numpy(), 4)
        return np.concatenate([i, o, f, g])

    hidden, features = lstm.hidden_size, lstm.input_size
    arrays = {"W": onnx_order(lstm.weight_ih_l0)[None], "R": onnx_order(lstm.weight_hh_l0)[None],
              "B": np.concatenate([onnx_order(lstm.bias_ih_l0), onnx_order(lstm.bias_hh_l0)])[None],
              "fc_w": head.weight.detach().numpy(), "fc_b": head.bias.detach().numpy()}
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in arrays.items()]
    inits.append(numpy_helper.from_array(np.array([-1, hidden], dtype=np.int64), "shape"))
    if sequences:
        nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden, layout=1)]
    else:
        nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["", "h"], hidden_size=hidden, layout=1),
                 helper.make_node("Reshape", ["h", "shape"], ["last"]),
                 helper.make_node("Gemm", ["last", "fc_w", "fc_b"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, features])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 1, hidden] if sequences
                                                             else ["N", head.out_features])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def check_lstm(nnrt, work):
    """ONNX LSTM imported into nnrt against PyTorch's nn.LSTM, every step's output and the last."""
    torch.manual_seed(1)
    lstm, head = nn.LSTM(4, 5, batch_first=True), nn.Linear(5, 3)
    with torch.no_grad():
        for p in lstm.parameters():  # larger than the default init, so every gate's order shows
            p.uniform_(-0.8, 0.8)
    ok = True
    for sequences in (True, False):
        path = os.path.join(work, "lstm.onnx")
        lstm_onnx(lstm, head, path, sequences)
        model = nnrt.import_onnx(path)
        for batch in (1, 7):
            x = torch.randn(batch, 6, 4)
            with torch.no_grad():
                y, (h, _) = lstm(x)
                want = (y.unsqueeze(2) if sequences else head(h[0])).numpy()
            name = "lstm (Y)" if sequences else "lstm (Y_h, Linear)"
            ok &= matches(name, batch, nnrt.predict(model, x.numpy()), want)
        nnrt.release(model)
    return ok


def main():
    nnrt = Nnrt(sys.argv[1])
    lenet, example = lenet_from_json(sys.argv[2])
    ok = True
    with tempfile.TemporaryDirectory() as work:
        ok &= check(nnrt, "lenet", lenet, example, work)
        ok &= check(nnrt, "residual", Residual(), [3, 12, 12], work)
        ok &= check(nnrt, "upsampler", Upsampler(), [3, 13, 13], work)
        ok &= check(nnrt, "mobile_block", MobileBlock(), [3, 6, 6], work, opset=17,
                    summary_has=['"activation":"silu"', '"activation":"hardswish"', '"activation":"hardsigmoid"',
                                 '"activation":"gelu_tanh"', '"activation":"softplus"', '"activation":"gelu"'])
        # Opset 17 writes nn.LayerNorm as one LayerNormalization node (torch 1.13 writes an invalid
        # one, with an empty Scale, for elementwise_affine=False).
        ok &= check(nnrt, "layer_norm", nn.Sequential(nn.LayerNorm(8), nn.ReLU(), nn.LayerNorm([5, 8]),
                                                      nn.Flatten(), nn.Linear(40, 3)), [5, 8], work, opset=17)
        ok &= check_lstm(nnrt, work)
        ok &= check_torch_lstm(nnrt, work)
        ok &= check_transformers(nnrt, work)
        ok &= check_key_padding_mask(nnrt, work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
