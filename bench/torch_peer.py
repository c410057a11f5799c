#!/usr/bin/env python3
"""The PyTorch side of bench/lenet: the same network, initialisation, optimizer, batch size and
thread count as nnrt's train_bench, on the same Fashion-MNIST files. Prints one JSON line.

    torch_peer.py <lenet|mlp> <data folder> <epochs> <threads> [limit] [device]

device is a torch device ("cpu", the default, or "cuda"); on CUDA the data set is copied to the GPU
once and batches are gathered there, as nnrt's GPU backend does.
"""
import gzip
import json
import resource
import struct
import sys
import time

import numpy as np
import torch
from torch import nn


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 20, 5, stride=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5, stride=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(200, 200), nn.ReLU(), nn.Linear(200, 10))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def main():
    which, folder, epochs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    device = torch.device(sys.argv[6] if len(sys.argv) > 6 else "cpu")
    torch.set_num_threads(threads)
    torch.manual_seed(123)
    train_x = torch.from_numpy(read_idx(f"{folder}/train-images-idx3-ubyte.gz").copy())
    train_y = torch.from_numpy(read_idx(f"{folder}/train-labels-idx1-ubyte.gz").astype(np.int64))
    test_x = torch.from_numpy(read_idx(f"{folder}/t10k-images-idx3-ubyte.gz").copy())
    test_y = torch.from_numpy(read_idx(f"{folder}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    if limit:
        train_x, train_y = train_x[:limit], train_y[:limit]
    model = lenet() if which == "lenet" else mlp()
    train_x, train_y, test_x, test_y = (t.to(device) for t in (train_x, train_y, test_x, test_y))
    # nnrt's "xavier" is Glorot normal with zero biases.
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_normal_(m.weight)
            nn.init.zeros_(m.bias)
    model.to(device)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01, weight_decay=5e-4)
    loss_fn = nn.CrossEntropyLoss()
    n = train_x.shape[0]
    g = torch.Generator().manual_seed(1)
    start = time.perf_counter()
    for _ in range(epochs):
        order = torch.randperm(n, generator=g).to(device)
        for b in range(0, n, 64):
            idx = order[b:b + 64]
            x = train_x[idx].unsqueeze(1).float().div_(255.0)
            y = train_y[idx]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        right = 0
        for b in range(0, test_x.shape[0], 256):
            x = test_x[b:b + 256].unsqueeze(1).float().div_(255.0)
            right += (model(x).argmax(1) == test_y[b:b + 256]).sum().item()
    peak_device_mb = torch.cuda.max_memory_allocated() / 1048576.0 if device.type == "cuda" else 0.0
    print(json.dumps({
        "runtime": f"pytorch {torch.__version__}" + (" cuda" if device.type == "cuda" else ""),
        "device_peak_mb": round(peak_device_mb, 1), "model": which, "threads": threads, "epochs": epochs,
        "examples": n, "seconds": round(seconds, 3), "images_per_second": round(n * epochs / seconds, 1),
        "test_accuracy": round(right / test_x.shape[0], 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)}))


if __name__ == "__main__":
    main()
