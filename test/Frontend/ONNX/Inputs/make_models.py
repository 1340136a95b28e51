#!/usr/bin/env python3
"""Writes the small ONNX models the Frontend/ONNX lit tests import.

Usage: make_models.py OUT_DIR [NAME ...]

Writes OUT_DIR/NAME.onnx for every model (or only the NAMEs given), plus the
side files some of them need. Good models exercise the importer's
normalisation; bad ones each carry exactly one defect that `loom compile`
must report as a one-line error. Everything is deterministic.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def tensor(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset=17, name="test"):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="loom-lit")
    # onnx 1.12 stamps its own IR version; pin it so the files do not depend
    # on the installed onnx.
    m.ir_version = 8
    return m


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


# --------------------------------------------------------------------------
# Good models
# --------------------------------------------------------------------------

def gemm():
    # Y = 0.5 * A @ B^T + 2 * C; every operand is a graph input so that no
    # part of the normalised form folds away.
    node = helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm",
                            transB=1, alpha=0.5, beta=2.0)
    return model([node], [tensor("A", [2, 3]), tensor("B", [4, 3]),
                          tensor("C", [4])], [tensor("Y", [2, 4])])


def gemm_plain():
    # Defaults (alpha = beta = 1, no transposes) leave only matmul + add.
    node = helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm")
    return model([node], [tensor("A", [2, 3]), tensor("B", [3, 4]),
                          tensor("C", [1, 4])], [tensor("Y", [2, 4])])


def split():
    node = helper.make_node("Split", ["X", "sizes"], ["Y0", "Y1"],
                            name="split", axis=1)
    return model([node], [tensor("X", [3, 6])],
                 [tensor("Y0", [3, 2]), tensor("Y1", [3, 4])],
                 [ints("sizes", [2, 4])])


def reshapes():
    nodes = [
        helper.make_node("Flatten", ["X"], ["F"], name="flatten", axis=2),
        helper.make_node("Squeeze", ["S", "sq_axes"], ["SQ"], name="squeeze"),
        helper.make_node("Unsqueeze", ["U", "unsq_axes"], ["UN"],
                         name="unsqueeze"),
    ]
    return model(nodes,
                 [tensor("X", [2, 3, 4, 5]), tensor("S", [1, 5, 1]),
                  tensor("U", [5])],
                 [tensor("F", [6, 20]), tensor("SQ", [5]),
                  tensor("UN", [1, 5, 1])],
                 [ints("sq_axes", [0, -1]), ints("unsq_axes", [0, 2])])


def conv_same_upper():
    # A 2x2 kernel at stride 1 on 5x5 needs one padding row and column in
    # total; SAME_UPPER puts it at the end, SAME_LOWER at the beginning.
    w = floats("W", np.arange(3 * 2 * 2 * 2).reshape(3, 2, 2, 2) / 10.0)
    upper = helper.make_node("Conv", ["X", "W"], ["Y"], name="conv_upper",
                             auto_pad="SAME_UPPER")
    lower = helper.make_node("Conv", ["X", "W"], ["Z"], name="conv_lower",
                             auto_pad="SAME_LOWER")
    strided = helper.make_node("Conv", ["X", "W"], ["S"], name="conv_strided",
                               auto_pad="SAME_UPPER", strides=[2, 2])
    return model([upper, lower, strided], [tensor("X", [1, 2, 5, 5])],
                 [tensor("Y", [1, 3, 5, 5]), tensor("Z", [1, 3, 5, 5]),
                  tensor("S", [1, 3, 3, 3])], [w])


def shape_chain():
    # The exporter pattern: reshape X to [X.shape[0], -1] computed at run
    # time. It must fold to one static reshape.
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"],
                         name="gather", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"],
                         name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["new_shape"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["X", "new_shape"], ["Y"], name="reshape"),
    ]
    return model(nodes, [tensor("X", [2, 3, 4])], [tensor("Y", [2, 12])],
                 [ints("zero", 0), ints("axes0", [0]),
                  ints("minus_one", [-1])])


def softmax_opset11():
    # Before opset 13 Softmax flattens to 2-D at `axis`.
    node = helper.make_node("Softmax", ["X"], ["Y"], name="softmax", axis=1)
    return model([node], [tensor("X", [2, 3, 4])], [tensor("Y", [2, 3, 4])],
                 opset=11)


def softmax_opset13():
    node = helper.make_node("Softmax", ["X"], ["Y"], name="softmax", axis=-2)
    return model([node], [tensor("X", [2, 3, 4])], [tensor("Y", [2, 3, 4])],
                 opset=13)


def clip():
    nodes = [
        helper.make_node("Clip", ["X", "lo", "hi"], ["Y"], name="clip_both"),
        helper.make_node("Clip", ["X", "", "hi"], ["Z"], name="clip_max"),
    ]
    return model(nodes, [tensor("X", [2, 3])],
                 [tensor("Y", [2, 3]), tensor("Z", [2, 3])],
                 [floats("lo", 0.0), floats("hi", 6.0)])


def dropout():
    nodes = [
        helper.make_node("Dropout", ["X"], ["D"], name="dropout", seed=3),
        helper.make_node("Identity", ["D"], ["I"], name="identity"),
        helper.make_node("Relu", ["I"], ["Y"], name="relu"),
    ]
    return model(nodes, [tensor("X", [2, 3])], [tensor("Y", [2, 3])])


def dropout_training(ratio):
    # Dropout in training mode (a constant true) with a constant ratio, and
    # its mask; Relu of the output.
    nodes = [
        helper.make_node("Dropout", ["X", "ratio", "training"], ["D", "M"],
                         name="dropout", seed=0),
        helper.make_node("Relu", ["D"], ["Y"], name="relu"),
    ]
    return model(nodes, [tensor("X", [2, 3])],
                 [tensor("Y", [2, 3]), tensor("M", [2, 3], TensorProto.BOOL)],
                 [floats("ratio", ratio),
                  numpy_helper.from_array(np.array(True), "training")])


def dynamic_batch():
    nodes = [
        helper.make_node("Relu", ["X"], ["R"], name="relu"),
        helper.make_node("ReduceSum", ["R", "axes"], ["Y"], name="sum",
                         keepdims=0),
    ]
    return model(nodes, [tensor("X", ["batch", 3])], [tensor("Y", ["batch"])],
                 [ints("axes", [1])])


def external_data(model_dir):
    # W lives in external.bin at offset 8 (after 8 bytes of padding), so the
    # offset handling is exercised too.
    w = np.arange(16, dtype=np.float32).reshape(4, 4)
    with open(os.path.join(model_dir, "external.bin"), "wb") as f:
        f.write(b"\xde\xad\xbe\xef" * 2)
        f.write(w.tobytes())
    init = external_initializer("W", [4, 4], "external.bin", offset=8,
                                length=w.nbytes)
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [4, 4])], [tensor("Y", [4, 4])], [init])


def neutral_scalars():
    # (X * 1) + 0 with the 1 and 0 as raw-data scalar initializers (which the
    # importer turns into dense_resource blobs): both fold away. X * 3
    # stays.
    nodes = [
        helper.make_node("Mul", ["X", "one"], ["M"], name="mul_one"),
        helper.make_node("Add", ["M", "zero"], ["Y"], name="add_zero"),
        helper.make_node("Mul", ["X", "three"], ["Z"], name="mul_three"),
    ]
    return model(nodes, [tensor("X", [2, 3])],
                 [tensor("Y", [2, 3]), tensor("Z", [2, 3])],
                 [floats("one", 1.0), floats("zero", 0.0),
                  floats("three", 3.0)])


def eval_model():
    # Y = relu(X) * 2 + [1, 2, 3], and its maximum over each row. The second
    # output's name is not a safe file name: `loom eval` must not write
    # outside --output-dir.
    nodes = [
        helper.make_node("Relu", ["X"], ["R"], name="relu"),
        helper.make_node("Mul", ["R", "two"], ["M"], name="mul"),
        helper.make_node("Add", ["M", "bias"], ["Y"], name="add"),
        helper.make_node("ReduceMax", ["Y"], ["../row max"], name="max",
                         axes=[1], keepdims=0),
    ]
    return model(nodes, [tensor("X", [2, 3])],
                 [tensor("Y", [2, 3]), tensor("../row max", [2])],
                 [floats("two", 2.0), floats("bias", [1.0, 2.0, 3.0])])


def reshape_shape_input():
    # Y = Reshape(X, shape) + 1: the target shape arrives as a graph input.
    nodes = [
        helper.make_node("Reshape", ["X", "shape"], ["R"], name="reshape"),
        helper.make_node("Add", ["R", "one"], ["Y"], name="add"),
    ]
    return model(nodes, [tensor("X", [2, 3]), tensor("shape", [2], INT64)],
                 [tensor("Y", None)], [floats("one", [1.0])])


def range_limit_input():
    # Y = Range(0, n, 1) * s: the length comes from input n (through a Cast,
    # so it is computed from the input, not the input itself), the scale s
    # stays a run-time input.
    nodes = [
        helper.make_node("Cast", ["n"], ["limit"], name="cast", to=FLOAT),
        helper.make_node("Range", ["zero", "limit", "step"], ["R"],
                         name="range"),
        helper.make_node("Mul", ["R", "s"], ["Y"], name="scale"),
    ]
    return model(nodes, [tensor("n", [], INT64), tensor("s", [])],
                 [tensor("Y", None)],
                 [floats("zero", 0.0), floats("step", 1.0)])


def shared_dim_inputs():
    # Y = X + B, both [batch, 3]: binding B fixes batch for X as well.
    node = helper.make_node("Add", ["X", "B"], ["Y"], name="add")
    return model([node], [tensor("X", ["batch", 3]), tensor("B", ["batch", 3])],
                 [tensor("Y", ["batch", 3])])


def indexing(op, indices, name, updates=None, **attrs):
    # op(X, indices[, updates]) on a 4x3 X with constant indices.
    inputs = ["X", "i"] + (["u"] if updates is not None else [])
    inits = [ints("i", indices)]
    if updates is not None:
        inits.append(floats("u", updates))
    node = helper.make_node(op, inputs, ["Y"], name=name, **attrs)
    return model([node], [tensor("X", [4, 3])], [tensor("Y", None)], inits)


TRAINING = "ai.onnx.preview.training"


def optimizer(op, states, domain=TRAINING, constant_rate=True, **attrs):
    # op(R, T, X, G, states...) on 2-element tensors; R and T constant (or
    # graph inputs), X and the rest graph inputs.
    names = ["X", "G"] + list(states)
    outs = ["X_new"] + [s + "_new" for s in states]
    node = helper.make_node(op, ["R", "T"] + names, outs, name="opt",
                            domain=domain, **attrs)
    rt = [numpy_helper.from_array(np.array(0.1, dtype=np.float32), "R"),
          numpy_helper.from_array(np.array(2, dtype=np.int64), "T")]
    inputs = [tensor(n, [2]) for n in names]
    if not constant_rate:
        inputs = [tensor("R", []), tensor("T", [], INT64)] + inputs
        rt = []
    m = model([node], inputs, [tensor(o, [2]) for o in outs], rt)
    m.opset_import.append(helper.make_opsetid(TRAINING, 1))
    return m


def lrn():
    node = helper.make_node("LRN", ["X"], ["Y"], name="lrn", size=3,
                            alpha=0.5, beta=0.75, bias=2.0)
    return model([node], [tensor("X", [1, 4, 1, 2])], [tensor("Y", None)])


def reverse_sequence(lens):
    node = helper.make_node("ReverseSequence", ["X", "lens"], ["Y"],
                            name="reverse", time_axis=0, batch_axis=1)
    return model([node], [tensor("X", [4, 2, 1])], [tensor("Y", None)],
                 [ints("lens", lens)])


def nonzero():
    node = helper.make_node("NonZero", ["X"], ["Y"], name="nonzero")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", None, INT64)])


def compress(condition):
    node = helper.make_node("Compress", ["X", "c"], ["Y"], name="compress",
                            axis=1)
    return model([node], [tensor("X", [2, 3])], [tensor("Y", None)],
                 [numpy_helper.from_array(np.array(condition), "c")])


def recurrent(op, steps=3, **attrs):
    # op over a [steps, 1, 2] X with hidden size 2, constant weights.
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    rng = np.random.default_rng(5)
    inputs = ["X", "W", "R"]
    inits = [floats("W", rng.uniform(-1, 1, (1, 2 * g, 2))),
             floats("R", rng.uniform(-1, 1, (1, 2 * g, 2)))]
    if "lens" in attrs:
        inputs += ["", "lens"]
        inits.append(numpy_helper.from_array(
            np.array(attrs.pop("lens"), dtype=np.int32), "lens"))
    outs = ["Y", "Y_h"]
    node = helper.make_node(op, inputs, outs, name="cell", hidden_size=2,
                            **attrs)
    return model([node], [tensor("X", [steps, 1, 2])],
                 [tensor(o, None) for o in outs], inits, opset=14)


UINT8 = TensorProto.UINT8


def qlinear_matmul():
    # y = QLinearMatMul(A, 0.1, 3, B, [0.2, 0.05], 2, 0.25, 7): B per column.
    a = lambda n, v, t=np.float32: numpy_helper.from_array(np.array(v, dtype=t), n)
    inits = [a("as", 0.1), a("az", 3, np.uint8),
             a("B", [[10, 0], [3, 250], [7, 1]], np.uint8),
             a("bs", [0.2, 0.05]), a("bz", 2, np.uint8),
             a("ys", 0.25), a("yz", 7, np.uint8)]
    node = helper.make_node("QLinearMatMul",
                            ["A", "as", "az", "B", "bs", "bz", "ys", "yz"],
                            ["Y"], name="qmm")
    return model([node], [tensor("A", [2, 3], UINT8)],
                 [tensor("Y", [2, 2], UINT8)], inits)


def conv_integer():
    w = numpy_helper.from_array(np.array([[[[1, 2], [3, 4]]], [[[5, 0], [2, 1]]]],
                                         dtype=np.uint8), "W")
    zp = numpy_helper.from_array(np.array(1, dtype=np.uint8), "xz")
    node = helper.make_node("ConvInteger", ["X", "W", "xz"], ["Y"],
                            name="conv_int")
    return model([node], [tensor("X", [1, 1, 3, 3], UINT8)],
                 [tensor("Y", None, TensorProto.INT32)], [w, zp])


def unique(sorted_):
    node = helper.make_node("Unique", ["X"], ["Y", "I", "V", "C"],
                            name="unique", sorted=sorted_)
    return model([node], [tensor("X", [5])],
                 [tensor("Y", None)] + [tensor(n, None, INT64)
                                        for n in ("I", "V", "C")])


def nms():
    # Boxes 0 and 1 overlap (IoU 0.81), box 2 is apart; box 1 scores highest.
    boxes = numpy_helper.from_array(np.array(
        [[[0, 0, 1, 1], [0, 0.05, 1, 1.05], [2, 2, 3, 3]]], dtype=np.float32),
        "boxes")
    inits = [boxes, ints("max", [10]), floats("iou", [0.5])]
    node = helper.make_node("NonMaxSuppression",
                            ["boxes", "scores", "max", "iou"], ["Y"],
                            name="nms")
    return model([node], [tensor("scores", [1, 1, 3])],
                 [tensor("Y", None, INT64)], inits)


def if_model(cond_input):
    """Y = X + 1 if cond else X * 2; the branches read X from the graph."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["X", "one"], ["t"], name="then_add")],
        "then", [], [tensor("t", [2, 3])], initializer=[floats("one", [1.0])])
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["X", "two"], ["e"], name="else_mul")],
        "else", [], [tensor("e", [2, 3])], initializer=[floats("two", [2.0])])
    node = helper.make_node("If", ["cond"], ["Y"], name="branch",
                            then_branch=then_g, else_branch=else_g)
    inputs = [tensor("X", [2, 3])]
    inits = []
    if cond_input:
        inputs.append(tensor("cond", [], TensorProto.BOOL))
    else:
        inits.append(numpy_helper.from_array(np.array(False), "cond"))
    return model([node], inputs, [tensor("Y", [2, 3])], inits)


