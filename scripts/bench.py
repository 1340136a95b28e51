#!/usr/bin/python3
"""Benchmark Loom on the model zoo next to ONNX Runtime; write docs/benchmarks.md.

usage: bench.py [--build build] [--zoo build/zoo] [--models NAME[:TARGET] ...]
                [--out docs/benchmarks.md] [--runs N] [--timeout S]
                [--kernel-models NAME ...] [--work DIR] [--note TEXT]

For every model, in one run: ONNX import (`loom compile --emit=graph`) and
ONNX Runtime session creation; `loom compile` to a program for its target
preset; `loom run` (the functional simulator) N times with --stats, and once
with --timing-only, reading its `host: program loaded in X s, simulated
(functional) in Y s` line for the load and simulation times; `loom check` (simulator vs the golden reference);
`loom eval` (the golden reference); ONNX Runtime single-threaded on the same
inputs (scripts/ort/run.mjs --threads 1 --time N). Prints the figures and
writes them, with the date, machine and commit, to the --out Markdown file.

Informational only: there are no pass/fail thresholds. Exits non-zero only on
a usage error or when a command needed for the tables fails (the failure is
still written to the document).

Default models: the zoo's benchmark set (BENCH_ZOO, exported into the zoo
with scripts/export_zoo.py when missing, so the tables do not depend on
what a build happened to export) and any other *.onnx there; vit_b16 runs
on lp30, tiny_cnn on
tiny, the others on tsp-v1 (override with NAME:TARGET; a model may be given
several times with different targets), all at fp32 as ONNX Runtime runs
them. Inputs come from
test/e2e/make_inputs.py (seed 0). Must run with Debian's /usr/bin/python3
(numpy, onnx); needs node with scripts/ort/node_modules (scripts/setup.sh).
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TARGET = "tsp-v1"
PRESETS = {"tiny_cnn": "tiny", "vit_b16": "lp30"}
# Canonical order of the zoo (others follow, alphabetically).
ZOO_ORDER = ["tiny_cnn", "resnet50", "mobilenetv2", "gpt2", "bert", "vit_b16"]
TRANSFORMERS = ["gpt2", "bert", "vit_b16"]
# The models docs/benchmarks.md lists (the release build's tests export all
# but encoder_layer and gemm4096).
BENCH_ZOO = ["tiny_cnn", "resnet50", "mobilenetv2", "gpt2", "bert", "vit_b16",
             "encoder_layer", "gemm4096", "gpt2_decode", "llama_decode",
             "moe_decode"]
MIB = 1024.0 * 1024.0
GNU_TIME = "/usr/bin/time"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------- commands


class CommandError(Exception):
    pass


def have_gnu_time():
    if not os.access(GNU_TIME, os.X_OK):
        return False
    try:
        return subprocess.run([GNU_TIME, "-f", "%e %M", "-o", os.devnull, "true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


HAVE_TIME = None


def run_cmd(cmd, timeout, check=True, env=None):
    """Runs cmd (a list). Returns dict(rc, wall, rss_kb, cpu, out, err).

    Wall time is measured here (monotonic clock, includes process start);
    peak RSS and CPU time (user + system) come from GNU time when installed
    (else None). `env` adds environment variables. The command runs
    in its own process group, killed as a whole on timeout.
    """
    global HAVE_TIME
    if HAVE_TIME is None:
        HAVE_TIME = have_gnu_time()
    tfile = None
    full = list(cmd)
    if HAVE_TIME:
        fd, tfile = tempfile.mkstemp(prefix="bench-time-")
        os.close(fd)
        full = [GNU_TIME, "-f", "%e %M %U %S", "-o", tfile] + full
    t0 = time.monotonic()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace", start_new_session=True,
                         env=dict(os.environ, **env) if env else None)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        if tfile:
            os.unlink(tfile)
        raise CommandError(f"timed out after {timeout} s: {' '.join(cmd)}")
    wall = time.monotonic() - t0
    rss = cpu = None
    if tfile:
        try:
            with open(tfile) as f:
                last = [l for l in f.read().splitlines() if l.strip()]
            if last:
                f4 = last[-1].split()
                rss = int(f4[1])
                cpu = float(f4[2]) + float(f4[3])
        except (OSError, ValueError):
            pass
        os.unlink(tfile)
    r = {"rc": p.returncode, "wall": wall, "rss_kb": rss, "cpu": cpu, "out": out, "err": err}
    if check and p.returncode != 0:
        tail = (err.strip().splitlines() or out.strip().splitlines() or [""])[-1]
        raise CommandError(f"exit {p.returncode}: {' '.join(cmd)}: {tail}")
    return r


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError):
        return float("nan")


# ------------------------------------------------------ program file reader


class FlatBuffer:
    """Just enough of the FlatBuffers wire format to read Program.fbs."""

    def __init__(self, data, schema):
        self.d = data
        self.schema = schema  # table -> [(field, type)], in id order

    def u32(self, pos):
        return struct.unpack_from("<I", self.d, pos)[0]

    def root(self, table):
        return (table, self.u32(0))

    def _field_pos(self, ref, name):
        table, pos = ref
        fields = self.schema[table]
        idx = next(i for i, (n, _) in enumerate(fields) if n == name)
        vt = pos - struct.unpack_from("<i", self.d, pos)[0]
        vt_size = struct.unpack_from("<H", self.d, vt)[0]
        slot = 4 + 2 * idx
        if slot >= vt_size:
            return None
        off = struct.unpack_from("<H", self.d, vt + slot)[0]
        return pos + off if off else None

    SCALARS = {"byte": "<b", "ubyte": "<B", "bool": "<B", "short": "<h", "ushort": "<H",
               "int": "<i", "uint": "<I", "long": "<q", "ulong": "<Q", "float": "<f",
               "double": "<d", "int8": "<b", "uint8": "<B", "int32": "<i", "int64": "<q"}

    def get(self, ref, name, default=None):
        table = ref[0]
        ftype = dict(self.schema[table])[name]
        p = self._field_pos(ref, name)
        if p is None:
            # An absent field holds its schema default (FlatBuffers does not
            # store scalars equal to their default).
            if ftype.startswith("["):
                return []
            if default is not None:
                return default
            if ftype in self.SCALARS or ftype in self.schema.get("__enums__", {}):
                d = self.schema.get("__defaults__", {}).get((table, name), "0")
                return float(d) if ftype in ("float", "double") else int(d)
            return None
        if ftype == "string":
            return self._string(p + self.u32(p))
        if ftype.startswith("["):
            elem = ftype[1:-1]
            v = p + self.u32(p)
            n = self.u32(v)
            base = v + 4
            if elem == "string":
                return [self._string(base + 4 * i + self.u32(base + 4 * i)) for i in range(n)]
            if elem in self.SCALARS or elem in self.schema.get("__enums__", {}):
                fmt = self.SCALARS.get(elem) or self.SCALARS[self.schema["__enums__"][elem]]
                size = struct.calcsize(fmt)
                return [struct.unpack_from(fmt, self.d, base + size * i)[0] for i in range(n)]
            return [(elem, base + 4 * i + self.u32(base + 4 * i)) for i in range(n)]
        if ftype in self.SCALARS:
            return struct.unpack_from(self.SCALARS[ftype], self.d, p)[0]
        enums = self.schema.get("__enums__", {})
        if ftype in enums:
            return struct.unpack_from(self.SCALARS[enums[ftype]], self.d, p)[0]
        return (ftype, p + self.u32(p))

    def _string(self, pos):
        n = self.u32(pos)
        return bytes(self.d[pos + 4:pos + 4 + n]).decode("utf-8", "replace")


def parse_fbs(path):
    """Table fields (in id order) and enum base types from a .fbs schema."""
    with open(path) as f:
        text = re.sub(r"//[^\n]*", "", f.read())
    schema = {"__enums__": {}, "__enum_names__": {}}
    for m in re.finditer(r"\benum\s+(\w+)\s*:\s*(\w+)\s*\{([^}]*)\}", text):
        schema["__enums__"][m.group(1)] = m.group(2)
        # Members in order, from 0 (the schema states no explicit values).
        schema["__enum_names__"][m.group(1)] = [
            n.strip() for n in m.group(3).split(",") if n.strip()]
    for m in re.finditer(r"\btable\s+(\w+)\s*\{([^}]*)\}", text):
        fields = []
        for fm in re.finditer(r"(\w+)\s*:\s*(\[?\w+\]?)\s*(?:=\s*([^;(\s]+))?[^;]*;", m.group(2)):
            fields.append((fm.group(1), fm.group(2)))
            if fm.group(3) is not None:
                schema.setdefault("__defaults__", {})[(m.group(1), fm.group(1))] = fm.group(3)
        schema[m.group(1)] = fields
    return schema


def enum_name(schema, enum, value):
    """The schema's name of `enum`'s member `value` (program version 3 stores
    a kernel's kind, precision and bound as enums)."""
    names = schema["__enum_names__"].get(enum, [])
    if not isinstance(value, int) or not 0 <= value < len(names):
        sys.exit("bench.py: %s value %r is not in Program.fbs" % (enum, value))
    return names[value]


def read_program(path, schema):
    """The summary and per-kernel figures of a .loom program file."""
    with open(path, "rb") as f:
        data = f.read()
    fb = FlatBuffer(memoryview(data), schema)
    p = fb.root("Program")
    prog = {k: fb.get(p, k) for k in
            ("model", "target_name", "tile_rows", "tile_cols", "sram_bytes_per_tile",
             "clock_hz", "total_cycles", "sram_peak_bytes", "sram_lower_bound_bytes",
             "roofline_cycles")}
    prog["target"] = json.loads(fb.get(p, "target_json") or "{}")
    tensors = {}
    for t in fb.get(p, "tensors"):
        tensors[fb.get(t, "id")] = list(fb.get(t, "shape"))
    kernels = []
    for k in fb.get(p, "kernels"):
        ops = []
        for o in fb.get(k, "ops"):
            ops.append({"name": fb.get(o, "name"), "inputs": list(fb.get(o, "inputs")),
                        "outputs": list(fb.get(o, "outputs"))})
        kernels.append({
            "id": fb.get(k, "id"), "name": fb.get(k, "name"),
            "onnx_nodes": fb.get(k, "onnx_nodes"),
            "kind": enum_name(schema, "KernelKind", fb.get(k, "kind", 0)),
            "precision": enum_name(schema, "NumericFormat", fb.get(k, "precision", 0)),
            "tiles": (fb.get(k, "tile_rows"), fb.get(k, "tile_cols")),
            "ops": ops, "inputs": list(fb.get(k, "inputs")),
            "outputs": list(fb.get(k, "outputs")),
            "flops": fb.get(k, "flops", 0), "bytes": fb.get(k, "bytes", 0),
            "bound": enum_name(schema, "CostBound", fb.get(k, "bound", 0)),
            "cycles": fb.get(k, "cycles", 0)})
    prog["kernels"] = kernels
    prog["tensors"] = tensors
    return prog


def elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def graph_roofline(roof):
    """The graph's roofline (cycles) rebuilt from kernel_rooflines' terms, a
    self-check of the reconstruction: the graph bound sums each resource
    separately, and the matrix and vector units overlap over the graph."""
    if not roof:
        return 0
    compute = max(sum(r["matrix"] for r in roof.values()),
                  sum(r["vector"] for r in roof.values()))
    sram = sum(r["sram"] for r in roof.values())
    return int(math.ceil(max(compute, sram) - 1e-6))


def kernel_rooflines(prog):
    """Per-kernel roofline terms (cycles), as the cost model's roofline
    (CostModel::roofline) computes them for one kernel on the whole chip:
    matrix FLOPs at the matrix unit's peak for the kernel's format (or on
    the vector unit, one MAC per lane per cycle, when the matrix unit does
    not run it), vector ops at the vector peak, SRAM bytes at the SRAM peak.
    Vector ops are rebuilt from the program's ops the way describeKernel
    (lib/Dialect/Spatial/Transforms/KernelCost.cpp) counts them."""
    chip = prog["target"].get("chip", {})
    tiles = chip.get("tiles", {})
    ntiles = tiles.get("rows", 1) * tiles.get("cols", 1)
    tile = chip.get("tile", {})
    macs = {k: v for k, v in tile.get("matrix", {}).get("macs_per_cycle", {}).items()
            if not k.startswith("_")}
    lanes = tile.get("vector", {}).get("lanes", 0) * ntiles
    sram_bpc = tile.get("sram", {}).get("bytes_per_cycle", 0) * ntiles
    tensors = prog["tensors"]
    out = {}
    for k in prog["kernels"]:
        work = [o for o in k["ops"] if o["name"] != "constant"]
        nwork = len(work)
        out_el = max([elements(tensors.get(t, [])) for t in k["outputs"]] or [0])
        in_el = max([elements(tensors.get(t, [])) for t in k["inputs"]] or [0])
        kind = k["kind"]
        flops = float(k["flops"])
        vec = 0.0
        if kind in ("matmul", "conv"):
            anchor = next((o for o in work if o["name"] in ("matmul", "conv")), None)
            if anchor is not None:
                vec = elements(tensors.get(anchor["outputs"][0], [])) * max(0, nwork - 1)
            else:
                vec = out_el * max(1, nwork)
        elif kind == "elementwise":
            vec = out_el * max(1, nwork)
        elif kind == "reduction":
            vec = in_el
        elif kind == "softmax":
            vec = out_el * 5
        elif kind == "normalization":
            vec = out_el * 7
        fmt = k["precision"]
        matrix_c = vector_c = 0.0
        if flops > 0:
            if fmt in macs and macs[fmt] > 0:
                matrix_c = flops / (2.0 * macs[fmt] * ntiles)
            elif lanes:
                vector_c += flops / 2.0 / lanes
        if lanes:
            vector_c += vec / lanes
        compute = max(matrix_c, vector_c)
        sram = k["bytes"] / sram_bpc if sram_bpc else 0.0
        out[k["id"]] = {"compute": compute, "sram": sram, "matrix": matrix_c,
                        "vector": vector_c,
                        "cycles": max(compute, sram),
                        "kind": ("sram" if sram > compute else
                                 "matrix" if matrix_c >= vector_c else "vector")}
    return out


# --------------------------------------------------------------- measuring


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def compare_dirs(expected, actual):
    """Max abs error and max abs error / max |expected| over all outputs."""
    worst_abs, worst_norm, names = 0.0, 0.0, []
    for f in sorted(os.listdir(expected)):
        if not f.endswith(".npy"):
            continue
        e = np.load(os.path.join(expected, f)).astype(np.float64)
        path = os.path.join(actual, f)
        if not os.path.exists(path):
            return None
        a = np.load(path).astype(np.float64)
        if a.shape != e.shape:
            return None
        names.append(f[:-4])
        if e.size == 0:
            continue
        d = float(np.nanmax(np.abs(a - e)))
        worst_abs = max(worst_abs, d)
        scale = float(np.nanmax(np.abs(e))) or 1.0
        worst_norm = max(worst_norm, d / scale)
    return {"max_abs": worst_abs, "max_norm": worst_norm, "outputs": names}


SUMMARY_RE = re.compile(
    r"(\d+) kernels, \w+ mapping, latency (\d+) cycles \(([\d.]+) us\), "
    r"interval \d+ cycles \(\d+ inputs/s\), roofline (\d+) cycles \(latency ([\d.]+)x, "
    r"interval [\d.]+x\), "
    r"SRAM peak ([\d.]+) MiB/tile vs lower bound ([\d.]+) MiB \(tile has ([\d.]+) MiB\), "
    r"compiled in ([\d.]+) s")
HOST_RE = re.compile(r"^host: program loaded in ([\d.]+) s, simulated \(([^)]*)\) in ([\d.]+) s\s*$",
                     re.M)
CHECK_RE = re.compile(r"^(match|MISMATCH|mismatch)\s+output '([^']*)': max abs err (\S+), max rel err (\S+)",
                      re.M)


def host_times(r, mode):
    """(load s, simulation s) from the last `host:` line of a `loom run`."""
    found = HOST_RE.findall(r["out"] + "\n" + r["err"])
    if not found:
        raise ValueError("loom run printed no 'host: program loaded in X s, simulated (...) in Y s' line")
    load, got, sim = found[-1]
    if got != mode:
        raise ValueError(f"loom run host line says '{got}', expected '{mode}'")
    return float(load), float(sim)


def bench_import(loom, node, model, timeout):
    r = run_cmd([loom, "compile", model, "--emit=graph", "-o", os.devnull], timeout)
    o = run_cmd([node, os.path.join(ROOT, "scripts/ort/run.mjs"), model, "--create-only"], timeout)
    create_ms = json.loads(o["out"].strip().splitlines()[-1])["session_create_ms"]
    return {"wall": r["wall"], "rss_kb": r["rss_kb"], "ort_create_s": create_ms / 1000.0,
            "ort_wall": o["wall"], "ort_rss_kb": o["rss_kb"],
            "file_bytes": os.path.getsize(model)}


def bench_model(args, name, target, work):
    loom = os.path.join(args.build, "bin", "loom")
    model = os.path.join(args.zoo, name + ".onnx")
    tag = f"{name}@{target}"
    d = os.path.join(work, f"{name}.{target}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    res = {"model": name, "target": target, "load_start": loadavg(), "notes": []}
    T = args.timeout

    log(f"[{tag}] inputs")
    mi = run_cmd([sys.executable, os.path.join(ROOT, "test/e2e/make_inputs.py"), model,
                  os.path.join(d, "inputs"), "--seed", "0"], T)
    inputs = mi["out"].split()

    log(f"[{tag}] import (loom compile --emit=graph) and ORT session creation")
    res["import"] = bench_import(loom, args.node, model, T)

    log(f"[{tag}] compile")
    prog_path = os.path.join(d, name + ".loom")
    # fp32, as ONNX Runtime computes: the like-for-like speed comparison
    # (a preset's default_precision would otherwise apply).
    c = run_cmd([loom, "compile", model, f"--target={target}", "--precision=fp32",
                 "-o", prog_path], T)
    res["compile_wall"] = c["wall"]
    res["compile_rss_kb"] = c["rss_kb"]
    res["program_bytes"] = os.path.getsize(prog_path)
    m = SUMMARY_RE.search(c["out"] + c["err"])
    lines = [l for l in (c["out"] + c["err"]).strip().splitlines() if " kernels, " in l]
    res["summary_line"] = lines[-1] if lines else ""
    res["summary"] = m.groups() if m else None
    prog = read_program(prog_path, args.schema)
    res["program"] = {k: v for k, v in prog.items() if k not in ("kernels", "tensors", "target")}
    res["nkernels"] = len(prog["kernels"])
    if m and int(m.group(1)) != len(prog["kernels"]):
        res["notes"].append(f"summary line says {m.group(1)} kernels, program has {len(prog['kernels'])}")
    if m and int(m.group(2)) != prog["total_cycles"]:
        res["notes"].append(f"summary line says {m.group(2)} cycles, program {prog['total_cycles']}")

    log(f"[{tag}] loom run x{args.runs}")
    walls, rsss, cpus, loads, sims = [], [], [], [], []
    stats_path = os.path.join(d, "stats.json")
    out_dir = os.path.join(d, "sim")
    run_args = [loom, "run", prog_path] + inputs + ["--output-dir", out_dir, f"--stats={stats_path}"]
    for _ in range(args.runs):
        shutil.rmtree(out_dir, ignore_errors=True)
        r = run_cmd(run_args, T)
        walls.append(r["wall"])
        rsss.append(r["rss_kb"] or 0)
        ld, sm = host_times(r, "functional")
        loads.append(ld)
        sims.append(sm)
        if r["cpu"] is not None:
            cpus.append(r["cpu"])
    res["run_walls"] = walls
    res["run_wall"] = median(walls)
    res["run_cpu"] = median(cpus) if cpus else None
    res["run_rss_kb"] = max(rsss) or None
    res["run_loads"] = loads
    res["run_sims"] = sims
    res["run_load"] = median(loads)
    res["run_sim"] = median(sims)
    with open(stats_path) as f:
        stats = json.load(f)
    res["stats"] = {k: v for k, v in stats.items() if k not in ("links", "kernels", "sram_peak_per_tile")}

    t = run_cmd([loom, "run", prog_path, "--timing-only"], T)
    res["timing_only_wall"] = t["wall"]
    res["timing_only_load"], res["timing_only_sim"] = host_times(t, "timing only")

    log(f"[{tag}] loom check")
    ck = run_cmd([loom, "check", model, f"--target={target}", "--precision=fp32"] + inputs,
                 T, check=False)
    res["check_rc"] = ck["rc"]
    res["check_wall"] = ck["wall"]
    errs = CHECK_RE.findall(ck["out"] + ck["err"])
    res["check_max_abs"] = max((float(e[2]) for e in errs), default=None)
    res["check_max_rel"] = max((float(e[3]) for e in errs), default=None)
    if ck["rc"] != 0:
        why = "loom check failed: " + ((ck["err"] or ck["out"]).strip().splitlines() or ["?"])[-1]
        div = re.search(r"^first divergent kernel: .*$", ck["out"] + ck["err"], re.M)
        if div:
            why += f" ({div.group(0)})"
        res["notes"].append(why)

    log(f"[{tag}] loom eval")
    ev_dir = os.path.join(d, "eval")
    ev = run_cmd([loom, "eval", model] + inputs + ["--output-dir", ev_dir], T)
    res["eval_wall"] = ev["wall"]

    log(f"[{tag}] ONNX Runtime, 1 thread, x{args.runs}")
    ort_dir = os.path.join(d, "ort")
    o = run_cmd([args.node, os.path.join(ROOT, "scripts/ort/run.mjs"), model] + inputs +
                ["--threads", "1", "--time", str(args.runs), "--output-dir", ort_dir], T)
    oj = json.loads(o["out"].strip().splitlines()[-1])
    res["ort_run_ms"] = oj["run_ms_median"]
    res["ort_run_min_ms"] = oj["run_ms_min"]
    res["ort_create_1t_s"] = oj["session_create_ms"] / 1000.0
    res["sim_vs_ort"] = compare_dirs(ort_dir, out_dir)
    res["eval_vs_ort"] = compare_dirs(ort_dir, ev_dir)
    if res["sim_vs_ort"] is None:
        res["notes"].append("simulator outputs do not match ORT's output names/shapes")

    # Consistency between the program, the summary and the simulator.
    if stats.get("total_cycles") != prog["total_cycles"]:
        res["notes"].append(f"simulated {stats.get('total_cycles')} cycles, program declares {prog['total_cycles']}")
    if stats.get("roofline_cycles") != prog["roofline_cycles"]:
        res["notes"].append("stats roofline differs from the program's")
    if stats.get("sram_peak_bytes", 0) > prog["sram_peak_bytes"]:
        res["notes"].append(f"simulator SRAM peak {stats['sram_peak_bytes']} B above the program's {prog['sram_peak_bytes']} B")
    if stats.get("sram_peak_bytes", 0) < prog["sram_lower_bound_bytes"]:
        res["notes"].append(f"simulator SRAM peak {stats['sram_peak_bytes']} B below the program's lower bound {prog['sram_lower_bound_bytes']} B")
    # Per-kernel table (joined with the program).
    roof = kernel_rooflines(prog)
    by_id = {k["id"]: k for k in prog["kernels"]}
    kt = []
    mism = 0
    for sk in sorted(stats.get("kernels", []), key=lambda k: (k.get("start_cycle", 0), k["id"])):
        pk = by_id.get(sk["id"], {})
        est = sk.get("estimated_cycles")
        if est is None:
            est = pk.get("cycles")
        if pk and est != pk.get("cycles"):
            mism += 1
        rf = roof.get(sk["id"], {})
        kt.append({"id": sk["id"], "name": sk["name"], "onnx_nodes": sk.get("onnx_nodes", []),
                   "kind": pk.get("kind", "?"), "tiles": pk.get("tiles", (0, 0)),
                   "start": sk.get("start_cycle", 0), "cycles": sk["cycles"], "estimate": est,
                   "roofline": rf.get("cycles", 0.0), "roof_kind": rf.get("kind", "?"),
                   "bound": pk.get("bound", "?")})
    below = [k for k in kt if k["estimate"] is not None and k["estimate"] + 1 < k["roofline"]]
    if below:
        worst = max(below, key=lambda k: k["roofline"] - k["estimate"])
        res["notes"].append(
            f"{len(below)} kernels have a cost-model estimate below their own roofline bound "
            f"(largest gap: kernel {worst['id']} `{worst['name']}`, {worst['kind']}, estimate "
            f"{worst['estimate']} vs roofline {worst['roofline']:.0f} cycles)")
    if mism:
        res["notes"].append(f"{mism} kernels: stats estimated_cycles differs from the program's estimate")
    if "kernels" not in stats:
        res["notes"].append("stats JSON has no 'kernels'")
    elif not any("estimated_cycles" in k for k in stats["kernels"]):
        res["notes"].append("stats JSON kernels carry no estimated_cycles (taken from the program)")
    res["kernels"] = kt
    res["roofline_rebuilt"] = graph_roofline(roof)
    res["sum_kernel_roofline"] = sum(r["cycles"] for r in roof.values())
    res["load_end"] = loadavg()
    return res


# ------------------------------------------------------------------ output


def fmt_s(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


def fmt_mib(kb_or_bytes, is_kb=True):
    if kb_or_bytes is None:
        return "n/a"
    b = kb_or_bytes * 1024 if is_kb else kb_or_bytes
    return f"{b / MIB:.1f}"


def fmt_size(b):
    """Bytes as MiB, or KiB below 1 MiB."""
    if b is None:
        return "n/a"
    if b < MIB:
        return f"{b / 1024.0:.1f} KiB"
    return f"{b / MIB:.2f} MiB"


def fmt_ms(x):
    return f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def fmt_x(a, b, digits=2):
    if a is None or b is None or not b:
        return "n/a"
    return f"{a / b:.{digits}f}x"


def fmt_e(x):
    return "n/a" if x is None else f"{x:.1e}"


def esc(s):
    return str(s).replace("|", "\\|")


def short_nodes(nodes, limit=60):
    """ONNX node names shortened to their op part (the last path component),
    joined with '+'."""
    parts = [n.rstrip("/").split("/")[-1] or n for n in nodes]
    s = " + ".join(parts)
    if len(s) > limit:
        s = s[:limit - 1].rstrip(" +") + "…"
    return f"{s} ({len(nodes)})" if len(nodes) > 1 else s


def table(header, rows, align=None):
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for r in rows:
        lines.append("| " + " | ".join(esc(c) for c in r) + " |")
    return "\n".join(lines)


def cpu_isa():
    """The CPU's widest x86 vector ISA, from /proc/cpuinfo ("" if neither)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
        return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else ""
    except OSError:
        return ""


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / MIB:.0f} GiB"
                    break
    except (OSError, ValueError):
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem": mem}


def git(*a):
    try:
        return subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def tool_versions(node):
    v = {}
    try:
        v["node"] = subprocess.run([node, "--version"], capture_output=True, text=True,
                                   timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        v["node"] = "?"
    try:
        with open(os.path.join(ROOT, "scripts/ort/node_modules/onnxruntime-node/package.json")) as f:
            v["ort"] = json.load(f).get("version", "?")
    except (OSError, ValueError):
        v["ort"] = "?"
    return v


def write_doc(args, results, meta, failures):
    ok = [r for r in results if "kernels" in r]
    L = []
    A = L.append
    A("# Benchmarks")
    A("")
    A("Measured figures of Loom on the model zoo, next to ONNX Runtime (CPU,")
    A("onnxruntime-node) on the same machine, in the same run. This page is")
    A("written by `scripts/bench.py`; do not edit it by hand. Regenerate it with")
    A("")
    A("```sh")
    A("/usr/bin/python3 scripts/bench.py            # the zoo's benchmark set, 3 runs each, writes docs/benchmarks.md")
    A("/usr/bin/python3 scripts/bench.py --models resnet50 vit_b16:lp30 --runs 5 --out /tmp/b.md")
    A("```")
    A("")
    A("(the zoo comes from `scripts/export_zoo.py`, ONNX Runtime from")
    A("`scripts/setup.sh`). The figures are informational: there are no")
    A("pass/fail thresholds; the goals quoted below are targets, not tests.")
    A("Wall times are of whole processes (start, file loading and exit")
    A("included) unless the column says otherwise; peak RSS is GNU time's `%M`.")
    A("")
    A("## This run")
    A("")
    A(f"- date: {meta['date']}")
    A(f"- machine: {meta['machine']['nproc']} CPUs ({meta['machine']['cpu']}), {meta['machine']['mem']} memory")
    A(f"- commit: `{meta['commit']}`{meta['dirty']}")
    A(f"- ONNX Runtime: onnxruntime-node {meta['versions']['ort']} on node {meta['versions']['node']}")
    A("- simulator sgemm (its matmul and convolution kernels): BLIS, single-threaded build"
      " (Debian `libblis-serial-dev`), which picks its kernels by CPU features"
      + (f"; this CPU has {args.cpu_isa}" if args.cpu_isa else ""))
    A(f"- command: `{meta['command']}`; {args.runs} runs per timed figure; total {meta['elapsed']:.0f} s")
    A(f"- load average (1 min) at start / end: {meta['load_start']:.2f} / {meta['load_end']:.2f}")
    if meta["noisy"]:
        A("")
        A("**Timings are noisy.** The load average exceeded half the CPU count")
        A(f"({meta['machine']['nproc']}) during the run: other work (builds, tests) shared the")
        A("machine, so wall times and the ratios between them can be off by tens")
        A("of percent. The cycle counts, sizes and SRAM figures are exact and")
        A("do not depend on load.")
    for n in args.note:
        A("")
        A(n)
    A("")

    # ---- 1. import
    A("## 1. Import")
    A("")
    A("`loom compile MODEL.onnx --emit=graph -o /dev/null` (ONNX import, shape")
    A("inference, conversion to the `graph` dialect, verification) against")
    A("ONNX Runtime's session creation (`scripts/ort/run.mjs MODEL --create-only`,")
    A("default threads; the time is measured inside node, around")
    A("`InferenceSession.create`). The same measurement for one model:")
    A("`scripts/bench_import.sh build/bin/loom build/zoo/vit_b16.onnx`.")
    A("")
    A("- *import*: wall time of the `loom` process; *peak RSS*: its peak resident memory;")
    A("- *RSS / file*: peak RSS over the `.onnx` file size (goal for ViT-B/16: below")
    A("  1.5x; meaningless for tiny files, where the binary's own footprint dominates);")
    A("- *ORT create*: ONNX Runtime session creation; *ORT RSS*: node's peak RSS;")
    A("- *import / ORT create*: how many times longer Loom's import takes.")
    A("")
    rows = []
    for r in results:
        im = r.get("import")
        if not im:
            continue
        fb = im["file_bytes"]
        rows.append([f"**{r['model']}**" if r["model"] == "vit_b16" else r["model"],
                     f"{fb / MIB:.2f}", fmt_s(im["wall"]), fmt_mib(im["rss_kb"]),
                     fmt_x(im["rss_kb"] * 1024 if im["rss_kb"] else None, fb),
                     fmt_s(im["ort_create_s"]), fmt_mib(im["ort_rss_kb"]),
                     fmt_x(im["wall"], im["ort_create_s"])])
    A(table(["Model", "File (MiB)", "Import (s)", "Peak RSS (MiB)", "RSS / file",
             "ORT create (s)", "ORT RSS (MiB)", "Import / ORT create"], rows,
            ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
    A("")

    # ---- 2. compile
    A("## 2. Compile and simulated performance")
    A("")
    A("`loom compile MODEL.onnx --target=PRESET -o OUT.loom` (fp32 policy), then the")
    A("simulator's statistics (`loom run OUT.loom ... --stats=STATS.json`).")
    A("")
    A("- *compile*: wall time and peak RSS of `loom compile` (import included);")
    A("- *program*: size of the `.loom` file (weights included);")
    A("- *cycles*, *µs*: simulated makespan of one inference (the simulator's")
    A("  `total_cycles`; it equals the program's declared schedule unless a note below says otherwise)")
    A("  and the same at the target's clock;")
    A("- *roofline*: the cost model's lower bound for the whole graph (every unit")
    A("  busy all the time, nothing padded); *vs roofline*: cycles / roofline (1.00x is the bound);")
    A("- *SRAM peak / bound*: the allocator's peak (highest byte used on the busiest")
    A("  tile) and the lower bound (most bytes that must be live at once on a tile), per tile;")
    A("  *sim peak*: the highest live byte count the simulator observed on a tile;")
    A("  *tile*: SRAM per tile.")
    A("")
    rows = []
    for r in ok:
        p, s = r["program"], r["stats"]
        cyc = s.get("total_cycles", p["total_cycles"])
        us = cyc / p["clock_hz"] * 1e6 if p["clock_hz"] else float("nan")
        rows.append([r["model"], r["target"], fmt_s(r["compile_wall"], 2), fmt_mib(r["compile_rss_kb"]),
                     fmt_size(r["program_bytes"]), r["nkernels"], f"{cyc}", f"{us:.1f}",
                     f"{p['roofline_cycles']}", fmt_x(cyc, p["roofline_cycles"]),
                     f"{fmt_size(p['sram_peak_bytes'])} / {fmt_size(p['sram_lower_bound_bytes'])}",
                     fmt_size(s.get("sram_peak_bytes", 0)),
                     fmt_size(p["sram_bytes_per_tile"])])
    A(table(["Model", "Target", "Compile (s)", "Compile RSS (MiB)", "Program", "Kernels",
             "Cycles", "µs", "Roofline", "vs roofline", "SRAM peak / bound", "Sim peak",
             "Tile SRAM"], rows,
            ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:",
             "---:", "---:"]))
    A("")

    # ---- 3. functional simulation speed
    A("## 3. Functional simulation speed and results")
    A("")
    A(f"Host time to run one inference, median of {args.runs} runs, on the")
    A("inputs of `test/e2e/make_inputs.py` (seed 0):")
    A("")
    A("- *loom run*: wall time of the whole `loom run OUT.loom --input ... --output-dir DIR")
    A("  --stats=STATS.json` process: start, loading the program (weights included), the")
    A("  functional simulation of every instruction, writing outputs and stats, exit;")
    A("- *load*, *simulate*: the two parts `loom run` times itself and prints on its last")
    A("  line, `host: program loaded in X s, simulated (functional) in Y s` (medians of X")
    A("  and of Y over the runs): *load* reads the program file and builds the simulator;")
    A("  *simulate* is the functional simulation alone (inputs already read; writing")
    A("  outputs and stats excluded). `loom run` prints them to the millisecond, so")
    A("  *simulate* is coarse for models simulated in a few ms;")
    A("- *ORT 1 thread*: ONNX Runtime `session.run` latency with `--threads 1`")
    A("  (intra- and inter-op threads 1), median of the same number of runs, measured")
    A("  in-process (model loading, session creation and node start excluded);")
    A("- *sim / ORT*: *simulate* over *ORT 1 thread*: one inference in the simulator")
    A("  against one in ONNX Runtime, both without loading the model or program. This")
    A("  is the ratio the goal \"functional simulation within 3x of ONNX Runtime on")
    A("  ResNet-50\" refers to (where *simulate* printed 0.000 s, the column gives the")
    A("  bound that 0.0005 s implies, as `<`);")
    A("- *total / ORT*: *loom run* (the whole process, loading included) over *ORT 1")
    A("  thread*, for context: what one `loom run` command costs against one inference")
    A("  in an already created ONNX Runtime session;")
    A("- *run CPU*: user + system CPU seconds of the whole *loom run* process (median),")
    A("  less sensitive to other load on the machine than wall time;")
    A("- *timing only*: wall time of `loom run OUT.loom --timing-only` (one run): loading")
    A("  and replaying the schedule without arithmetic;")
    A("- *loom eval*: the golden reference evaluator (`loom eval`, fp64 accumulation,")
    A("  plain loops; one run; whole process), for context; *eval / ORT*: its wall time")
    A("  over *ORT 1 thread*.")
    A("")
    rows = []
    for r in ok:
        ort_s = r["ort_run_ms"] / 1000.0
        if r["run_sim"] < 0.0005 and ort_s:
            sim_ratio = f"<{0.0005 / ort_s:.1f}x"
        else:
            sim_ratio = fmt_x(r["run_sim"], ort_s, 1)
        rows.append([r["model"], r["target"], fmt_s(r["run_wall"]), fmt_s(r["run_load"]),
                     fmt_s(r["run_sim"]), fmt_ms(r["ort_run_ms"]),
                     f"**{sim_ratio}**" if r["model"] == "resnet50" else sim_ratio,
                     fmt_x(r["run_wall"], ort_s, 1), fmt_s(r["run_cpu"]),
                     fmt_s(r["timing_only_wall"]), fmt_s(r["eval_wall"]),
                     fmt_x(r["eval_wall"], ort_s, 1)])
    head = ["Model", "Target", "loom run (s)", "load (s)", "simulate (s)", "ORT 1 thread (ms)",
            "sim / ORT", "total / ORT", "run CPU (s)", "timing only (s)", "loom eval (s)",
            "eval / ORT"]
    A(table(head, rows, ["---", "---"] + ["---:"] * (len(head) - 2)))
    A("")
    A("Results of the same run:")
    A("")
    A("- *loom check*: `loom check MODEL --target=PRESET --input ...` compiles, simulates")
    A("  and compares every output with the golden reference (its own tolerance:")
    A("  rtol 1e-3, atol 1e-4); *max abs / rel err* are the largest it printed; *check (s)*")
    A("  its wall time;")
    A("- *sim vs ORT*, *eval vs ORT*: largest |loom - ORT| over all output elements,")
    A("  and the same divided by the largest |ORT output| (in parentheses).")
    A("")
    rows = []
    for r in ok:
        sv, ev = r["sim_vs_ort"], r["eval_vs_ort"]
        rows.append([r["model"], r["target"], "passed" if r["check_rc"] == 0 else f"FAILED (exit {r['check_rc']})",
                     fmt_e(r["check_max_abs"]), fmt_e(r["check_max_rel"]), fmt_s(r["check_wall"], 2),
                     "n/a" if sv is None else f"{sv['max_abs']:.1e} ({sv['max_norm']:.1e})",
                     "n/a" if ev is None else f"{ev['max_abs']:.1e} ({ev['max_norm']:.1e})"])
    A(table(["Model", "Target", "loom check", "max abs err", "max rel err", "check (s)",
             "sim vs ORT", "eval vs ORT"], rows,
            ["---", "---", "---", "---:", "---:", "---:", "---:", "---:"]))
    A("")

    # ---- 4. per kernel
    A("## 4. Per kernel")
    A("")
    A("From the simulator's `--stats` JSON (`kernels`: name, ONNX nodes, start,")
    A("simulated cycles, `estimated_cycles`) joined by kernel id with the program")
    A("file (kind, tile region, FLOPs, SRAM bytes, bound). Kernels in schedule order.")
    A("")
    A("- *ONNX nodes*: the op part (last path component) of each fused ONNX node,")
    A("  with their count; the kernel is named after its first node;")
    A("- *tiles*: the kernel's region, rows x cols;")
    A("- *simulated*: cycles the simulator measured for the kernel (first instruction")
    A("  start to last end); *estimate*: the cost model's estimate the schedule used;")
    A("- *roofline*: the kernel's own roofline bound on the whole chip (matrix FLOPs at")
    A("  the matrix peak for its format, or on the vector unit when the matrix unit")
    A("  does not run the format; vector ops at the vector peak; SRAM bytes at the")
    A("  SRAM peak; the largest of these), rebuilt by `bench.py` from the program")
    A("  the way `CostModel::roofline` counts a kernel; *roof kind*: which term")
    A("  (`matrix`, `vector` or `sram`);")
    A("- *sim / roof*: simulated over roofline; *share*: simulated cycles over the")
    A("  program's total (the rest is transfers between kernels and idle time);")
    A("- *bound*: the cost model's bounding resource for the kernel on its region")
    A("  (`compute`, `sram`, `mesh`, `fill_drain`).")
    A("")
    for r in ok:
        if r["model"] not in args.kernel_models:
            continue
        total = r["stats"].get("total_cycles") or 1
        A(f"### {r['model']} on {r['target']}")
        A("")
        ksum = sum(k["cycles"] for k in r["kernels"])
        A(f"{len(r['kernels'])} kernels; their simulated cycles sum to {ksum} of {total} "
          f"({100.0 * ksum / total:.1f}%); the per-kernel rooflines sum to "
          f"{r['sum_kernel_roofline']:.0f} cycles (the graph roofline, which sums each resource "
          f"over all kernels before taking the largest, is {r['program']['roofline_cycles']}; "
          f"rebuilt here: {r['roofline_rebuilt']}).")
        A("")
        rows = []
        for k in r["kernels"]:
            rows.append([k["id"], k["name"], short_nodes(k["onnx_nodes"]), k["kind"],
                         f"{k['tiles'][0]}x{k['tiles'][1]}", k["cycles"], k["estimate"],
                         f"{k['roofline']:.0f}", fmt_x(k["cycles"], k["roofline"]),
                         f"{100.0 * k['cycles'] / total:.1f}%", k["roof_kind"], k["bound"]])
        A(table(["#", "Kernel", "ONNX nodes", "Kind", "Tiles", "Simulated", "Estimate", "Roofline",
                 "Sim / roof", "Share", "Roof kind", "Bound"], rows,
                ["---:", "---", "---", "---", "---", "---:", "---:", "---:", "---:", "---:", "---",
                 "---"]))
        A("")

    # ---- notes
    A("## Notes from this run")
    A("")
    notes = []
    for r in results:
        for n in r.get("notes", []):
            notes.append(f"- {r['model']} on {r['target']}: {n}")
        if "kernels" in r:
            if abs(r["roofline_rebuilt"] - r["program"]["roofline_cycles"]) > 1:
                notes.append(f"- {r['model']} on {r['target']}: the per-kernel roofline reconstruction "
                             f"gives a graph bound of {r['roofline_rebuilt']} cycles, the program says "
                             f"{r['program']['roofline_cycles']}: the per-kernel roofline column is approximate")
            if len(r["run_walls"]) > 1:
                lo, hi = min(r["run_walls"]), max(r["run_walls"])
                if lo > 0 and hi / lo > 1.3:
                    notes.append(f"- {r['model']} on {r['target']}: `loom run` wall times spread "
                                 f"{lo:.3f}-{hi:.3f} s (noise)")
            if len(r["run_sims"]) > 1:
                lo, hi = min(r["run_sims"]), max(r["run_sims"])
                if lo >= 0.01 and hi / lo > 1.3:
                    notes.append(f"- {r['model']} on {r['target']}: `loom run` simulation times spread "
                                 f"{lo:.3f}-{hi:.3f} s (noise)")
    for f in failures:
        notes.append(f"- FAILED: {f}")
    if not notes:
        notes.append("- none: program, summary line and simulator statistics agree.")
    L.extend(notes)
    A("")
    # Keep the sections scripts/bench_mapping.py and bench_multichip.py
    # write, and the co-design timings measured by hand (between their
    # markers).
    for script in ("bench_mapping.py", "bench_multichip.py", "codesign timings, by hand"):
        begin, end = f"<!-- {script}: begin -->", f"<!-- {script}: end -->"
        if os.path.exists(args.out):
            old = open(args.out).read()
            if begin in old and end in old:
                L.append(old[old.index(begin):old.index(end) + len(end)])
                A("")
    with open(args.out, "w") as f:
        f.write("\n".join(L))


def print_summary(results):
    for r in results:
        if "kernels" not in r:
            continue
        im = r["import"]
        ort_s = r["ort_run_ms"] / 1000.0
        print(f"{r['model']:12s} {r['target']:7s} import {im['wall']:.3f} s rss/file "
              f"{(im['rss_kb'] or 0) * 1024 / im['file_bytes']:.2f}x vs ORT create {im['ort_create_s']:.3f} s | "
              f"compile {r['compile_wall']:.2f} s, {r['nkernels']} kernels, "
              f"{r['stats'].get('total_cycles')} cycles ({r['stats'].get('total_cycles') / max(1, r['program']['roofline_cycles']):.2f}x roofline) | "
              f"run {r['run_wall']:.3f} s (load {r['run_load']:.3f}, sim {r['run_sim']:.3f}) vs ORT 1t "
              f"{r['ort_run_ms']:.1f} ms: sim/ORT {r['run_sim'] / ort_s:.1f}x, total/ORT {r['run_wall'] / ort_s:.1f}x | "
              f"eval {r['eval_wall']:.2f} s | check {'ok' if r['check_rc'] == 0 else 'FAILED'}")
        for n in r["notes"]:
            print(f"    note: {n}")


def main():
    ap = argparse.ArgumentParser(description="Benchmark Loom on the zoo next to ONNX Runtime.")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--zoo", default=None, help="default: BUILD/zoo")
    ap.add_argument("--models", nargs="+", default=None, metavar="NAME[:TARGET]")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--runs", type=int, default=3, help="runs per timed figure (median)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per command")
    ap.add_argument("--kernel-models", nargs="+", default=None,
                    help="models with a per-kernel table (default: resnet50 and gpt2)")
    ap.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--note", action="append", default=[], help="a paragraph to add to the document")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    args.build = os.path.abspath(args.build)
    args.zoo = os.path.abspath(args.zoo or os.path.join(args.build, "zoo"))
    loom = os.path.join(args.build, "bin", "loom")
    if not os.access(loom, os.X_OK):
        ap.error(f"no loom binary at {loom}")
    if not os.path.isdir(args.zoo):
        ap.error(f"no zoo at {args.zoo} (scripts/export_zoo.py)")
    if shutil.which(args.node) is None:
        ap.error(f"node not found: {args.node}")

    if args.models:
        jobs = []
        for m in args.models:
            name, _, target = m.partition(":")
            jobs.append((name[:-5] if name.endswith(".onnx") else name,
                         target or PRESETS.get(name, DEFAULT_TARGET)))
    else:
        missing = [n for n in BENCH_ZOO
                   if not os.path.exists(os.path.join(args.zoo, n + ".onnx"))]
        if missing:
            log("exporting " + ", ".join(missing) + " into " + args.zoo)
            subprocess.check_call(["/usr/bin/python3", os.path.join(ROOT, "scripts", "export_zoo.py"),
                                   args.zoo, "--models", ",".join(missing)])
        names = sorted(f[:-5] for f in os.listdir(args.zoo) if f.endswith(".onnx"))
        names.sort(key=lambda n: (ZOO_ORDER.index(n) if n in ZOO_ORDER else len(ZOO_ORDER), n))
        jobs = [(n, PRESETS.get(n, DEFAULT_TARGET)) for n in names]
    for name, _ in jobs:
        if not os.path.exists(os.path.join(args.zoo, name + ".onnx")):
            ap.error(f"model not found: {os.path.join(args.zoo, name + '.onnx')}")
    if args.kernel_models is None:
        present = [n for n, _ in jobs]
        args.kernel_models = ["resnet50"] + [next((t for t in TRANSFORMERS if t in present), "")]
    args.cpu_isa = cpu_isa()
    args.schema = parse_fbs(os.path.join(ROOT, "runtime/include/loom/Runtime/Program.fbs"))

    work = args.work or tempfile.mkdtemp(prefix="loom-bench-")
    os.makedirs(work, exist_ok=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine_info(), "commit": git("rev-parse", "--short", "HEAD") or "unknown",
            "versions": tool_versions(args.node), "load_start": loadavg(),
            "command": "/usr/bin/python3 scripts/bench.py" + "".join(" " + a for a in sys.argv[1:])}
    dirty = git("status", "--porcelain", "--untracked-files=no")
    meta["dirty"] = f" (with {len(dirty.splitlines())} locally modified tracked files)" if dirty else ""
    t0 = time.monotonic()
    results, failures = [], []
    loads = [meta["load_start"]]
    try:
        for name, target in jobs:
            try:
                r = bench_model(args, name, target, work)
                loads += [r["load_start"], r["load_end"]]
            except (CommandError, OSError, ValueError, KeyError) as e:
                failures.append(f"{name} on {target}: {e}")
                log(f"[{name}@{target}] FAILED: {e}")
                r = {"model": name, "target": target, "notes": [f"failed: {e}"]}
            results.append(r)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    meta["load_end"] = loadavg()
    loads.append(meta["load_end"])
    meta["elapsed"] = time.monotonic() - t0
    meta["noisy"] = max(loads) > 0.5 * (meta["machine"]["nproc"] or 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    write_doc(args, results, meta, failures)
    print_summary(results)
    print(f"wrote {args.out} ({meta['elapsed']:.0f} s; load average {meta['load_start']:.2f} -> "
          f"{meta['load_end']:.2f}{', noisy' if meta['noisy'] else ''})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
