#!/usr/bin/python3
"""Benchmark Loom's spatial mappings: simulated time against the roofline.

usage: bench_mapping.py [--build build] [--zoo build/zoo] [--out docs/benchmarks.md]
                        [--work DIR] [--print-only]

Compiles each (model, target, precision) below with every mapping
(`loom compile --mapping=sequential|pipelined|hybrid --objective=throughput`)
and, in the same run, reads each program's simulated figures back with
`loom run --timing-only --stats` (which verifies the schedule again):
latency of one input, initiation interval (the cycles between inputs of a
stream) and the roofline bound, each as a ratio. Then the figures the spatial
issue asks for: the 4096^3 bf16 GEMM (a stream of eight 512-row slabs against
resident weights), the encoder layer (sequence 512, hidden 1024), ResNet-50's
throughput gain over layer-sequential with the bound on that gain, and the
TSP v1-class chip's ResNet-50 batch-1 throughput against the 20.4K images/s
Groq published.

Every figure is simulated, so the run is deterministic (compile times
excepted). The section it writes into --out sits between the markers
`<!-- bench_mapping.py: begin -->` and `<!-- bench_mapping.py: end -->`
(appended when absent; scripts/bench.py keeps it when it rewrites the page).
Needs the zoo with the benchmark kernels:
  /usr/bin/python3 scripts/export_zoo.py build/zoo --models gemm4096,encoder_layer
(exported here when missing).
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- bench_mapping.py: begin -->"
END = "<!-- bench_mapping.py: end -->"
MODES = ["sequential", "pipelined", "hybrid"]
# (model, target, precision): the zoo on its targets, in the narrow formats
# their matrix units run, and the two benchmark kernels.
CASES = [
    ("tiny_cnn", "tiny", "fp32"),
    ("resnet50", "tsp-v1", "fp16"),
    ("resnet50", "wormhole", "bf16"),
    ("mobilenetv2", "tsp-v1", "fp16"),
    ("gpt2", "tsp-v1", "fp16"),
    ("bert", "tsp-v1", "fp16"),
    ("bert", "wormhole", "bf16"),
    ("vit_b16", "lp30", "fp8"),
    ("encoder_layer", "wormhole", "bf16"),
    ("encoder_layer", "tsp-v1", "fp16"),
    ("gemm4096", "wormhole", "bf16"),
]
GROQ_RESNET50_IPS = 20400
SUMMARY = re.compile(
    r"(\d+) kernels, (\w+) mapping, latency (\d+) cycles .*?interval (\d+) cycles "
    r".*?roofline (\d+) cycles .*?compiled in ([0-9.]+) s")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def compile_one(args, model, target, precision, mode):
    out = os.path.join(args.work, f"{model}.{target}.{precision}.{mode}.loom")
    cmd = [args.loom, "compile", os.path.join(args.zoo, model + ".onnx"),
           f"--target={target}", f"--precision={precision}",
           f"--mapping={mode}", "--objective=throughput", "-o", out]
    start = time.time()
    rc, stdout, stderr = run(cmd)
    wall = time.time() - start
    if rc != 0:
        reason = stderr.strip().splitlines()[-1] if stderr.strip() else "failed"
        reason = reason.split(": ")[-1]
        return {"mode": mode, "error": reason}
    m = SUMMARY.search(stdout)
    if not m:
        return {"mode": mode, "error": "unparsed: " + stdout[:200]}
    r = {"mode": m.group(2), "asked": mode, "kernels": int(m.group(1)),
         "latency": int(m.group(3)), "interval": int(m.group(4)),
         "roofline": int(m.group(5)), "compile_s": wall, "program": out}
    rc, stdout, stderr = run([args.loom, "run", out, "--timing-only",
                              "--stats=" + out + ".stats.json"])
    if rc != 0:
        return {"mode": mode, "error": "simulation: " + stderr.strip()[:200]}
    stats = json.load(open(out + ".stats.json"))
    assert stats["total_cycles"] == r["latency"], (stats["total_cycles"], r)
    assert stats["initiation_interval"] == r["interval"], r
    r["clock_hz"] = stats["clock_hz"]
    r["units"] = stats["units"]
    return r


def ratio(a, b):
    return f"{a / b:.2f}x" if b else "-"


def bench(args):
    results = {}
    for model, target, precision in CASES:
        key = (model, target, precision)
        results[key] = {}
        for mode in MODES:
            r = compile_one(args, model, target, precision, mode)
            results[key][mode] = r
            if "error" in r:
                log(f"{model}@{target}/{precision} {mode}: none ({r['error']})")
            else:
                log(f"{model}@{target}/{precision} {mode}: latency {r['latency']} "
                    f"interval {r['interval']} roofline {r['roofline']} "
                    f"({r['interval'] / r['roofline']:.2f}x) in {r['compile_s']:.2f} s")
    return results


def best_throughput(modes):
    ok = [r for r in modes.values() if "error" not in r]
    return min(ok, key=lambda r: (r["interval"], r["latency"])) if ok else None


def write(args, results, started):
    L = [BEGIN, "", "## Spatial mappings against the roofline", ""]
    L += [
        "Written by `scripts/bench_mapping.py` (do not edit by hand); every "
        "figure is simulated and deterministic, each ratio measured in one run. "
        f"Run: {started.strftime('%Y-%m-%d %H:%M UTC')}, commit "
        f"`{commit()}`, command `/usr/bin/python3 scripts/bench_mapping.py`.",
        "",
        "Each model is compiled with every mapping for throughput "
        "(`loom compile --mapping=M --objective=throughput`) and simulated "
        "(`loom run --timing-only`, which verifies the schedule). *Latency* is "
        "one input's cycles, *interval* the cycles between the inputs of a "
        "stream (the initiation interval; equal to the latency when "
        "sequential), both against the roofline bound of one input (every "
        "unit busy, nothing padded). An input is one run of the model as "
        "the zoo exports it, one batch (batch 1: an image, a sequence); "
        "inputs/s is runs a second (cli.md, \"What inputs/s means\"). "
        "*Gain* is the best interval's "
        "throughput over layer-sequential's. *None* gives the reason a "
        "mapping does not exist.",
        "",
        "| model @ target, precision | kernels | sequential latency = interval | pipelined latency / interval | hybrid latency / interval | best throughput | gain |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (model, target, precision), modes in results.items():
        cells = []
        for mode in MODES:
            r = modes[mode]
            if "error" in r:
                cells.append(f"none ({r['error']})")
            elif mode == "sequential":
                cells.append(f"{r['latency']} ({ratio(r['latency'], r['roofline'])})")
            else:
                cells.append(f"{ratio(r['latency'], r['roofline'])} / "
                             f"{r['interval']} ({ratio(r['interval'], r['roofline'])})")
        best = best_throughput(modes)
        seq = modes["sequential"]
        kernels = best["kernels"] if best else "-"
        if best:
            ips = best["clock_hz"] / best["interval"]
            best_cell = f"{best['mode']}: {ips:,.0f} inputs/s"
            gain = ratio(seq["interval"], best["interval"]) if "error" not in seq else "-"
        else:
            best_cell, gain = "-", "-"
        L.append(f"| {model} @ {target}, {precision} | {kernels} | " +
                 " | ".join(cells) + f" | {best_cell} | {gain} |")
    L.append("")

    # The goals.
    L += ["### Goals of the spatial issue", ""]
    gemm = results.get(("gemm4096", "wormhole", "bf16"))
    if gemm and best_throughput(gemm):
        b = best_throughput(gemm)
        slabs = 8
        total = (slabs - 1) * b["interval"] + b["latency"]
        bound = slabs * b["roofline"]
        L.append(
            f"- **GEMM 4096^3, bf16, wormhole** (goal: within 1.25x): eight "
            f"512 x 4096 slabs streamed against the resident 4096 x 4096 "
            f"weights ({b['mode']}): {total} cycles against a bound of {bound} "
            f"= **{total / bound:.2f}x** (one slab: {b['latency']} cycles, "
            f"bound {b['roofline']}).")
    for target, precision in (("wormhole", "bf16"), ("tsp-v1", "fp16")):
        enc = results.get(("encoder_layer", target, precision))
        if enc and best_throughput(enc):
            b = best_throughput(enc)
            seq = enc["sequential"]
            L.append(
                f"- **Encoder layer (sequence 512, hidden 1024, 16 heads), "
                f"{precision}, {target}** (goal: within 1.25x): best interval "
                f"{b['interval']} cycles ({b['mode']}) against a bound of "
                f"{b['roofline']} = **{b['interval'] / b['roofline']:.2f}x**; "
                f"layer-sequential {seq['latency'] / seq['roofline']:.2f}x.")
    for target, precision in (("tsp-v1", "fp16"), ("wormhole", "bf16")):
        rn = results.get(("resnet50", target, precision))
        if not rn or "error" in rn["sequential"]:
            continue
        seq, b = rn["sequential"], best_throughput(rn)
        util = seq["units"]["matrix"]["utilisation"]
        gain = seq["interval"] / b["interval"]
        head = (f"- **ResNet-50 throughput over layer-sequential, {target} "
                f"{precision}** (goal: at least 2x): {b['mode']} {gain:.2f}x. ")
        if gain * util > 1.0:
            # The busy fraction bounds only mappings doing the same work.
            L.append(head + (
                f"Layer-sequential keeps the matrix units {100 * util:.0f}% "
                f"busy, so the gain beyond {1 / util:.2f}x comes from less "
                f"padded work: a kernel on fewer tiles pads fewer of the "
                f"matrix unit's blocks."))
        else:
            L.append(head + (
                f"Layer-sequential already keeps the matrix units "
                f"{100 * util:.0f}% busy, so no mapping can gain more than "
                f"{1 / util:.2f}x on this chip without cheaper kernels: the "
                f"goal is out of reach here (see below)."))
    rn = results.get(("resnet50", "tsp-v1", "fp16"))
    if rn and best_throughput(rn):
        b = best_throughput(rn)
        ips = b["clock_hz"] / b["interval"]
        roof_ips = b["clock_hz"] / b["roofline"]
        busy = b["units"]["matrix"]["busy_cycles"] / b["units"]["matrix"]["count"]
        L.append(
            f"- **TSP v1-class, ResNet-50 batch 1**: {ips:,.0f} images/s "
            f"(fp16, {b['mode']}) against Groq's published "
            f"{GROQ_RESNET50_IPS:,} images/s, {ips / GROQ_RESNET50_IPS:.2f}x. "
            f"The fp16 roofline allows {roof_ips:,.0f} images/s; the matrix "
            f"units are busy {busy:,.0f} cycles per image against "
            f"{b['roofline']:,} for the useful MACs ({busy / b['roofline']:.1f}x): "
            "the 320 x 320 MXM blocks are mostly padding for ResNet-50's "
            "64- and 128-channel layers, as the cost model counts them.")
    L.append("")
    L.append(
        "Why the gaps: (1) Groq's 20.4K images/s uses int8, which the TSP's "
        "MXM runs at 4x its fp16 rate; Loom has no int8 precision policy yet "
        "(fp32, bf16, fp16 and fp8 only), so the comparison is at fp16. "
        "(2) The cost model charges whole 320 x 320 weight blocks; a "
        "hand-tuned mapping that packs several small-channel convolutions "
        "into one MXM plane, as Groq's compiler can, is not modelled. "
        "(3) ResNet-50 on the TSP class is matrix-bound in every mapping "
        "(four tiles, one per MXM plane, each kernel spread over all four), "
        "so pipelining cannot add throughput there; on Wormhole it gains what "
        "the idle matrix cycles allow. Where layer-sequential leaves units "
        "idle (tiny_cnn, gpt2, bert), pipelined and hybrid mappings raise "
        "throughput; where the mesh links or SRAM (rotating buffer copies) "
        "bind, the modulo scheduler raises the interval until the schedule "
        "fits (the encoder layer on Wormhole reaches its resource bound only "
        "with a pipeline deeper than its SRAM holds).")
    L += ["", END]
    section = "\n".join(L) + "\n"
    if args.print_only:
        print(section)
        return
    text = open(args.out).read() if os.path.exists(args.out) else "# Benchmarks\n"
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + section.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(args.out, "w") as f:
        f.write(text)
    log(f"wrote {args.out}")


def commit():
    rc, out, _ = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    return out.strip() if rc == 0 else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--zoo", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--work", default="/tmp/loom-bench-mapping")
    ap.add_argument("--print-only", action="store_true")
    args = ap.parse_args()
    args.zoo = args.zoo or os.path.join(args.build, "zoo")
    args.loom = os.path.join(args.build, "bin", "loom")
    os.makedirs(args.work, exist_ok=True)
    needed = sorted({m for m, _, _ in CASES})
    missing = [m for m in needed if not os.path.exists(os.path.join(args.zoo, m + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_zoo.py"),
                        args.zoo, "--models", ",".join(missing)], check=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    results = bench(args)
    write(args, results, started)


if __name__ == "__main__":
    main()
