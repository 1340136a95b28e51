#!/usr/bin/python3
"""Quantized ONNX models through Loom against ONNX Runtime.

Usage: quantized_vs_ort.py LOOM WORK_DIR [--models-only]

Builds three quantized models with onnx.helper, each with its own scales
and zero points:

- qdq_cnn: QuantizeLinear/DequantizeLinear (QDQ) around two Convs with
  per-channel int8 weights (axis 0) and int32 biases, uint8 activations,
  a MaxPool, an AveragePool, a residual Add and a Gemm (transB) with a
  per-tensor int8 weight;
- qlinear: the operator form, QLinearConv (per-channel weight scales,
  int32 bias) then QLinearMatMul on uint8 activations, and a
  MatMulInteger and a ConvInteger beside them;
- qdq_transformer: one transformer block in QDQ form (int8 activations
  with zero point 0, int8 weights): Q/K/V projections, Q.K^T, softmax,
  P.V, the output projection with a bias, a residual Add, LayerNorm and a
  two-layer MLP.

For each it runs `loom eval` and ONNX Runtime (scripts/ort/run.mjs) on the
same input and requires every output within one quantization step of the
output (its last QuantizeLinear's scale, plus 1e-6) of ONNX Runtime's;
then `loom check --target=tiny` (the compiled program, its matmul and
conv kernels at int8, on the simulator against the golden reference) and
`loom run` of the compiled program against ONNX Runtime within the same
step. Prints each largest difference in steps. Exits 1 naming the model
and output that differ. With --models-only it only writes the models (and
msft_qlinear_add.onnx, ONNX Runtime's com.microsoft QLinearAdd, which
Loom refuses naming the domain).
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
node = helper.make_node


def vi(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def arr(name, values, dtype):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


class Builder:
    """Collects nodes and initializers; names are unique by a counter."""

    def __init__(self, seed):
        self.nodes, self.inits = [], []
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def const(self, values, dtype, base="c"):
        n = self.name(base)
        self.inits.append(arr(n, values, dtype))
        return n

    def q(self, x, scale, zp, dtype):
        y = self.name("q")
        self.nodes.append(node("QuantizeLinear",
                               [x, self.const(scale, np.float32, "s"),
                                self.const(zp, dtype, "zp")], [y]))
        return y

    def dq(self, x, scale, zp, dtype, axis=None):
        y = self.name("dq")
        kw = {} if axis is None else {"axis": axis}
        self.nodes.append(node("DequantizeLinear",
                               [x, self.const(scale, np.float32, "s"),
                                self.const(zp, dtype, "zp")], [y], **kw))
        return y

    def qdq(self, x, scale, zp, dtype):
        return self.dq(self.q(x, scale, zp, dtype), scale, zp, dtype)

    def op(self, op_type, inputs, **attrs):
        y = self.name(op_type.lower())
        self.nodes.append(node(op_type, inputs, [y], **attrs))
        return y

    def weight(self, shape, per_axis=None, scale=0.02):
        """A DequantizeLinear of an int8 weight (zero point 0); per-axis
        scales along `per_axis` when given. Returns (value, scales)."""
        w = self.rng.integers(-63, 64, shape).astype(np.int8)
        if per_axis is None:
            s = np.float32(scale)
            return self.dq(self.const(w, np.int8, "w"), s, np.int8(0),
                           np.int8), s
        n = shape[per_axis]
        s = (scale * self.rng.uniform(0.5, 1.5, n)).astype(np.float32)
        return self.dq(self.const(w, np.int8, "w"), s, np.zeros(n, np.int8),
                       np.int8, axis=per_axis), s

    def bias(self, n, scale):
        """A DequantizeLinear of an int32 bias at scale `scale`."""
        b = self.rng.integers(-2000, 2000, n).astype(np.int32)
        scale = np.asarray(scale, np.float32)
        kw = {} if scale.ndim == 0 else {"axis": 0}
        y = self.name("bias")
        self.nodes.append(node("DequantizeLinear",
                               [self.const(b, np.int32, "b"),
                                self.const(scale, np.float32, "s")], [y],
                               **kw))
        return y

    def model(self, name, inputs, outputs, opset=13):
        graph = helper.make_graph(self.nodes, name, inputs, outputs,
                                  self.inits)
        m = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="loom-e2e")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


U8, I8 = np.uint8, np.int8


def qdq_cnn():
    """Returns (model, {output: step})."""
    b = Builder(1)
    sx = np.float32(2.0 / 255)
    x = b.qdq("X", sx, U8(128), U8)
    w1, s1 = b.weight([8, 3, 3, 3], per_axis=0, scale=0.05)
    c1 = b.op("Conv", [x, w1, b.bias(8, sx * s1)], pads=[1, 1, 1, 1])
    r1 = b.op("Relu", [c1])
    sa = np.float32(0.04)
    a1 = b.qdq(r1, sa, U8(0), U8)
    p1 = b.qdq(b.op("MaxPool", [a1], kernel_shape=[2, 2], strides=[2, 2]),
               sa, U8(0), U8)
    w2, s2 = b.weight([8, 8, 3, 3], per_axis=0, scale=0.03)
    c2 = b.op("Conv", [p1, w2, b.bias(8, sa * s2)], pads=[1, 1, 1, 1])
    sc = np.float32(0.05)
    a2 = b.qdq(c2, sc, U8(128), U8)
    res = b.qdq(b.op("Add", [a2, p1]), sc, U8(128), U8)
    pool = b.qdq(b.op("AveragePool", [res], kernel_shape=[4, 4]), sc,
                 U8(128), U8)
    flat = b.op("Flatten", [pool])
    w3 = b.const(b.rng.integers(-63, 64, [10, 8]).astype(I8), I8, "w")
    s3 = np.float32(0.04)
    w3dq = b.dq(w3, s3, I8(0), I8)
    g = b.op("Gemm", [flat, w3dq, b.bias(10, sc * s3)], transB=1)
    sy = np.float32(0.02)
    y = b.dq(b.q(g, sy, U8(128), U8), sy, U8(128), U8)
    b.nodes.append(node("Identity", [y], ["Y"]))
    m = b.model("qdq_cnn", [vi("X", [1, 3, 8, 8])], [vi("Y", [1, 10])])
    return m, {"Y": float(sy)}


def qlinear():
    b = Builder(2)
    sx = np.float32(2.0 / 255)
    xq = b.q("X", sx, U8(128), U8)
    w = b.rng.integers(-63, 64, [4, 3, 3, 3]).astype(I8)
    sw = (0.05 * b.rng.uniform(0.5, 1.5, 4)).astype(np.float32)
    bias = b.rng.integers(-500, 500, 4).astype(np.int32)
    sc = np.float32(0.05)
    conv = b.op("QLinearConv", [xq, b.const(sx, np.float32),
                                b.const(U8(128), U8),
                                b.const(w, I8, "w"), b.const(sw, np.float32),
                                b.const(np.zeros(4, I8), I8),
                                b.const(sc, np.float32), b.const(U8(100), U8),
                                b.const(bias, np.int32, "b")],
                pads=[1, 1, 1, 1], strides=[2, 2])
    flat = b.op("Reshape", [conv, b.const([1, 4, 16], np.int64)])
    wm = b.rng.integers(-63, 64, [16, 8]).astype(I8)
    sm = np.float32(0.03)
    sy = np.float32(0.04)
    mm = b.op("QLinearMatMul", [flat, b.const(sc, np.float32),
                                b.const(U8(100), U8),
                                b.const(wm, I8, "w"), b.const(sm, np.float32),
                                b.const(I8(0), I8),
                                b.const(sy, np.float32), b.const(U8(120), U8)])
    b.nodes.append(node("DequantizeLinear",
                        [mm, b.const(sy, np.float32), b.const(U8(120), U8)],
                        ["Y"]))
    # The integer forms beside them: int32 results, exact.
    mmi = b.op("MatMulInteger", [flat, b.const(wm, I8, "w"),
                                 b.const(U8(100), U8), b.const(I8(3), I8)])
    b.nodes.append(node("Cast", [mmi], ["Z"], to=FLOAT))
    ci = b.op("ConvInteger", [xq, b.const(w, I8, "w"), b.const(U8(128), U8)],
              pads=[0, 0, 0, 0])
    b.nodes.append(node("Cast", [ci], ["C"], to=FLOAT))
    m = b.model("qlinear", [vi("X", [1, 3, 8, 8])],
                [vi("Y", [1, 4, 8]), vi("Z", [1, 4, 8]), vi("C", [1, 4, 6, 6])],
                opset=10 + 3)
    return m, {"Y": float(sy), "Z": 0.0, "C": 0.0}


def qdq_transformer():
    b = Builder(3)
    seq, d, ff = 8, 16, 32
    sx = np.float32(0.03)
    x = b.qdq("X", sx, I8(0), I8)

    def linear(v, n_in, n_out, s_in, s_out, per_axis=True):
        w, sw = b.weight([n_in, n_out], per_axis=1 if per_axis else None,
                         scale=0.04)
        mm = b.op("MatMul", [v, w])
        out = b.op("Add", [mm, b.bias(n_out, s_in * sw)])
        return b.qdq(out, s_out, I8(0), I8)

    sq = np.float32(0.05)
    q = linear(x, d, d, sx, sq / 4)
    k = linear(x, d, d, sx, sq)
    v = linear(x, d, d, sx, sq, per_axis=False)
    kt = b.op("Transpose", [k], perm=[0, 2, 1])
    # The 1/sqrt(d) of the scores is in q's scale (sq/4), and the scores
    # go to the softmax unquantized: ONNX Runtime rewrites a Mul after a
    # QDQ MatMul, and DequantizeLinear -> Softmax -> QuantizeLinear, in its
    # own approximations (31 and 9 steps of Y here).
    scores = b.op("MatMul", [q, kt])
    probs = b.op("Softmax", [scores], axis=-1)
    sp = np.float32(1.0 / 255)
    probs = b.qdq(probs, sp, U8(0), U8)
    ctx = b.qdq(b.op("MatMul", [probs, v]), sq, I8(0), I8)
    so = np.float32(0.05)
    attn = linear(ctx, d, d, sq, so)
    res = b.qdq(b.op("Add", [attn, x]), so, I8(0), I8)
    ln = b.op("LayerNormalization",
              [res, b.const(np.ones(d), np.float32),
               b.const(np.zeros(d), np.float32)], axis=-1, epsilon=1e-5)
    sl = np.float32(0.03)
    ln = b.qdq(ln, sl, I8(0), I8)
    h = linear(ln, d, ff, sl, np.float32(0.05))
    h = b.qdq(b.op("Relu", [h]), np.float32(0.05), I8(0), I8)
    sy = np.float32(0.05)
    out = linear(h, ff, d, np.float32(0.05), sy)
    b.nodes.append(node("Identity", [out], ["Y"]))
    m = b.model("qdq_transformer", [vi("X", [1, seq, d])],
                [vi("Y", [1, seq, d])], opset=17)
    return m, {"Y": float(sy)}


def msft_qlinear_add():
    """ONNX Runtime's com.microsoft QLinearAdd, which Loom refuses."""
    f, u8 = TensorProto.FLOAT, TensorProto.UINT8
    names = ["A", "as", "az", "B", "bs", "bz", "cs", "cz"]
    elems = [u8, f, u8, u8, f, u8, f, u8]
    n = node("QLinearAdd", names, ["C"], domain="com.microsoft", name="qadd")
    graph = helper.make_graph(
        [n], "msft", [vi(x, [2] if e == u8 and len(x) == 1 else [], e)
                      for x, e in zip(names, elems)], [vi("C", [2], u8)])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


