#!/usr/bin/python3
"""Holds Loom's spatial predictions against published silicon figures and
writes docs/silicon-validation.md.

usage: scripts/silicon_validation.py [--loom build/bin/loom] [--zoo build/zoo]
           [--rows small|all] [--out FILE] [--check FILE]
           [--fit [--write-preset]]

Each row is one published figure (its source quoted in the page) and one
Loom command that predicts it from a preset and a model; the error is
Loom's figure against the published one. A row is a "validation", an
"input" (a preset field set from its source, shown applied) or a "fit": the
one row a fitted preset field is fitted on (FITS below), whose residual is
shown but never counted as a validation. The physical bound (the compiled
program's roofline; for a plan, its weights streamed at the rate the
matrix units take them plus the hops a token crosses) is printed beside
each prediction.

--fit solves each fitted field on its row (bisection over temp copies of
the preset) and prints it; --fit --write-preset also writes it into the
preset. --check fails if a preset's fitted value is not what its row gives
now, or if a table row differs from what the commands print now.

--rows small runs the rows that take seconds (ctest runs them with --check,
which fails if the page's rows differ from what the commands print now, so
the page cannot drift from the code); --rows all (the default) also runs the
LLM rows, which compile for minutes. Runs under Debian's /usr/bin/python3
with python3-onnx and python3-numpy (the GEMM model is built here).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SUMMARY = re.compile(
    r"latency (\d+) cycles \(([0-9.]+) us\), interval (\d+) cycles "
    r"\(([0-9.]+) inputs/s\), roofline (\d+) cycles")


def run(cmd, timeout=3600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit("silicon_validation.py: '%s' failed:\n%s"
                 % (" ".join(cmd), (p.stderr or p.stdout)[-2000:]))
    return p.stdout + p.stderr


def compiled(loom, model, target, work, tag, flags):
    """Compiles `model` and returns its summary figures (cycles, us,
    inputs/s, roofline cycles) and the command, as shown on the page."""
    out = os.path.join(work, tag + ".loom")
    cmd = [loom, "compile", model, "--target=" + target, "-o", out] + flags
    text = run(cmd)
    m = SUMMARY.search(text)
    if not m:
        sys.exit("silicon_validation.py: no summary in:\n" + text)
    shown = ["loom", "compile", os.path.relpath(model, ROOT).replace(
        "build/zoo/", "zoo/"), "--target=" + target] + flags
    return {"cycles": int(m.group(1)), "us": float(m.group(2)),
            "per_s": float(m.group(4)), "roofline": int(m.group(5)),
            "cmd": " ".join(shown)}


def run_json(cmd, timeout=3600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit("silicon_validation.py: '%s' failed:\n%s"
                 % (" ".join(cmd), (p.stderr or p.stdout)[-2000:]))
    return json.loads(p.stdout)


def preset(name):
    return json.load(open(os.path.join(ROOT, "targets", name + ".json")))


def shown(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT) else path


# The Groq rows: Llama-2 and Mixtral on tsp-v1 as `loom plan` prices them
# from compiled decode layers (the same request as planner-validation.md's
# G rows): LLMPerf's 550 input and 150 output tokens, int8 weights (the
# TSP's matrix format; the precision is not published), one sequence per
# micro-batch (a per-user speed: as many users as pipeline stages), and a
# chip budget: 576 for the 70B (Groq's deployment, from forum comments) and
# for Mixtral (no count published: the same deployment), 64 for the 7B
# (one GroqRack; no count published).
PLAN_REQUEST = ["--input-len=550", "--output-len=150", "--weights=int8",
                "--batch=1"]


def planned(loom, model, system, max_chips):
    """The top plan of `loom plan` for `model` on `system` (a preset name
    or a file): its JSON and the command, as shown on the page."""
    args = ["--model=" + model, "--system=" + system] + PLAN_REQUEST + [
        "--max-chips=%d" % max_chips]
    p = run_json([loom, "plan"] + args + ["--top=1", "--json"])["plans"][0]
    cmd = "loom plan " + " ".join(
        ["--model=" + shown(model), "--system=" + os.path.basename(
            system).replace(".json", "")] + args[2:])
    return p, cmd


def plan_bound(p, target):
    """A plan's physical bound on one token: each of its pp stages streams
    its chips' weights into the matrix units once (at the slower of the
    tiles' SRAM and the rate the units take weights: one byte a MAC at
    batch 1 in int8, or the preset's weight_load_bytes_per_cycle), plus a
    chip-to-chip hop between stages. In tokens/s."""
    chip = target["chip"]
    tiles = chip["tiles"]["rows"] * chip["tiles"]["cols"]
    tile = chip["tile"]
    intake = tile["matrix"].get("weight_load_bytes_per_cycle") or \
        tile["matrix"]["macs_per_cycle"].get("int8", 0)
    rate = tiles * min(tile["sram"]["bytes_per_cycle"], intake) * \
        chip["clock_hz"]
    hop = target["system"]["links"]["latency_seconds"]
    seconds = p["pp"] * p["weights_per_chip_bytes"] / rate + \
        (p["pp"] - 1) * hop
    return 1.0 / seconds


# LLMPerf's run of Groq's Llama-2-70B (the leaderboard's raw_data/summary/
# groq_70b.json). Its headline 185 tokens/s is a request's output tokens
# over the whole request, time to first token included (llmperf's clients:
# output_throughput = tokens_received / total_request_time), and its
# "inter-token latency" is that request time over the tokens too. A
# per-user decode speed, which is what Loom predicts (one over its time per
# output token), is the tokens after the first over the time after the
# first: (150 - 1) / (mean end-to-end - mean time to first token).
LLMPERF = {"output_tokens": 150, "e2e_mean_s": 0.8151081097126007,
           "ttft_mean_s": 0.22786034579078357, "request_rate_p50": 185.05}
LLMPERF_DECODE_RATE = (LLMPERF["output_tokens"] - 1) / (
    LLMPERF["e2e_mean_s"] - LLMPERF["ttft_mean_s"])

GROQ_ROWS = [
    # id, model, chips, published, source, what
    ("G3", "llama2-7b", 64, 750.0, "groq-claims",
     "Llama-2-7B on TSP v1 (64 chips assumed), tokens/s per user"),
    ("G1", "llama2-70b", 576, 300.0, "groq-claims",
     "Llama-2-70B on TSP v1 (576 chips), tokens/s per user: Groq's claim"),
    ("G2", "llama2-70b", 576, LLMPERF_DECODE_RATE, "llmperf",
     "Llama-2-70B on TSP v1 (576 chips), tokens/s per user: LLMPerf "
     "measured, decode rate at the client (derived)"),
    ("G4", "mixtral-8x7b", 576, 480.0, "groq-claims",
     "Mixtral-8x7B on TSP v1 (576 chips assumed), tokens/s per user"),
]

# The fitted preset fields: each fitted on the one row named here and
# validated on the others, never on its own row.
FITS = [
    # preset, field path, row, lower, upper (the bisection's bracket)
    ("tsp-v1", ("system", "links", "sync_seconds"), "G3", 0.0, 1e-4),
]


def groq_row(loom, rid, system_for=None):
    """The per-user tokens/s of Groq row `rid`, on `system_for` (a preset
    file) or the tsp-v1 preset."""
    for gid, model, chips, published, source, what in GROQ_ROWS:
        if gid == rid:
            p, cmd = planned(loom, os.path.join(ROOT, "models", model + ".json"),
                             system_for or "tsp-v1", chips)
            return p, cmd, published, source, what
    raise KeyError(rid)


def with_field(target, path, value):
    t = json.loads(json.dumps(target))
    node = t
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return t


def significant(v, digits=3):
    return float("%.*g" % (digits, v))


def fit(loom, work):
    """Solves every FITS field on its row: per-user tokens/s falls as the
    field grows, so bisect for the published figure. Returns
    [(preset, path, row, value, published, reached)]."""
    out = []
    for name, path, rid, lo, hi in FITS:
        base = preset(name)
        file = os.path.join(work, name + ".json")

        def speed(v):
            json.dump(with_field(base, path, v), open(file, "w"))
            return groq_row(loom, rid, file)[0]["tokens_per_s_per_user"]
        published = groq_row(loom, rid)[2]
        if speed(lo) < published or speed(hi) > published:
            sys.exit("silicon_validation.py: %s.%s: row %s's %.0f is not "
                     "bracketed by [%g, %g]" % (name, ".".join(path), rid,
                                               published, lo, hi))
        for _ in range(14):
            mid = (lo + hi) / 2
            if speed(mid) > published:
                lo = mid
            else:
                hi = mid
        value = significant((lo + hi) / 2)
        out.append((name, path, rid, value, published, speed(value)))
    return out


def write_preset(name, path, value):
    """Sets the fitted field's value in targets/NAME.json in place (the
    file's text, its order and comments kept; the field must be there)."""
    file = os.path.join(ROOT, "targets", name + ".json")
    text = open(file).read()
    key = re.escape('"%s":' % path[-1])
    new, n = re.subn(key + r"\s*[-+0-9.eE]+", '"%s": %r' % (path[-1], value),
                     text, count=1)
    if n != 1:
        sys.exit("silicon_validation.py: %s has no field %s to write"
                 % (file, ".".join(path)))
    open(file, "w").write(new)


