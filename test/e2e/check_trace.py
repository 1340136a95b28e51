#!/usr/bin/python3
"""Validate the Chrome/Perfetto trace that `loom run --trace=FILE.json` writes.

usage: check_trace.py TRACE.json MODEL.onnx

Checks, in order, and stops at the first problem:
  - the file is JSON: an object with a "traceEvents" list;
  - every event is an object with "name" (string), "ph" (string), "ts",
    "pid", "tid" (numbers; pid and tid integers), and ts >= 0;
  - every complete ('X') event has a number "dur" >= 0;
  - every 'X' event has args.onnx_nodes, a list of strings, each the name of
    a node of MODEL.onnx (loaded with the onnx package, weights not read; an
    unnamed node counts as 'OpType:first-output', the name Loom's importer
    gives it);
    the list is non-empty for kernel events (args.kernel_id >= 0; a transfer
    has kernel_id -1 and may list none);
  - a "thread_name" metadata ('M') event exists for every (pid, tid) that an
    event other than metadata uses;
  - at least one 'X' event exists, and at least one kernel event;
  - a transfer's 'X' events (kernel_id -1) are named "transfer A -> B" and
    list ONNX nodes (those of the kernels on both ends);
  - flow events: every 's' has exactly one 'f' with the same id and cat
    "flow"; each end lies inside an 'X' event on its own track (pid, tid),
    one end on a transfer's DMA event and the other on a kernel's; when
    the trace has transfer DMA events, it has flows.

The second argument is the ONNX model the program was compiled from (the
program file does not carry the node list, so the model is the authority on
which names exist).

Exits 0 and prints a one-line summary when the trace is valid; exits 1 with
"check_trace.py: TRACE: event N (...): problem" naming the first bad event
otherwise. Must run with Debian's /usr/bin/python3 (onnx).
"""

import json
import numbers
import sys

import onnx


def fail(trace, msg):
    print(f"check_trace.py: {trace}: {msg}", file=sys.stderr)
    sys.exit(1)


def describe(i, ev):
    if isinstance(ev, dict):
        return f"event {i} (name {ev.get('name')!r}, ph {ev.get('ph')!r}, tid {ev.get('tid')!r})"
    return f"event {i}"


def is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def model_node_names(path):
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as e:
        print(f"check_trace.py: cannot load model {path}: {e}", file=sys.stderr)
        sys.exit(1)
    names = set()

    def walk(graph):
        for node in graph.node:
            if node.name:
                names.add(node.name)
            else:
                # The importer names an unnamed node 'OpType:first-output'.
                names.add(f"{node.op_type}:{node.output[0] if node.output else ''}")
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model.graph)
    return names