def loop_model(dynamic_cond=False):
    """Three iterations of v = v + i (i the iteration number, as float),
    each iteration's v also a scan output; with `dynamic_cond` the body's
    condition is sum(v) < 10, computed at run time."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], name="cast",
                              to=TensorProto.FLOAT),
             helper.make_node("Add", ["v_in", "fi"], ["v_out"], name="step"),
             helper.make_node("Identity", ["v_out"], ["y"], name="copy")]
    if dynamic_cond:
        nodes += [helper.make_node("ReduceSum", ["v_out"], ["total"],
                                   name="total", keepdims=0),
                  helper.make_node("Less", ["total", "ten"], ["c_out"],
                                   name="keep_going")]
        inits = [floats("ten", 10.0)]
    else:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"],
                                      name="same"))
        inits = []
    body = helper.make_graph(
        nodes, "body",
        [tensor("i", [], INT64), tensor("c_in", [], TensorProto.BOOL),
         tensor("v_in", [2])],
        [tensor("c_out", [], TensorProto.BOOL), tensor("v_out", [2]),
         tensor("y", [2])], initializer=inits)
    node = helper.make_node("Loop", ["M", "", "V"], ["V_final", "Ys"],
                            name="loop", body=body)
    return model([node], [tensor("V", [2])],
                 [tensor("V_final", [2]), tensor("Ys", [3, 2])],
                 [ints("M", 3)], opset=13)


def scan_model():
    """A running sum over X's rows, read last row first; each step's sum,
    doubled, is stacked along axis 1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"], name="acc"),
         helper.make_node("Mul", ["s_out", "two"], ["y"], name="double")],
        "body", [tensor("s_in", [2]), tensor("x", [2])],
        [tensor("s_out", [2]), tensor("y", [2])],
        initializer=[floats("two", [2.0])])
    node = helper.make_node("Scan", ["S", "X"], ["S_final", "Y"],
                            name="scan", body=body, num_scan_inputs=1,
                            scan_input_directions=[1], scan_output_axes=[1])
    return model([node], [tensor("S", [2]), tensor("X", [3, 2])],
                 [tensor("S_final", [2]), tensor("Y", [2, 3])], opset=11)


