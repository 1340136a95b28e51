#!/usr/bin/env python3
"""The hostile-input corpus: inputs each `loom` tool must refuse cleanly.

Usage: cases.py LOOM WORK_DIR [TOOL ...]

Writes the files of every case of the given tools (default: all) under
WORK_DIR/<tool>/ and prints one line per case. The runner (run_hostile.py)
imports this module instead; see its docstring for what is checked.

Tools:
  compile   `loom compile MODEL.onnx --target=tiny -o OUT.loom` on bad models
  target    `loom compile good.onnx --target=FILE.json -o OUT.loom` on bad
            target descriptions
  run       `loom run PROGRAM.loom --input X=good.npy --output-dir DIR` on
            corrupt program files
  input     `loom run good.loom --input X=FILE --output-dir DIR` on bad .npy
            (and .pb) inputs

Big inputs (the 20,000-node chain, deep JSON) are generated here, at test
time, rather than kept in the repository. Everything is deterministic: fixed
seeds, and programs compiled from fixed models.

Each case is a Case: a name, the arguments after `loom`, and `names`, text
the one error line must contain (the file, or the ONNX node, graph input or
JSON field at fault).
"""
import json
import os
import random
import struct
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOLS = ("compile", "target", "run", "input")


@dataclass
class Case:
    tool: str
    name: str
    args: list
    names: str
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def id(self):
        return f"{self.tool}/{self.name}"


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def write(path, data):
    with open(path, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
        f.write(data)
    return path


def vi(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, ir_version=8):
    g = helper.make_graph(list(nodes), "hostile", list(inputs), list(outputs),
                          initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="loom-hostile")
    m.ir_version = ir_version
    return m


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def save(path, m):
    return write(path, m.SerializeToString())


def good_model():
    """X[2,4] @ W[4,3] + B, then Relu: the model the run/input/target cases
    compile (three ops, constants, one input 'X')."""
    node = helper.make_node
    return model(
        [node("MatMul", ["X", "W"], ["M"], name="matmul"),
         node("Add", ["M", "B"], ["A"], name="add"),
         node("Relu", ["A"], ["Y"], name="relu")],
        [vi("X", [2, 4])], [vi("Y", [2, 3])],
        [floats("W", np.linspace(-1, 1, 12).reshape(4, 3)),
         floats("B", [0.5, -0.5, 0.0])])


def npy(header_dict_text, data=b"", version=1, magic=b"\x93NUMPY"):
    """A .npy file with the given header text (padded like NumPy does)."""
    h = header_dict_text.encode("latin1")
    prefix = 10 if version == 1 else 12
    pad = (64 - (prefix + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    if version == 1:
        lead = magic + bytes([1, 0]) + struct.pack("<H", len(h))
    else:
        lead = magic + bytes([version, 0]) + struct.pack("<I", len(h))
    return lead + h + data


# ---------------------------------------------------------------------------
# loom compile MODEL.onnx
# ---------------------------------------------------------------------------

def compile_cases(loom, work):
    d = os.path.join(work, "compile")
    os.makedirs(d, exist_ok=True)
    node = helper.make_node
    cases = []

    def add(name, m_or_bytes, names=None, note=""):
        path = os.path.join(d, name + ".onnx")
        if isinstance(m_or_bytes, onnx.ModelProto):
            save(path, m_or_bytes)
        else:
            write(path, m_or_bytes)
        cases.append(Case("compile", name,
                          ["compile", path, "--target=tiny", "-o",
                           os.path.join(d, name + ".loom")],
                          names or name + ".onnx", note))

    good = good_model().SerializeToString()
    rng = random.Random(1)
    add("empty", b"")
    add("random_bytes", bytes(rng.randrange(256) for _ in range(4096)))
    add("truncated", good[: len(good) // 2])
    add("truncated_one_byte", good[:-1])
    add("text", b"this is not an ONNX model\n")
    add("no_graph", onnx.ModelProto(ir_version=8).SerializeToString())
    add("string_input",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [2], TensorProto.STRING)], [vi("Y", [2])]),
        names="relu")
    seq = helper.make_tensor_sequence_value_info("X", FLOAT, [2])
    add("sequence_input",
        model([node("Relu", ["X"], ["Y"], name="relu")], [seq],
              [vi("Y", [2])]), names="'X'")
    add("dims_2p40_squared",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [2**40, 2**40])], [vi("Y", [2**40, 2**40])]),
        note="element count overflows 64 bits")
    add("dims_2p62_bytes",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [2**62])], [vi("Y", [2**62])]),
        note="byte size overflows 64 bits")
    add("dims_exceed_memory",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [2**20, 2**20])], [vi("Y", [2**20, 2**20])]),
        note="4 TiB: fits 64 bits, not the machine or a chip")
    # Byte sums past 64 bits: each input fits (2^62 bytes), their sum in
    # graph-partition's fit check did not (it wrapped negative, the check
    # passed, and graph-to-spatial refused with "kernel sizes must not be
    # negative"); an Expand to 2^61 bytes made the cost model's byte count
    # wrap the same way.
    add("inputs_sum_past_2p63",
        model([node("Add", ["X", "Z"], ["Y"], name="add")],
              [vi("X", [2**30, 2**30]), vi("Z", [2**30, 2**30])],
              [vi("Y", [2**30, 2**30])]),
        names="2^63 or more bytes of SRAM")
    add("expand_2p61_bytes",
        model([node("Expand", ["X", "s"], ["E"], name="expand_2p61"),
               node("ReduceSum", ["E"], ["Y"], name="sum", keepdims=1)],
              [vi("X", [1, 1])], [vi("Y", [1, 1])],
              [ints("s", [2**30, 2**29])]),
        names="expand_2p61")
    add("negative_input_dim",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [-5, 3])], [vi("Y", [-5, 3])]), names="'X'")
    neg = onnx.TensorProto(name="W", data_type=FLOAT, dims=[-2, 2])
    add("negative_initializer_dim",
        model([node("Add", ["X", "W"], ["Y"], name="add")],
              [vi("X", [2, 2])], [vi("Y", [2, 2])], [neg]), names="'W'")
    # 20,000-node chains of Relu/Add with a defect at the far end: a long
    # graph must not recurse deeply or take long, and the error names the
    # node at the end. The defect is found by the importer's graph check,
    # by ONNX shape inference, and by conversion (after all 19,999 nodes
    # before it are converted).
    def chain(last, inits=()):
        nodes, prev = [], "X"
        for i in range(19999):
            out = f"v{i}"
            if i % 2:
                nodes.append(node("Add", [prev, "B"], [out], name=f"add_{i}"))
            else:
                nodes.append(node("Relu", [prev], [out], name=f"relu_{i}"))
            prev = out
        nodes.append(last(prev))
        return model(nodes, [vi("X", [2, 2])], [vi("Y", None)],
                     [floats("B", [[1, 2], [3, 4]])] + list(inits))
    add("chain_20000_undefined_input",
        chain(lambda p: node("Add", [p, "nowhere"], ["Y"], name="last_add")),
        names="last_add")
    add("chain_20000_matmul_mismatch",
        chain(lambda p: node("MatMul", [p, "W"], ["Y"], name="last_matmul"),
              [floats("W", np.ones((3, 3)))]), names="last_matmul")
    add("chain_20000_bad_reshape",
        chain(lambda p: node("Reshape", [p, "s"], ["Y"], name="last_reshape"),
              [ints("s", [5])]), names="last_reshape")
    add("cycle",
        model([node("Relu", ["X2"], ["X1"], name="relu_a"),
               node("Relu", ["X1"], ["X2"], name="relu_b"),
               node("Add", ["X", "X2"], ["Y"], name="add")],
              [vi("X", [2])], [vi("Y", [2])]), names="relu_")
    add("missing_initializer",
        model([node("Add", ["X", "W"], ["Y"], name="add_w")],
              [vi("X", [2])], [vi("Y", [2])]), names="add_w")
    add("output_not_produced",
        model([node("Relu", ["X"], ["R"], name="relu")],
              [vi("X", [2])], [vi("Y", [2])]), names="'Y'")
    add("unknown_op",
        model([node("FrobnicateTensor", ["X"], ["Y"], name="frob")],
              [vi("X", [2])], [vi("Y", [2])]), names="frob")
    add("unknown_domain",
        model([node("Relu", ["X"], ["Y"], name="relu_dom",
                    domain="com.example")],
              [vi("X", [2])], [vi("Y", [2])]), names="relu_dom")
    add("opset_999",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [2])], [vi("Y", [2])], opset=999), names="opset")
    add("mismatched_types",
        model([node("Add", ["X", "I"], ["Y"], name="add_mixed")],
              [vi("X", [2]), vi("I", [2], INT64)], [vi("Y", [2])]),
        names="add_mixed")
    add("matmul_mismatch",
        model([node("MatMul", ["A", "B"], ["Y"], name="mm")],
              [vi("A", [2, 3]), vi("B", [4, 5])], [vi("Y", [2, 5])]),
        names="mm")
    bad = onnx.TensorProto(name="W", data_type=FLOAT, dims=[4, 4],
                           raw_data=b"\0" * 12)
    add("initializer_short_data",
        model([node("Add", ["X", "W"], ["Y"], name="add")],
              [vi("X", [4, 4])], [vi("Y", [4, 4])], [bad]), names="'W'")
    huge = onnx.TensorProto(name="W", data_type=FLOAT, dims=[2**31, 2**31, 4])
    add("initializer_huge_dims_no_data",
        model([node("Add", ["X", "W"], ["Y"], name="add")],
              [vi("X", [1])], [vi("Y", [1])], [huge]), names="'W'")
    add("conv_huge_dilations",
        model([node("Conv", ["X", "K"], ["Y"], name="conv_dilations",
                    dilations=[2**62, 2**62])],
              [vi("X", [1, 1, 4, 4])], [vi("Y", [1, 1, 1, 1])],
              [floats("K", np.ones((1, 1, 2, 2)))]), names="conv_dilations")
    # libonnx 1.12's Conv inference indexes X's shape by W's rank.
    add("conv_rank_mismatch",
        model([node("Conv", ["X", "K"], ["Y"], name="conv_ranks",
                    pads=[1, 1, 1, 1])],
              [vi("X", [4, 4])], [vi("Y", [1, 2, 4, 4])],
              [floats("K", np.ones((2, 2, 3, 3)))]), names="conv_ranks")
    add("conv_huge_pads",
        model([node("Conv", ["X", "K"], ["Y"], name="conv_pads",
                    pads=[2**62] * 4)],
              [vi("X", [1, 1, 4, 4])], [vi("Y", [1, 1, 4, 4])],
              [floats("K", np.ones((1, 1, 2, 2)))]), names="conv_pads")
    add("reshape_huge",
        model([node("Reshape", ["X", "s"], ["Y"], name="reshape_huge")],
              [vi("X", [2, 2])], [vi("Y", [2**31, 2**31, 2**31])],
              [ints("s", [2**31, 2**31, 2**31])]), names="reshape_huge")
    add("expand_huge",
        model([node("Expand", ["X", "s"], ["Y"], name="expand_huge")],
              [vi("X", [1, 1])], [vi("Y", [2**40, 2**40])],
              [ints("s", [2**40, 2**40])]), names="expand_huge")
    add("constant_of_shape_huge",
        model([node("ConstantOfShape", ["s"], ["C"], name="cos_huge"),
               node("Add", ["X", "C"], ["Y"], name="add")],
              [vi("X", [1])], [vi("Y", [2**30, 2**30, 4])],
              [ints("s", [2**30, 2**30, 4])]), names="cos_huge")
    add("tile_huge",
        model([node("Tile", ["X", "r"], ["Y"], name="tile_huge")],
              [vi("X", [2, 2])], [vi("Y", [2**41, 2**41])],
              [ints("r", [2**40, 2**40])]), names="tile_huge")
    add("pad_huge",
        model([node("Pad", ["X", "p"], ["Y"], name="pad_huge")],
              [vi("X", [2, 2])], [vi("Y", [2, 2])],
              [ints("p", [2**62, 0, 2**62, 0])]), names="pad_huge")
    add("split_axis_huge",
        model([node("Split", ["X"], ["A", "B"], name="split_axis",
                    axis=2**62)],
              [vi("X", [2, 2])], [vi("A", [1, 2]), vi("B", [1, 2])]),
        names="split_axis")
    add("layernorm_axis_huge",
        model([node("LayerNormalization", ["X", "g", "b"], ["Y", "M"],
                    name="ln_axis", axis=-2**40)],
              [vi("X", [2, 4])], [vi("Y", [2, 4])],
              [floats("g", [1.0] * 4), floats("b", [0.0] * 4)]),
        names="axis")
    add("concat_scalars",
        model([node("Concat", ["a", "b"], ["Y"], name="concat_scalars",
                    axis=0)],
              [], [vi("Y", [2])], [floats("a", 1.0), floats("b", 2.0)]),
        names="concat_scalars")
    # A valid Slice with a step of INT64_MIN (the count must not overflow),
    # then a bad Reshape so that the model is refused after it converts.
    add("slice_step_int64_min",
        model([node("Slice", ["X", "st", "en", "ax", "sp"], ["S"],
                    name="slice_min_step"),
               node("Reshape", ["S", "s"], ["Y"], name="reshape_after")],
              [vi("X", [4])], [vi("Y", [5])],
              [ints("st", [3]), ints("en", [-2**63]), ints("ax", [0]),
               ints("sp", [-2**63]), ints("s", [5])]),
        names="reshape_after")
    # The same Slice on a constant, so the golden reference folds it.
    add("slice_fold_step_int64_min",
        model([node("Slice", ["c", "st", "en", "ax", "sp"], ["S"],
                    name="slice_fold"),
               node("Reshape", ["S", "s"], ["Y"], name="reshape_folded")],
              [], [vi("Y", [5])],
              [floats("c", [0, 1, 2, 3]), ints("st", [3]),
               ints("en", [-2**63]), ints("ax", [0]), ints("sp", [-2**63]),
               ints("s", [5])]),
        names="reshape_folded")
    add("transpose_bad_perm",
        model([node("Transpose", ["X"], ["Y"], name="transpose_perm",
                    perm=[2**40, -7])],
              [vi("X", [2, 3])], [vi("Y", [3, 2])]), names="transpose_perm")
    add("range_1e18",
        model([node("Range", ["a", "b", "c"], ["R"], name="range_huge"),
               node("Cast", ["R"], ["Y"], name="cast", to=FLOAT)],
              [], [vi("Y", [10**18])],
              [ints("a", 0), ints("b", 10**18), ints("c", 1)]),
        names="range_huge")
    add("topk_k_huge",
        model([node("TopK", ["X", "k"], ["V", "I"], name="topk_huge")],
              [vi("X", [4])], [vi("V", [4]), vi("I", [4], INT64)],
              [ints("k", [2**62])]), names="topk_huge")
    add("gather_index_out_of_range",
        model([node("Gather", ["c", "i"], ["Y"], name="gather_oob")],
              [], [vi("Y", [1])],
              [floats("c", [1, 2, 3]), ints("i", [2**40])]),
        names="gather_oob")
    # Names with a newline must not split the error line.
    add("newline_in_node_name",
        model([node("NoSuchOp", ["X"], ["Y"], name="bad\nname")],
              [vi("X", [2])], [vi("Y", [2])]), names="bad")
    add("unbound_dynamic_dim",
        model([node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", ["batch", 2])], [vi("Y", ["batch", 2])]),
        names="batch")
    add("duplicate_output_name",
        model([node("Relu", ["X"], ["Y"], name="relu_one"),
               node("Neg", ["X"], ["Y"], name="neg_two")],
              [vi("X", [2])], [vi("Y", [2])]), names="neg_two")
    # Subgraphs nested deeper than protobuf's recursion limit.
    # (Only the then-branch nests, so the file grows linearly.)
    leaf = helper.make_graph([], "leaf", [], [])
    inner = leaf
    for i in range(120):
        n_if = node("If", ["cond"], ["o"], name=f"if_{i}",
                    then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([n_if], f"g{i}", [], [vi("o", [1])])
    add("nested_subgraphs_120",
        model([node("If", ["cond"], ["Y"], name="if_top", then_branch=inner,
                    else_branch=leaf)],
              [vi("cond", [], TensorProto.BOOL)], [vi("Y", [1])]))
    # Static control flow within bounds: a constant If nested 20 deep (past
    # the 16 Loom unrolls; refused before shape inference walks it), and a
    # Loop of 10^9 iterations (past the 200,000 body nodes a model may
    # unroll to), each refused before it is built.
    t_init = numpy_helper.from_array(np.array(True), "t")
    leaf = helper.make_graph([node("Identity", ["X"], ["o"], name="leaf")],
                             "leaf", [], [vi("o", [2])])
    inner = leaf
    for i in range(20):
        inner = helper.make_graph(
            [node("If", ["t"], ["o"], name=f"if_{i}", then_branch=inner,
                  else_branch=leaf)], f"g{i}", [], [vi("o", [2])])
    add("if_nested_20",
        model([node("If", ["t"], ["Y"], name="if_top", then_branch=inner,
                    else_branch=leaf)],
              [vi("X", [2])], [vi("Y", [2])], [t_init]), names="if_")
    body = helper.make_graph(
        [node("Identity", ["c"], ["c_out"], name="keep"),
         node("Neg", ["v"], ["v_out"], name="flip")], "body",
        [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL),
         vi("v", [2])],
        [vi("c_out", [], TensorProto.BOOL), vi("v_out", [2])])
    add("loop_billion_iterations",
        model([node("Loop", ["M", "", "X"], ["Y"], name="huge_loop",
                    body=body)],
              [vi("X", [2])], [vi("Y", [2])],
              [numpy_helper.from_array(np.array(10**9, dtype=np.int64), "M")]),
        names="huge_loop")
    # Attributes that libonnx's shape inference divides by, indexes with or
    # squares without a check of its own (SIGFPE, SIGSEGV before the fix).
    x4 = [vi("X", [1, 4, 4, 4])]
    k = [floats("K", np.ones((1, 4, 2, 2)))]
    for name, op, attrs, inputs, inits in (
            ("conv_stride_zero", "Conv", dict(strides=[0, 1]), ["X", "K"], k),
            ("conv_dilation_zero", "Conv", dict(dilations=[1, 0]), ["X", "K"],
             k),
            ("conv_transpose_stride_zero", "ConvTranspose",
             dict(strides=[0, 1]), ["X", "K"],
             [floats("K", np.ones((4, 1, 2, 2)))]),
            ("maxpool_stride_zero", "MaxPool",
             dict(kernel_shape=[2, 2], strides=[0, 1]), ["X"], []),
            ("averagepool_stride_zero", "AveragePool",
             dict(kernel_shape=[2, 2], strides=[1, 0]), ["X"], []),
            ("maxpool_kernel_zero", "MaxPool", dict(kernel_shape=[0, 2]),
             ["X"], []),
            ("conv_negative_pads", "Conv", dict(pads=[-1, 0, 0, 0]),
             ["X", "K"], k),
            ("depth_to_space_blocksize_2p62", "DepthToSpace",
             dict(blocksize=2**62), ["X"], []),
            ("depth_to_space_blocksize_zero", "DepthToSpace",
             dict(blocksize=0), ["X"], []),
            ("space_to_depth_blocksize_zero", "SpaceToDepth",
             dict(blocksize=0), ["X"], [])):
        add(name, model([node(op, inputs, ["Y"], name=name, **attrs)], x4,
                        [vi("Y", None)], inits), names=name)
    add("gathernd_batch_dims_negative",
        model([node("GatherND", ["X", "I"], ["Y"], name="gathernd_batch",
                    batch_dims=-7)],
              [vi("X", [2, 2]), vi("I", [2, 1], INT64)], [vi("Y", None)]),
        names="gathernd_batch")
    # Attributes of the wrong type were read as the field's default (0)
    # before they were checked against the op's schema.
    x22 = [vi("X", [2, 2])]

    def attr(name, value, kind=None):
        a = helper.make_attribute(name, value)
        if kind is not None:  # Declared one type, holding another's field.
            a.type = kind
        return a

    def typed(name, op, attribute, inputs=("X",), inits=(), ins=None):
        n = node(op, list(inputs), ["Y"], name=name)
        n.attribute.append(attribute)
        add(name, model([n], ins or x22, [vi("Y", None)], inits), names=name)

    typed("leakyrelu_alpha_int", "LeakyRelu", attr("alpha", 2))
    typed("elu_alpha_int", "Elu", attr("alpha", 2))
    typed("gemm_alpha_int", "Gemm", attr("alpha", 2), ["X", "W"],
          [floats("W", np.ones((2, 2)))])
    typed("softmax_axis_string", "Softmax", attr("axis", "1"))
    typed("softmax_axis_float", "Softmax", attr("axis", 1.0))
    typed("softmax_axis_ints", "Softmax", attr("axis", [1]))
    typed("concat_axis_float", "Concat", attr("axis", 1.0), ["X", "X"])
    typed("gather_axis_string", "Gather", attr("axis", "1"), ["X", "i"],
          [ints("i", [0])])
    typed("layernorm_epsilon_int", "LayerNormalization", attr("epsilon", 1),
          ["X", "g"], [floats("g", [1.0, 1.0])])
    typed("reducemean_axes_floats", "ReduceMean", attr("axes", [1.0]))
    typed("transpose_perm_floats", "Transpose", attr("perm", [1.0, 0.0]))
    typed("leakyrelu_float_declared_holds_int", "LeakyRelu",
          attr("alpha", 2, kind=onnx.AttributeProto.FLOAT))
    typed("relu_unknown_attribute", "Relu", attr("slope", 0.5))
    n2 = node("LeakyRelu", ["X"], ["Y"], name="leakyrelu_alpha_twice",
              alpha=0.5)
    n2.attribute.append(attr("alpha", 0.25))
    add("attribute_twice", model([n2], x22, [vi("Y", None)]),
        names="leakyrelu_alpha_twice")
    add("concat_axis_missing",
        model([node("Concat", ["X", "X"], ["Y"], name="concat_no_axis")], x22,
              [vi("Y", None)]), names="concat_no_axis")
    add("relu_two_inputs",
        model([node("Relu", ["X", "X"], ["Y"], name="relu_two_inputs")], x22,
              [vi("Y", None)]), names="relu_two_inputs")
    # Counts whose compile would not fit in memory: refused before anything
    # is built, with the bytes (100,000 chips grew past 24 GB; 20,000
    # layers aborted at 5.8 GB).
    good_path = save(os.path.join(d, "good.onnx"), good_model())
    cases.append(Case("compile", "chips_100000",
                      ["compile", good_path, "--target=tiny",
                       "--chips=100000", "-o", os.path.join(d, "x.loom")],
                      "--chips=100000"))
    # Two chips of a 1024 x 1024 tile grid: 2^21 tiles, past the 2^20 a
    # program may hold (rt::kMaxSystemTiles; the program fuzzer's 655,360
    # chips of 16 tiles took the simulator 12 s and 1.5 GB of statistics).
    with open(os.path.join(ROOT, "targets", "tiny.json")) as f:
        big = json.load(f)
    big["chip"]["tiles"]["rows"] = big["chip"]["tiles"]["cols"] = 1024
    big_path = write(os.path.join(d, "grid_1024.json"), json.dumps(big))
    cases.append(Case("compile", "tiles_2_21",
                      ["compile", good_path, "--target=" + big_path,
                       "--chips=2", "-o", os.path.join(d, "x.loom")],
                      "--chips=2"))
    with open(os.path.join(ROOT, "models", "tiny-llama.json")) as f:
        llama = json.load(f)
    llama["num_hidden_layers"] = 20000
    deep = write(os.path.join(d, "layers_20000.json"), json.dumps(llama))
    cases.append(Case("compile", "llm_layers_20000",
                      ["compile", deep, "--target=tiny", "-o",
                       os.path.join(d, "x.loom")], "num_hidden_layers"))
    # Attributes the converters ignored although they change the answer:
    # training mode before opset 7 (is_test defaults to 0) and per-activation
    # batch norm (spatial=0).
    bn_consts = [floats(k, [1.0] * 4) for k in ("s", "b", "m", "v")]
    for name, attrs, opset in (("bn_is_test_default", {}, 6),
                               ("bn_is_test_zero", dict(is_test=0), 6),
                               ("bn_spatial_zero", dict(spatial=0), 7)):
        add(name, model([node("BatchNormalization", ["X", "s", "b", "m", "v"],
                              ["Y"], name=name, **attrs)],
                        x4, [vi("Y", None)], bn_consts, opset=opset),
            names=name)
    add("dropout_is_test_default",
        model([node("Dropout", ["X"], ["Y"], name="dropout_training")], x22,
              [vi("Y", None)], opset=6), names="dropout_training")
    # A name listed twice was bound once, and the second silently lost.
    add("duplicate_graph_input",
        model([node("Add", ["X", "X"], ["Y"], name="add")],
              [vi("X", [2]), vi("X", [2])], [vi("Y", [2])]), names="'X'")
    add("duplicate_initializer",
        model([node("Add", ["X", "W"], ["Y"], name="add")],
              [vi("X", [2])], [vi("Y", [2])],
              [floats("W", [1, 2]), floats("W", [3, 4])]), names="'W'")
    # A constant index out of range was accepted by `loom compile`, which
    # wrote a program (only `loom eval` refused it): Gather's index 99 on a
    # dimension of 4, and the same for the other indexing ops.
    x4x3 = [vi("X", [4, 3])]
    add("gather_index_99",
        model([node("Gather", ["X", "i"], ["Y"], name="gather_99")], x4x3,
              [vi("Y", None)], [ints("i", [0, 99])]), names="gather_99")
    add("gather_index_minus_5",
        model([node("Gather", ["X", "i"], ["Y"], name="gather_m5", axis=0)],
              x4x3, [vi("Y", None)], [ints("i", [-5])]), names="gather_m5")
    add("gather_elements_index_3",
        model([node("GatherElements", ["X", "i"], ["Y"], name="ge_3",
                    axis=1)], x4x3, [vi("Y", None)],
              [ints("i", [[0], [1], [2], [3]])]), names="ge_3")
    add("gather_nd_index_4",
        model([node("GatherND", ["X", "i"], ["Y"], name="gnd_4")], x4x3,
              [vi("Y", None)], [ints("i", [[3, 2], [4, 0]])]), names="gnd_4")
    add("scatter_elements_index_9",
        model([node("ScatterElements", ["X", "i", "u"], ["Y"], name="se_9")],
              x4x3, [vi("Y", None)],
              [ints("i", [[9, 0, 0]]), floats("u", [[1, 2, 3]])]),
        names="se_9")
    add("scatter_nd_index_minus_9",
        model([node("ScatterND", ["X", "i", "u"], ["Y"], name="snd_m9")],
              x4x3, [vi("Y", None)],
              [ints("i", [[-9]]), floats("u", [[1, 2, 3]])]), names="snd_m9")
    # No partition is left to try: the error still gives the reason.
    cases.append(Case("compile", "partition_no_candidate",
                      ["compile", good_path, "--target=tsp-v1", "--chips=8",
                       "--pp=8", "-o", os.path.join(d, "x.loom")],
                      "more pipeline stages than the model's"))
    # Not a file.
    cases.append(Case("compile", "missing_file",
                      ["compile", os.path.join(d, "no-such-model.onnx"),
                       "--target=tiny", "-o", os.path.join(d, "x.loom")],
                      "no-such-model.onnx"))
    cases.append(Case("compile", "directory",
                      ["compile", d, "--target=tiny", "-o",
                       os.path.join(d, "x.loom")], "compile"))
    return cases


# ---------------------------------------------------------------------------
# loom compile --target=FILE.json
# ---------------------------------------------------------------------------

def target_cases(loom, work):
    d = os.path.join(work, "target")
    os.makedirs(d, exist_ok=True)
    model_path = save(os.path.join(d, "good.onnx"), good_model())
    with open(os.path.join(ROOT, "targets", "tiny.json")) as f:
        tiny_text = f.read()
    tiny = json.loads(tiny_text)
    cases = []

    def add(name, content, names=None, note=""):
        path = os.path.join(d, name + ".json")
        if isinstance(content, (dict, list)):
            content = json.dumps(content)
        write(path, content)
        cases.append(Case("target", name,
                          ["compile", model_path, "--target=" + path, "-o",
                           os.path.join(d, name + ".loom")],
                          names or name + ".json", note))

    def edit(name, path, value, names=None, delete=False):
        t = json.loads(tiny_text)
        *parents, last = path.split(".")
        obj = t
        for p in parents:
            obj = obj[p]
        if delete:
            del obj[last]
        else:
            obj[last] = value
        add(name, t, names or path)

    rng = random.Random(2)
    add("empty", "")
    add("random_bytes", bytes(rng.randrange(256) for _ in range(2048)))
    add("not_json", "chip: tiny\n")
    add("truncated", tiny_text[: len(tiny_text) // 2])
    add("array_root", [tiny])
    add("string_root", "\"tiny\"")
    add("nul_bytes", tiny_text.encode()[:100] + b"\0\0\0" +
        tiny_text.encode()[100:])
    add("deeply_nested_array", "[" * 100000 + "]" * 100000)
    add("deeply_nested_object", '{"a":' * 50000 + "1" + "}" * 50000)
    edit("negative_tiles", "chip.tiles.rows", -4)
    edit("zero_tiles", "chip.tiles.cols", 0)
    edit("tiles_2p40", "chip.tiles.rows", 2**40)
    edit("clock_1e300", "chip.clock_hz", 1e300)
    edit("clock_negative", "chip.clock_hz", -1e9)
    edit("clock_string", "chip.clock_hz", "fast")
    edit("sram_2p62", "chip.tile.sram.bytes", 2**62)
    edit("sram_2p70", "chip.tile.sram.bytes", 2**70)
    edit("sram_fraction", "chip.tile.sram.bytes", 1.5)
    edit("sram_bytes_per_cycle_1e300", "chip.tile.sram.bytes_per_cycle",
         1e300)
    edit("macs_1e30", "chip.tile.matrix.macs_per_cycle.fp32", 1e30)
    edit("block_zero", "chip.tile.matrix.block.m", 0)
    edit("vector_lanes_2p62", "chip.tile.vector.lanes", 2**62)
    edit("latency_2p53", "chip.tile.matrix.latency_cycles", 2**53)
    edit("mesh_negative", "chip.mesh.link_bytes_per_cycle", -1)
    edit("hop_latency_2p53", "chip.mesh.hop_latency_cycles", 2**53)
    edit("tiles_wrong_type", "chip.tiles", "4x4")
    edit("unknown_field", "chip.tile.flux_capacitor", 1,
         names="flux_capacitor")
    edit("missing_chip", "chip", None, names="chip", delete=True)
    edit("topology_unknown", "system.links.topology", "hypercube")
    edit("link_latency_1e300", "system.links.latency_seconds", 1e300)
    edit("power_1e300", "system.power_watts_per_chip", 1e300)
    edit("chips_2p62", "system.chips", 2**62)
    # Rates and sizes below any real hardware: a chip link of 1e-9 B/s made
    # every transfer's cycle count overflow (and report a small latency).
    edit("link_rate_1e-9", "system.links.bytes_per_second", 1e-9)
    edit("clock_1hz", "chip.clock_hz", 1.0)
    edit("sram_bytes_per_cycle_tiny", "chip.tile.sram.bytes_per_cycle", 1e-9)
    edit("mesh_rate_tiny", "chip.mesh.link_bytes_per_cycle", 1e-12)
    edit("power_1e-9", "system.power_watts_per_chip", 1e-9)
    add("number_overflows_double",
        tiny_text.replace("1.0e9", "1e400", 1), names="1e400")
    add("duplicate_key",
        tiny_text.replace('"name": "tiny",', '"name": "tiny", "name": "x",',
                          1), names="name")
    cases.append(Case("target", "directory",
                      ["compile", model_path, "--target=" + d + "/", "-o",
                       os.path.join(d, "x.loom")], "target"))
    cases.append(Case("target", "missing_file",
                      ["compile", model_path, "--target=" +
                       os.path.join(d, "no-such-target.json"), "-o",
                       os.path.join(d, "x.loom")], "no-such-target.json"))
    return cases


# ---------------------------------------------------------------------------
# loom run PROGRAM.loom (corrupt program files)
# ---------------------------------------------------------------------------

def compile_good(loom, d):
    """Compiles good_model() for tiny in `d`; returns (program, input .npy)."""
    save(os.path.join(d, "good.onnx"), good_model())
    subprocess.run([os.path.abspath(loom), "compile", "good.onnx", "--target=tiny", "-o",
                    "good.loom"], cwd=d, check=True, stdout=subprocess.DEVNULL)
    x = os.path.join(d, "x.npy")
    np.save(x, np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    return os.path.join(d, "good.loom"), x


def to_json(d, program):
    """The program as JSON (flatc against the schema)."""
    schema = os.path.join(ROOT, "runtime", "include", "loom", "Runtime", "Program.fbs")
    subprocess.run(["flatc", "--json", "--strict-json", "--defaults-json",
                    "--raw-binary", "-o",
                    d, schema, "--", program], check=True)
    with open(os.path.splitext(os.path.join(
            d, os.path.basename(program)))[0] + ".json") as f:
        return json.load(f)


def from_json(d, name, doc):
    """Writes `doc` back as a program file d/name.loom (flatc)."""
    schema = os.path.join(ROOT, "runtime", "include", "loom", "Runtime", "Program.fbs")
    src = write(os.path.join(d, name + ".json"), json.dumps(doc))
    subprocess.run(["flatc", "--binary", "-o", d, schema, src], check=True)
    # The schema's file_extension names the output; older schemas had none.
    out = os.path.join(d, name + ".loom")
    if os.path.exists(os.path.join(d, name + ".bin")):
        os.replace(os.path.join(d, name + ".bin"), out)
    return out


def run_cases(loom, work):
    d = os.path.join(work, "run")
    os.makedirs(d, exist_ok=True)
    program, x = compile_good(loom, d)
    with open(program, "rb") as f:
        good = f.read()
    cases = []

    def add_path(name, path, names=None, note="", flags=()):
        out = os.path.join(d, "out_" + name)
        cases.append(Case("run", name,
                          ["run", path, "--input", "X=" + x, "--output-dir",
                           out, *flags], names or os.path.basename(path),
                          note))

    def add(name, data, names=None, note="", flags=()):
        add_path(name, write(os.path.join(d, name + ".loom"), data), names,
                 note, flags)

    rng = random.Random(3)
    add("empty", b"")
    add("random_bytes", bytes(rng.randrange(256) for _ in range(4096)))
    add("random_with_identifier",
        b"\x08\0\0\0LOOM" + bytes(rng.randrange(256) for _ in range(4096)))
    add("header_only", good[:8])
    add("truncated_half", good[: len(good) // 2])
    add("truncated_three_quarters", good[: len(good) * 3 // 4])
    add("wrong_identifier", good[:4] + b"MOOL" + good[8:])
    add("root_offset_past_end", struct.pack("<I", 0xFFFFFFF0) + good[4:])
    add("root_offset_zero", struct.pack("<I", 0) + good[4:])
    root = struct.unpack_from("<I", good, 0)[0]
    vt = bytearray(good)
    struct.pack_into("<i", vt, root, -0x7FFFFFF0)
    add("vtable_offset_wild", bytes(vt))
    for seed, frac in ((1, 0.01), (2, 0.05), (3, 0.2), (4, 0.5)):
        r = random.Random(seed)
        b = bytearray(good)
        # The identifier is kept, so the verifier and checks are reached.
        for i in r.sample(range(8, len(b)), max(1, int(frac * len(b)))):
            b[i] ^= 0xFF
        add(f"flipped_{int(frac * 100)}pct_seed{seed}", bytes(b))
    add("text", b"LOOM program, honestly\n")
    # The payload checksum: bytes appended are refused naming the file (a
    # weight's flipped bit below); --ignore-checksum runs an edited file as
    # it stands, so flipped copies also reach the checks behind the
    # checksum.
    add("trailing_bytes", good + b"\0\0\0\0",
        "trailing_bytes.loom: 4 trailing bytes after the program's")
    for seed, frac in ((1, 0.01), (2, 0.05)):
        r = random.Random(seed)
        b = bytearray(good)
        for i in r.sample(range(8, len(b)), max(1, int(frac * len(b)))):
            b[i] ^= 0xFF
        add(f"flipped_{int(frac * 100)}pct_seed{seed}_unchecked", bytes(b),
            flags=("--ignore-checksum",))

    # Semantic corruptions: valid FlatBuffers that break the loader's
    # contract (edited through flatc's JSON form of the good program).
    doc = to_json(d, program)

    # One bit of a weight flipped: a valid file, refused by its checksum.
    weight = bytes(next(t["data"] for t in doc["tensors"] if t.get("data")))
    at = good.find(weight)
    assert at > 0, "the weight's bytes are not in the program file"
    one_bit = bytearray(good)
    one_bit[at] ^= 0x01
    add("weight_bit_flipped", bytes(one_bit),
        "weight_bit_flipped.loom: checksum mismatch")

    # (Hand edits: run with --ignore-checksum, as a user running an edited
    # file must, so that the loader's own check of each field is reached.)
    def sem(name, fn, names=None):
        t = json.loads(json.dumps(doc))
        fn(t)
        add_path(name, from_json(d, name, t), names,
                 flags=("--ignore-checksum",))

    sem("negative_tile_rows", lambda t: t.update(tile_rows=-4))
    sem("tile_grid_2p30", lambda t: t.update(tile_rows=2**30,
                                             tile_cols=2**30))
    sem("tensor_dims_2p40",
        lambda t: t["tensors"][0].update(shape=[2**40, 2**40]))
    sem("tensor_negative_dim",
        lambda t: t["tensors"][0].update(shape=[-2, 4]))
    sem("duplicate_tensor_id",
        lambda t: t["tensors"][1].update(id=t["tensors"][0]["id"]))
    sem("kernel_unknown_tensor",
        lambda t: t["kernels"][0]["inputs"].append(9999))
    sem("kernel_unknown_op",
        lambda t: t["kernels"][0]["ops"][0].update(name="frobnicate"))
    sem("instr_negative_start", lambda t: t["instrs"][0].update(start=-5))
    sem("instr_huge_duration",
        lambda t: t["instrs"][0].update(duration=2**62))
    sem("instr_unknown_dep", lambda t: t["instrs"][0]["deps"].append(9999))
    sem("buffer_outside_sram",
        lambda t: t["buffers"][0].update(offset=2**40))
    sem("buffer_live_backwards",
        lambda t: t["buffers"][0].update(live_start=10, live_end=2))
    sem("link_not_neighbours",
        lambda t: t["links"][0].update(from_tile=0, to_tile=15))
    sem("constant_data_short",
        lambda t: [c.update(data=c["data"][:-1]) for c in t["tensors"]
                   if c.get("data")])
    cases.append(Case("run", "missing_file",
                      ["run", os.path.join(d, "no-such-program.loom"),
                       "--timing-only"], "no-such-program.loom"))
    cases.append(Case("run", "directory", ["run", d, "--timing-only"], "run"))
    return cases


# ---------------------------------------------------------------------------
# loom run good.loom --input X=FILE
# ---------------------------------------------------------------------------

def input_cases(loom, work):
    d = os.path.join(work, "input")
    os.makedirs(d, exist_ok=True)
    program, _ = compile_good(loom, d)
    cases = []

    def add_path(name, path, names=None, note=""):
        cases.append(Case("input", name,
                          ["run", program, "--input", "X=" + path,
                           "--output-dir", os.path.join(d, "out_" + name)],
                          names or os.path.basename(path), note))

    def add(name, data, names=None, note="", ext=".npy"):
        add_path(name, write(os.path.join(d, name + ext), data), names, note)

    f32 = np.linspace(-1, 1, 8, dtype=np.float32).tobytes()
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
    rng = random.Random(4)
    add("empty", b"")
    add("bad_magic", npy(hdr, f32, magic=b"\x93NUMPZ"))
    add("text", b"1 2 3 4\n5 6 7 8\n")
    add("random_bytes", bytes(rng.randrange(256) for _ in range(1024)))
    add("magic_then_random",
        b"\x93NUMPY\x01\x00" + bytes(rng.randrange(256) for _ in range(512)))
    add("header_2p60_elements",
        npy("{'descr': '<f4', 'fortran_order': False, "
            "'shape': (1073741824, 1073741824), }", f32))
    add("header_2p40_elements",
        npy("{'descr': '<f4', 'fortran_order': False, "
            "'shape': (1099511627776,), }", f32))
    add("shape_overflows_64_bits",
        npy("{'descr': '<f4', 'fortran_order': False, "
            "'shape': (4294967296, 4294967296, 4294967296), }", f32))
    add("shape_number_overflows",
        npy("{'descr': '<f4', 'fortran_order': False, "
            "'shape': (99999999999999999999999,), }", f32))
    add("shape_negative",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }",
            f32))
    add("shape_not_a_tuple",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': 8, }", f32))
    add("shape_junk",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2x, 4), }",
            f32))
    add("truncated_data", npy(hdr, f32[:-5]))
    add("truncated_header", npy(hdr, f32)[:30])
    add("header_length_past_end",
        b"\x93NUMPY\x01\x00" + struct.pack("<H", 0xFFFF) + b"{'descr'")
    add("v2_header_length_2p31",
        b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**31) + b"{'descr'")
    add("version_9", npy(hdr, f32, version=1)[:6] + b"\x09\x00" +
        npy(hdr, f32)[8:])
    add("wrong_dtype_f64",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 4), }",
            np.zeros(8).tobytes()), names="'X'")
    add("wrong_shape",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }",
            f32), names="'X'")
    add("big_endian",
        npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 4), }",
            f32))
    add("complex_dtype",
        npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 4), }",
            f32 * 2))
    add("object_dtype",
        npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 4), }",
            f32 * 2))
    add("structured_dtype",
        npy("{'descr': [('a', '<f4')], 'fortran_order': False, "
            "'shape': (2, 4), }", f32))
    add("fortran_order",
        npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 4), }",
            f32))
    add("descr_missing",
        npy("{'fortran_order': False, 'shape': (2, 4), }", f32))
    add("header_not_a_dict", npy("hello", f32))
    add("rank_100",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
            "1, " * 100 + "), }", f32[:4]))
    add("pb_garbage", b"\xff\xff\xff\xff garbage", ext=".pb")
    # A TensorProto of another input: its name was ignored.
    add("pb_other_name",
        numpy_helper.from_array(
            np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),
            "W").SerializeToString(), names="'W'", ext=".pb")
    add_path("missing_file", os.path.join(d, "no-such-input.npy"))
    add_path("directory", d, names="input")
    return cases


GENERATORS = {"compile": compile_cases, "target": target_cases,
              "run": run_cases, "input": input_cases}


def make(loom, work, tools=TOOLS):
    cases = []
    for t in tools:
        cases += GENERATORS[t](loom, work)
    return cases


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for c in make(sys.argv[1], sys.argv[2], sys.argv[3:] or TOOLS):
        print(c.id, " ".join(c.args))


if __name__ == "__main__":
    main()
