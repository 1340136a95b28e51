#!/usr/bin/python3
"""Writes OUT.onnx: Relu of an input X whose shape is [batch, seq, 4], two
named dynamic dimensions (for the --dim tests of test/Compile/cli.test)."""
import sys

from onnx import TensorProto, helper

x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 4])
y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "seq", 4])
graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                          "two_dims", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