def newer(op, opset, inputs=("X",), inits=(), **attrs):
    # One node of a newer opset on a [2, 4] X.
    node = helper.make_node(op, list(inputs), ["Y"], name="newer", **attrs)
    return model([node], [tensor("X", [2, 4])], [tensor("Y", None)],
                 list(inits), opset=opset)


def batchnorm_training():
    # Training mode: Y from the batch's statistics, and the running ones.
    inits = [floats("s", [1.0, 2.0]), floats("b", [0.0, 1.0]),
             floats("m", [0.5, -0.5]), floats("v", [1.0, 4.0])]
    node = helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"],
                            ["Y", "M", "V"], name="bn", training_mode=1,
                            momentum=0.8)
    return model([node], [tensor("X", [2, 2, 3])],
                 [tensor(n, None) for n in ("Y", "M", "V")], inits, opset=15)


def outputs_named(*names):
    """One Relu/Neg/Abs per name, each a graph output with that name: names
    that are no safe file names, or that become the same one."""
    ops = ["Relu", "Neg", "Abs"]
    nodes = [helper.make_node(ops[i % 3], ["X"], [n], name="out%d" % i)
             for i, n in enumerate(names)]
    return model(nodes, [tensor("X", [2])], [tensor(n, [2]) for n in names])


