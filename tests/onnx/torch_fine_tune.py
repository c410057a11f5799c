"""A LeNet exported from PyTorch (examples/lenet.json's layers) and imported into nnrt with
{"loss": "nll"} fine-tunes on Fashion-MNIST through the C API to the accuracy of the same LeNet
built from the JSON config, trained the same way. The PyTorch network starts from the JSON model's
initial weights, so the two runs differ only in how the model reached nnrt. Exits 77 (skipped)
without torch or the data set.

Usage: torch_fine_tune.py <libnnrt.so> <examples/lenet.json> <fashion-mnist folder>"""
import ctypes
import json
import os
import sys
import tempfile

try:
    import torch
except ImportError as e:
    print("SKIP: needs torch (Debian python3-torch):", e)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from nnrt_ctypes import Nnrt  # noqa: E402
from torch_round_trip import lenet_from_json  # noqa: E402

lib_path, lenet_path, data = sys.argv[1:4]
if not os.path.exists(os.path.join(data, "train-images-idx3-ubyte.gz")):
    print("SKIP: no Fashion-MNIST under", data, "(Debian dataset-fashion-mnist)")
    sys.exit(77)

TRAIN, TEST, EPOCHS = 6000, 2000, 2
OPTIONS = b'{"optimizer": {"type": "adam", "learning_rate": 0.001}, "batch_size": 64, "seed": 5}'


def dataset(nnrt, kind, limit):
    spec = {"format": "idx", "images": os.path.join(data, kind + "-images-idx3-ubyte.gz"),
            "labels": os.path.join(data, kind + "-labels-idx1-ubyte.gz"), "scale": 1 / 255, "limit": limit}
    d = ctypes.c_void_p()
    nnrt.check(nnrt.lib.nnrt_dataset_load(nnrt.ctx, json.dumps(spec).encode(), ctypes.byref(d)), "dataset")
    return d


def fine_tune(nnrt, model, train, test):
    lib = nnrt.lib
    t, e, acc = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_double()
    nnrt.check(lib.nnrt_trainer_create(model, OPTIONS, ctypes.byref(t)), "trainer")
    nnrt.check(lib.nnrt_trainer_fit(t, train, None, EPOCHS), "fit")
    nnrt.check(lib.nnrt_model_evaluate(model, test, ctypes.byref(e)), "evaluate")
    nnrt.check(lib.nnrt_evaluation_accuracy(e, ctypes.byref(acc)), "accuracy")
    lib.nnrt_evaluation_release(e)
    lib.nnrt_trainer_release(t)
    return acc.value


def main():
    nnrt = Nnrt(lib_path)
    vp = ctypes.c_void_p
    nnrt.lib.nnrt_dataset_load.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
    nnrt.lib.nnrt_trainer_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
    nnrt.lib.nnrt_trainer_fit.argtypes = [vp, vp, vp, ctypes.c_int32]
    nnrt.lib.nnrt_trainer_release.argtypes = [vp]
    nnrt.lib.nnrt_model_evaluate.argtypes = [vp, vp, ctypes.POINTER(vp)]
    nnrt.lib.nnrt_evaluation_accuracy.argtypes = [vp, ctypes.POINTER(ctypes.c_double)]
    nnrt.lib.nnrt_evaluation_release.argtypes = [vp]
    train, test = dataset(nnrt, "train", TRAIN), dataset(nnrt, "t10k", TEST)

    built = nnrt.create(open(lenet_path).read())
    net, example = lenet_from_json(lenet_path)
    names = [layer["name"] for layer in json.load(open(lenet_path))["layers"] if layer["type"] in
             ("conv2d", "dense", "output")]
    modules = [m for m in net if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.no_grad():
        for name, module in zip(names, modules, strict=True):
            module.weight.copy_(torch.from_numpy(nnrt.param(built, name + ".weight")))
            module.bias.copy_(torch.from_numpy(nnrt.param(built, name + ".bias")))
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "lenet.onnx")
        torch.onnx.export(net.eval(), torch.zeros([1] + example), path, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}}, opset_version=13)
        imported = nnrt.import_onnx(path, '{"loss": "nll"}')
    acc_imported = fine_tune(nnrt, imported, train, test)
    acc_built = fine_tune(nnrt, built, train, test)
    print("Fashion-MNIST, %d examples x %d epochs, accuracy on %d test images: imported from PyTorch %.4f, "
          "built from JSON %.4f" % (TRAIN, EPOCHS, TEST, acc_imported, acc_built))
    ok = acc_imported > 0.7 and abs(acc_imported - acc_built) < 0.01
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
