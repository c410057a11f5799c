"""PyTorch -> ONNX -> nnrt: the LeNet of examples/lenet.json, a small residual network and an
upsampler (transposed convolutions), exported with torch.onnx.export (dynamic batch), imported
into nnrt, give PyTorch's outputs to 1e-4. Exits 77 (skipped) without torch or numpy.

Usage: torch_round_trip.py <libnnrt.so> <examples/lenet.json>"""
import json
import os
import sys
import tempfile

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as e:
    print("SKIP: needs numpy and torch (Debian python3-torch):", e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import Nnrt  # noqa: E402


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


def check(nnrt, name, net, example, work):
    torch.manual_seed(0)
    net.eval()
    # Non-trivial batchnorm statistics, as a trained network has.
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(net, torch.randn([2] + example), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=13)
    model = nnrt.import_onnx(path)
    for batch in (1, 7):
        x = torch.randn([batch] + example)
        with torch.no_grad():
            want = net(x).numpy()
        got = nnrt.predict(model, x.numpy())
        diff = float(np.max(np.abs(got - want)))
        print("%s, batch %d: output %s, max |nnrt - torch| = %.3g" % (name, batch, list(got.shape), diff))
        if got.shape != want.shape or diff > 1e-4:
            print("FAIL: %s differs from PyTorch" % name)
            return False
    nnrt.release(model)
    return True


def main():
    nnrt = Nnrt(sys.argv[1])
    lenet, example = lenet_from_json(sys.argv[2])
    ok = True
    with tempfile.TemporaryDirectory() as work:
        ok &= check(nnrt, "lenet", lenet, example, work)
        ok &= check(nnrt, "residual", Residual(), [3, 12, 12], work)
        ok &= check(nnrt, "upsampler", Upsampler(), [3, 13, 13], work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
