"""The transformer examples train: examples/transformer_encoder.json (a BERT-style pre-norm block:
layer norm, multi-head self-attention, residual adds, a per-token GELU feed-forward, mean pooling)
learns whether a sequence's first token occurs again in it, and examples/gpt_decoder.json (the same
block with RMS norm and causal attention, read at the last position) learns to name the sequence's
first token: both need attention between positions (and the position embeddings: without them both
stay at chance). Each trains with Adam for 40 epochs on 2048 synthetic sequences (a few seconds) and
must classify held-out sequences with accuracy >= 0.9 (chance: 0.5 and 0.05; about 0.94 and 1.0
measured).

    transformer_examples_test.py LIBNNRT EXAMPLES_DIR
Prints "nnrt-test-counts:" with one case per example."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import Nnrt  # noqa: E402

VOCAB, LENGTH = 20, 12
EPOCHS = 40


def repeats_first(rng, n):
    """1 when the first token occurs again later in the sequence: a token must compare itself with
    the others (mean pooling of embeddings alone cannot tell)."""
    x = rng.integers(0, VOCAB, (n, LENGTH))
    y = rng.integers(0, 2, n)
    for i in range(n):
        rest = [t for t in range(VOCAB) if t != x[i, 0]]
        x[i, 1:] = rng.choice(rest, LENGTH - 1)
        if y[i]:
            x[i, rng.integers(1, LENGTH)] = x[i, 0]
    return x.astype(np.float32), y.astype(np.int64)


def first_token(rng, n):
    """The first token of a random sequence, read at the last position: only attention reaches it."""
    x = rng.integers(0, VOCAB, (n, LENGTH))
    return x.astype(np.float32), x[:, 0].astype(np.int64)


def main(lib_path, examples):
    nnrt = Nnrt(lib_path)
    ctx = nnrt.context({"threads": 2})
    rng = np.random.default_rng(0)
    passed = failed = 0
    for name, task in (("transformer_encoder.json", repeats_first), ("gpt_decoder.json", first_token)):
        config = json.load(open(os.path.join(examples, name)))
        model = nnrt.model(ctx, config)
        x, y = task(rng, 2048)
        trainer = nnrt.trainer(model, {"optimizer": {"type": "adam", "learning_rate": 0.003}, "batch_size": 32})
        nnrt.fit(ctx, trainer, x, y, EPOCHS)
        test_x, test_y = task(rng, 256)
        accuracy = float(np.mean(np.argmax(nnrt.predict(ctx, model, test_x), axis=1) == test_y))
        print(f"{name}: held-out accuracy {accuracy:.3f} after {EPOCHS} epochs")
        if accuracy >= 0.9:
            passed += 1
        else:
            print(f"FAIL: {name} reached {accuracy:.3f}, expected >= 0.9")
            failed += 1
        nnrt.release("trainer", trainer)
        nnrt.release("model", model)
    nnrt.release("context", ctx)
    print(f"nnrt-test-counts: passed={passed} failed={failed} skipped=0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