def main():
    if len(sys.argv) != 3:
        print("usage: check_trace.py TRACE.json MODEL.onnx", file=sys.stderr)
        sys.exit(2)
    trace, model_path = sys.argv[1], sys.argv[2]
    nodes = model_node_names(model_path)

    try:
        with open(trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(trace, f"not readable as JSON: {e}")
    if not isinstance(doc, dict):
        fail(trace, f"top level is a {type(doc).__name__}, expected an object")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail(trace, "no 'traceEvents' list at top level")

    named_threads = set()
    used_threads = {}  # (pid, tid) -> index of first event using it
    n_complete = n_kernel = n_transfer_dma = 0
    slices = {}  # (pid, tid) -> [(ts, end, is_kernel)]
    flows = {}  # id -> {ph: (index, event)}
    for i, ev in enumerate(events):
        where = describe(i, ev)
        if not isinstance(ev, dict):
            fail(trace, f"{where}: not an object")
        for key in ("name", "ph", "ts", "pid", "tid"):
            if key not in ev:
                fail(trace, f"{where}: missing '{key}'")
        if not isinstance(ev["name"], str) or not isinstance(ev["ph"], str):
            fail(trace, f"{where}: 'name' and 'ph' must be strings")
        if not is_number(ev["ts"]):
            fail(trace, f"{where}: 'ts' is not a number: {ev['ts']!r}")
        if ev["ts"] < 0:
            fail(trace, f"{where}: negative ts {ev['ts']}")
        if not is_int(ev["pid"]) or not is_int(ev["tid"]):
            fail(trace, f"{where}: 'pid' and 'tid' must be integers")
        thread = (ev["pid"], ev["tid"])
        ph = ev["ph"]
        if ph == "M":
            if ev["name"] == "thread_name":
                args = ev.get("args")
                if not isinstance(args, dict) or not isinstance(args.get("name"), str):
                    fail(trace, f"{where}: thread_name metadata without args.name")
                named_threads.add(thread)
            continue
        used_threads.setdefault(thread, i)
        if ph in ("s", "f"):
            if ev.get("cat") != "flow" or not is_int(ev.get("id")):
                fail(trace, f"{where}: flow event without cat 'flow' and an integer id")
            ends = flows.setdefault(ev["id"], {})
            if ph in ends:
                fail(trace, f"{where}: flow id {ev['id']} has two '{ph}' events")
            ends[ph] = (i, ev)
            continue
        if ph != "X":
            continue
        n_complete += 1
        if "dur" not in ev:
            fail(trace, f"{where}: 'X' event without 'dur'")
        if not is_number(ev["dur"]) or ev["dur"] < 0:
            fail(trace, f"{where}: bad dur {ev['dur']!r} (must be a number >= 0)")
        args = ev.get("args")
        if not isinstance(args, dict):
            fail(trace, f"{where}: 'X' event without an 'args' object")
        onnx_nodes = args.get("onnx_nodes")
        if not isinstance(onnx_nodes, list) or not all(isinstance(n, str) for n in onnx_nodes):
            fail(trace, f"{where}: args.onnx_nodes is not a list of strings: {onnx_nodes!r}")
        kernel_id = args.get("kernel_id")
        is_kernel = is_int(kernel_id) and kernel_id >= 0
        if is_kernel:
            n_kernel += 1
            if not onnx_nodes:
                fail(trace, f"{where}: kernel event (kernel_id {kernel_id}) with empty args.onnx_nodes")
        else:
            if not ev["name"].startswith("transfer ") or " -> " not in ev["name"]:
                fail(trace, f"{where}: transfer event not named 'transfer A -> B'")
            if not onnx_nodes:
                fail(trace, f"{where}: transfer event without the ONNX nodes of its ends")
            if args.get("unit") == "dma" and ev["dur"] > 0:
                n_transfer_dma += 1
        slices.setdefault(thread, []).append((ev["ts"], ev["ts"] + ev["dur"], is_kernel))
        for n in onnx_nodes:
            if n not in nodes:
                fail(trace, f"{where}: args.onnx_nodes names '{n}', which is not a node of {model_path}")

    def enclosing(ev):
        for lo, hi, is_kernel in slices.get((ev["pid"], ev["tid"]), []):
            if lo <= ev["ts"] <= hi:
                return is_kernel
        return None

    for fid, ends in sorted(flows.items()):
        if set(ends) != {"s", "f"}:
            i, ev = next(iter(ends.values()))
            fail(trace, f"{describe(i, ev)}: flow id {fid} has no matching {'f' if 's' in ends else 's'} event")
        kinds = []
        for ph in ("s", "f"):
            i, ev = ends[ph]
            kind = enclosing(ev)
            if kind is None:
                fail(trace, f"{describe(i, ev)}: flow end at ts {ev['ts']} lies in no slice of its track")
            kinds.append(kind)
        if kinds[0] == kinds[1]:
            i, ev = ends["s"]
            fail(trace, f"{describe(i, ev)}: flow {fid} does not join a transfer and a kernel")
    if n_transfer_dma and not flows:
        fail(trace, f"{n_transfer_dma} transfer DMA events but no flow events")

    for thread, i in sorted(used_threads.items(), key=lambda kv: kv[1]):
        if thread not in named_threads:
            fail(trace, f"{describe(i, events[i])}: no thread_name metadata for pid {thread[0]} tid {thread[1]}")
    if n_complete == 0:
        fail(trace, "no 'X' (complete) events")
    if n_kernel == 0:
        fail(trace, "no kernel events (args.kernel_id >= 0)")
    print(f"check_trace.py: {trace}: ok: {len(events)} events, {n_complete} complete "
          f"({n_kernel} kernel), {len(flows)} flows, {len(named_threads)} named threads, "
          f"{len(used_threads)} used; model has {len(nodes)} named nodes")


if __name__ == "__main__":
    main()
