#!/usr/bin/python3
"""Write deterministic random inputs for an ONNX model as .npy files.

usage: make_inputs.py MODEL.onnx OUT_DIR [--seed S]

For every graph input (initializers listed as inputs are skipped) writes
OUT_DIR/<input name>.npy, where characters outside [A-Za-z0-9._-] in the name
become '_' (the same rule as scripts/ort/run.mjs uses for outputs), and prints
the matching arguments on one line:

    --input NAME=OUT_DIR/NAME.npy --input ...

Values, from numpy's default_rng(S) (S defaults to 0), in graph input order:
  float types     standard normal
  integer types   uniform in [0, vocab): vocab is the row count of the
                  embedding table, i.e. the initializer that a Gather takes
                  as data with this input (possibly through Cast/Reshape/...)
                  as indices; else the "high" recorded for the input in a
                  <model>.inputs.json next to the model (export_zoo.py writes
                  one); else 100
  bool            uniform True/False
Symbolic or unknown dimensions are set to 1 (with a note on stderr).
Paths are printed without quoting: keep OUT_DIR free of whitespace.

Must run with Debian's /usr/bin/python3 (numpy, onnx).
"""

import argparse
import json
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto

DEFAULT_VOCAB = 100

NP_DTYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT16: np.float16,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.INT16: np.int16,
    TensorProto.INT8: np.int8,
    TensorProto.UINT8: np.uint8,
    TensorProto.UINT16: np.uint16,
    TensorProto.BOOL: np.bool_,
}

# Ops an index tensor may pass through on its way to the embedding Gather.
PASS_THROUGH = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Expand"}


def sanitize(name):
    # As loom's rt::sanitizeFileName (a leading '.' too: no hidden files).
    return re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9._-]", "_", name or "_"))


def vocab_from_graph(graph, input_name):
    """Row count of the embedding table gathered with this input, or None."""
    inits = {i.name: i for i in graph.initializer}
    consumers = {}
    for node in graph.node:
        for i, x in enumerate(node.input):
            consumers.setdefault(x, []).append((node, i))
    sizes = []
    frontier, seen = [input_name], {input_name}
    while frontier:
        value = frontier.pop()
        for node, idx in consumers.get(value, []):
            if node.op_type == "Gather" and idx == 1 and node.input[0] in inits:
                dims = list(inits[node.input[0]].dims)
                axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                if dims:
                    sizes.append(dims[axis % len(dims)])
            elif node.op_type in PASS_THROUGH and idx == 0:
                for out in node.output:
                    if out not in seen:
                        seen.add(out)
                        frontier.append(out)
    return min(sizes) if sizes else None


def vocab_from_sidecar(model_path, input_name):
    base = model_path[:-5] if model_path.endswith(".onnx") else model_path
    try:
        with open(base + ".inputs.json") as f:
            desc = json.load(f)
        for inp in desc.get("inputs", []):
            if inp.get("name") == input_name and "high" in inp:
                return int(inp["high"])
    except (OSError, ValueError):
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description="Write deterministic random .npy inputs for an ONNX model.")
    ap.add_argument("model", metavar="MODEL.onnx")
    ap.add_argument("out_dir", metavar="OUT_DIR")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    try:
        model = onnx.load(args.model, load_external_data=False)
    except Exception as e:
        sys.exit(f"make_inputs.py: error: cannot load {args.model}: {e}")
    graph = model.graph
    init_names = {i.name for i in graph.initializer}
    os.makedirs(args.out_dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    parts = []
    for inp in graph.input:
        if inp.name in init_names:
            continue
        tt = inp.type.tensor_type
        if tt.elem_type not in NP_DTYPES:
            sys.exit(f"make_inputs.py: error: input '{inp.name}' has unsupported element type "
                     f"{TensorProto.DataType.Name(tt.elem_type)}")
        dtype = NP_DTYPES[tt.elem_type]
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                shape.append(d.dim_value)
            else:
                print(f"make_inputs.py: note: input '{inp.name}' dimension "
                      f"'{d.dim_param or '?'}' set to 1", file=sys.stderr)
                shape.append(1)

        if np.issubdtype(dtype, np.floating):
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype is np.bool_:
            value = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            vocab = (vocab_from_graph(graph, inp.name)
                     or vocab_from_sidecar(args.model, inp.name) or DEFAULT_VOCAB)
            vocab = min(vocab, int(np.iinfo(dtype).max) + 1)
            value = rng.integers(0, vocab, shape).astype(dtype)

        path = os.path.join(args.out_dir, sanitize(inp.name) + ".npy")
        np.save(path, value)
        parts.append(f"--input {inp.name}={path}")

    print(" ".join(parts))


if __name__ == "__main__":
    main()
