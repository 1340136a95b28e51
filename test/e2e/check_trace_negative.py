#!/usr/bin/python3
"""Shows that check_trace.py can fail: breaks a valid trace one way at a time
(a flow without its end, a flow end outside any slice, a transfer without
its ONNX nodes, a kernel event naming a node the model lacks, a trace whose
transfers have no flows) and requires check_trace.py to reject each, after
accepting the original.

usage: check_trace_negative.py TRACE.json MODEL.onnx
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def check(doc, model):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        p = subprocess.run([sys.executable, os.path.join(HERE, "check_trace.py"), path, model],
                           capture_output=True, text=True)
        return p.returncode, (p.stdout + p.stderr).strip()
    finally:
        os.unlink(path)


def main():
    trace, model = sys.argv[1], sys.argv[2]
    good = json.load(open(trace))
    rc, out = check(good, model)
    if rc != 0:
        sys.exit(f"the original trace is rejected: {out}")
    events = good["traceEvents"]
    first_s = next(i for i, e in enumerate(events) if e.get("ph") == "s")
    first_transfer = next(i for i, e in enumerate(events)
                          if e.get("ph") == "X" and e["args"].get("kernel_id") == -1)
    first_kernel = next(i for i, e in enumerate(events)
                        if e.get("ph") == "X" and e["args"].get("kernel_id", -1) >= 0)

    def drop_f(d):
        fid = d["traceEvents"][first_s]["id"]
        d["traceEvents"] = [e for e in d["traceEvents"]
                            if not (e.get("ph") == "f" and e.get("id") == fid)]

    def move_s(d):
        d["traceEvents"][first_s]["ts"] = 1e12

    def strip_transfer_nodes(d):
        d["traceEvents"][first_transfer]["args"]["onnx_nodes"] = []

    def unknown_node(d):
        d["traceEvents"][first_kernel]["args"]["onnx_nodes"] = ["no_such_node"]

    def no_flows(d):
        d["traceEvents"] = [e for e in d["traceEvents"] if e.get("ph") not in ("s", "f")]

    failures = []
    for name, mutate in [("flow without its end", drop_f), ("flow end outside any slice", move_s),
                         ("transfer without ONNX nodes", strip_transfer_nodes),
                         ("unknown ONNX node", unknown_node), ("no flows", no_flows)]:
        d = copy.deepcopy(good)
        mutate(d)
        rc, out = check(d, model)
        status = "rejected" if rc == 1 else f"NOT rejected (exit {rc})"
        print(f"{name}: {status}: {out.splitlines()[-1] if out else ''}")
        if rc != 1:
            failures.append(name)
    if failures:
        sys.exit("check_trace.py accepted: " + ", ".join(failures))
    print("check_trace_negative.py: every broken trace rejected")


if __name__ == "__main__":
    main()
