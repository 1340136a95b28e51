#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora: fuzz/corpus/<harness>/.

Usage: make_seeds.py LOOM [CORPUS_DIR]

LOOM is the `loom` binary (it compiles the .loom seeds); CORPUS_DIR defaults
to fuzz/corpus beside this script. Every seed is a small valid input that its
harness accepts (the fuzz_replay_<harness> tests check that); together they
reach the readers' main paths: ONNX models using the importer's common
converters, constant folding, a dynamic dimension and typed initializers;
every target preset without its comment keys; programs compiled for the
tiny target; .npy files of each supported dtype and header version. The
output is deterministic, and the whole corpus stays well under 1 MiB.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def tensor(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(list(nodes), "seed", list(inputs),
                              list(outputs), initializer=list(initializers))
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="loom-fuzz-seed")
    m.ir_version = 8
    return m


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def onnx_seeds():
    node = helper.make_node
    seeds = {}
    seeds["relu_add"] = model(
        [node("Relu", ["X"], ["R"], name="relu"),
         node("Add", ["R", "B"], ["Y"], name="add")],
        [tensor("X", [2, 3])], [tensor("Y", [2, 3])],
        [const("B", [1.0, 2.0, 3.0])])
    seeds["gemm"] = model(
        [node("Gemm", ["A", "W", "C"], ["Y"], name="gemm", transB=1,
              alpha=0.5)],
        [tensor("A", [2, 4])], [tensor("Y", [2, 3])],
        [const("W", np.arange(12).reshape(3, 4) / 8),
         const("C", [0.0, 1.0, 2.0])])
    seeds["conv_pool"] = model(
        [node("Conv", ["X", "K"], ["C"], name="conv", pads=[1, 1, 1, 1]),
         node("MaxPool", ["C"], ["P"], name="pool", kernel_shape=[2, 2],
              strides=[2, 2]),
         node("GlobalAveragePool", ["P"], ["Y"], name="gap")],
        [tensor("X", [1, 2, 4, 4])], [tensor("Y", [1, 2, 1, 1])],
        [const("K", np.ones((2, 2, 3, 3)) / 9)])
    seeds["shape_chain"] = model(
        [node("Shape", ["X"], ["s"], name="shape"),
         node("Gather", ["s", "zero"], ["b"], name="gather", axis=0),
         node("Unsqueeze", ["b", "ax"], ["b1"], name="unsqueeze"),
         node("Concat", ["b1", "m1"], ["ns"], name="concat", axis=0),
         node("Reshape", ["X", "ns"], ["Y"], name="reshape")],
        [tensor("X", [2, 3, 4])], [tensor("Y", [2, 12])],
        [const("zero", 0, np.int64), const("ax", [0], np.int64),
         const("m1", [-1], np.int64)])
    seeds["dynamic_batch"] = model(
        [node("MatMul", ["X", "W"], ["M"], name="matmul"),
         node("Softmax", ["M"], ["Y"], name="softmax", axis=-1)],
        [tensor("X", ["batch", 4])], [tensor("Y", ["batch", 2])],
        [const("W", np.linspace(-1, 1, 8).reshape(4, 2))])
    # Typed (not raw) initializer data and a Constant node.
    w = helper.make_tensor("W", FLOAT, [2, 2], [1.0, -2.0, 3.0, -4.0])
    seeds["typed_const"] = model(
        [node("Constant", [], ["c"], name="const",
              value=helper.make_tensor("cv", FLOAT, [2], [0.5, 0.25])),
         node("Mul", ["X", "W"], ["M"], name="mul"),
         node("Add", ["M", "c"], ["S"], name="add"),
         node("Transpose", ["S"], ["T"], name="transpose", perm=[1, 0]),
         node("ReduceMean", ["T"], ["Y"], name="mean", axes=[1],
              keepdims=1)],
        [tensor("X", [2, 2])], [tensor("Y", [2, 1])], [w], opset=13)
    seeds["slice_pad_where"] = model(
        [node("Slice", ["X", "st", "en"], ["S"], name="slice"),
         node("Pad", ["S", "pads"], ["P"], name="pad"),
         node("Greater", ["P", "zf"], ["G"], name="greater"),
         node("Where", ["G", "P", "zf"], ["Y"], name="where")],
        [tensor("X", [4, 4])], [tensor("Y", [4, 4])],
        [const("st", [1, 1], np.int64), const("en", [3, 3], np.int64),
         const("pads", [1, 1, 1, 1], np.int64), const("zf", 0.0)])
    seeds["layernorm_cast"] = model(
        [node("LayerNormalization", ["X", "g", "b"], ["L"], name="ln",
              axis=-1),
         node("Sigmoid", ["L"], ["S"], name="sigmoid"),
         node("Cast", ["S"], ["Y"], name="cast", to=TensorProto.FLOAT16)],
        [tensor("X", [2, 4])], [tensor("Y", [2, 4], TensorProto.FLOAT16)],
        [const("g", [1.0] * 4), const("b", [0.0] * 4)])
    seeds["split_concat"] = model(
        [node("Split", ["X", "sz"], ["A", "B"], name="split", axis=1),
         node("Concat", ["B", "A"], ["Y"], name="concat", axis=1)],
        [tensor("X", [2, 6])], [tensor("Y", [2, 6])],
        [const("sz", [2, 4], np.int64)])
    # Attributes of each type the schema check reads (float, int, ints),
    # the values shape inference divides by or indexes with, and legacy
    # (opset 6) broadcasting with an axis.
    seeds["typed_attributes"] = model(
        [node("DepthToSpace", ["X"], ["D"], name="d2s", blocksize=2),
         node("LeakyRelu", ["D"], ["L"], name="leaky", alpha=0.1),
         node("MaxPool", ["L"], ["P"], name="pool", kernel_shape=[2, 2],
              strides=[1, 1], pads=[0, 0, 1, 1]),
         node("GatherND", ["P", "i"], ["Y"], name="gathernd",
              batch_dims=0)],
        [tensor("X", [1, 4, 2, 2])], [tensor("Y", [1, 4, 4])],
        [const("i", [[0, 0]], np.int64)])
    seeds["legacy_broadcast"] = model(
        [node("Add", ["X", "b"], ["Y"], name="add", broadcast=1, axis=0)],
        [tensor("X", [3, 2])], [tensor("Y", [3, 2])],
        [const("b", [1.0, 2.0, 3.0])], opset=6)
    # Static control flow: an If on a constant condition whose branch runs
    # a Loop of a constant trip count (its body reading the graph's B),
    # and a Scan over the rows of the result.
    loop_body = helper.make_graph(
        [node("Identity", ["c"], ["c_out"], name="keep"),
         node("Add", ["v", "B"], ["v_out"], name="step")], "loop_body",
        [tensor("i", [], TensorProto.INT64), tensor("c", [], TensorProto.BOOL),
         tensor("v", [2, 2])],
        [tensor("c_out", [], TensorProto.BOOL), tensor("v_out", [2, 2])])
    then_g = helper.make_graph(
        [node("Loop", ["M", "", "X"], ["t"], name="loop", body=loop_body)],
        "then", [], [tensor("t", [2, 2])])
    else_g = helper.make_graph(
        [node("Neg", ["X"], ["e"], name="neg")], "else", [],
        [tensor("e", [2, 2])])
    scan_body = helper.make_graph(
        [node("Add", ["s", "r"], ["s_out"], name="acc"),
         node("Identity", ["s_out"], ["y"], name="out")], "scan_body",
        [tensor("s", [2]), tensor("r", [2])],
        [tensor("s_out", [2]), tensor("y", [2])])
    seeds["control_flow"] = model(
        [node("If", ["cond"], ["T"], name="branch", then_branch=then_g,
              else_branch=else_g),
         node("Scan", ["S", "T"], ["S_final", "Y"], name="scan",
              body=scan_body, num_scan_inputs=1,
              scan_input_directions=[1])],
        [tensor("X", [2, 2]), tensor("S", [2])], [tensor("Y", [2, 2])],
        [numpy_helper.from_array(np.array(True), "cond"),
         const("M", 3, np.int64), const("B", [[1.0, 2.0], [3.0, 4.0]])])
    return seeds