# --------------------------------------------------------------------------
# Bad models: one defect each
# --------------------------------------------------------------------------

def external_initializer(name, dims, location, offset=None, length=None):
    init = TensorProto()
    init.name = name
    init.data_type = FLOAT
    init.dims.extend(dims)
    init.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for key, value in entries:
        kv = init.external_data.add()
        kv.key = key
        kv.value = value
    return init


def relu_model():
    node = helper.make_node("Relu", ["X"], ["Y"], name="relu")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])])


def legacy_binary(op, a_shape, b_values, opset=6, y_type=FLOAT, **attrs):
    """A[a_shape] op B, B a constant, in an opset (1 to 6) where broadcasting
    is the legacy kind: asked for with broadcast=1, aligned at `axis`."""
    b = np.array(b_values, dtype=np.float32)
    node = helper.make_node(op, ["A", "B"], ["Y"], name="legacy_" + op.lower(),
                            **attrs)
    return model([node], [tensor("A", a_shape)], [tensor("Y", None, y_type)],
                 [numpy_helper.from_array(b, "B")], opset=opset)


def legacy_pad():
    # Opset 1's Pad names its attribute "paddings".
    node = helper.make_node("Pad", ["X"], ["Y"], name="legacy_pad",
                            paddings=[1, 0, 0, 1], value=5.0)
    return model([node], [tensor("X", [2, 2])], [tensor("Y", [3, 3])],
                 opset=1)


