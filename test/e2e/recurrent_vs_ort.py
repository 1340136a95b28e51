#!/usr/bin/python3
"""Recurrent nets (RNN, GRU, LSTM) through Loom against ONNX Runtime.

Usage: recurrent_vs_ort.py LOOM WORK_DIR

Builds small models with fixed random weights (onnx.helper, opset 14):
each cell forward, reverse and bidirectional, with sequence lengths,
initial states, clip, LSTM peepholes, GRU's linear_before_reset, lists of
activations with their alphas and betas, the batch-first layout, and a
two-layer LSTM and a bidirectional GRU. For each it runs

  1. `loom eval` and ONNX Runtime (scripts/ort/run.mjs) on the same inputs
     and compares every output (rtol 1e-4, atol 1e-5);
  2. `loom check --target=tiny` with those inputs: the compiled program on
     the simulator against the golden reference, every output and kernel.

ONNX Runtime has no batch-first (layout=1) kernels, so a layout=1 model is
compared with ORT on the same model at layout 0, its inputs and outputs
transposed. Exits 1 naming the model and output that differ.
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
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def cell_node(rng, op, name, x, outs, direction="forward", layout=0,
              lens=None, states=(), clip=None, peepholes=False, lbr=None,
              activations=None, alphas=None, betas=None, input_size=4,
              hidden=5, batch=3):
    """One recurrent node with its weights as initializers."""
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    inits = [
        numpy_helper.from_array(rng.uniform(-0.5, 0.5, (dirs, g * hidden,
                                input_size)).astype(np.float32), name + "_W"),
        numpy_helper.from_array(rng.uniform(-0.5, 0.5, (dirs, g * hidden,
                                hidden)).astype(np.float32), name + "_R"),
        numpy_helper.from_array(rng.uniform(-0.5, 0.5, (dirs, 2 * g * hidden))
                                .astype(np.float32), name + "_B"),
    ]
    inputs = [x, name + "_W", name + "_R", name + "_B", "", "", ""]
    if lens is not None:
        inits.append(numpy_helper.from_array(np.array(lens, dtype=np.int32),
                                             name + "_lens"))
        inputs[4] = name + "_lens"
    for k, s in enumerate(states):
        inputs[5 + k] = s
    if peepholes:
        inputs += [""] * (7 - len(inputs))
        inits.append(numpy_helper.from_array(
            rng.uniform(-0.5, 0.5, (dirs, 3 * hidden)).astype(np.float32),
            name + "_P"))
        inputs.append(name + "_P")
    while inputs[-1] == "":
        inputs.pop()
    attrs = dict(hidden_size=hidden, direction=direction)
    if layout:
        attrs["layout"] = layout
    if clip:
        attrs["clip"] = clip
    if lbr is not None:
        attrs["linear_before_reset"] = lbr
    if activations:
        attrs["activations"] = activations
    if alphas:
        attrs["activation_alpha"] = alphas
    if betas:
        attrs["activation_beta"] = betas
    return helper.make_node(op, inputs, outs, name=name, **attrs), inits


def single(op, seed, steps=5, batch=3, input_size=4, hidden=5, layout=0,
           initial=False, **kw):
    """A model of one cell; returns (model, feeds)."""
    rng = np.random.default_rng(seed)
    dirs = 2 if kw.get("direction") == "bidirectional" else 1
    x_shape = [batch, steps, input_size] if layout else [steps, batch,
                                                         input_size]
    feeds = {"X": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    states = []
    if initial:
        s_shape = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
        for s in ["h0"] + (["c0"] if op == "LSTM" else []):
            feeds[s] = rng.uniform(-1, 1, s_shape).astype(np.float32)
            states.append(s)
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node, inits = cell_node(rng, op, op.lower(), "X", outs, layout=layout,
                            states=states, input_size=input_size,
                            hidden=hidden, batch=batch, **kw)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(k, FLOAT, v.shape)
         for k, v in feeds.items()],
        [helper.make_tensor_value_info(o, FLOAT, None) for o in outs], inits)
    return finish(graph), feeds


def two_layer_lstm(seed):
    """LSTM -> drop the direction axis -> LSTM, with Y_h of both layers."""
    rng = np.random.default_rng(seed)
    feeds = {"X": rng.uniform(-1, 1, (6, 2, 4)).astype(np.float32)}
    l1, i1 = cell_node(rng, "LSTM", "lstm1", "X", ["Y1", "H1"], hidden=5,
                       batch=2)
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    sq = helper.make_node("Squeeze", ["Y1", "axes"], ["Y1s"], name="squeeze")
    l2, i2 = cell_node(rng, "LSTM", "lstm2", "Y1s", ["Y", "H2"],
                       input_size=5, hidden=3, batch=2)
    graph = helper.make_graph(
        [l1, sq, l2], "two_layer_lstm",
        [helper.make_tensor_value_info("X", FLOAT, [6, 2, 4])],
        [helper.make_tensor_value_info(o, FLOAT, None)
         for o in ("Y", "H1", "H2")], i1 + i2 + [axes])
    return finish(graph), feeds


def finish(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                          producer_name="loom-e2e")
    m.ir_version = 8
    return m


CASES = {
    "rnn_bidirectional": lambda: single("RNN", 1, direction="bidirectional"),
    "rnn_reverse_lens_initial": lambda: single(
        "RNN", 2, direction="reverse", lens=[5, 2, 3], initial=True),
    "rnn_activations": lambda: single(
        "RNN", 3, direction="bidirectional", activations=["Relu", "Affine"],
        alphas=[0.5], betas=[0.1]),
    "gru_bidirectional": lambda: single("GRU", 4, direction="bidirectional",
                                        initial=True),
    "gru_reset_after_clip": lambda: single("GRU", 5, lbr=1, clip=0.7),
    "gru_reverse_lens": lambda: single("GRU", 6, direction="reverse", lbr=1,
                                       lens=[4, 5, 2]),
    "gru_batch_first_bidirectional_lens": lambda: single(
        "GRU", 7, direction="bidirectional", layout=1, lens=[3, 5, 1],
        initial=True),
    "lstm_bidirectional_peepholes_lens": lambda: single(
        "LSTM", 8, direction="bidirectional", peepholes=True, initial=True,
        lens=[5, 1, 3]),
    "lstm_batch_first_clip": lambda: single("LSTM", 9, layout=1, clip=0.5,
                                            initial=True),
    "lstm_activations": lambda: single(
        "LSTM", 10, activations=["HardSigmoid", "LeakyRelu", "ScaledTanh"],
        alphas=[0.3, 0.05, 0.9], betas=[0.4, 1.2]),
    "lstm_two_layers": lambda: two_layer_lstm(11),
}


def as_layout0(model, feeds):
    """The same model at layout 0, with its inputs transposed; and how to
    transpose its outputs back (by output name)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    node = m.graph.node[0]
    for a in list(node.attribute):
        if a.name == "layout":
            node.attribute.remove(a)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        d0, d1 = dims[0].dim_value, dims[1].dim_value
        dims[0].dim_value, dims[1].dim_value = d1, d0
    out = {k: np.ascontiguousarray(v.transpose(1, 0, 2))
           for k, v in feeds.items()}
    back = {"Y": (2, 0, 1, 3), "Y_h": (1, 0, 2), "Y_c": (1, 0, 2)}
    return m, out, back


