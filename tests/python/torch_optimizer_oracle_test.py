"""Every optimizer, learning-rate schedule, clip_norm, trainer-level L1/L2 and mixed_bf16 against
PyTorch's own (argv[1]: the path of libnnrt.so).

An MLP (6 -> 10 tanh -> 4, softmax cross-entropy) starts from the same weights in nnrt (F32, through
ctypes and the public C API) and in PyTorch (F64), trains a few steps on the same batches, and the
weight changes must agree: max |change_nnrt - change_torch| / max |change_torch| below 1e-4 per
parameter (mixed_bf16, computed in bfloat16 on both sides, within 2e-2). Comparing the changes, not
the weights, keeps a wrong update from hiding behind the initial values. Schedules are per epoch,
so those cases train with nnrt_trainer_fit and step PyTorch's scheduler after each epoch. Runs on
every backend that opens here (the reference one always); exits 77 (skipped) without torch.
"""
import copy
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import Nnrt, NnrtError  # noqa: E402

TOLERANCE, BF16_TOLERANCE = 1e-4, 2e-2
FEATURES, HIDDEN, CLASSES, BATCH = 6, 10, 4, 8
CONFIG = {"input": [FEATURES], "seed": 3, "layers": [
    {"type": "dense", "units": HIDDEN, "activation": "tanh"},
    {"type": "output", "units": CLASSES, "activation": "softmax", "loss": "nll"}]}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(FEATURES, HIDDEN)
        self.out = torch.nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):  # the logits
        return self.out(torch.tanh(self.hidden(x)))

    def names(self):  # nnrt's parameter name -> this module's tensor
        return {"layer0.weight": self.hidden.weight, "layer0.bias": self.hidden.bias,
                "layer1.weight": self.out.weight, "layer1.bias": self.out.bias}


def sgd(**kw):
    return lambda ps, lr: torch.optim.SGD(ps, lr=lr, **kw)


def opt(cls, **kw):
    return lambda ps, lr: cls(ps, lr=lr, **kw)


# (name, nnrt trainer options, PyTorch optimizer, extras). Extras: "l1" (added to PyTorch's loss),
# "clip_norm", "scheduler" (a function of the optimizer; the case trains with fit), "bf16".
CASES = [
    ("sgd", {"optimizer": {"type": "sgd", "learning_rate": 0.1}}, sgd(), {}),
    ("momentum", {"optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9}}, sgd(momentum=0.9), {}),
    ("nesterov", {"optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9, "nesterov": True}},
     sgd(momentum=0.9, nesterov=True), {}),
    ("adagrad", {"optimizer": {"type": "adagrad", "learning_rate": 0.1}}, opt(torch.optim.Adagrad), {}),
    ("adam", {"optimizer": {"type": "adam", "learning_rate": 0.01, "beta1": 0.8, "beta2": 0.99}},
     opt(torch.optim.Adam, betas=(0.8, 0.99), eps=1e-8), {}),
    ("adamw", {"optimizer": {"type": "adamw", "learning_rate": 0.01}, "weight_decay": 0.1},
     opt(torch.optim.AdamW, weight_decay=0.1, eps=1e-8), {}),
    ("rmsprop", {"optimizer": {"type": "rmsprop", "learning_rate": 0.01, "rho": 0.9}},
     opt(torch.optim.RMSprop, alpha=0.9, eps=1e-8), {}),
    ("adamax", {"optimizer": {"type": "adamax", "learning_rate": 0.02}},
     opt(torch.optim.Adamax, eps=1e-8), {}),
    ("l2 (sgd)", {"optimizer": {"type": "sgd", "learning_rate": 0.1}, "l2": 0.05}, sgd(weight_decay=0.05), {}),
    ("l2 (adam)", {"optimizer": {"type": "adam", "learning_rate": 0.01}, "l2": 0.05},
     opt(torch.optim.Adam, weight_decay=0.05, eps=1e-8), {}),
    ("l1 (momentum)", {"optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.5}, "l1": 0.01},
     sgd(momentum=0.5), {"l1": 0.01}),
    ("clip_norm", {"optimizer": {"type": "sgd", "learning_rate": 0.5}, "clip_norm": 0.05}, sgd(),
     {"clip_norm": 0.05}),
    ("clip_norm + l2", {"optimizer": {"type": "sgd", "learning_rate": 0.5}, "clip_norm": 0.05, "l2": 0.05},
     sgd(weight_decay=0.05), {"clip_norm": 0.05}),
    ("schedule step", {"optimizer": {"type": "sgd", "learning_rate": 0.2},
                       "schedule": {"type": "step", "gamma": 0.5, "every_epochs": 2}}, sgd(),
     {"scheduler": lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)}),
    ("schedule exponential", {"optimizer": {"type": "sgd", "learning_rate": 0.2},
                              "schedule": {"type": "exponential", "gamma": 0.6}}, sgd(),
     {"scheduler": lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.6)}),
    ("schedule cosine", {"optimizer": {"type": "adam", "learning_rate": 0.02},
                         "schedule": {"type": "cosine", "epochs": 4, "min_learning_rate": 0.002}},
     opt(torch.optim.Adam, eps=1e-8),
     {"scheduler": lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.002)}),
    ("schedule cosine warmup", {"optimizer": {"type": "sgd", "learning_rate": 0.2},
                                "schedule": {"type": "cosine", "epochs": 6, "warmup_epochs": 2}}, sgd(),
     {"scheduler": lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=1 / 3, total_iters=2)}),
    ("schedule map", {"optimizer": {"type": "sgd", "learning_rate": 0.2},
                      "schedule": {"type": "map", "values": {"1": 0.1, "3": 0.05}}}, sgd(),
     {"scheduler": lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[1, 3], gamma=0.5)}),
    ("mixed_bf16", {"optimizer": {"type": "sgd", "learning_rate": 0.5}, "precision": "mixed_bf16"}, sgd(),
     {"bf16": True}),
]
STEPS, EPOCHS = 5, 4  # trainer steps, or epochs of fit for the scheduled cases
# Warmup is checked over the warmup epochs only, where PyTorch's LinearLR is the whole schedule.
WARMUP_EPOCHS = {"schedule cosine warmup": 2}


