"""Shared pieces of the Python tests (test/python/): ONNX Runtime as a peer,
and comparison helpers.

ONNX Runtime runs as in test/e2e/compiled_vs_ort.sh: inputs are written as
.npy files and `node scripts/ort/run.mjs MODEL --input NAME=FILE.npy ...
--output-dir DIR` writes each output as DIR/<sanitized name>.npy.

Environment: NODE (default "node").
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_MJS = os.path.join(ROOT, "scripts", "ort", "run.mjs")
MAKE_INPUTS = os.path.join(ROOT, "test", "e2e", "make_inputs.py")


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def make_inputs(model, out_dir, seed=0):
    """test/e2e/make_inputs.py's inputs for `model`: {name: ndarray}."""
    fresh_dir(out_dir)
    line = subprocess.run([sys.executable, MAKE_INPUTS, model, out_dir, "--seed", str(seed)],
                          check=True, capture_output=True, text=True).stdout.split()
    inputs = {}
    for flag, arg in zip(line[::2], line[1::2]):
        assert flag == "--input", line
        name, path = arg.split("=", 1)
        inputs[name] = np.load(path)
    return inputs


def run_ort(model, inputs, work_dir, output_names):
    """ONNX Runtime (CPU, fp32) on `inputs` ({name: ndarray}): {name: ndarray}."""
    in_dir = fresh_dir(os.path.join(work_dir, "inputs"))
    out_dir = fresh_dir(os.path.join(work_dir, "ort"))
    cmd = [os.environ.get("NODE", "node"), RUN_MJS, model]
    for name, value in inputs.items():
        path = os.path.join(in_dir, sanitize(name) + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--output-dir", out_dir]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"ONNX Runtime failed: {proc.stderr.strip()}"
    return {name: np.load(os.path.join(out_dir, sanitize(name) + ".npy"))
            for name in output_names}


def assert_close(actual, expected, rtol, atol, what):
    """numpy.allclose semantics, with a message naming the worst element."""
    assert actual.shape == expected.shape, \
        f"{what}: shape {actual.shape}, expected {expected.shape}"
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    err = np.abs(a - e)
    tol = atol + rtol * np.abs(e)
    bad = ~(err <= tol)
    if bad.any():
        i = np.unravel_index(int(np.argmax(np.where(bad, err - tol, -np.inf))), e.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {e.size} elements differ (rtol {rtol}, atol {atol}); "
            f"max abs err {float(err.max()):.3g}; worst at {i}: {a[i]!r} vs {e[i]!r}")
    return float(err.max())