def legacy_upsample():
    # Opset 1's Upsample takes the spatial scales of NCHW as two floats.
    node = helper.make_node("Upsample", ["X"], ["Y"], name="legacy_upsample",
                            height_scale=2.0, width_scale=3.0)
    return model([node], [tensor("X", [1, 1, 2, 2])],
                 [tensor("Y", [1, 1, 4, 6])], opset=1)


def legacy_gemm_no_broadcast():
    node = helper.make_node("Gemm", ["A", "W", "C"], ["Y"], name="legacy_gemm")
    return model([node], [tensor("A", [2, 3])], [tensor("Y", [2, 4])],
                 [floats("W", np.ones((3, 4))), floats("C", [1, 2, 3, 4])],
                 opset=6)


def unknown_op():
    node = helper.make_node("FooBar", ["X"], ["Y"], name="foo")
    return model([node], [tensor("X", [2])], [tensor("Y", [2])])


def unknown_domain():
    node = helper.make_node("Relu", ["X"], ["Y"], name="custom",
                            domain="com.example")
    m = model([node], [tensor("X", [2])], [tensor("Y", [2])])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


def mismatched_shapes():
    node = helper.make_node("Add", ["A", "B"], ["Y"], name="bad_add")
    return model([node], [tensor("A", [2, 3]), tensor("B", [4, 5])],
                 [tensor("Y", None)])


def matmul_mismatch():
    node = helper.make_node("MatMul", ["A", "B"], ["Y"], name="bad_matmul")
    return model([node], [tensor("A", [2, 3]), tensor("B", [4, 5])],
                 [tensor("Y", None)])


def late_shape(op):
    # B = Reshape(flat, Cast(shape_f)) is [4, 5], but ONNX shape inference
    # does not propagate values through Cast, so it cannot see the mismatch
    # with A [2, 3]; the importer, which folds the Cast, must.
    nodes = [
        helper.make_node("Cast", ["shape_f"], ["shape"], name="cast", to=INT64),
        helper.make_node("Reshape", ["flat", "shape"], ["B"], name="reshape"),
        helper.make_node(op, ["A", "B"], ["Y"], name="late_" + op.lower()),
    ]
    return model(nodes, [tensor("A", [2, 3]), tensor("flat", [20])],
                 [tensor("Y", None)], [floats("shape_f", [4, 5])])


def cycle():
    nodes = [
        helper.make_node("Add", ["X", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    return model(nodes, [tensor("X", [2])], [tensor("b", [2])])


def undefined_input():
    nodes = [
        helper.make_node("Relu", ["X"], ["R"], name="relu"),
        helper.make_node("Add", ["R", "nowhere"], ["Y"], name="add_ghost"),
    ]
    return model(nodes, [tensor("X", [2])], [tensor("Y", [2])])


def bad_initializer():
    w = TensorProto()
    w.name = "W"
    w.data_type = FLOAT
    w.dims.extend([2, 3])
    w.raw_data = np.zeros(2, dtype=np.float32).tobytes()  # 8 bytes, not 24
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [w])


def missing_external():
    init = external_initializer("W", [2, 3], "missing.bin")
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [init])


def short_external(model_dir):
    with open(os.path.join(model_dir, "short.bin"), "wb") as f:
        f.write(np.zeros(3, dtype=np.float32).tobytes())  # 12 bytes
    init = external_initializer("W", [2, 3], "short.bin", offset=0, length=24)
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [init])


