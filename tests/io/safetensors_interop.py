#!/usr/bin/env python3
"""nnrt's checkpoints as other programs see them.

A LeNet checkpoint written by nnrt (write_lenet_checkpoint) is read here by a small safetensors
reader written from the format's description -- struct, json and numpy, nothing of nnrt -- which
checks the layout and both nnrt checksums; then its conv and dense tensors are loaded into the
equivalent torch.nn modules with load_state_dict, and the torch model's output on a fixed input
must equal nnrt's prediction to 1e-5.

Usage: safetensors_interop.py <write_lenet_checkpoint program>
Exit 77 (skipped) when numpy or torch is missing.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(SKIP)

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I32": np.int32,
          "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_,
          "BF16": np.uint16}  # numpy has no bfloat16: its raw bits


def read_safetensors(path):
    """Returns (metadata, {name: array}) after checking the layout as the format requires."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    assert 8 + n <= len(raw), "header longer than the file"
    assert n % 8 == 0, "the header is padded to a multiple of 8 bytes"
    header_text = raw[8:8 + n].decode("utf-8")
    assert header_text.rstrip(" ") == header_text.strip(), "only space padding after the JSON"
    header = json.loads(header_text)
    data = raw[8 + n:]
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in metadata.values()), "metadata values are strings"

    spans = sorted((tuple(spec["data_offsets"]), name) for name, spec in header.items())
    at = 0
    for (begin, end), name in spans:
        assert begin == at, f"{name}: starts at {begin}, the previous tensor ends at {at}"
        at = end
    assert at == len(data), "the tensors cover the data section exactly"

    tensors = {}
    for name, spec in header.items():
        assert set(spec) == {"dtype", "shape", "data_offsets"}, name
        begin, end = spec["data_offsets"]
        dtype = np.dtype(DTYPES[spec["dtype"]]).newbyteorder("<")
        count = int(np.prod(spec["shape"], dtype=np.int64))
        assert end - begin == count * dtype.itemsize, f"{name}: size"
        tensors[name] = np.frombuffer(data, dtype=dtype, count=count, offset=begin).reshape(spec["shape"])
    return metadata, tensors, header, data


def check_nnrt_checksums(metadata, header, data):
    """nnrt.checksum: crc32 of the data section. nnrt.header_checksum: crc32 of the metadata
    entries (sorted by key, both checksums left out) as key NUL value NUL, then of each tensor in
    data order (by begin, end, name) as name NUL dtype NUL dims joined by ',' NUL begin ',' end NUL."""
    assert metadata["nnrt.checksum"] == "crc32:%08x" % zlib.crc32(data)
    text = b""
    for key in sorted(metadata, key=lambda k: k.encode("utf-8")):
        if key not in ("nnrt.checksum", "nnrt.header_checksum"):
            text += key.encode() + b"\0" + metadata[key].encode() + b"\0"
    for name, spec in sorted(header.items(), key=lambda kv: (*kv[1]["data_offsets"], kv[0].encode("utf-8"))):
        begin, end = spec["data_offsets"]
        text += (name.encode() + b"\0" + spec["dtype"].encode() + b"\0" +
                 ",".join(str(d) for d in spec["shape"]).encode() + b"\0" + f"{begin},{end}".encode() + b"\0")
    assert metadata["nnrt.header_checksum"] == "crc32:%08x" % zlib.crc32(text)


def main():
    writer = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        ckpt = os.path.join(folder, "lenet.safetensors")
        x_path, y_path = os.path.join(folder, "x.f32"), os.path.join(folder, "y.f32")
        subprocess.run([writer, ckpt, x_path, y_path], check=True)
        metadata, tensors, header, data = read_safetensors(ckpt)
        x = np.fromfile(x_path, dtype="<f4").reshape(-1, 1, 28, 28)
        expected = np.fromfile(y_path, dtype="<f4").reshape(x.shape[0], 10)

    check_nnrt_checksums(metadata, header, data)
    assert metadata["nnrt.format"] == "1"
    config = json.loads(metadata["nnrt.config"])
    trainer = json.loads(metadata["nnrt.trainer"])
    assert trainer["iteration"] == 2 and trainer["optimizer"] == "sgd", trainer
    assert [layer["type"] for layer in config["layers"]] == ["conv2d", "maxpool2d", "conv2d", "maxpool2d",
                                                             "dense", "output"]
    assert tensors["optim.conv1.weight.state0"].shape == tensors["conv1.weight"].shape
    print(f"read {len(tensors)} tensors, {len(data)} bytes of data; layout and checksums check out")

    try:
        import torch
        from torch import nn
    except ImportError:
        print("torch is not installed: the PyTorch half is skipped")
        sys.exit(SKIP)

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 20, 5, stride=1)
            self.conv2 = nn.Conv2d(20, 50, 5, stride=2)
            self.fc1 = nn.Linear(200, 200)
            self.fc2 = nn.Linear(200, 10)

        def forward(self, v):
            v = nn.functional.max_pool2d(torch.relu(self.conv1(v)), 2, 2)
            v = nn.functional.max_pool2d(torch.relu(self.conv2(v)), 2, 2)
            v = torch.relu(self.fc1(torch.flatten(v, 1)))
            return torch.softmax(self.fc2(v), dim=1)

    modules = {"conv1": "conv1", "conv2": "conv2", "fc1": "fc1", "out": "fc2"}  # examples/lenet.json's names
    state = {}
    for name, value in tensors.items():
        layer, _, kind = name.partition(".")
        if layer in modules:
            state[f"{modules[layer]}.{kind}"] = torch.from_numpy(value.copy())
    net = LeNet()
    net.load_state_dict(state, strict=True)
    with torch.no_grad():
        got = net(torch.from_numpy(x.copy())).numpy()
    worst = float(np.max(np.abs(got - expected)))
    print(f"torch vs nnrt on {x.shape[0]} inputs: largest difference {worst:.3g}")
    assert worst <= 1e-5, f"torch and nnrt disagree by {worst}"
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
