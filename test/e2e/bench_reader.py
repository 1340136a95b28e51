#!/usr/bin/python3
"""Checks scripts/bench.py's reader of program files against what loom
wrote: it compiles MODEL.onnx for TARGET, reads the program with
bench.read_program (its own FlatBuffers reader, from Program.fbs), and
rebuilds the graph's roofline from the kernels' kind, precision, FLOPs and
bytes and the target's figures (bench.kernel_rooflines, graph_roofline). The rebuilt bound
must be the program's roofline_cycles to a cycle: a field read wrongly
(kind, precision and bound are enums since program version 3; read as
numbers, every matmul would be priced on the vector unit) moves it.

usage: bench_reader.py LOOM WORKDIR MODEL.onnx:TARGET:PRECISION...
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench  # noqa: E402

KINDS = {"matmul", "conv", "elementwise", "reduction", "softmax",
         "normalization", "data_movement"}


def main():
    loom, work = sys.argv[1], sys.argv[2]
    schema = bench.parse_fbs(os.path.join(ROOT, "runtime", "include", "loom",
                                          "Runtime", "Program.fbs"))
    failed = False
    for spec in sys.argv[3:]:
        model, target, precision = spec.rsplit(":", 2)
        out = os.path.join(work, "%s.%s.%s.loom" % (os.path.basename(model),
                                                    target, precision))
        subprocess.run([loom, "compile", model, "--target=" + target,
                        "--precision=" + precision, "-o", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        prog = bench.read_program(out, schema)
        kinds = {k["kind"] for k in prog["kernels"]}
        rebuilt = bench.graph_roofline(bench.kernel_rooflines(prog))
        ok = kinds <= KINDS and abs(rebuilt - prog["roofline_cycles"]) <= 1
        print("%s on %s at %s: kinds %s; roofline rebuilt %d, program %d: %s" % (
            os.path.basename(model), target, precision, ", ".join(sorted(kinds)), rebuilt,
            prog["roofline_cycles"], "ok" if ok else "MISMATCH"))
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
