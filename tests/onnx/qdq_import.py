"""ONNX QDQ models -> nnrt int8 layers: QuantizeLinear -> DequantizeLinear pairs around Conv and Gemm
(as ONNX Runtime's quantize_static writes them: u8 activations with a zero point, int8 weights with a
scale per output channel, int32 biases) import as nnrt's int8 conv2d and dense layers, and predict
what onnx.reference.ReferenceEvaluator computes from the same file (to 1e-4 of the largest output),
on the default backend and on the reference backend. A weight dequantized with a nonzero zero point
imports in float (its pair clips without rounding), a MatMul's weight quantized per column becomes an
int8 dense too, and the QOperator form (QLinearConv) and an 8-bit model input are refused with the
reason.

Exits 77 (skipped) without onnx.reference (onnx >= 1.13: scripts/setup's virtualenv, as for
export_check.py). Usage: qdq_import.py <libnnrt.so>"""
import json
import os
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
except ImportError as e:
    print("SKIP: needs numpy and onnx >= 1.13 with onnx.reference:", e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnrt_ctypes import Nnrt  # noqa: E402

rng = np.random.default_rng(3)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def qdq(x, name, scale, zero_point, dtype):
    """x -> QuantizeLinear -> DequantizeLinear: nodes and initializers; returns the DQ output."""
    inits = [init(name + "_s", np.float32(scale)), init(name + "_z", np.array(zero_point, dtype=dtype))]
    nodes = [helper.make_node("QuantizeLinear", [x, name + "_s", name + "_z"], [name + "_q"]),
             helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name + "_dq"])]
    return nodes, inits, name + "_dq"


def int8_weight(name, shape, axis, bits=7, zero_point=0):
    """An int8 weight, its per-slice scales along axis, dequantized by a node; returns the output."""
    limit = 63 if bits == 7 else 127
    q = rng.integers(-limit, limit + 1, size=shape).astype(np.int8)
    scales = rng.uniform(0.002, 0.02, size=shape[axis]).astype(np.float32)
    inits = [init(name + "_q", q), init(name + "_s", scales), init(name + "_z", np.full(shape[axis], zero_point, np.int8))]
    node = helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name], axis=axis)
    return [node], inits, scales


def int32_bias(name, n, scale):
    q = rng.integers(-2000, 2000, size=n).astype(np.int32)
    return ([helper.make_node("DequantizeLinear", [name + "_q", name + "_s"], [name], axis=0)],
            [init(name + "_q", q), init(name + "_s", np.asarray(scale, np.float32))])


