#!/usr/bin/python3
"""Models of opsets 18 and 21 through Loom against ONNX Runtime.

Usage: newer_opsets_vs_ort.py LOOM WORK_DIR

Builds two models with onnx.helper whose nodes use what changed after
opset 17 (libonnx 1.12's newest, which the importer rewrites them into):
opset 18's Reduce* with axes as an input and noop_with_empty_axes, Split
with num_outputs, Mish, ScatterElements with reduction max; opset 21's
Gelu (both forms), Cast with saturate, Reshape, Transpose, Unsqueeze,
ReduceL2 and Resize in their 21 versions; the operators new in opset 18
(BitwiseAnd/Or/Xor/Not, CenterCropPad cropping and padding,
GroupNormalization with scale and bias per group) and GroupNormalization
21 (per channel). For each it runs `loom eval` and
ONNX Runtime (scripts/ort/run.mjs) on the same input and compares every
output (rtol 1e-4, atol 1e-5), then `loom check --target=tiny` (the
compiled program on the simulator against the golden reference). Exits 1
naming the model and output that differ.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FLOAT = TensorProto.FLOAT


def vi(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def make(nodes, outputs, inits, opset):
    graph = helper.make_graph(nodes, "opset%d" % opset, [vi("X", [2, 4, 6])],
                              [vi(o, None) for o in outputs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="loom-e2e")
    m.ir_version = 10 if opset >= 21 else 8
    return m


def opset18():
    node = helper.make_node
    nodes = [
        node("ReduceMean", ["X", "axis2"], ["m"], keepdims=1),
        node("Sub", ["X", "m"], ["c"]),
        node("Mish", ["c"], ["mi"]),
        node("Split", ["mi"], ["s0", "s1"], axis=2, num_outputs=2),
        node("ReduceMax", ["s1", "axis1"], ["max"], keepdims=0),
        node("ReduceSumSquare", ["s0"], ["squares"], keepdims=0,
             noop_with_empty_axes=1),
        node("ReduceMean", ["s0"], ["same"], noop_with_empty_axes=1),
        node("ReduceProd", ["s1"], ["prod"], keepdims=0),
        node("ScatterElements", ["s0", "idx", "upd"], ["scatter"], axis=2,
             reduction="max"),
    ]
    inits = [ints("axis2", [2]), ints("axis1", [1]),
             ints("idx", np.zeros((2, 4, 1))),
             numpy_helper.from_array(np.full((2, 4, 1), 0.1, np.float32),
                                     "upd")]
    return make(nodes, ["max", "squares", "same", "prod", "scatter"], inits,
                18)


def opset21():
    node = helper.make_node
    nodes = [
        node("Gelu", ["X"], ["g"], approximate="tanh"),
        node("Gelu", ["X"], ["g2"]),
        node("Add", ["g", "g2"], ["a"]),
        node("Cast", ["a"], ["h"], to=TensorProto.FLOAT16, saturate=1),
        node("Cast", ["h"], ["f"], to=FLOAT),
        node("Reshape", ["f", "shape"], ["r"]),
        node("Transpose", ["r"], ["t"], perm=[1, 0]),
        node("ReduceL2", ["t", "axis0"], ["l2"], keepdims=1),
        node("Unsqueeze", ["l2", "axis0"], ["u"]),
        node("Resize", ["X", "", "scales"], ["resized"], mode="nearest"),
    ]
    inits = [ints("shape", [8, 6]), ints("axis0", [0]),
             numpy_helper.from_array(np.array([1, 1, 2], np.float32),
                                     "scales")]
    return make(nodes, ["u", "resized"], inits, 21)


def opset18_new_ops():
    node = helper.make_node
    i32 = TensorProto.INT32
    nodes = [
        node("Mul", ["X", "ten"], ["x10"]),
        node("Cast", ["x10"], ["xi"], to=i32),
        node("BitwiseAnd", ["xi", "mask"], ["band"]),
        node("BitwiseOr", ["band", "bits"], ["bor"]),
        node("BitwiseXor", ["bor", "xi"], ["bxor"]),
        node("BitwiseNot", ["bxor"], ["bnot"]),
        node("Cast", ["bnot"], ["bits_out"], to=FLOAT),
        node("CenterCropPad", ["X", "crop"], ["cropped"], axes=[1, 2]),
        node("GroupNormalization", ["X", "gs", "gb"], ["grouped"],
             num_groups=2, epsilon=1e-3),
    ]
    inits = [numpy_helper.from_array(np.array(10, np.float32), "ten"),
             numpy_helper.from_array(np.array(0x3C, np.int32), "mask"),
             numpy_helper.from_array(np.array(0x101, np.int32), "bits"),
             ints("crop", [5, 3]),
             numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "gs"),
             numpy_helper.from_array(np.array([0.1, -1.0], np.float32), "gb")]
    return make(nodes, ["bits_out", "cropped", "grouped"], inits, 18)


def opset21_group_norm():
    node = helper.make_node("GroupNormalization", ["X", "s", "b"], ["Y"],
                            num_groups=2)
    inits = [numpy_helper.from_array(np.array([1, 2, 3, 4], np.float32), "s"),
             numpy_helper.from_array(np.array([0, 1, 0, -1], np.float32), "b")]
    return make([node], ["Y"], inits, 21)


def run(command):
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    loom, work = sys.argv[1], sys.argv[2]
    node = os.environ.get("NODE", "node")
    os.makedirs(work, exist_ok=True)
    x = np.random.default_rng(0).uniform(-2, 2, (2, 4, 6)).astype(np.float32)
    x_path = os.path.join(work, "x.npy")
    np.save(x_path, x)
    failures = []
    for name, build in (("opset18", opset18), ("opset21", opset21),
                        ("opset18_new_ops", opset18_new_ops),
                        ("opset21_group_norm", opset21_group_norm)):
        model = build()
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        out = {k: os.path.join(work, name + "_" + k) for k in ("loom", "ort")}
        rc, text = run([loom, "eval", path, "--input", "X=" + x_path,
                        "--output-dir", out["loom"]])
        if rc:
            failures.append("%s: loom eval failed: %s" % (name, text.strip()))
            continue
        rc, text = run([node, os.path.join(ROOT, "scripts", "ort", "run.mjs"),
                        path, "--input", "X=" + x_path, "--output-dir",
                        out["ort"]])
        if rc:
            failures.append("%s: ONNX Runtime failed: %s" % (name, text.strip()))
            continue
        for o in model.graph.output:
            got = np.load(os.path.join(out["loom"], o.name + ".npy"))
            want = np.load(os.path.join(out["ort"], o.name + ".npy"))
            if got.shape != want.shape or not np.allclose(got, want,
                                                          rtol=1e-4, atol=1e-5):
                failures.append("%s: output %s differs from ONNX Runtime "
                                "(shapes %s and %s)" % (name, o.name,
                                                        got.shape, want.shape))
        rc, text = run([loom, "check", path, "--target=tiny", "--input",
                        "X=" + x_path])
        if rc or "check passed" not in text:
            failures.append("%s: loom check failed: %s" % (name, text.strip()))
            continue
        print("PASS %s (eval vs ONNX Runtime, compiled vs reference)" % name)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