def clock_hz(loom, target):
    text = run([loom, "target", "show", target])
    m = re.search(r"clock\S*\s+([0-9.]+)\s*(GHz|MHz)", text)
    if not m:
        sys.exit("silicon_validation.py: no clock in 'loom target show %s'"
                 % target)
    return float(m.group(1)) * (1e9 if m.group(2) == "GHz" else 1e6)


def gemm_model(path, m, k, n):
    """Y = X @ W, X [m, k] an input, W [k, n] random weights."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(
        (rng.standard_normal((k, n)) * 0.02).astype(np.float32), "W")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="gemm")], "gemm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
              path)


def rows(loom, zoo, work, which):
    out = []
    r50 = os.path.join(zoo, "resnet50.onnx")
    r = compiled(loom, r50, "tsp-v1", work, "r50-tsp-int8", ["--precision=int8"])
    hz = clock_hz(loom, "tsp-v1")
    bound_us = r["roofline"] / hz * 1e6
    out.append({
        "id": "T1", "what": "ResNet-50 int8, batch 1, one TSP: latency",
        "published": 49.0, "unit": "us", "source": "isca2020",
        "loom": r["us"], "bound": "%.1f us" % bound_us, "tol": 25,
        "cmd": r["cmd"]})
    out.append({
        "id": "T2", "what": "ResNet-50 int8, batch 1, one TSP: throughput",
        "published": 20400.0, "unit": "images/s", "source": "isca2020",
        "loom": r["per_s"], "bound": "%.0f images/s" % (1e6 / bound_us),
        "tol": 25, "cmd": r["cmd"]})
    # The chip link's latency is an input: the preset takes it from this
    # source, so the row shows it is applied, not that it is predicted.
    text = run([loom, "target", "show", "tsp-v1"])
    m = re.search(r"link_latency\S*\s+([0-9.]+)\s*(ns|us)", text)
    lat = json.load(open(os.path.join(ROOT, "targets", "tsp-v1.json")))[
        "system"]["links"]["latency_seconds"]
    out.append({
        "id": "T3", "what": "TSP chip-to-chip hop, pipelined (end to end)",
        "published": 722.0, "unit": "ns", "source": "isca2022",
        "loom": lat * 1e9, "bound": "-", "tol": None,
        "cmd": "targets/tsp-v1.json system.links.latency_seconds",
        "input": "system.links.latency_seconds"})
    # The link alone (216-217 cycles of ISCA 2022's measured mean) is inside
    # that hop: Loom charges a message the whole pipelined hop, whole
    # cycles of the chip clock (ChipNetwork), and models no part of it apart.
    hop_cycles = math.ceil(lat * clock_hz(loom, "tsp-v1") - 1e-9)
    out.append({
        "id": "T3b", "what": "TSP chip-to-chip link alone, mean cycles",
        "published": 216.5, "unit": "cycles", "source": "isca2022",
        "loom": float(hop_cycles), "bound": "-", "tol": None,
        "cmd": "targets/tsp-v1.json system.links.latency_seconds x "
               "chip.clock_hz (the whole hop)",
        "input": "system.links.latency_seconds (inside T3's hop, not "
                 "apart)"})
    # Wormhole GEMM: the chip's fastest format (fp8; its fp16 peak, 74
    # TFLOP/s, is below the published figure).
    # The largest power-of-two GEMM that compiles there: 2048 x 2048 x 2048
    # does not fit, the matmul's row split keeping all of B on every core.
    gemm = os.path.join(work, "gemm.onnx")
    gemm_model(gemm, 2048, 1024, 1024)
    g = compiled(loom, gemm, "wormhole", work, "gemm-wh", ["--precision=fp8"])
    flops = 2.0 * 2048 * 1024 * 1024
    out.append({
        "id": "W1", "what": "Wormhole n150 matmul (2048 x 1024 x 1024, fp8), "
                            "TFLOP/s",
        "published": 190.0, "unit": "TFLOP/s", "source": "ttmetal",
        "loom": flops / (g["us"] * 1e-6) / 1e12,
        "bound": "%.0f TFLOP/s" % (flops / (g["roofline"] /
                                            clock_hz(loom, "wormhole")) / 1e12),
        "tol": 25, "cmd": g["cmd"].replace(os.path.relpath(work, ROOT) + "/", "")
               .replace(work + "/", "") + "  (gemm.onnx: Y = X @ W, X "
               "[2048, 1024], W [1024, 1024], built by the script)"})
    # The Groq LLM rows: G3 fits system.links.sync_seconds (FITS), the
    # others validate it.
    tsp = preset("tsp-v1")
    for rid, _, _, _, _, _ in GROQ_ROWS:
        p, cmd, published, source, what = groq_row(loom, rid)
        out.append({
            "id": rid, "what": what, "published": published,
            "unit": "tokens/s", "source": source,
            "loom": p["tokens_per_s_per_user"],
            "bound": "%.0f tokens/s" % plan_bound(p, tsp), "tol": 30,
            "cmd": cmd + "  (tp %d x pp %d on %d chips)" % (
                p["tp"], p["pp"], p["chips"]),
            "fits": next((".".join(path) for name, path, row, _, _ in FITS
                          if row == rid), None)})
        if source == "llmperf":
            # LLMPerf's own metric: its client's first token, then Loom's
            # decode for the other tokens.
            n = LLMPERF["output_tokens"]
            out[-1]["request_rate"] = n / (LLMPERF["ttft_mean_s"] +
                                           (n - 1) * p["tpot_s"])
    if which == "all":
        out += model_rows(loom)
        l3 = os.path.join(ROOT, "models", "llama3-70b.json")
        lpx = compiled(loom, l3, "lpx-rack", work, "l3-lpx",
                       ["--chips=256", "--precision=fp8"])
        hz = clock_hz(loom, "lpx-rack")
        out.append({
            "id": "X1",
            "what": "Llama-3-70B decode on one LPX rack (256 chips), "
                    "tokens/s per user",
            "published": 1000.0, "unit": "tokens/s", "source": "nvidia-lpx",
            "loom": 1e6 / lpx["us"],
            "bound": "%.0f tokens/s" % (hz / lpx["roofline"]), "tol": 25,
            "cmd": lpx["cmd"].replace(ROOT + "/", "")})
    return out


def model_rows(loom):
    """The rows whose models scripts/silicon_models.py builds (into
    build/silicon, kept between runs): the ISCA 2022 GEMM on 8 TSPs and
    BERT-Large on 4."""
    models = os.path.join(ROOT, "build", "silicon")
    run([sys.executable, os.path.join(ROOT, "scripts", "silicon_models.py"),
         "--out", models, "--only", "gemm_isca22,bert_large_enc_s384",
         "--external"])
    hz = clock_hz(loom, "tsp-v1")

    def latency_row(rid, what, model, tag, flags, published, tol):
        r = compiled(loom, os.path.join(models, model + ".onnx"), "tsp-v1",
                     models, tag, flags)
        return {"id": rid, "what": what, "published": published,
                "unit": "us", "source": "isca2022", "loom": r["us"],
                "bound": "%.1f us" % (r["roofline"] / hz * 1e6), "tol": tol,
                "cmd": r["cmd"].replace(shown(models) + "/", "") +
                "  (%s.onnx: scripts/silicon_models.py)" % model}
    return [
        latency_row("T4", "GEMM [800 x 32576] x [32576 x 8192] on 8 TSPs, "
                          "fp16 (assumed), latency", "gemm_isca22",
                    "gemm-8tsp", ["--chips=8", "--precision=fp16"], 330.0,
                    30),
        latency_row("T5", "BERT-Large (encoder, sequence 384 assumed) on 4 "
                          "TSPs, int8: latency", "bert_large_enc_s384",
                    "bert-4tsp", ["--chips=4", "--precision=int8"], 1225.0,
                    25)]


SOURCES = {
    "isca2020": "Abts et al., \"Think Fast: A Tensor Streaming Processor "
                "(TSP) for Accelerating Deep Learning Workloads\", ISCA 2020: "
                "ResNet-50 at 20.4K images/s, 49 us, batch 1, int8",
    "isca2022": "Abts et al., \"A Software-defined Tensor Streaming "
                "Multiprocessor for Large-scale Machine Learning\", ISCA "
                "2022: a pipelined C2C hop of 722 ns, the link's latency "
                "216-217 cycles mean; the GEMM [800 x 32576] x [32576 x "
                "8192] on 8 TSPs in about 330 us (read off a plot: within "
                "30%); BERT-Large on 4 TSPs at a 99th-percentile latency of "
                "about 1,225 us (sequence length and precision not restated "
                "here: 384 and int8 assumed)",
    "groq-claims": "Groq's published speeds, as TechPowerUp reported them "
                   "(techpowerup.com/news-tags/Processor?page=3): \"Mixtral "
                   "8x7B model at 480 tokens per second\", \"Llama 2 70B "
                   "with 4096 token context length, Groq can serve 300 "
                   "tokens/s\", \"Llama 2 7B with 2048 tokens of context, "
                   "Groq LPU can output 750 tokens/s\"; chips, precision "
                   "and batch unpublished (576 chips for the 70B from forum "
                   "comments)",
    "llmperf": "The LLMPerf leaderboard (github.com/ray-project/"
               "llmperf-leaderboard, raw_data/summary/groq_70b.json): "
               "llama2-70b-4096, 550 input and 150 output tokens, 5 "
               "concurrent requests, measured at a client over Groq's "
               "public API: \"results_end_to_end_latency_s_mean\": "
               "0.8151081097126007, \"results_ttft_s_mean\": "
               "0.22786034579078357, and the headline 185 tokens/s (the "
               "median of 150 tokens over each whole request, "
               "llmperf's output_throughput = tokens_received / "
               "total_request_time). The row's figure is derived from the "
               "two means: 149 / (0.8151 - 0.2279) = %.1f tokens/s after "
               "the first token" % LLMPERF_DECODE_RATE,
    "ttmetal": "tt-metal's GEMM tech report (Wormhole n150): matmul at "
               "about 93% of peak, about 190 TFLOP/s",
    "nvidia-lpx": "NVIDIA technical blog on the Groq 3 LPX rack: 256 chips, "
                  "128 GB SRAM, 315 PFLOP/s fp8, \"approaching 1,000 "
                  "tokens/s per user\" (a claim, no model named)",
}

WHY = {
    "T1": "Within. The decomposition balances a kernel's tiles by the "
          "matrix unit's timing rule (whole 320 x 320 blocks, rule "
          "matrix.block), so a 64-channel convolution is split by output "
          "rows, not into four 16-channel slivers of a 320-wide block "
          "that each take the whole block's time (61.4 us before, +25.3%). "
          "The 4.4x gap to the bound is what padding to whole blocks still "
          "costs narrow layers, and the 57 kernels' serial order "
          "(loom run --stats on the program).",
    "T2": "Throughput is one over the latency: batch 1, one input at a "
          "time (the 57 kernels do not fit on the TSP's 4 tiles together, "
          "so no pipelined mapping).",
    "W1": "Loom is above the published rate: the preset's fp8 peak (262 "
          "TFLOP/s, back-solved from a datasheet in targets/wormhole.json) "
          "is above the 204 TFLOP/s that 190 at 93% of peak implies, and "
          "the timing rules charge no per-core overhead beyond whole "
          "blocks. The report's own sizes do not compile: 2048 x 2048 x "
          "2048 needs 4.7 MB on one core, the matmul's row split keeping "
          "all of B on every core.",
    "T4": "Within the plot's 30%: the 8 chips each take 1,024 of the "
          "8,192 columns and split K over their 4 tiles; the gap to the "
          "roofline is the 320-wide blocks (1,024 of 1,280 columns used) "
          "and K padded to whole blocks. At int8 Loom gives 94 us: the "
          "published run was not int8.",
    "T5": "One point outside: with the fitted synchronisation in its "
          "tile programs and in the partitioner's pricing, Loom splits the "
          "encoder into a 4-stage pipeline (tp 1 x pp 4), since tensor "
          "parallelism's 48 all-reduces would each wait it (--tp=4 gives "
          "1,398 us, +14.2%; 602 us, -50.9%, before the wait was in the "
          "programs). Loom's figure is one inference's schedule on an idle "
          "system, the published one a 99th percentile of a served run, of "
          "the encoder alone (the summed embeddings as its input: Loom "
          "keeps the 125 MB word table at fp32, which no tile holds) at an "
          "assumed sequence length of 384 and int8.",
    "G1": "Within: the plan's compiled tp 16 layer waits the fitted "
          "synchronisation at its two all-reduces, as the 7B layer it was "
          "fitted on (tp 4) does. Llama-2-70B has 8 KV heads for 16 chips: "
          "graph-partition computes the k and v projections per KV head on "
          "both chips of each head (1 MB more weights a chip a layer at "
          "int8) rather than each chip half a head, the halves gathered, "
          "which waited a third time (197 tokens/s, -34.4%, before). "
          "Its 80 layers over 33 stages step at the slowest stage's pace, "
          "2.5 layers (graph-partition also cuts between a layer's "
          "attention and its MLP): 82.5 layers' time a token, where the "
          "compiled layer used to be counted 80 times (271 tokens/s). "
          "Groq's claim is itself 18% above LLMPerf's measured decode "
          "(G2).",
    "G2": "Within: the row compares like with like, the decode rate "
          "after the first token (LLMPerf's 185 counts the time to first "
          "token too, 228 ms at the client against Loom's prefill on the "
          "chips); with LLMPerf's own time to first token, Loom's decode "
          "gives {request_rate} tokens/s over a whole request against its "
          "185.",
    "G4": "One point outside: the top plan (tp 16 x pp 32 on 512 chips, "
          "its layer compiled) takes 42 us a layer, as the 70B's does, "
          "33 us of it the fitted wait at the two all-reduces, where "
          "Groq's 480 tokens/s is 65 us a layer against 42 us for the 70B "
          "at its claimed 300: a cost of the experts no published figure "
          "separates. Groq's three claims would fit a layer's time in "
          "proportion to the weights a chip holds of it (the 7B at tp 4, "
          "51 MB; the 70B at tp 16, 55 MB; Mixtral at tp 16 with every "
          "expert, 91 MB: 0.82, 0.76 and 0.71 us a MB), as a rate at which "
          "the matrix units take weights would, where the fitted wait is "
          "the same for all three; Loom cannot fit that rate on its own "
          "(chip.tile.matrix.weight_load_bytes_per_cycle), since its cost "
          "model then moves a decode step's matrix-vector products to the "
          "vector unit. The compiler splits every expert by tensor "
          "parallelism (a static schedule reserves each expert for every "
          "token) and has no all-to-all lowering, so the planner searches "
          "no expert parallelism on spatial systems (before, an ep plan "
          "was estimated with two all-to-alls its compiled layer does not "
          "have). The third wait of the K/V all-gather, gone since "
          "graph-partition computes k and v per KV head, had put this row "
          "at +20.3%.",
    "X1": "NVIDIA's figure is a claim without a named model, batch or "
          "context, so the row shows the order of magnitude, not a "
          "calibration. Loom's step takes about 603 us where its roofline "
          "(every weight read once at the rack's SRAM rate) is about 2 us: "
          "the 80 layers run one after another across the 32 pipeline "
          "stages of its tp 8 x pp 32 split, each layer waiting for its "
          "all-reduces, and a token crosses every stage; nothing is "
          "charged between tokens (sampling, the host, batching).",
}


def error(r):
    return 100.0 * (r["loom"] - r["published"]) / r["published"]


def fmt(v):
    return ("%.0f" % v) if abs(v) >= 100 else ("%.1f" % v)


def role(r):
    if r.get("input"):
        field, _, note = r["input"].partition(" (")
        return "input: sets `%s`%s" % (field, " (" + note if note else "")
    if r.get("fits"):
        return "fit: sets `%s`" % r["fits"]
    return "validation"


def table(rs):
    lines = ["| row | what | published | Loom | error | bound | within | "
             "role |", "|---|---|---|---|---|---|---|---|"]
    for r in rs:
        if r.get("input"):
            within, err = "-", "-"
        else:
            err = "%+.1f%%" % error(r)
            within = "yes" if abs(error(r)) <= r["tol"] else "**no**"
        lines.append("| %s | %s | %s %s | %s | %s | %s | %s | %s |" % (
            r["id"], r["what"], fmt(r["published"]), r["unit"],
            fmt(r["loom"]), err, r["bound"], within, role(r)))
    return lines


def page(rs, fits=()):
    fitted = "; ".join(
        "`%s` in targets/%s.json is %r, fitted on row %s" % (
            ".".join(path), name, value, rid)
        for name, path, rid, value, _, _ in fits)
    out = ["# Silicon validation", "",
           "<!-- Written by scripts/silicon_validation.py; do not edit by "
           "hand. -->", "",
           "Loom's spatial predictions against published figures of real "
           "chips. Each row is one Loom command (below) on a preset and a "
           "model; *error* is Loom's figure against the published one, "
           "*bound* the physical limit beside it (a compiled program's "
           "roofline; for a plan, its weights streamed into the matrix "
           "units once at the rate they take them, plus the hops a token "
           "crosses), so a reader sees how far the chip is from its limit "
           "and how far Loom is from the chip; *within* whether the error "
           "is inside 25% (30% for the LLM rows, whose deployments are "
           "not published). *Role*: a *validation* row tests Loom; an "
           "*input* row shows a preset field set from its source; a *fit* "
           "row is the one row a fitted field is fitted on, its residual "
           "shown and never counted as a validation.", "",
           "**Calibration.** One field is fitted: %s (`scripts/"
           "silicon_validation.py --fit --write-preset`; `--check`, which "
           "ctest runs, fails if the preset's value is not what the row "
           "gives). It is what the chips of a collective wait before its "
           "first exchange, beyond its transfers (docs/targets.md): compiled "
           "tile programs wait it at every collective, the partitioner "
           "prices it, and the planner's estimate adds it per layer. The "
           "single-chip rows do not use it, and no other preset sets it. "
           "The presets' other fields marked *estimate* (tsp-v1's matrix "
           "and vector latencies and mesh hop, Wormhole's and LPX's "
           "latencies, lanes and NoC rates) stay estimates: none of the "
           "sources below states them. No row fits a field it validates." %
           (fitted or "none"), "",
           "**Partial.** Not measured: Tenstorrent's ResNet-50 at batch "
           "16 (about 4,700 images/s) and BERT-Large at batch 8 (about "
           "270 sentences/s) on one Wormhole n150. Loom's compiler keeps "
           "every weight and activation in SRAM, and the n150's 108 MB of "
           "SRAM holds neither (ResNet-50's first convolution at batch 16 "
           "writes 51 MB; BERT-Large's weights are 302 MB at fp8): "
           "`loom compile` refuses both, naming the kernel or the bytes. "
           "Streaming from the card's GDDR6 is not built.", ""]
    out += table(rs)
    out += ["", "## Deployable chip counts", "",
            "A TSP holds 230,686,720 bytes of SRAM, so 576 chips hold 132.9 "
            "GB. Llama-2-70B's 68.98 billion weights take 138.0 GB in fp16: "
            "at least 609 chips for the weights alone, more than Groq's "
            "576. On 576 chips at most 92.6% of the weights can be fp16 "
            "(2x + (1 - x) <= 132.9 / 68.98), so at least 7.4% must be 8-bit "
            "before any room for the KV cache and activations: the "
            "deployment implies a mix, which Groq has not published. The G "
            "rows take every weight as int8, the TSP's matrix format (69 GB"
            "); the 7B (6.74 billion "
            "weights, 13.5 GB in fp16) would fit 64 chips even in fp16. "
            "Their layers are bound by their collectives (the fitted wait), "
            "not by the weights' format."]
    out += ["", "## Each row, and why it is off", ""]
    for r in rs:
        if r["id"] in WHY and not r.get("input"):
            why = WHY[r["id"]]
            if "request_rate" in r:
                why = why.replace("{request_rate}", "%.0f" % r["request_rate"])
            out.append("- **%s** (%+.1f%%): %s" % (r["id"], error(r), why))
    out += ["", "## Commands", ""]
    for r in rs:
        out.append("- **%s**: `%s`" % (r["id"], r["cmd"]))
    out += ["", "## Sources", ""]
    for key in sorted({r["source"] for r in rs}):
        out.append("- **%s**: %s" % (key, SOURCES[key]))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", default=os.path.join(ROOT, "build", "bin", "loom"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--rows", choices=["small", "all"], default="all")
    ap.add_argument("--out", default=None)
    ap.add_argument("--check", default=None,
                    help="fail if this page's table rows differ from the "
                         "rows measured now")
    ap.add_argument("--fit", action="store_true",
                    help="solve each fitted preset field on its row and "
                         "print it")
    ap.add_argument("--write-preset", action="store_true",
                    help="with --fit: write the values into the presets")
    args = ap.parse_args()
    fits = []
    with tempfile.TemporaryDirectory() as work:
        fits = fit(args.loom, work)
        for name, path, rid, value, published, reached in fits:
            have = preset(name)
            for key in path:
                have = have.get(key) if isinstance(have, dict) else None
            print("silicon_validation.py: %s %s = %r, fitted on row %s "
                  "(%.0f published, %.1f reached); the preset has %r"
                  % (name, ".".join(path), value, rid, published, reached,
                     have), file=sys.stderr if not args.fit else sys.stdout)
            if args.fit and args.write_preset:
                write_preset(name, path, value)
            elif args.check and have != value:
                sys.exit("silicon_validation.py: targets/%s.json %s is %r, "
                         "but row %s fits %r (rerun scripts/"
                         "silicon_validation.py --fit --write-preset)"
                         % (name, ".".join(path), have, rid, value))
        if args.fit:
            return
    with tempfile.TemporaryDirectory() as work:
        rs = rows(args.loom, args.zoo, work, args.rows)
    if args.check:
        have = open(args.check).read().splitlines()
        for line in table(rs)[2:]:
            if line not in have:
                sys.exit("silicon_validation.py: %s is out of date: it lacks "
                         "the row\n  %s\n(rerun scripts/silicon_validation.py "
                         "--out %s)" % (args.check, line, args.check))
        print("silicon_validation.py: %d rows of %s match"
              % (len(rs), args.check))
        return
    text = page(rs, fits)
    if args.out:
        open(args.out, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
