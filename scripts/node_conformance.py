#!/usr/bin/python3
"""The independent conformance check: `loom eval` on ONNX's node test cases.

For each case folder (model.onnx, test_data_set_*/input_K.pb and
output_K.pb) this runs the user command

    loom eval CASE/model.onnx --input NAME=CASE/test_data_set_N/input_K.pb ...
        --output-dir TMP

with the case's inputs exactly as given (nothing frozen, no dimension bound
by hand), then compares every output file Loom wrote with the expected
output_K.pb using NumPy, at the tolerances of ONNX's backend test runner
(rtol 1e-3, atol 1e-7; the element type and shape must match; NaN matches
NaN; integers and booleans exactly). Nothing Loom reports about itself
decides a pass: only the files it wrote and the test data.

Each `loom eval` runs with a time limit; a crash (a signal, or an exit code
other than 0 and 1) or a hang is counted and named. The run prints one line
per failing case, then the failures grouped by reason and by operator, and
the totals. With --min-pass N it exits 1 if fewer than N cases pass, or if
anything crashed or hung.

Needs Debian's python3-onnx and python3-numpy (run it with /usr/bin/python3):

    /usr/bin/python3 scripts/node_conformance.py build/bin/loom \\
        /usr/share/libonnx-testdata/data/node -j 2
"""

import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7


def sorted_files(folder, prefix):
    """input_10.pb sorts after input_9.pb."""
    names = [f for f in os.listdir(folder)
             if f.startswith(prefix) and f.endswith(".pb")]
    return [os.path.join(folder, f)
            for f in sorted(names, key=lambda f: int(f[len(prefix):-3]))]


def output_file_name(name):
    """Loom's output file for an output name (docs: characters outside
    [A-Za-z0-9._-] become '_')."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def read_expected(path):
    """An expected output as NumPy, or None if it is not a plain tensor
    (a sequence or an optional)."""
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        data = f.read()
    try:
        tensor.ParseFromString(data)
    except Exception:
        return None
    if not tensor.dims and not tensor.raw_data and tensor.data_type == 0:
        return None
    return numpy_helper.to_array(tensor), tensor.data_type


def bf16_values(bits):
    """bfloat16 bit patterns (uint16) as float32 values."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def compare(expected, data_type, actual, declared):
    """'' when `actual` matches, else why not. `declared` is the model's
    element type for the output."""
    if declared == onnx.TensorProto.BFLOAT16:
        # NumPy has no bfloat16. Loom writes its two bytes as a void dtype;
        # ONNX 1.12's test data stores the bit patterns as uint16 (or the
        # type BFLOAT16, which numpy_helper widens to float32).
        if actual.dtype.kind == "V" and actual.dtype.itemsize == 2:
            actual = bf16_values(actual.view(np.uint16))
        if expected.dtype == np.uint16:
            expected = bf16_values(expected)
        expected = expected.astype(np.float32)
        actual = actual.astype(np.float32)
    if expected.dtype != actual.dtype:
        return "element type %s, expected %s" % (actual.dtype, expected.dtype)
    if expected.shape != actual.shape:
        return "shape %s, expected %s" % (list(actual.shape),
                                          list(expected.shape))
    if expected.dtype.kind in "fc":
        close = np.isclose(actual, expected, rtol=RTOL, atol=ATOL,
                           equal_nan=True)
    else:
        close = actual == expected
    if close.all():
        return ""
    bad = int(np.argmin(close.reshape(-1)))
    return "%d of %d elements differ (first: element %d is %r, expected %r)" % (
        int((~close).sum()), close.size, bad, actual.reshape(-1)[bad].item(),
        expected.reshape(-1)[bad].item())


def model_info(model_path):
    """(names of the graph inputs that are not initializers, (name, element
    type) of each output, operator types of the nodes)."""
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [(o.name, o.type.tensor_type.elem_type)
               for o in model.graph.output]
    ops = sorted({n.op_type for n in model.graph.node})
    return inputs, outputs, ops


