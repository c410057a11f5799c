"""Fixtures of the Python binding's tests, and the count lines scripts/test_summary.py reads: one
case per test, skips by reason."""
from __future__ import annotations

import collections
import os

import numpy as np
import pytest

import nnrt

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


@pytest.fixture
def ctx():
    """A deterministic context on the best backend, two threads."""
    with nnrt.Context(threads=2, seed=7, deterministic=True) as c:
        yield c


MLP = {"input": [4], "seed": 3, "layers": [
    {"type": "dense", "units": 16, "activation": "relu"},
    {"type": "output", "units": 3, "activation": "softmax", "loss": "nll"}]}


@pytest.fixture
def blobs():
    """Three Gaussian blobs in 4 dimensions: (features float32 [300, 4], labels int64 [300])."""
    rng = np.random.default_rng(5)
    centres = rng.normal(0, 3, size=(3, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=300)
    features = centres[labels] + rng.normal(0, 0.7, size=(300, 4)).astype(np.float32)
    return features.astype(np.float32), labels.astype(np.int64)


def fashion_mnist_spec(split: str, limit: int):
    images = os.path.join(FASHION_MNIST, f"{split}-images-idx3-ubyte.gz")
    labels = os.path.join(FASHION_MNIST, f"{split}-labels-idx1-ubyte.gz")
    if not (os.path.exists(images) and os.path.exists(labels)):
        pytest.skip(f"Fashion-MNIST is not in {FASHION_MNIST} (Debian: dataset-fashion-mnist)")
    return {"format": "idx", "images": images, "labels": labels, "limit": limit}


def onnx_converter(context: nnrt.Context):
    onnx = context.describe().get("onnx", {})
    if not onnx.get("loaded"):
        pytest.skip(f"the ONNX converter plugin did not load: {onnx.get('error', 'not found')}")


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    reasons = collections.Counter()
    for report in stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ").strip()] += 1
    terminalreporter.write_line(f"nnrt-test-counts: passed={passed} failed={failed} skipped=0")
    for reason, n in sorted(reasons.items()):
        terminalreporter.write_line(f"nnrt-test-counts: passed=0 failed=0 skipped={n} reason={reason}")