def write_secret(model_dir):
    """Writes ../secret.bin next to the model's folder, sized exactly for a
    [2, 3] float initializer, and returns its path."""
    path = os.path.abspath(os.path.join(model_dir, "..", "secret.bin"))
    with open(path, "wb") as f:
        f.write(np.ones(6, dtype=np.float32).tobytes())
    return path


def escaping_external(model_dir):
    # The model sits in OUT_DIR/escape/ and '../secret.bin' exists with the
    # right size, so the only thing wrong is that the path leaves the
    # model's folder.
    write_secret(model_dir)
    init = external_initializer("W", [2, 3], "../secret.bin")
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [init])


def absolute_external(model_dir):
    # The same file named by an absolute path.
    init = external_initializer("W", [2, 3], write_secret(model_dir))
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [init])


def unnamed_dynamic():
    node = helper.make_node("Relu", ["X"], ["Y"], name="relu")
    x = tensor("X", [None, 3])
    return model([node], [x], [tensor("Y", [None, 3])])


def same_output_twice():
    # One tensor given as two outputs (Identity): Y0 = Y1 = X @ W.
    w = numpy_helper.from_array(
        (np.arange(32, dtype=np.float32).reshape(4, 8) / 10), "W")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["M"], name="mm"),
             helper.make_node("Identity", ["M"], ["Y0"], name="id0"),
             helper.make_node("Identity", ["M"], ["Y1"], name="id1")]
    return model(nodes, [tensor("X", [1, 4])],
                 [tensor("Y0", [1, 8]), tensor("Y1", [1, 8])], [w])


# Model name (a path under OUT_DIR, without .onnx) -> builder. A builder that
# takes an argument gets the folder the model goes in, for its side files.
def conv_chain():
    # Two 3x3 convolutions of few channels on a 32x32 image: on the tiny
    # target each splits by output rows, so the second reads its input's
    # rows with a halo of one row from the neighbouring tiles.
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W1")
    w2 = numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32), "W2")
    c1 = helper.make_node("Conv", ["X", "W1"], ["A"], name="conv_a", pads=[1, 1, 1, 1])
    r1 = helper.make_node("Relu", ["A"], ["B"], name="relu_a")
    c2 = helper.make_node("Conv", ["B", "W2"], ["Y"], name="conv_b", pads=[1, 1, 1, 1])
    return model([c1, r1, c2], [tensor("X", [1, 3, 32, 32])],
                 [tensor("Y", [1, 4, 32, 32])], [w1, w2])


def narrow_conv():
    # A 3x3 convolution of 64 channels, as ResNet-50's first stage has: on
    # tsp-v1 (4 tiles of 320 x 320 blocks) four 16-channel slices would
    # each take a whole block's time, so at a precision the matrix unit
    # runs it splits by output rows.
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(
        (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32), "W")
    c = helper.make_node("Conv", ["X", "W"], ["Y"], name="conv_narrow",
                         pads=[1, 1, 1, 1])
    return model([c], [tensor("X", [1, 64, 16, 16])],
                 [tensor("Y", [1, 64, 16, 16])], [w])


def wide_matmul():
    # [16, 64] x [64, 128]: on the tiny target a column split, B's columns
    # sharded and A multicast to every tile.
    rng = np.random.default_rng(8)
    b = numpy_helper.from_array(rng.standard_normal((64, 128)).astype(np.float32), "B")
    mm = helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")
    return model([mm], [tensor("A", [16, 64])], [tensor("Y", [16, 128])], [b])


def deep_matmul():
    # [4, 2048] x [2048, 16] + bias, relu: 64 outputs (one matrix block on
    # tiny) but a long K, so the contraction splits over the tiles and the
    # partial sums are reduced across them.
    rng = np.random.default_rng(9)
    b = numpy_helper.from_array(rng.standard_normal((2048, 16)).astype(np.float32), "B")
    c = numpy_helper.from_array(rng.standard_normal((16,)).astype(np.float32), "C")
    mm = helper.make_node("MatMul", ["A", "B"], ["M"], name="deep")
    add = helper.make_node("Add", ["M", "C"], ["S"], name="deep_bias")
    relu = helper.make_node("Relu", ["S"], ["Y"], name="deep_relu")
    return model([mm, add, relu], [tensor("A", [4, 2048])],
                 [tensor("Y", [4, 16])], [b, c])


def roomy_matmul():
    # [128, 1024] x [1024, 128]: on tiny (256 KiB a tile) split by rows
    # every tile holds all of B (512 KiB), by columns all of A; split by K
    # each holds a 64-wide chunk of both and its 64 KiB of partial sums.
    rng = np.random.default_rng(10)
    b = numpy_helper.from_array(rng.standard_normal((1024, 128)).astype(np.float32), "B")
    mm = helper.make_node("MatMul", ["A", "B"], ["Y"], name="roomy")
    return model([mm], [tensor("A", [128, 1024])], [tensor("Y", [128, 128])], [b])


