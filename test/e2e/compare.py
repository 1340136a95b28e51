#!/usr/bin/python3
"""Compare every .npy in EXPECTED_DIR with the same file in ACTUAL_DIR.

usage: compare.py EXPECTED_DIR ACTUAL_DIR [--rtol R] [--atol A] [--equal-nan]

An element passes when |actual - expected| <= atol + rtol * |expected|
(numpy.allclose semantics: infinities must match exactly; NaN never matches
unless --equal-nan). Shapes must be equal; dtypes may differ (values are
compared as float64) but a difference is reported.

Per output prints the shape, max abs error, max rel error (|a-e| / |e|, over
elements with e != 0), the number of mismatching elements and the worst
element (largest |a-e| / (atol + rtol*|e|)) with its index and both values.
Exits 0 when every output matches, 1 on any mismatch, a missing file in
ACTUAL_DIR, or an EXPECTED_DIR without .npy files. Extra files in ACTUAL_DIR
are listed but do not fail the comparison.

Must run with Debian's /usr/bin/python3 (numpy).

Why this is not the runtime's comparison (rt::compareTensors, which
`loom check`, loom-conformance and the Python module's loom.check use):
the e2e tests that call this script (zoo_vs_ort.sh, compiled_vs_ort.sh)
must run without the Python module. The sanitizer build runs every test
but the large ones (`ctest -LE large` in scripts/test.sh), tiny_cnn's,
llama_decode's and moe_decode's comparisons with ONNX Runtime among them,
and that build has no Python module (python/CMakeLists.txt: an
ASan-instrumented extension needs the ASan runtime preloaded into the
interpreter), so this script cannot import it. It compares ONNX Runtime's
outputs, not the golden reference, so it keeps NumPy's allclose rules:
no scale term (compiled_vs_ort.sh turns a narrow format's scale into
--atol itself), NaN matching only with --equal-nan, dtypes free to differ.
"""

import argparse
import os
import sys

import numpy as np


def npy_files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".npy"))


def compare_one(name, e, a, rtol, atol, equal_nan):
    """Returns (ok, report line)."""
    if e.shape != a.shape:
        return False, f"FAIL {name}: shape mismatch: expected {e.shape}, actual {a.shape}"
    note = "" if e.dtype == a.dtype else f" (dtype expected {e.dtype}, actual {a.dtype})"
    if e.size == 0:
        return True, f"ok   {name}: shape {e.shape}, empty{note}"
    e64 = e.astype(np.float64)
    a64 = a.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a64 - e64)
        tol = atol + rtol * np.abs(e64)
        close = diff <= tol
        # Infinities: equal infinities are close (inf - inf is NaN above).
        both_inf = np.isinf(e64) & np.isinf(a64) & (e64 == a64)
        close |= both_inf
        if equal_nan:
            close |= np.isnan(e64) & np.isnan(a64)
        finite = np.isfinite(diff)
        diff_f = np.where(finite, diff, 0.0)
        max_abs = float(diff_f.max())
        nz = (e64 != 0) & finite
        max_rel = float((diff[nz] / np.abs(e64[nz])).max()) if nz.any() else 0.0
        # Worst element: non-finite disagreements first, then the largest
        # error relative to the allowed tolerance.
        measurable = finite & (tol > 0)
        ratio = np.where(measurable, diff / np.where(tol > 0, tol, 1.0), 0.0)
        score = np.where(close, ratio, np.where(measurable, ratio, np.inf))
    worst = np.unravel_index(int(np.argmax(score)), e.shape)
    bad = int((~close).sum())
    ok = bad == 0
    status = "ok  " if ok else "FAIL"
    w = tuple(int(i) for i in worst)
    return ok, (f"{status} {name}: shape {e.shape}, max abs err {max_abs:.3e}, max rel err {max_rel:.3e}, "
                f"mismatches {bad}/{e.size}, worst at {w}: expected {e64[worst]:.9g} "
                f"actual {a64[worst]:.9g}{note}")


def main():
    ap = argparse.ArgumentParser(description="Compare .npy outputs with numpy.allclose semantics.")
    ap.add_argument("expected_dir", metavar="EXPECTED_DIR")
    ap.add_argument("actual_dir", metavar="ACTUAL_DIR")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--equal-nan", action="store_true", help="treat NaN == NaN as a match")
    args = ap.parse_args()

    for d in (args.expected_dir, args.actual_dir):
        if not os.path.isdir(d):
            print(f"compare.py: error: not a directory: {d}", file=sys.stderr)
            sys.exit(1)
    expected = npy_files(args.expected_dir)
    if not expected:
        print(f"compare.py: error: no .npy files in {args.expected_dir}", file=sys.stderr)
        sys.exit(1)

    print(f"comparing {args.actual_dir} against {args.expected_dir} (rtol {args.rtol:g}, atol {args.atol:g})")
    failures = 0
    for f in expected:
        name = f[:-4]
        apath = os.path.join(args.actual_dir, f)
        if not os.path.exists(apath):
            print(f"FAIL {name}: missing {apath}")
            failures += 1
            continue
        try:
            e = np.load(os.path.join(args.expected_dir, f))
            a = np.load(apath)
        except Exception as ex:
            print(f"FAIL {name}: cannot load: {ex}")
            failures += 1
            continue
        ok, line = compare_one(name, e, a, args.rtol, args.atol, args.equal_nan)
        print(line)
        failures += not ok
    extra = sorted(set(npy_files(args.actual_dir)) - set(expected))
    if extra:
        print(f"note: extra files in {args.actual_dir} not compared: {', '.join(extra)}")
    if failures:
        print(f"compare: {failures} of {len(expected)} output(s) FAILED")
        sys.exit(1)
    print(f"compare: all {len(expected)} output(s) match")


if __name__ == "__main__":
    main()
