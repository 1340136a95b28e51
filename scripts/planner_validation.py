#!/usr/bin/python3
"""Runs every comparison of docs/planner-validation.md: `loom plan` against
published measurements (MLPerf Inference, TensorRT-LLM's tables, Groq), and
prints the tables and the statistics as Markdown.

usage: scripts/planner_validation.py [--loom build/bin/loom] [--json FILE]

Each row is one `loom plan` command (shown in the output) and one measured
figure quoted in the doc's "Sources". Nothing here is fitted: the inputs are
the measurement's stated conditions, and the rules for the ones it does not
state (the chip count of a plan) and where each input comes from are in
the doc.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

L2 = "models/llama2-70b.json"
L3 = "models/llama3-70b.json"
L405 = "models/llama3.1-405b.json"
MIX = "models/mixtral-8x7b.json"

def trt(model, system, isl, osl, extra):
    """A request for `model`: ISL/OSL tokens, an fp8 KV cache, `system`
    (its flags) and `extra` flags."""
    return (["--model=" + model, "--kv-precision=fp8", "--input-len=%d" % isl,
             "--output-len=%d" % osl] + system + extra)


# MLPerf Llama-2-70B: ISL 222, the mean of the 24,576 samples' token
# counts (the doc's "Inputs"), OSL 294 (the benchmark's tokens per sample).
# Mixtral: ISL 427, the mean of its 15,000 samples; OSL 145.
ML2 = trt(L2, [], 222, 294, [])
MMIX = trt(MIX, [], 427, 145, [])
# MLPerf Llama-3.1-405B: ISL 9429, the mean of its 8,313 samples; OSL from
# each system's log (tokens/s / samples/s). Server bounds: TTFT 6 s, TPOT
# 175 ms.
M405_H200 = trt(L405, [], 9429, 649, [])
# Server and Interactive: Poisson arrivals, the bounds on the 99th
# percentile (loom plan --scenario=server).
SERVER405 = ["--scenario=server", "--ttft=6000", "--tpot=175"]
SERVER = ["--scenario=server", "--ttft=2000", "--tpot=200"]
INTERACTIVE = ["--scenario=server", "--ttft=450", "--tpot=40"]
H100 = ["--system=h100", "--weights=fp8"]
H200 = ["--system=h200", "--weights=fp8"]
B200 = ["--system=b200", "--weights=fp4"]
# MLPerf v5.1, B200 and GB200 NVL72 (NVIDIA's configs: fp4 weights, fp8 KV
# cache). The 405B output length is the Offline logs' tokens/s / samples/s
# (652 on both); its Interactive bounds are a 4.5 s TTFT and an 80 ms TPOT.
GB200 = ["--system=gb200", "--weights=fp4"]
M405_V51 = trt(L405, [], 9429, 652, [])
INTERACTIVE405 = ["--scenario=server", "--ttft=4500", "--tpot=80"]
# Their engines' token budgets per step (max_num_tokens in NVIDIA's v5.1
# configs, closed/NVIDIA/configs/GB200-NVL72_GB200-186GB_aarch64x{4,72}/
# {Offline,Server,Interactive}/*.py; the Custom harness's where the Server
# file also has a Triton one). The 4-GPU Interactive Llama-2-70B config is
# not in the mirror: N3 keeps the default.
BUDGET_L2_GB200 = ["--max-num-tokens=3584"]
BUDGET_405_GB200 = {"Offline": ["--max-num-tokens=1536"],
                    "Server": ["--max-num-tokens=2048"],
                    "Interactive": ["--max-num-tokens=1024"]}
# The same for 8x B200 (closed/NVIDIA/configs/B200-SXM-180GBx8/
# {Offline,Server,Interactive}/{llama2-70b,llama3_1-405b}.py, the runtime
# flags where the build flags differ).
BUDGET_L2_B200 = {"Offline": ["--max-num-tokens=3584"],
                  "Server": ["--max-num-tokens=3584"],
                  "Interactive": ["--max-num-tokens=768"]}
# Mixtral on H200 and B200 runs mixed-precision checkpoints: ModelOpt's
# AutoQuantize picks a format per layer within a bound on the weights'
# mean bits (effective_bits, weighted by weight count: NVFP4 4 bits, FP8 8,
# unquantized 16). H200: fp8 + fp16 at 8.75 bits, so 0.75 / 8 = 9.375% of
# the weights stay fp16. B200: fp4 + fp8 + fp16 at 7.25 bits; without fp16
# layers (the search buys the largest cut in loss a bit, fp4 -> fp8, before
# fp8 -> fp16), 3.25 / 4 = 81.25% fp8 (the doc gives the other extreme).
# The engines' budgets are their configurations' runtime max_num_tokens.
# closed/NVIDIA/configs/B200-SXM-180GBx8/{Offline,Server}/mixtral-8x7b.py
# and closed/ASUSTeK/configs/ESC_N8_H200-SXM-141GBx8/{Offline,Server}/
# mixtral-8x7b.py in ntuhpc/inference_results_v5.1 (their expected QPS
# matches the v5.0 runs'); v4.1's H100 checkpoint is plain fp8.
MIX_H200 = {"Offline": ["--system=h200", "--weights=fp8:0.90625,fp16:0.09375",
                        "--max-num-tokens=9216"],
            "Server": ["--system=h200", "--weights=fp8:0.90625,fp16:0.09375",
                       "--max-num-tokens=8192"]}
MIX_B200 = {"Offline": ["--system=b200", "--weights=fp8:0.8125,fp4:0.1875",
                        "--max-num-tokens=14336"],
            "Server": ["--system=b200", "--weights=fp8:0.8125,fp4:0.1875",
                       "--max-num-tokens=10240"]}
BUDGET_405_B200 = {"Offline": ["--max-num-tokens=1536"],
                   "Server": ["--max-num-tokens=2048"],
                   "Interactive": ["--max-num-tokens=1536"]}


# (id, what, args, metric, measured, group). Metrics: "system" = the top
# plan's tokens/s per chip x the measured system's chips (the plan
# replicated over them); "total" = the top plan's tokens/s; "per_gpu" =
# tokens/s per chip; "tpot_ms", "ttft_ms", "per_user".
THROUGHPUT = [
    ("M15", "8x H100 Offline v5.0", ML2 + H100 + ["--max-chips=8"], ("system", 8), 31306.8, "mlperf-llama"),
    ("M16", "8x H100 Server v5.0", ML2 + H100 + SERVER + ["--max-chips=8"], ("system", 8), 31106.28, "mlperf-llama"),
    ("M17", "8x H200 Offline v5.0", ML2 + H200 + ["--max-chips=8"], ("system", 8), 34988.2, "mlperf-llama"),
    ("M18", "8x H200 Server v5.0", ML2 + H200 + SERVER + ["--max-chips=8"], ("system", 8), 33071.46, "mlperf-llama"),
    ("M19", "8x H200 Interactive v5.0", ML2 + H200 + INTERACTIVE + ["--max-chips=8"], ("system", 8), 19424.25, "mlperf-llama"),
    ("M20", "8x B200 Offline v5.1", ML2 + B200 + BUDGET_L2_B200["Offline"] + ["--max-chips=8"], ("system", 8), 101527, "mlperf-llama"),
    ("M21", "8x B200 Server v5.1", ML2 + B200 + SERVER + BUDGET_L2_B200["Server"] + ["--max-chips=8"], ("system", 8), 99123.04, "mlperf-llama"),
    ("M22", "8x B200 Interactive v5.1", ML2 + B200 + INTERACTIVE + BUDGET_L2_B200["Interactive"] + ["--max-chips=8"], ("system", 8), 59545.45, "mlperf-llama"),
    ("M13", "1x B200 Offline v4.1", ML2 + B200 + ["--max-chips=1"], ("system", 1), 11264.4, "mlperf-llama"),
    ("M14", "1x B200 Server v4.1", ML2 + B200 + SERVER + ["--max-chips=1"], ("system", 1), 10755.59, "mlperf-llama"),
    ("X1", "Mixtral 8x H100 Offline v4.1", MMIX + H100 + ["--max-chips=8"], ("system", 8), 52415.9, "mlperf-mixtral"),
    ("X2", "Mixtral 8x H100 Server v4.1", MMIX + H100 + SERVER + ["--max-chips=8"], ("system", 8), 50795.57, "mlperf-mixtral"),
    ("X5", "Mixtral 8x H200 Offline v5.0", MMIX + MIX_H200["Offline"] + ["--max-chips=8"], ("system", 8), 62629.6, "mlperf-mixtral"),
    ("X6", "Mixtral 8x H200 Server v5.0", MMIX + MIX_H200["Server"] + SERVER + ["--max-chips=8"], ("system", 8), 61801.95, "mlperf-mixtral"),
    ("X7", "Mixtral 8x B200 Offline v5.0", MMIX + MIX_B200["Offline"] + ["--max-chips=8"], ("system", 8), 128148, "mlperf-mixtral"),
    ("X8", "Mixtral 8x B200 Server v5.0", MMIX + MIX_B200["Server"] + SERVER + ["--max-chips=8"], ("system", 8), 126844.55, "mlperf-mixtral"),
    ("X9", "405B 8x H200 Offline v5.0", M405_H200 + H200 + ["--max-chips=8"], ("system", 8), 560.651, "mlperf-405b"),
    ("X10", "405B 8x H200 Server v5.0", M405_H200 + H200 + SERVER405 + ["--max-chips=8"], ("system", 8), 291.37, "mlperf-405b"),
    ("X11", "405B 8x B200 Offline v5.1", M405_V51 + B200 + BUDGET_405_B200["Offline"] + ["--max-chips=8"], ("system", 8), 1624.11, "mlperf-405b"),
    ("X12", "405B 8x B200 Server v5.1", M405_V51 + B200 + SERVER405 + BUDGET_405_B200["Server"] + ["--max-chips=8"], ("system", 8), 1240.42, "mlperf-405b"),
    ("X14", "405B 8x B200 Interactive v5.1", M405_V51 + B200 + INTERACTIVE405 + BUDGET_405_B200["Interactive"] + ["--max-chips=8"], ("system", 8), 751.37, "mlperf-405b"),
    ("N1", "4x GB200 Offline v5.1", ML2 + GB200 + BUDGET_L2_GB200 + ["--max-chips=4"], ("system", 4), 51736.9, "mlperf-gb200"),
    ("N2", "4x GB200 Server v5.1", ML2 + GB200 + SERVER + BUDGET_L2_GB200 + ["--max-chips=4"], ("system", 4), 49359.61, "mlperf-gb200"),
    ("N3", "4x GB200 Interactive v5.1", ML2 + GB200 + INTERACTIVE + ["--max-chips=4"], ("system", 4), 29745.55, "mlperf-gb200"),
    ("N4", "405B 72x GB200 Offline v5.1", M405_V51 + GB200 + BUDGET_405_GB200["Offline"] + ["--max-chips=72"], ("system", 72), 14774.3, "mlperf-gb200"),
    ("N5", "405B 72x GB200 Server v5.1", M405_V51 + GB200 + SERVER405 + BUDGET_405_GB200["Server"] + ["--max-chips=72"], ("system", 72), 11614.28, "mlperf-gb200"),
    ("N6", "405B 72x GB200 Interactive v5.1", M405_V51 + GB200 + INTERACTIVE405 + BUDGET_405_GB200["Interactive"] + ["--max-chips=72"], ("system", 72), 9921.02, "mlperf-gb200"),
]
for isl, osl, measured, tid in [(128, 128, 3317, "T1"), (128, 2048, 2616, "T2"),
                                (2048, 128, 843, "T3"), (2048, 2048, 1583, "T4")]:
    THROUGHPUT.append((tid, "4x H100 TP4 b64 %d/%d (v0.5, static)" % (isl, osl),
                       trt(L2, H100, isl, osl, ["--max-chips=4", "--tp=4", "--pp=1", "--batch=64"]),
                       ("total", 0), measured, "trt-v0.5"))
for tid, tp, batch, isl, osl, measured in [("T6a", 2, 1024, 128, 128, 2657), ("T6b", 4, 480, 128, 2048, 1486),
                                           ("T6c", 2, 96, 2048, 128, 306), ("T6d", 2, 64, 2048, 2048, 547)]:
    THROUGHPUT.append((tid, "H100 TP%d b%d %d/%d (v0.6.1, per GPU)" % (tp, batch, isl, osl),
                       trt(L2, H100, isl, osl, ["--max-chips=%d" % tp, "--tp=%d" % tp, "--pp=1", "--batch=%d" % batch]),
                       ("per_gpu", 0), measured, "trt-v0.6.1"))
for what, system, extra, rows in [
        ("1x H200", H200, ["--max-chips=1"], [(128, 3803), (1000, 2909), (2048, 2003)]),
        ("2x H100 TP2", H100, ["--max-chips=2", "--tp=2", "--pp=1"], [(128, 6378), (1000, 4205), (2048, 3082)]),
        ("1x B200", B200, ["--max-chips=1"], [(128, 11147), (1000, 7007), (2048, 4783)])]:
    for n, measured in rows:
        THROUGHPUT.append(("T9", "%s %d/%d" % (what, n, n), trt(L3, system, n, n, extra),
                           ("total", 0), measured, "trt-perf-overview"))
for what, system, extra, rows in [
        ("8x H200 TP8", H200, ["--max-chips=8", "--tp=8", "--pp=1"], [(128, 3814), (1000, 3330)]),
        ("8x H100 TP8", H100, ["--max-chips=8", "--tp=8", "--pp=1"], [(128, 3627), (1000, 2919)]),
        ("4x B200 TP4", B200, ["--max-chips=4", "--tp=4", "--pp=1"], [(128, 6281), (1000, 5209)])]:
    for n, measured in rows:
        THROUGHPUT.append(("T10", "405B %s %d/%d" % (what, n, n), trt(L405, system, n, n, extra),
                           ("total", 0), measured, "trt-perf-overview"))

# Groq on tsp-v1 (the same requests as docs/silicon-validation.md's G
# rows): LLMPerf's 550/150 tokens, int8 weights (unpublished: the TSP's
# matrix format), one sequence per micro-batch (a per-user speed), 576 chips
# for the 70B (forum comments) and Mixtral (unpublished: the same), 64 for
# the 7B (unpublished: one GroqRack). G3 is the row tsp-v1's fitted
# system.links.sync_seconds is fitted on (scripts/silicon_validation.py
# --fit): shown, and kept out of the statistics.
GROQ_REQUEST = ["--system=tsp-v1", "--input-len=550", "--output-len=150",
                "--weights=int8", "--batch=1"]
GROQ = ["--model=" + L2] + GROQ_REQUEST + ["--max-chips=576"]
# LLMPerf (raw_data/summary/groq_70b.json of the leaderboard): its headline
# 185 tokens/s and its "inter-token latency" (5.32 ms) both divide a whole
# request's time, first token included, by its 150 tokens (llmperf's
# clients: tokens_received / total_request_time). Loom's TPOT and per-user
# speed are the decode after the first token: compared with LLMPerf's
# (150 - 1) / (mean end-to-end 0.8151 s - mean TTFT 0.2279 s).
LLMPERF_TOKENS, LLMPERF_E2E_S, LLMPERF_TTFT_S = 150, 0.8151081097126007, 0.22786034579078357
LLMPERF_DECODE_RATE = (LLMPERF_TOKENS - 1) / (LLMPERF_E2E_S - LLMPERF_TTFT_S)
GROQ7 = ["--model=models/llama2-7b.json"] + GROQ_REQUEST + ["--max-chips=64"]
GROQMIX = ["--model=" + MIX] + GROQ_REQUEST + ["--max-chips=576"]
LATENCY = [
    ("M19", "TPOT, 8x H200 Interactive (planner's plan)", ML2 + H200 + INTERACTIVE + ["--max-chips=8"], ("tpot_ms", 0), 33.7, "tpot-interactive"),
    ("M22", "TPOT, 8x B200 Interactive (planner's plan)", ML2 + B200 + INTERACTIVE + BUDGET_L2_B200["Interactive"] + ["--max-chips=8"], ("tpot_ms", 0), 34.2, "tpot-interactive"),
    ("M16", "TPOT, 8x H100 Server (planner's plan)", ML2 + H100 + SERVER + ["--max-chips=8"], ("tpot_ms", 0), 139.3, "tpot-server"),
    ("M18", "TPOT, 8x H200 Server (planner's plan)", ML2 + H200 + SERVER + ["--max-chips=8"], ("tpot_ms", 0), 170.0, "tpot-server"),
    ("M21", "TPOT, 8x B200 Server (planner's plan)", ML2 + B200 + SERVER + BUDGET_L2_B200["Server"] + ["--max-chips=8"], ("tpot_ms", 0), 123.3, "tpot-server"),
    ("M14", "TPOT, 1x B200 Server v4.1 (planner's plan)", ML2 + B200 + SERVER + ["--max-chips=1"], ("tpot_ms", 0), 131.5, "tpot-server"),
    ("X2", "TPOT, Mixtral 8x H100 Server (planner's plan)", MMIX + H100 + SERVER + ["--max-chips=8"], ("tpot_ms", 0), 102.6, "tpot-server"),
    ("X6", "TPOT, Mixtral 8x H200 Server (planner's plan)", MMIX + MIX_H200["Server"] + SERVER + ["--max-chips=8"], ("tpot_ms", 0), 170.4, "tpot-server"),
    ("X8", "TPOT, Mixtral 8x B200 Server (planner's plan)", MMIX + MIX_B200["Server"] + SERVER + ["--max-chips=8"], ("tpot_ms", 0), 110.0, "tpot-server"),
    ("X10", "TPOT, 405B 8x H200 Server (planner's plan)", M405_H200 + H200 + SERVER405 + ["--max-chips=8"], ("tpot_ms", 0), 53.9, "tpot-server"),
    ("X12", "TPOT, 405B 8x B200 Server (planner's plan)", M405_V51 + B200 + SERVER405 + BUDGET_405_B200["Server"] + ["--max-chips=8"], ("tpot_ms", 0), 101.3, "tpot-server"),
    ("X14", "TPOT, 405B 8x B200 Interactive (planner's plan)", M405_V51 + B200 + INTERACTIVE405 + BUDGET_405_B200["Interactive"] + ["--max-chips=8"], ("tpot_ms", 0), 62.3, "tpot-interactive"),
    ("N2", "TPOT, 4x GB200 Server (planner's plan)", ML2 + GB200 + SERVER + BUDGET_L2_GB200 + ["--max-chips=4"], ("tpot_ms", 0), 115.9, "tpot-server"),
    ("N3", "TPOT, 4x GB200 Interactive (planner's plan)", ML2 + GB200 + INTERACTIVE + ["--max-chips=4"], ("tpot_ms", 0), 30.6, "tpot-interactive"),
    ("N5", "TPOT, 405B 72x GB200 Server (planner's plan)", M405_V51 + GB200 + SERVER405 + BUDGET_405_GB200["Server"] + ["--max-chips=72"], ("tpot_ms", 0), 104.3, "tpot-server"),
    ("N6", "TPOT, 405B 72x GB200 Interactive (planner's plan)", M405_V51 + GB200 + INTERACTIVE405 + BUDGET_405_GB200["Interactive"] + ["--max-chips=72"], ("tpot_ms", 0), 66.2, "tpot-interactive"),
    ("G2", "TPOT, Groq Llama-2-70B 550/150 (LLMPerf, after the first token)", GROQ, ("tpot_ms", 0),
     1e3 / LLMPERF_DECODE_RATE, "tpot-groq"),
    ("G2", "tokens/s per user, Groq Llama-2-70B 550/150 (LLMPerf, after the first token)", GROQ,
     ("per_user", 0), LLMPERF_DECODE_RATE, "per-user"),
    ("G2", "tokens/s per request, Groq Llama-2-70B 550/150 (LLMPerf's 185: its client's TTFT, then Loom's decode)",
     GROQ, ("llmperf_request", 0), 185, "llmperf-request"),
    ("G2", "TTFT, Groq Llama-2-70B 550/150 (p50, at the client)", GROQ, ("ttft_ms", 0), 221.9, "ttft-groq"),
    ("G1", "tokens/s per user, Groq Llama-2-70B (Groq's claim)", GROQ, ("per_user", 0), 300, "per-user"),
    ("G3", "tokens/s per user, Groq Llama-2-7B (Groq's claim; fits sync_seconds)", GROQ7, ("per_user", 0), 750, "per-user-fit"),
    ("G4", "tokens/s per user, Groq Mixtral-8x7B (Groq's claim)", GROQMIX, ("per_user", 0), 480, "per-user"),
    ("T5", "TTFT, 4x H100 TP4 batch 1, ISL 128", trt(L2, H100, 128, 1, ["--max-chips=4", "--tp=4", "--pp=1", "--batch=1"]), ("ttft_ms", 0), 26, "ttft"),
    ("T5", "TTFT, 4x H100 TP4 batch 1, ISL 2048", trt(L2, H100, 2048, 1, ["--max-chips=4", "--tp=4", "--pp=1", "--batch=1"]), ("ttft_ms", 0), 109, "ttft"),
]


def run(loom, args, cache):
    key = tuple(args)
    if key not in cache:
        out = subprocess.run([loom, "plan"] + args + ["--top=1", "--json"], cwd=ROOT,
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("loom plan %s: %s" % (" ".join(args), out.stderr.strip()))
        cache[key] = json.loads(out.stdout)["plans"][0]
    return cache[key]


def value(plan, metric):
    kind, n = metric
    if kind == "system":
        return plan["tokens_per_s"] / plan["chips"] * n
    if kind == "total":
        return plan["tokens_per_s"]
    if kind == "per_gpu":
        return plan["tokens_per_s"] / plan["chips"]
    if kind == "tpot_ms":
        return plan["tpot_s"] * 1e3
    if kind == "ttft_ms":
        return plan["ttft_s"] * 1e3
    if kind == "per_user":
        return plan["tokens_per_s_per_user"]
    if kind == "llmperf_request":
        # LLMPerf's per-request rate with its client's measured first token
        # (network and API included) and Loom's decode for the rest.
        return LLMPERF_TOKENS / (LLMPERF_TTFT_S + (LLMPERF_TOKENS - 1) * plan["tpot_s"])
    raise ValueError(kind)


def describe(plan):
    return "%d chips (%dx%dx%dx%d), batch %d%s, %s" % (
        plan["chips"], plan["tp"], plan["pp"], plan["ep"], plan["dp"], plan["batch"],
        " x %d micro" % plan["micro_batches"] if plan["micro_batches"] > 1 else "",
        "compiled" if plan["decode_priced_by"] == "compiled layer" else "cost model") + (
        ", prefill compiled" if plan.get("prefill_priced_by") == "compiled chunks" else "")


def fmt(v):
    return "{:,.0f}".format(v) if v >= 100 else "{:.3g}".format(v)


def table(rows, loom, cache, results):
    print("| ID | What | Loom plan | Predicted | Measured | Error |")
    print("|---|---|---|---|---|---|")
    for rid, what, args, metric, measured, group in rows:
        plan = run(loom, args, cache)
        pred = value(plan, metric)
        err = pred / measured - 1
        results.append({"id": rid, "what": what, "group": group, "metric": metric[0],
                        "predicted": pred, "measured": measured, "error": err,
                        "command": "./build/bin/loom plan " + " ".join(args)})
        print("| %s | %s | %s | %s | %s | **%+.1f%%** |" % (
            rid, what, describe(plan), fmt(pred), fmt(measured), 100 * err))


def stats(results, label):
    if not results:
        return
    errs = [r["error"] for r in results]
    mae = sum(abs(e) for e in errs) / len(errs)
    within = sum(1 for e in errs if abs(e) <= 0.25)
    srt = sorted(errs)
    med = srt[len(srt) // 2] if len(srt) % 2 else (srt[len(srt) // 2 - 1] + srt[len(srt) // 2]) / 2
    print("| %s | %d | %.1f%% | %+.1f%% | %d |" % (label, len(errs), 100 * mae, 100 * med, within))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", default=os.path.join(ROOT, "build/bin/loom"))
    ap.add_argument("--json")
    a = ap.parse_args()
    cache, thr, lat = {}, [], []
    print("### Throughput (output tokens/s)\n")
    table(THROUGHPUT, a.loom, cache, thr)
    print("\n### Latency\n")
    table(LATENCY, a.loom, cache, lat)
    print("\n### Statistics\n")
    print("| Rows | Comparisons | Mean absolute error | Median error | Within 25% |")
    print("|---|---|---|---|---|")
    stats(thr, "Throughput, all")
    for g in ["mlperf-llama", "mlperf-mixtral", "mlperf-405b", "mlperf-gb200", "trt-v0.5", "trt-v0.6.1",
              "trt-perf-overview"]:
        stats([r for r in thr if r["group"] == g], "Throughput, " + g)
    stats([r for r in lat if r["metric"] == "tpot_ms"], "TPOT, all")
    for g in ["tpot-interactive", "tpot-server", "tpot-groq"]:
        stats([r for r in lat if r["group"] == g], "TPOT, " + g)
    # G3 fits tsp-v1's sync_seconds: not a validation.
    stats([r for r in lat if r["group"] == "per-user"], "Tokens/s per user (Groq)")
    stats([r for r in lat if r["group"] == "llmperf-request"],
          "Tokens/s per request (LLMPerf's 185, its TTFT given)")
    stats([r for r in lat if r["id"] in ("G1", "G4")],
          "Tokens/s per user (Groq's claims)")
    stats([r for r in lat if r["group"] == "ttft"], "TTFT, batch 1")
    stats([r for r in lat if r["group"] == "ttft-groq"], "TTFT, Groq")
    print("\n### Commands\n")
    print("```sh")
    seen = set()
    for r in thr + lat:
        if r["command"] not in seen:
            seen.add(r["command"])
            print("# %s %s\n%s" % (r["id"], r["what"], r["command"]))
    print("```")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(thr + lat, f, indent=1)


if __name__ == "__main__":
    main()