MODELS = (("qdq_cnn", qdq_cnn), ("qlinear", qlinear),
          ("qdq_transformer", qdq_transformer))


def run(command):
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def compare(name, how, got_dir, want_dir, steps, failures):
    worst = []
    for out, step in steps.items():
        got = np.load(os.path.join(got_dir, out + ".npy")).astype(np.float64)
        want = np.load(os.path.join(want_dir, out + ".npy")).astype(np.float64)
        if got.shape != want.shape:
            failures.append("%s: %s output %s has shape %s, ONNX Runtime %s"
                            % (name, how, out, got.shape, want.shape))
            continue
        diff = float(np.max(np.abs(got - want))) if got.size else 0.0
        worst.append("%s %.3g steps" % (out, diff / step) if step else
                     "%s %.3g (exact)" % (out, diff))
        if diff > step + 1e-6:
            failures.append("%s: %s output %s differs from ONNX Runtime by "
                            "%g, more than one step (%g)"
                            % (name, how, out, diff, step))
    return ", ".join(worst)


def main():
    loom, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    if "--models-only" in sys.argv:
        for name, build in MODELS:
            onnx.save(build()[0], os.path.join(work, name + ".onnx"))
        onnx.save(msft_qlinear_add(), os.path.join(work, "msft_qlinear_add.onnx"))
        return 0
    nodejs = os.environ.get("NODE", "node")
    failures = []
    for name, build in MODELS:
        model, steps = build()
        before = len(failures)
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        shape = [d.dim_value for d in
                 model.graph.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(7).uniform(-1, 1, shape).astype(np.float32)
        x_path = os.path.join(work, name + "_x.npy")
        np.save(x_path, x)
        out = {k: os.path.join(work, name + "_" + k)
               for k in ("eval", "ort", "run")}
        rc, text = run([nodejs, os.path.join(ROOT, "scripts", "ort",
                                             "run.mjs"),
                        path, "--input", "X=" + x_path, "--output-dir",
                        out["ort"]])
        if rc:
            failures.append("%s: ONNX Runtime failed: %s" % (name, text.strip()))
            continue
        rc, text = run([loom, "eval", path, "--input", "X=" + x_path,
                        "--output-dir", out["eval"]])
        if rc:
            failures.append("%s: loom eval failed: %s" % (name, text.strip()))
            continue
        eval_worst = compare(name, "loom eval", out["eval"], out["ort"], steps,
                             failures)
        rc, text = run([loom, "check", path, "--target=tiny", "--input",
                        "X=" + x_path])
        if rc or "check passed" not in text:
            failures.append("%s: loom check failed: %s" % (name, text.strip()))
            continue
        prog = os.path.join(work, name + ".loom")
        rc, text = run([loom, "compile", path, "--target=tiny", "-o", prog])
        if rc:
            failures.append("%s: loom compile failed: %s"
                            % (name, text.strip()))
            continue
        rc, text = run([loom, "run", prog, "--input", "X=" + x_path,
                        "--output-dir", out["run"]])
        if rc:
            failures.append("%s: loom run failed: %s" % (name, text.strip()))
            continue
        run_worst = compare(name, "loom run", out["run"], out["ort"], steps,
                            failures)
        if len(failures) > before:
            continue
        print("PASS %s: eval vs ONNX Runtime: %s; simulator vs ONNX Runtime: "
              "%s" % (name, eval_worst, run_worst))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