def cnn(weight_zero_point=0):
    """x [N, 3, 8, 8] -> QDQ(u8, zp 128) -> Conv 3x3 (+int32 bias) -> Relu -> QDQ(u8) -> Conv
    grouped stride 2 -> Flatten -> QDQ(i8) -> Gemm (transB, 8-bit weights) -> y [N, 10]."""
    nodes, inits = [], []
    n, i, x1 = qdq("x", "q1", 0.02, 128, np.uint8)
    nodes += n; inits += i
    n, i, s_w1 = int8_weight("w1", (8, 3, 3, 3), 0, zero_point=weight_zero_point)
    nodes += n; inits += i
    n, i = int32_bias("b1", 8, 0.02 * s_w1)
    nodes += n; inits += i
    nodes.append(helper.make_node("Conv", [x1, "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    n, i, x2 = qdq("r1", "q2", 0.05, 0, np.uint8)
    nodes += n; inits += i
    n, i, _ = int8_weight("w2", (8, 4, 3, 3), 0)
    nodes += n; inits += i
    nodes.append(helper.make_node("Conv", [x2, "w2"], ["c2"], group=2, strides=[2, 2], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Flatten", ["c2"], ["f"]))
    n, i, x3 = qdq("f", "q3", 0.04, 0, np.int8)
    nodes += n; inits += i
    n, i, _ = int8_weight("w3", (10, 128), 0, bits=8)
    nodes += n; inits += i
    inits.append(init("b3", rng.standard_normal(10).astype(np.float32)))
    nodes.append(helper.make_node("Gemm", [x3, "w3", "b3"], ["y"], transB=1))
    return graph(nodes, inits, [3, 8, 8], [10])


def matmul():
    """x [N, 12] -> QDQ(i8) -> MatMul by int8 [12, 5] with a scale per column (axis 1) -> y."""
    nodes, inits, x1 = qdq("x", "q1", 0.03, 0, np.int8)
    n, i, _ = int8_weight("w", (12, 5), 1)
    nodes += n; inits += i
    nodes.append(helper.make_node("MatMul", [x1, "w"], ["y"]))
    return graph(nodes, inits, [12], [5])


def graph(nodes, inits, example, out):
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"] + example)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"] + out)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def refused(lib, path, context, text):
    nnrt = Nnrt(lib, context)
    try:
        nnrt.import_onnx(path)
    except RuntimeError as e:
        ok = "UNSUPPORTED" in str(e) and text in str(e)
        print("refused: %s" % e)
        return ok
    print("FAIL: %s imported" % path)
    return False


def main():
    lib = sys.argv[1]
    ok = True
    with tempfile.TemporaryDirectory() as work:
        # With a float first convolution (its weight's zero point is 3), the pair before it clips x to
        # its 8-bit range but does not round it (nnrt.h): half a step of 0.02 per input value, 1.4e-2
        # of the largest output here; without the clip x's tails (beyond +-2.56) gave 4.5e-2.
        for name, model, int8_layers, tolerance in (("cnn", cnn(), 3, 1e-4), ("matmul", matmul(), 1, 1e-4),
                                                    ("float weights", cnn(3), 2, 2.5e-2)):
            path = os.path.join(work, name.replace(" ", "_") + ".onnx")
            onnx.save(model, path)
            x = rng.standard_normal([6] + [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:]])
            x = x.astype(np.float32)
            # onnx.reference implements DequantizeLinear from opset 19 on; these models mean the same
            # at 19 (nnrt reads opsets up to 17, so it imports the opset-13 file).
            peer = onnx.ModelProto()
            peer.CopyFrom(model)
            peer.opset_import[0].version = 19
            want = ReferenceEvaluator(peer).run(None, {"x": x})[0]
            for context in ('{}', '{"backend": "reference"}'):
                nnrt = Nnrt(lib, context)
                m = nnrt.import_onnx(path)
                layers = json.loads(nnrt.summary(m))["layers"]
                quantized = sum(1 for layer in layers if "int8" in layer.get("attributes", {}))
                got = nnrt.predict(m, x)
                err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                print("%s on %s: %d int8 layers (expected %d); largest difference %.2e of the largest output" % (
                    name, context, quantized, int8_layers, err))
                if quantized != int8_layers or got.shape != want.shape or err > tolerance:
                    print("FAIL: %s on %s" % (name, context))
                    ok = False
                nnrt.release(m)
        # The QOperator form, and a DequantizeLinear of the model input.
        w = init("w", rng.integers(-5, 5, size=(4, 3, 3, 3)).astype(np.int8))
        scalars = [init(n, np.float32(0.1)) for n in ("xs", "ws", "ys")] + [
            init("xz", np.uint8(0)), init("wz", np.int8(0)), init("yz", np.uint8(0))]
        qconv = helper.make_graph(
            [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])], "qop",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 5, 5])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 3, 3])], [w] + scalars)
        path = os.path.join(work, "qlinear.onnx")
        onnx.save(helper.make_model(qconv, opset_imports=[helper.make_opsetid("", 13)]), path)
        ok &= refused(lib, path, "{}", "QLinearConv")
        u8_input = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["y"])], "u8",
            [helper.make_tensor_value_info("x", TensorProto.UINT8, ["N", 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], scalars)
        path = os.path.join(work, "u8_input.onnx")
        onnx.save(helper.make_model(u8_input, opset_imports=[helper.make_opsetid("", 13)]), path)
        ok &= refused(lib, path, "{}", "UINT8")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