def split_compare_select():
    # A column-parallel projection, then tan, a comparison and a select:
    # elementwise ops graph-partition keeps split across chips
    # (test/Compile/partition-elementwise.test).
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(
        rng.standard_normal((16, 16)).astype(np.float32) * 0.2, "W")
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["H"], name="proj"),
             helper.make_node("Tan", ["H"], ["T"], name="tan"),
             helper.make_node("Greater", ["T", "zero"], ["C"], name="positive"),
             helper.make_node("Where", ["C", "T", "zero"], ["Y"], name="select")]
    return model(nodes, [tensor("X", [1, 16])], [tensor("Y", [1, 16])],
                 [w, zero])


MODELS = {
    "split_compare_select": split_compare_select,
    "deep_matmul": deep_matmul,
    "roomy_matmul": roomy_matmul,
    "conv_chain": conv_chain,
    "narrow_conv": narrow_conv,
    "wide_matmul": wide_matmul,
    "gemm": gemm,
    "gemm_plain": gemm_plain,
    "split": split,
    "reshapes": reshapes,
    "conv_same_upper": conv_same_upper,
    "shape_chain": shape_chain,
    "softmax_opset11": softmax_opset11,
    "softmax_opset13": softmax_opset13,
    "clip": clip,
    "dropout": dropout,
    "dropout_training_ratio0": lambda: dropout_training(0.0),
    "dropout_training_ratio05": lambda: dropout_training(0.5),
    "dynamic_batch": dynamic_batch,
    "external_data": external_data,
    "neutral_scalars": neutral_scalars,
    "eval_model": eval_model,
    "reshape_shape_input": reshape_shape_input,
    "shared_dim_inputs": shared_dim_inputs,
    "adagrad": lambda: optimizer("Adagrad", ["H"], decay_factor=0.5,
                                 epsilon=0.01, norm_coefficient=0.1),
    "momentum_nesterov": lambda: optimizer(
        "Momentum", ["V"], alpha=0.9, beta=0.5, mode="nesterov",
        norm_coefficient=0.0),
    "adam": lambda: optimizer("Adam", ["V", "H"], alpha=0.9, beta=0.8,
                              epsilon=0.01, norm_coefficient=0.1,
                              norm_coefficient_post=0.5),
    "adagrad_rate_input": lambda: optimizer("Adagrad", ["H"],
                                            constant_rate=False),
    "adagrad_default_domain": lambda: optimizer("Adagrad", ["H"], domain=""),
    "lrn": lrn,
    "reverse_sequence": lambda: reverse_sequence([3, 1]),
    "reverse_sequence_too_long": lambda: reverse_sequence([5, 1]),
    "nonzero": nonzero,
    "reduce_mean_axes_input18": lambda: newer(
        "ReduceMean", 18, ["X", "axes"], [ints("axes", [1])], keepdims=0),
    "reduce_mean_axes_graph_input18": lambda: model(
        [helper.make_node("ReduceMean", ["X", "axes"], ["Y"], name="newer")],
        [tensor("X", [2, 4]), tensor("axes", [1], INT64)],
        [tensor("Y", None)], opset=18),
    "opset22": lambda: newer("Relu", 22),
    "col2im18": lambda: newer("Col2Im", 18, ["X", "image", "block"],
                              [ints("image", [2, 2]), ints("block", [1, 1])]),
    "pad_axes18": lambda: newer("Pad", 18, ["X", "pads", "", "axes"],
                                [ints("pads", [1, 1]), ints("axes", [1])]),
    "resize_antialias18": lambda: newer(
        "Resize", 18, ["X", "", "scales"],
        [floats("scales", [1.0, 2.0])], antialias=1, mode="linear"),
    "mish17": lambda: newer("Mish", 17),
    "bitwise_and_float18": lambda: newer("BitwiseAnd", 18, ["X", "X"]),
    "group_norm_scale21": lambda: newer(
        "GroupNormalization", 21, ["X", "s", "b"],
        [floats("s", [1.0, 1.0]), floats("b", [0.0, 0.0])], num_groups=2),
    "center_crop_pad18": lambda: newer("CenterCropPad", 18, ["X", "shape"],
                                       [ints("shape", [3, 3])]),
    "batchnorm_training": batchnorm_training,
    "unique_sorted": lambda: unique(1),
    "unique_unsorted": lambda: unique(0),
    "nms": nms,
    "qlinear_matmul": qlinear_matmul,
    "conv_integer": conv_integer,
    "matmul_integer_int32": lambda: model(
        [helper.make_node("MatMulInteger", ["A", "B"], ["Y"], name="mmi")],
        [tensor("A", [2, 2], TensorProto.INT32),
         tensor("B", [2, 2], TensorProto.INT32)],
        [tensor("Y", None, TensorProto.INT32)]),
    "if_const": lambda: if_model(False),
    "if_cond_input": lambda: if_model(True),
    "loop_const": lambda: loop_model(),
    "loop_dynamic_cond": lambda: loop_model(dynamic_cond=True),
    "scan_reverse": scan_model,
    "gru_unrolled": lambda: recurrent("GRU"),
    "lstm_input_forget": lambda: recurrent("LSTM", input_forget=1),
    "rnn_unknown_activation": lambda: recurrent("RNN", activations=["Gelu"]),
    "gru_two_activations_missing": lambda: recurrent(
        "GRU", activations=["Sigmoid"]),
    "rnn_lens_too_long": lambda: recurrent("RNN", lens=[4]),
    "compress": lambda: compress([True, False, True]),
    "gather_in_range": lambda: indexing("Gather", [-4, 3], "gather"),
    "gather_out_of_range": lambda: indexing("Gather", [0, 99], "gather"),
    "gather_elements_out_of_range": lambda: indexing(
        "GatherElements", [[0, -4]], "gather_elements", axis=1),
    "gather_nd_in_range": lambda: indexing("GatherND", [[3, -3]], "gather_nd"),
    "gather_nd_out_of_range": lambda: indexing("GatherND", [[3, 3]],
                                               "gather_nd"),
    "scatter_elements_out_of_range": lambda: indexing(
        "ScatterElements", [[1, 2, 3]], "scatter_elements",
        updates=[[1, 2, 3]], axis=1),
    "scatter_nd_out_of_range": lambda: indexing(
        "ScatterND", [[4]], "scatter_nd", updates=[[1, 2, 3]]),
    "range_limit_input": range_limit_input,
    "unknown_op": unknown_op,
    "unknown_domain": unknown_domain,
    "mismatched_shapes": mismatched_shapes,
    "matmul_mismatch": matmul_mismatch,
    "matmul_mismatch_late": lambda: late_shape("MatMul"),
    "mismatched_shapes_late": lambda: late_shape("Add"),
    "cycle": cycle,
    "undefined_input": undefined_input,
    "bad_initializer": bad_initializer,
    "missing_external": missing_external,
    "short_external": short_external,
    "escape/escaping_external": escaping_external,
    "escape/absolute_external": absolute_external,
    "unnamed_dynamic": unnamed_dynamic,
    "same_output_twice": same_output_twice,
    "legacy_add_axis0": lambda: legacy_binary("Add", [3, 3], [10, 20, 30],
                                              broadcast=1, axis=0),
    "legacy_add_trailing": lambda: legacy_binary("Add", [3, 3], [10, 20, 30],
                                                 broadcast=1),
    "legacy_mul_axis1": lambda: legacy_binary("Mul", [2, 3, 2], [1, 10, 100],
                                              broadcast=1, axis=1),
    "legacy_sub_opset1": lambda: legacy_binary("Sub", [2, 3], [1, 2],
                                               opset=1, broadcast=1, axis=0),
    "legacy_greater_axis0": lambda: legacy_binary(
        "Greater", [3, 3], [10, 20, 30], y_type=TensorProto.BOOL,
        broadcast=1, axis=0),
    "legacy_add_scalar": lambda: legacy_binary("Add", [2, 2], [5],
                                               broadcast=1),
    "legacy_add_no_broadcast": lambda: legacy_binary("Add", [3, 3],
                                                     [10, 20, 30]),
    "legacy_add_bad_axis": lambda: legacy_binary("Add", [3, 3], [10, 20, 30],
                                                 broadcast=1, axis=2),
    "legacy_add_not_a_run": lambda: legacy_binary("Add", [3, 4], [1, 2, 3, 4],
                                                  broadcast=1, axis=0),
    "legacy_gemm_no_broadcast": legacy_gemm_no_broadcast,
    "legacy_pad": legacy_pad,
    "legacy_upsample": legacy_upsample,
    "outputs_collide": lambda: outputs_named("a_b", "ok", "a/b"),
    "output_dotdot": lambda: outputs_named("..", ".hidden"),
}


def write_raw(out_dir, name):
    """Models that are not produced by onnx.save."""
    path = os.path.join(out_dir, name + ".onnx")
    if name == "not_onnx":
        # Fixed pseudo-random bytes: the same file every run.
        data = np.random.default_rng(1234).bytes(512)
    elif name == "truncated":
        data = relu_model().SerializeToString()
        data = data[: len(data) // 2]
    elif name == "empty":
        data = b""
    else:
        return False
    with open(path, "wb") as f:
        f.write(data)
    return True


RAW = ["not_onnx", "truncated", "empty"]


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: make_models.py OUT_DIR [NAME ...]")
    out_dir = argv[1]
    names = argv[2:] or list(MODELS) + RAW
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        if write_raw(out_dir, name):
            continue
        if name not in MODELS:
            sys.exit("make_models.py: unknown model '%s'" % name)
        path = os.path.join(out_dir, name + ".onnx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        build = MODELS[name]
        if build.__code__.co_argcount:
            m = build(os.path.dirname(path))
        else:
            m = build()
        with open(path, "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main(sys.argv)