def run_case(loom, case, timeout):
    """(status, reason): status is PASS, FAIL, CRASH or TIMEOUT."""
    model = os.path.join(case, "model.onnx")
    inputs, outputs, _ = model_info(model)
    sets = sorted(d for d in os.listdir(case) if d.startswith("test_data_set_"))
    if not sets:
        return "FAIL", "test data: no test_data_set_* folder"
    for s in sets:
        folder = os.path.join(case, s)
        given = sorted_files(folder, "input_")
        expected = sorted_files(folder, "output_")
        if len(given) > len(inputs):
            return "FAIL", "test data: more inputs than the model has"
        command = [loom, "eval", model]
        for name, path in zip(inputs, given):
            command += ["--input", "%s=%s" % (name, path)]
        out_dir = tempfile.mkdtemp(prefix="loom-node-")
        try:
            command += ["--output-dir", out_dir]
            try:
                proc = subprocess.run(command, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "TIMEOUT", "loom eval: over %d s" % timeout
            if proc.returncode < 0:
                return "CRASH", "loom eval: signal %s" % signal.Signals(
                    -proc.returncode).name
            if proc.returncode != 0:
                lines = proc.stderr.decode(errors="replace").strip().splitlines()
                if proc.returncode != 1 or len(lines) != 1:
                    return "CRASH", "loom eval: exit code %d, %d lines on stderr" % (
                        proc.returncode, len(lines))
                return "FAIL", "loom eval: " + lines[0]
            for k, path in enumerate(expected):
                exp = read_expected(path)
                if exp is None:
                    return "FAIL", "test data: output %d is not a tensor" % k
                if k >= len(outputs):
                    return "FAIL", "model has fewer outputs than the test data"
                name, declared = outputs[k]
                written = os.path.join(out_dir, output_file_name(name))
                if not os.path.exists(written):
                    return "FAIL", "output '%s' not written" % name
                actual = np.load(written, allow_pickle=False)
                diff = compare(exp[0], exp[1], actual, declared)
                if diff:
                    return "FAIL", "%s output %d: %s" % (s, k, diff)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
    return "PASS", ""


def reason_group(reason):
    """A failure reason without the names of its file, node and values, so
    that failures of one kind fall into one group."""
    r = reason
    r = re.sub(r"^loom eval: loom: /\S+: ", "loom eval: ", r)
    r = re.sub(r"node '[^']*' \(([A-Za-z0-9_]+)\)", r"node (\1)", r)
    r = re.sub(r"'[^']*'", "'…'", r)
    r = re.sub(r"test_data_set_\d+ ", "", r)
    r = re.sub(r"\(first: .*\)", "", r)
    r = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", r)
    return r.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("loom", help="the loom binary")
    parser.add_argument("data", help="the node test cases' folder")
    parser.add_argument("-j", type=int, default=2, help="cases run at once")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds per loom eval")
    parser.add_argument("--filter", default="", help="only cases containing this")
    parser.add_argument("--min-pass", type=int, default=None,
                        help="fail if fewer cases pass")
    parser.add_argument("--report", help="also write every case's line here")
    args = parser.parse_args()

    cases = sorted(os.path.join(args.data, d) for d in os.listdir(args.data)
                   if args.filter in d and
                   os.path.isfile(os.path.join(args.data, d, "model.onnx")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        results = list(pool.map(
            lambda c: run_case(args.loom, c, args.timeout), cases))

    counts = collections.Counter(status for status, _ in results)
    by_reason = collections.defaultdict(list)
    by_op = collections.defaultdict(list)
    lines = []
    for case, (status, reason) in zip(cases, results):
        name = os.path.basename(case)
        lines.append("%s %s%s" % (status, name, " " + reason if reason else ""))
        if status == "PASS":
            continue
        print("%s %s: %s" % (status, name, reason))
        by_reason["%s %s" % (status, reason_group(reason))].append(name)
        by_op["/".join(model_info(os.path.join(case, "model.onnx"))[2])].append(
            name)
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")

    print("\nfailures by reason:")
    for reason, names in sorted(by_reason.items(),
                                key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        print("  %4d  %s  [%s]" % (len(names), reason, shown))
    print("\nfailures by operator:")
    for op, names in sorted(by_op.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print("  %4d  %s" % (len(names), op))
    total = len(cases)
    print("\nnode cases: %d, pass %d, fail %d, crash %d, timeout %d" % (
        total, counts["PASS"], counts["FAIL"], counts["CRASH"],
        counts["TIMEOUT"]))
    ok = True
    if counts["CRASH"] or counts["TIMEOUT"]:
        print("FAILED: %d cases crashed and %d hung" % (counts["CRASH"],
                                                        counts["TIMEOUT"]))
        ok = False
    if args.min_pass is not None and counts["PASS"] < args.min_pass:
        print("FAILED: %d pass, below the floor of %d" % (counts["PASS"],
                                                          args.min_pass))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
