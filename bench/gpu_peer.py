#!/usr/bin/env python3
"""The PyTorch side of bench/gpu: LeNet or the MLP on a CUDA GPU, trained and run the way PyTorch runs
fastest, with the same network, initialisation, optimizer and batch as nnrt's train_bench and
predict_bench. Prints one JSON line per variant.

    gpu_peer.py train <lenet|mlp> <data folder> <batch> <warm-up steps>
    gpu_peer.py predict <lenet|mlp> <batch> <seconds>

Both variants of each command run in this process, each on a fresh model:
  eager  plain PyTorch (cudnn.benchmark on, foreach AdaGrad);
  graph  the whole step captured in one CUDA graph (torch.cuda.graph, as PyTorch's documentation
         captures a whole network): the batch's gather, forward, backward and an AdaGrad update
         written with torch._foreach_* ops (torch.optim.Adagrad cannot be captured); replays take
         only full batches, so an epoch's last partial batch is left out of its count.
TF32 is off on both sides (nnrt's f32 runs strict FP32) and warm-up steps are excluded from every
figure. The training data set lies on the GPU and batches are gathered there, as nnrt does.
"""
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peer import lenet, mlp, read_idx  # noqa: E402

LR, WEIGHT_DECAY, EPS = 0.01, 5e-4, 1e-10


def fresh_model(which, device):
    torch.manual_seed(123)
    model = lenet() if which == "lenet" else mlp()
    for m in model.modules():  # nnrt's "xavier": Glorot normal, zero biases
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_normal_(m.weight)
            nn.init.zeros_(m.bias)
    return model.to(device)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        right = sum(int((model(x[i:i + 10000].unsqueeze(1).float().div_(255.0)).argmax(1) == y[i:i + 10000]).sum())
                    for i in range(0, x.shape[0], 10000))
    model.train()
    return right / x.shape[0]


def train(which, folder, batch, warmup):
    device = torch.device("cuda")
    train_x = torch.from_numpy(read_idx(f"{folder}/train-images-idx3-ubyte.gz").copy()).to(device)
    train_y = torch.from_numpy(read_idx(f"{folder}/train-labels-idx1-ubyte.gz").astype(np.int64)).to(device)
    test_x = torch.from_numpy(read_idx(f"{folder}/t10k-images-idx3-ubyte.gz").copy()).to(device)
    test_y = torch.from_numpy(read_idx(f"{folder}/t10k-labels-idx1-ubyte.gz").astype(np.int64)).to(device)
    n = train_x.shape[0]
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(1)

    def batch_of(idx):
        return train_x[idx].unsqueeze(1).float().div_(255.0), train_y[idx]

    # eager
    model = fresh_model(which, device)
    opt = torch.optim.Adagrad(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def eager_step(idx):
        x, y = batch_of(idx)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    order = torch.randperm(n, generator=g).to(device)
    for s in range(warmup):
        eager_step(order[(s * batch) % (n - batch):][:batch])
    eager_step(order[:n % batch or batch])  # the epoch's last batch size, warmed too
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    order = torch.randperm(n, generator=g).to(device)
    start = time.perf_counter()
    for b in range(0, n, batch):
        eager_step(order[b:b + batch])
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    report("eager", which, batch, warmup, n, seconds, accuracy(model, test_x, test_y))

    # graph: one captured step replayed on a static index buffer
    model = fresh_model(which, device)
    params = [p for p in model.parameters()]
    state = [torch.zeros_like(p) for p in params]
    static_idx = torch.zeros(batch, dtype=torch.int64, device=device)

    def graph_step():
        x, y = batch_of(static_idx)
        loss = loss_fn(model(x), y)
        loss.backward()
        with torch.no_grad():
            grads = [p.grad for p in params]
            torch._foreach_add_(grads, params, alpha=WEIGHT_DECAY)
            torch._foreach_addcmul_(state, grads, grads, value=1.0)
            std = torch._foreach_sqrt(state)
            torch._foreach_add_(std, EPS)
            torch._foreach_addcdiv_(params, grads, std, value=-LR)
        return loss

    order = torch.randperm(n, generator=g).to(device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for s in range(3):
            static_idx.copy_(order[s * batch:(s + 1) * batch])
            for p in params:
                p.grad = None
            graph_step()
    torch.cuda.current_stream().wait_stream(side)
    for p in params:
        p.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graph_step()
    for s in range(warmup):
        static_idx.copy_(order[(s * batch) % (n - batch):][:batch])
        graph.replay()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    order = torch.randperm(n, generator=g).to(device)
    full = n // batch
    start = time.perf_counter()
    for b in range(full):
        static_idx.copy_(order[b * batch:(b + 1) * batch])
        graph.replay()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    report("graph", which, batch, warmup, full * batch, seconds, accuracy(model, test_x, test_y))


def report(variant, which, batch, warmup, examples, seconds, test_accuracy):
    print(json.dumps({"runtime": f"torch {torch.__version__} {variant}", "model": which, "batch": batch,
                      "warmup_steps": warmup, "examples": examples, "seconds": round(seconds, 4),
                      "images_per_second": round(examples / seconds, 1), "test_accuracy": round(test_accuracy, 4),
                      "device_peak_mb": round(torch.cuda.max_memory_allocated() / 2**20, 2)}), flush=True)


def predict(which, batch, seconds):
    device = torch.device("cuda")
    model = fresh_model(which, device).eval()
    x = torch.rand(batch, 1, 28, 28, device=device, generator=torch.Generator(device).manual_seed(7))

    def timed(call):
        for _ in range(20):
            call()
        torch.cuda.synchronize()
        latencies, start = [], time.perf_counter()
        while time.perf_counter() - start < seconds or len(latencies) < 10:
            t = time.perf_counter()
            call()  # ends with the output in host memory, which synchronizes
            latencies.append(time.perf_counter() - t)
        latencies.sort()
        return latencies

    with torch.no_grad():
        eager = timed(lambda: model(x).cpu())
        static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)

        def replay():
            graph.replay()
            return static_y.cpu()

        graphed = timed(replay)
    for variant, latencies in (("eager", eager), ("graph", graphed)):
        n = len(latencies)
        print(json.dumps({"runtime": f"torch {torch.__version__} {variant}", "model": which, "batch": batch,
                          "calls": n, "latency_us": round(latencies[n // 2] * 1e6, 1),
                          "latency_p90_us": round(latencies[n * 9 // 10] * 1e6, 1)}), flush=True)


def main():
    if not torch.cuda.is_available():
        sys.exit("gpu_peer.py: PyTorch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    if sys.argv[1] == "train":
        train(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "predict":
        predict(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