def torch_train(module, case, batches, epochs):
    name, options, make_optimizer, extras = case
    params = list(module.parameters())
    optimizer = make_optimizer(params, options["optimizer"]["learning_rate"])
    scheduler = extras["scheduler"](optimizer) if "scheduler" in extras else None
    for _ in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            if extras.get("bf16"):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = module(torch.from_numpy(x))
                loss = F.cross_entropy(logits.float(), torch.from_numpy(y))
            else:
                loss = F.cross_entropy(module(torch.from_numpy(x).double()), torch.from_numpy(y))
            if "l1" in extras:
                loss = loss + extras["l1"] * sum(p.abs().sum() for p in params)
            loss.backward()
            if "clip_norm" in extras:
                torch.nn.utils.clip_grad_norm_(params, extras["clip_norm"])
            optimizer.step()
        if scheduler:
            scheduler.step()


def relative_error(got, want):
    scale = np.abs(want).max()
    return np.abs(got - want).max() / scale if scale > 0 else float("inf")


def run_case(nnrt, ctx, case, data):
    """Trains the case in both; returns nnrt's result JSON and, per parameter, the change in nnrt
    and in PyTorch (and, for mixed_bf16, PyTorch's change in F64 too)."""
    name, options, _, extras = case
    torch.manual_seed(1)
    module = Mlp()
    model = nnrt.model(ctx, CONFIG)
    trainer = None
    try:
        for pname, t in module.names().items():
            value = t.detach().numpy().astype(np.float32)
            nnrt.set_param(ctx, model, pname, value)
            with torch.no_grad():
                t.copy_(torch.from_numpy(value))
        start = {pname: t.detach().double().numpy().copy() for pname, t in module.names().items()}
        f64 = copy.deepcopy(module).double()
        if not extras.get("bf16"):
            module = module.double()
        trainer = nnrt.trainer(model, dict(options, batch_size=BATCH, shuffle=False, seed=1))
        x, y = data
        if "scheduler" in extras:
            epochs = WARMUP_EPOCHS.get(name, EPOCHS)
            nnrt.fit(ctx, trainer, x, y, epochs)
            batches = [(x[i:i + BATCH], y[i:i + BATCH]) for i in range(0, len(x), BATCH)]
        else:
            epochs = 1
            batches = [(x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]) for i in range(STEPS)]
            for bx, by in batches:
                nnrt.step(ctx, trainer, bx, by)
        torch_train(module, case, batches, epochs)
        if extras.get("bf16"):
            torch_train(f64, (name, options, case[2], {}), batches, epochs)
        changes = {}
        for pname, t in module.names().items():
            changes[pname] = (nnrt.get_param(model, pname).astype(np.float64) - start[pname],
                              t.detach().double().numpy() - start[pname],
                              f64.names()[pname].detach().numpy() - start[pname])
        return nnrt.result(trainer), changes
    finally:
        nnrt.release("trainer", trainer)
        nnrt.release("model", model)


def main():
    nnrt = Nnrt(sys.argv[1])
    rng = np.random.default_rng(7)
    data = (rng.normal(0, 1, (STEPS * BATCH, FEATURES)).astype(np.float32),
            rng.integers(0, CLASSES, STEPS * BATCH).astype(np.int64))
    failures, compared = [], 0
    for backend in ("reference", "onednn"):
        try:
            ctx = nnrt.context({"backend": backend, "deterministic": True})
        except NnrtError as e:
            if backend == "reference":
                raise
            print(f"{backend}: not compared, the backend does not open here ({e})")
            continue
        print(f"on {backend}:")
        for case in CASES:
            name, _, _, extras = case
            bf16 = extras.get("bf16", False)
            tolerance = BF16_TOLERANCE if bf16 else TOLERANCE
            result, changes = run_case(nnrt, ctx, case, data)
            worst = 0.0
            for pname, (got, want, _) in changes.items():
                err = relative_error(got, want)
                worst = max(worst, err)
                compared += 1
                if not err < tolerance:
                    failures.append(f"{backend}, {name}, {pname}: relative error {err:.2e} "
                                    f"(changes up to {np.abs(want).max():.2e})")
            print(f"  {name:24} worst relative error {worst:.2e} (tolerance {tolerance:.0e})")
            if bf16:
                # Closer to F64 than bfloat16 allows would mean the steps were not computed in bfloat16.
                from_f64 = max(relative_error(got, exact) for got, _, exact in changes.values())
                print(f"  {'':24} against F64 training: {from_f64:.2e} (bfloat16 must show: > {TOLERANCE:.0e})")
                if not from_f64 > TOLERANCE:
                    failures.append(f"{backend}, {name}: the changes match F64 training to {from_f64:.2e}")
                if result.get("precision") != "mixed_bf16":
                    failures.append(f"{backend}, {name}: the result says precision {result.get('precision')}")
        nnrt.release("context", ctx)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"nnrt's optimizers, schedules, clipping, L1/L2 and mixed_bf16 match PyTorch ({compared} comparisons)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