def target_seeds():
    """Every preset, without the keys starting with '_' (sources, notes)."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not k.startswith("_")}
        return v
    seeds = {}
    tdir = os.path.join(ROOT, "targets")
    for f in sorted(os.listdir(tdir)):
        if f.endswith(".json"):
            with open(os.path.join(tdir, f)) as fh:
                seeds[f[:-5]] = json.dumps(strip(json.load(fh)), indent=1)
    return seeds


def npy_bytes(a, version=None):
    import io
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npy_seeds():
    rng = np.random.default_rng(7)
    seeds = {
        "f32_2x3": npy_bytes(rng.standard_normal((2, 3)).astype(np.float32)),
        "f64_4": npy_bytes(np.linspace(-1, 1, 4)),
        "f16_3x2": npy_bytes(np.arange(6, dtype=np.float16).reshape(3, 2)),
        "i8_5": npy_bytes(np.arange(-2, 3, dtype=np.int8)),
        "i32_2x2x2": npy_bytes(np.arange(8, dtype=np.int32).reshape(2, 2, 2)),
        "i64_scalar": npy_bytes(np.array(42, dtype=np.int64)),
        "u8_4": npy_bytes(np.arange(4, dtype=np.uint8)),
        "u16_2": npy_bytes(np.array([1, 65535], dtype=np.uint16)),
        "bool_3": npy_bytes(np.array([True, False, True])),
        "f32_empty_0x3": npy_bytes(np.zeros((0, 3), np.float32)),
        "f32_v2": npy_bytes(np.ones((2, 2), np.float32), version=(2, 0)),
    }
    return seeds


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    loom = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) == 3 else os.path.join(HERE, "corpus")
    for h in ("onnx", "target", "program", "npy"):
        os.makedirs(os.path.join(corpus, h), exist_ok=True)
    models = onnx_seeds()
    for name, m in models.items():
        write(os.path.join(corpus, "onnx", name + ".onnx"),
              m.SerializeToString())
    for name, text in target_seeds().items():
        write(os.path.join(corpus, "target", name + ".json"), text)
    for name, data in npy_seeds().items():
        write(os.path.join(corpus, "npy", name + ".npy"), data)
    # Programs: small models compiled for the tiny target.
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("relu_add", "gemm", "conv_pool", "split_concat"):
            src = os.path.join(tmp, name + ".onnx")
            write(src, models[name].SerializeToString())
            out = os.path.join(corpus, "program", name + ".loom")
            # A relative model path, so no temporary name ends up in the file.
            subprocess.run([os.path.abspath(loom), "compile", name + ".onnx",
                            "--target=tiny", "-o", os.path.abspath(out)],
                           check=True, stdout=subprocess.DEVNULL, cwd=tmp)


if __name__ == "__main__":
    main()