def run(command):
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    loom, work = sys.argv[1], sys.argv[2]
    node = os.environ.get("NODE", "node")
    failures = []
    for name, build in CASES.items():
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        model, feeds = build()
        path = os.path.join(d, "model.onnx")
        onnx.save(model, path)
        args = []
        for k, v in feeds.items():
            np.save(os.path.join(d, k + ".npy"), v)
            args += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
        rc, text = run([loom, "eval", path, *args, "--output-dir",
                        os.path.join(d, "loom")])
        if rc:
            failures.append("%s: loom eval failed: %s" % (name, text.strip()))
            continue
        layout1 = any(a.name == "layout" and a.i == 1
                      for a in model.graph.node[0].attribute)
        ort_model, ort_feeds, back = (as_layout0(model, feeds) if layout1
                                      else (model, feeds, {}))
        ort_path = os.path.join(d, "ort.onnx")
        onnx.save(ort_model, ort_path)
        ort_args = []
        for k, v in ort_feeds.items():
            np.save(os.path.join(d, k + ".ort.npy"), v)
            ort_args += ["--input", "%s=%s" % (k, os.path.join(d, k + ".ort.npy"))]
        rc, text = run([node, os.path.join(ROOT, "scripts", "ort", "run.mjs"),
                        ort_path, *ort_args, "--output-dir",
                        os.path.join(d, "ort")])
        if rc:
            failures.append("%s: ONNX Runtime failed: %s" % (name, text.strip()))
            continue
        for out in model.graph.output:
            got = np.load(os.path.join(d, "loom", out.name + ".npy"))
            want = np.load(os.path.join(d, "ort", out.name + ".npy"))
            if out.name in back:
                want = want.transpose(back[out.name])
            if got.shape != want.shape or not np.allclose(
                    got, want, rtol=1e-4, atol=1e-5):
                failures.append("%s: output %s differs from ONNX Runtime "
                                "(shape %s vs %s, max abs err %s)" % (
                                    name, out.name, got.shape, want.shape,
                                    np.abs(got - want).max()
                                    if got.shape == want.shape else "-"))
        rc, text = run([loom, "check", path, "--target=tiny", *args])
        if rc or "check passed" not in text:
            failures.append("%s: loom check failed: %s" % (
                name, text.strip().splitlines()[0] if text.strip() else rc))
            continue
        print("PASS %s (eval vs ONNX Runtime, compiled vs reference)" % name)
    for f in failures:
        print("FAIL " + f)
    print("%d models, %d failures" % (len(CASES), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
