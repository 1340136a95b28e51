//===- Report.cpp - The plans as a table, a Pareto page and JSON ----------===//
//
// What `loom plan` prints: the request and the search's bounds, the
// ranked plans and why the top one won (formatTable), the Pareto front as
// a table and as an HTML page with its picture, and the JSON of
// docs/planner.md (formatJson).
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"

#include "loom/Runtime/Floorplan.h"
#include "loom/Runtime/TargetDesc.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace loom::plan {

std::string targetsOf(const Request &r) {
  return (r.ttft > 0 ? "time to first token " +
                           std::to_string(int64_t(r.ttft * 1e3)) + " ms"
                     : std::string()) +
         (r.ttft > 0 && r.tpot > 0 ? ", " : "") +
         (r.tpot > 0 ? "time per output token " +
                           std::to_string(r.tpot * 1e3).substr(0, 6) + " ms"
                     : std::string());
}

std::string describe(const Plan &p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%lld chips (tp %lld x pp %lld x ep %lld x dp %lld, batch "
                "%lld): time to first token %.1f ms, time per output token "
                "%.2f ms",
                (long long)p.chips, (long long)p.tp, (long long)p.pp,
                (long long)p.ep, (long long)p.dp, (long long)p.batch,
                p.ttft * 1e3, p.tpotLoaded * 1e3);
  std::string out = buf;
  if (p.tpotP99 != p.tpotLoaded) {
    std::snprintf(buf, sizeof buf, " (99th percentile %.2f ms)",
                  p.tpotP99 * 1e3);
    out += buf;
  }
  return out;
}

std::string rankedBy(const Request &r) {
  if (r.prefillOnly)
    return "prompts per second per chip, then the faster prompt";
  if (r.concurrency > 0 || r.requestRate > 0)
    return "the fewest chips that serve the load, then the lower TPOT";
  return "tokens/s per chip (tok/s/chip), then the fewer chips";
}

namespace {

/// The request, and the search's bounds, in words: what the plans
/// assumed (formatTable prints it first).
std::string requestText(const Result &result, const Request &r) {
  const bool server = r.scenario == "server";
  char buf[128];
  std::string load = server ? "none given (the highest rate the bounds admit)"
                            : "none given (as many sequences as pay off)";
  if (r.concurrency > 0)
    load = std::to_string(r.concurrency) + " sequences at once";
  if (r.requestRate > 0) {
    std::snprintf(buf, sizeof buf, "%g requests/s", r.requestRate);
    load = buf;
  }
  std::string bounds;
  auto ms = [&](double s) {
    std::snprintf(buf, sizeof buf, "%g ms", s * 1e3);
    return std::string(buf);
  };
  if (r.ttft > 0)
    bounds += std::string(server ? "p99 " : "") + "TTFT <= " + ms(r.ttft);
  if (r.tpot > 0)
    bounds += std::string(bounds.empty() ? "" : ", ") + (server ? "p99 " : "") +
              "TPOT <= " + ms(r.tpot);
  if (bounds.empty())
    bounds = "none";
  auto degree = [](const char *name, int64_t forced, int64_t max) {
    return std::string(name) + " " +
           (forced > 0 ? std::to_string(forced) + " (forced)"
                       : (max > 1 ? "1 to " : "") + std::to_string(max));
  };
  std::string out = "request: " + result.model + " on " + result.system + ", " +
                    std::to_string(r.inputLen) + " input and " +
                    std::to_string(r.outputLen) + " output tokens; weights " +
                    r.weights + ", KV cache " + r.kv + ", activations " +
                    r.activations + "; " + r.scenario + " scenario; load " +
                    load + "; bounds " + bounds + "; token budget " +
                    std::to_string(r.maxNumTokens) + " a step\n";
  out += "searched: 1 to " + std::to_string(result.chips.max) + " chips (" +
         result.chips.why + "); " + degree("tp", r.tp, result.tpMax) + ", " +
         degree("pp", r.pp, result.ppMax) + ", " +
         degree("ep", 0, result.epMax) +
         (result.expertsByTp ? " (experts split by tp, as the compiler "
                               "lowers them: no expert-parallel lowering)"
                             : "") +
         ", " +
         degree("batch", r.batch, result.batchMax) + "\n";
  out += "ranked by: " + rankedBy(r) + "\n";
  return out;
}

/// The degrees as the tables' "tp x pp x ep x dp" column writes them.
std::string degreesText(const Plan &p) {
  return std::to_string(p.tp) + " x " + std::to_string(p.pp) + " x " +
         std::to_string(p.ep) + " x " + std::to_string(p.dp);
}

std::string splitText(const Plan &p) {
  return "tp " + std::to_string(p.tp) + " x pp " + std::to_string(p.pp) +
         " x ep " + std::to_string(p.ep) + " x dp " + std::to_string(p.dp) +
         ", batch " + std::to_string(p.batch);
}

/// One line on why the top plan won against the next one.
std::string whyTop(const Result &result, const Request &r) {
  if (result.plans.empty())
    return "";
  const Plan &top = result.plans.front();
  char buf[256];
  if (!top.meetsTargets)
    return "why: no plan meets the targets; this one misses them least\n";
  const std::string bound =
      "; its decode step is " +
      (top.decodeBound == "memory bandwidth" ? std::string("memory")
                                             : top.decodeBound) +
      " bound";
  if (!result.runnerUp)
    return "why: the only plan that fits and meets the targets" + bound + "\n";
  const Plan &next = *result.runnerUp;
  const bool load = r.concurrency > 0 || r.requestRate > 0;
  if (load) {
    if (top.chips < next.chips) {
      std::snprintf(buf, sizeof buf,
                    "why: %lld chips, the fewest that serve the load within "
                    "the targets (the next, %s, takes %lld)",
                    (long long)top.chips, splitText(next).c_str(),
                    (long long)next.chips);
    } else {
      std::snprintf(buf, sizeof buf,
                    "why: %lld chips, the fewest that serve the load; among "
                    "them the lowest TPOT, %.3f ms (the next, %s: %.3f ms)",
                    (long long)top.chips, top.tpotLoaded * 1e3,
                    splitText(next).c_str(), next.tpotLoaded * 1e3);
    }
    return buf + bound + "\n";
  }
  const double a = perChip(top), b = perChip(next);
  if (b > 0 && a > b * (1 + 1e-9))
    std::snprintf(buf, sizeof buf,
                  "why: the most tokens/s per chip, %.1f, %.1f%% more than "
                  "the next (%s on %lld chips: %.1f)",
                  a, 100 * (a / b - 1), splitText(next).c_str(),
                  (long long)next.chips, b);
  else
    std::snprintf(buf, sizeof buf,
                  "why: as many tokens/s per chip as the next (%s: %.1f) on "
                  "%s chips",
                  splitText(next).c_str(), b,
                  top.chips < next.chips ? "fewer" : "as many");
  return buf + bound + "\n";
}

} // namespace

namespace {
/// The line saying that `p`'s layer compiled at another format than the
/// weights' (the first of a mix's), and why (plan::layerPrecision): the
/// compiler has no kernels of that format (fp4), or `system`'s matrix
/// unit does not run it and runs one of its width; empty when it compiled
/// at the weights' own format, or did not compile. As `loom compile` says
/// it of --precision.
std::string layerFormatNote(const Plan &p, const std::string &system,
                            const Request &r) {
  std::string bad;
  std::vector<WeightShare> mix = weightMix(r.weights, bad);
  if (!p.compiled || p.layerPrecision.empty() || mix.empty())
    return "";
  const std::string &weights = mix.front().format;
  if (p.layerPrecision == weights)
    return "";
  std::string why =
      loom::rt::kernelPrecisionFormat(weights)
          ? system + "'s matrix unit does not run " + weights + "; " +
                p.layerPrecision + " is the format of its width it runs"
          : "the compiler has no " + weights +
                " kernels (the layer compiled at a one-byte format)";
  return "compiled at " + p.layerPrecision + ", not " + weights + ": " + why +
         "\n";
}
} // namespace

std::string formatTable(const Result &result, const Request &r) {
  std::string out = requestText(result, r);
  char buf[512];
  // The server scenario adds the TPOT's 99th percentile (what --tpot
  // bounds there).
  const bool server = r.scenario == "server";
  std::snprintf(
      buf, sizeof buf,
      "%-5s %-20s %6s %5s %6s %9s %9s %9s%s %9s %11s %10s %10s %14s %-9s %s\n",
      "chips", "tp x pp x ep x dp", "batch", "nodes", "racks", "TTFT ms",
      "step ms", "TPOT ms", server ? "    p99 ms" : "", "tok/s/usr", "tok/s",
      "tok/s/chip", "tok/s/W", "mem/chip", "bound", "");
  out += buf;
  for (const Plan &p : result.plans) {
    std::string split = degreesText(p);
    char p99[32] = "";
    if (server)
      std::snprintf(p99, sizeof p99, " %9.3f", p.tpotP99 * 1e3);
    std::snprintf(
        buf, sizeof buf,
        "%-5lld %-20s %6lld %5lld %6lld %9.1f %9.3f %9.3f%s %9.1f %11.0f "
        "%10.1f %10.2f %7.1f %s %2.0f%% %-9s %s%s%s\n",
        (long long)p.chips, split.c_str(), (long long)p.batch,
        (long long)p.nodes, (long long)p.racks, p.ttft * 1e3, p.tpot * 1e3,
        p.tpotLoaded * 1e3, p99, p.tokensPerSecondPerUser, p.tokensPerSecond,
        perChip(p), p.tokensPerSecondPerWatt,
        p.memoryPerChip / (p.memory == "SRAM" ? 1e6 : 1e9),
        p.memory == "SRAM" ? "MB" : "GB",
        100.0 * p.memoryPerChip / p.capacityPerChip,
        p.decodeBound == "memory bandwidth" ? "memory" : p.decodeBound.c_str(),
        p.compiled ? "compiled" : "estimate",
        p.meetsTargets ? "" : " (misses targets)",
        p.note.empty() ? "" : ("; " + p.note).c_str());
    out += buf;
  }
  out += whyTop(result, r);
  std::snprintf(buf, sizeof buf, "%lld candidates priced in %.2f s\n",
                (long long)result.evaluated, result.seconds);
  out += buf;
  out += "step: one decode step; TPOT: per output token under the plan's "
         "load, the other sequences' prefills interleaved between steps\n";
  const bool disaggregated =
      !result.plans.empty() && !result.plans.front().prefillSystem.empty();
  if (server && !disaggregated)
    out += "server: requests arrive as a Poisson process; tok/s is the "
           "highest rate at which the 99th-percentile TTFT (the waits for "
           "a free batch slot and for prefill included) and the "
           "99th-percentile TPOT (p99: the prefills interleaved in a "
           "request's decode vary) meet the targets\n";
  if (server && disaggregated)
    out += "server: requests arrive as a Poisson process; TTFT: the "
           "99th percentile of a prompt's wait on its prefill replica, its "
           "prefill and the KV cache's move; p99: the decode step and the "
           "wait for a decode slot spread over the output; tok/s: the "
           "highest decode rate whose slot wait meets both targets\n";
  bool anyEstimate = false;
  for (const Plan &p : result.plans)
    anyEstimate = anyEstimate || (!p.compiled && p.memory == "SRAM");
  if (anyEstimate)
    out += "estimate: priced by the cost model alone (--no-compile, or the "
           "layer budget was spent: scaled by the compiled layers' ratio to "
           "their estimates); compiled: the decode layer's schedule\n";
  for (const Plan &p : result.plans)
    if (std::string note = layerFormatNote(p, result.system, r);
        !note.empty()) {
      out += note;
      break;
    }
  if (!result.alone.empty()) {
    out += "each system alone, for the same request:\n";
    for (const Result::Alone &a : result.alone) {
      if (!a.plan) {
        out += "  " + a.system + ": no plan (" + a.why + ")\n";
        continue;
      }
      std::snprintf(buf, sizeof buf, ": %.0f tok/s, %.2f tok/s/W\n",
                    a.plan->tokensPerSecond, a.plan->tokensPerSecondPerWatt);
      out += "  " + a.system + ": " + describe(*a.plan) + buf;
    }
    for (const Result::Alone &a : result.alone)
      if (a.plan)
        out += layerFormatNote(*a.plan, a.system, r);
  }
  int64_t chunk = 0;
  for (const Plan &p : result.plans)
    chunk = std::max(chunk, p.prompt.chunk);
  if (chunk)
    out += "TTFT: the prompt's prefill priced by compiled chunks of " +
           std::to_string(chunk) +
           " tokens (chunked prefill; the other plans' scaled by their "
           "ratio to the estimate)\n";
  for (const std::string &f : result.compileFailures)
    out += "warning: " + f + "\n";
  return out;
}

std::string formatParetoTable(const Result &result, const Request &r) {
  std::string out = requestText(result, r);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Pareto front of tokens/s per user against tokens/s per chip "
                "(%zu plans; none of the %lld candidates is better on both)\n",
                result.front.size(), (long long)result.evaluated);
  out += buf;
  std::snprintf(buf, sizeof buf, "%9s %10s %-5s %-20s %6s %5s %9s %9s %s\n",
                "tok/s/usr", "tok/s/chip", "chips", "tp x pp x ep x dp",
                "batch", "micro", "TTFT ms", "TPOT ms", "");
  out += buf;
  for (const Plan &p : result.front) {
    std::string split = degreesText(p);
    std::snprintf(buf, sizeof buf,
                  "%9.1f %10.1f %-5lld %-20s %6lld %5lld %9.1f %9.3f %s\n",
                  p.tokensPerSecondPerUser, perChip(p), (long long)p.chips,
                  split.c_str(), (long long)p.batch, (long long)p.micro,
                  p.ttft * 1e3, p.tpotLoaded * 1e3,
                  p.compiled                        ? "compiled"
                  : p.memory == "SRAM" && r.compile ? "estimate (calibrated)"
                                                    : "estimate");
    out += buf;
  }
  out += "tok/s/usr: 1 / TPOT, the TPOT under the plan's load; tok/s/chip: "
         "the plan's tokens/s over its chips; micro: micro-batches in flight "
         "through the stages\n";
  if (r.compile && !result.front.empty() &&
      result.front.front().memory == "SRAM")
    out += "estimate (calibrated): the cost model scaled by the compiled "
           "decode layers' and prefill chunks' ratios to their estimates, "
           "as the ranked plans are\n";
  for (const Plan &p : result.front)
    if (std::string note = layerFormatNote(p, result.system, r);
        !note.empty()) {
      out += note;
      break;
    }
  return out;
}

namespace {
/// Ticks for an axis from `lo` to `hi`: 1, 2, 5 x a power of ten, about
/// five of them, never a zero on a log axis.
std::vector<double> axisTicks(double lo, double hi, bool log) {
  std::vector<double> ticks;
  if (log) {
    for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001;
         d *= 10)
      for (double k : {1.0, 2.0, 5.0})
        if (k * d >= lo * 0.9999 && k * d <= hi * 1.0001)
          ticks.push_back(k * d);
    return ticks;
  }
  double step = std::pow(10, std::floor(std::log10((hi - lo) / 4)));
  for (double k : {1.0, 2.0, 5.0, 10.0})
    if ((hi - lo) / (k * step) <= 6) {
      step *= k;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi * 1.0001; v += step)
    ticks.push_back(v);
  return ticks;
}

std::string tickText(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
} // namespace

std::string formatParetoHtml(const Result &result, const Request &r) {
  std::ostringstream o;
  const std::string title =
      "loom plan --pareto: " + result.model + " on " + result.system;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
    << rt::xmlEscape(title)
    << "</title><style>body{font-family:sans-serif;margin:24px;color:#222;"
       "max-width:1100px}h1{font-size:20px}.note{color:#555;font-size:13px;"
       "white-space:pre-wrap}"
       "table{border-collapse:collapse;font-size:12px}td,th{border:1px "
       "solid #ccc;padding:2px 6px;text-align:right}</style></head><body>\n"
    << "<h1>" << rt::xmlEscape(title) << "</h1>\n<pre class=\"note\">"
    << rt::xmlEscape(requestText(result, r)) << "</pre>\n";
  const std::vector<Plan> &front = result.front;
  if (front.empty()) {
    o << "<p>no plan meets the targets: the front is empty</p></body></html>\n";
    return o.str();
  }
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const Plan &p : front) {
    xlo = std::min(xlo, p.tokensPerSecondPerUser);
    xhi = std::max(xhi, p.tokensPerSecondPerUser);
    ylo = std::min(ylo, perChip(p));
    yhi = std::max(yhi, perChip(p));
  }
  // A log axis where the values span more than a decade (a front spans
  // batch 1 to thousands), else linear; a single value gets a range
  // around it.
  auto widen = [](double &lo, double &hi) {
    if (hi <= lo * 1.0001) {
      lo = lo * 0.9;
      hi = hi * 1.1;
    }
  };
  widen(xlo, xhi);
  widen(ylo, yhi);
  const bool xlog = xhi / xlo > 10, ylog = yhi / ylo > 10;
  const double W = 560, H = 340, L = 70, T = 30, B = 50, R = 30;
  auto at = [](double v, double lo, double hi, bool log, double a, double b) {
    double f =
        log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo))
            : (v - lo) / (hi - lo);
    return a + f * (b - a);
  };
  auto X = [&](double v) { return at(v, xlo, xhi, xlog, L, L + W); };
  auto Y = [&](double v) { return at(v, ylo, yhi, ylog, T + H, T); };
  char buf[256];
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pareto\" width=\""
    << L + W + R << "\" height=\"" << T + H + B << "\">";
  o << "<text x=\"" << L
    << "\" y=\"18\" font-size=\"13\" "
       "font-weight=\"bold\">tokens/s per chip against tokens/s per user "
       "(Pareto front)</text>";
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W
    << "\" height=\"" << H << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  for (double v : axisTicks(xlo, xhi, xlog)) {
    std::snprintf(
        buf, sizeof buf,
        "<g class=\"xtick\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%.1f\" "
        "font-size=\"10\" text-anchor=\"middle\">",
        X(v), T, X(v), T + H, X(v), T + H + 14);
    o << buf << tickText(v) << "</text></g>";
  }
  for (double v : axisTicks(ylo, yhi, ylog)) {
    std::snprintf(
        buf, sizeof buf,
        "<g class=\"ytick\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%.1f\" "
        "font-size=\"10\" text-anchor=\"end\">",
        L, Y(v), L + W, Y(v), L - 4, Y(v) + 3);
    o << buf << tickText(v) << "</text></g>";
  }
  o << "<text class=\"xlabel\" x=\"" << L + W / 2 << "\" y=\"" << T + H + 36
    << "\" font-size=\"11\" text-anchor=\"middle\">tokens/s per user (1 / "
       "TPOT)"
    << (xlog ? ", log scale" : "") << "</text>";
  o << "<text class=\"ylabel\" x=\"16\" y=\"" << T + H / 2
    << "\" font-size=\"11\" transform=\"rotate(-90 16 " << T + H / 2
    << ")\" text-anchor=\"middle\">tokens/s per chip"
    << (ylog ? ", log scale" : "") << "</text>";
  o << "<polyline class=\"front\" fill=\"none\" stroke=\"#c0392b\" "
       "stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < front.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", i ? " " : "",
                  X(front[i].tokensPerSecondPerUser), Y(perChip(front[i])));
    o << buf;
  }
  o << "\"/>";
  for (const Plan &p : front) {
    std::snprintf(
        buf, sizeof buf,
        "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
        "fill=\"#c0392b\" stroke=\"#333\" stroke-width=\"0.5\"><title>",
        X(p.tokensPerSecondPerUser), Y(perChip(p)));
    o << buf;
    std::snprintf(buf, sizeof buf,
                  "%lld chips, %s: %.1f tok/s per user, %.1f tok/s per chip, "
                  "TTFT %.1f ms",
                  (long long)p.chips, splitText(p).c_str(),
                  p.tokensPerSecondPerUser, perChip(p), p.ttft * 1e3);
    o << rt::xmlEscape(buf) << "</title></circle>";
  }
  o << "</svg>\n<table><tr><th>tok/s/usr</th><th>tok/s/chip</th><th>chips</th>"
       "<th>split</th><th>TTFT ms</th><th>TPOT ms</th><th>priced "
       "by</th></tr>\n";
  for (const Plan &p : front) {
    std::snprintf(buf, sizeof buf,
                  "<tr><td>%.1f</td><td>%.1f</td><td>%lld</td><td>%s</td>"
                  "<td>%.1f</td><td>%.3f</td><td>%s</td></tr>\n",
                  p.tokensPerSecondPerUser, perChip(p), (long long)p.chips,
                  rt::xmlEscape(splitText(p)).c_str(), p.ttft * 1e3,
                  p.tpotLoaded * 1e3,
                  p.compiled ? "compiled layer" : "cost model");
    o << buf;
  }
  o << "</table>\n</body></html>\n";
  return o.str();
}

std::string formatJson(const Result &result, const Request &r) {
  nlohmann::ordered_json j;
  j["request"] = {{"input_len", r.inputLen},
                  {"output_len", r.outputLen},
                  {"concurrency", r.concurrency},
                  {"request_rate", r.requestRate},
                  {"weights", r.weights},
                  {"kv", r.kv},
                  {"activations", r.activations},
                  {"ttft_s", r.ttft},
                  {"tpot_s", r.tpot},
                  {"max_chips", result.chips.max},
                  {"max_num_tokens", r.maxNumTokens},
                  {"scenario", r.scenario}};
  j["request"]["model"] = result.model;
  j["request"]["system"] = result.system;
  j["searched"] = {
      {"max_chips", result.chips.max}, {"max_chips_why", result.chips.why},
      {"tp_max", result.tpMax},        {"pp_max", result.ppMax},
      {"ep_max", result.epMax},        {"batch_max", result.batchMax}};
  if (result.expertsByTp)
    j["searched"]["experts_by_tp"] = true;
  j["ranked_by"] = rankedBy(r);
  if (std::string why = whyTop(result, r); !why.empty())
    j["why"] = why.substr(5, why.size() - 6); // without "why: " and "\n"

  auto planJson = [](const Plan &p) {
    nlohmann::ordered_json q;
    q["system"] = p.system;
    q["chips"] = p.chips;
    q["nodes"] = p.nodes;
    q["racks"] = p.racks;
    q["tp"] = p.tp;
    q["pp"] = p.pp;
    q["ep"] = p.ep;
    q["dp"] = p.dp;
    q["batch"] = p.batch;
    q["micro_batches"] = p.micro;
    q["concurrency"] = p.concurrency;
    q["ttft_s"] = p.ttft;
    q["ttft_alone_s"] = p.ttftAlone;
    q["prefill_steps"] = p.prefillSteps;
    q["requests_per_s_per_replica"] = p.requestRate;
    q["tpot_s"] = p.tpotLoaded;
    q["tpot_p99_s"] = p.tpotP99;
    q["decode_step_s"] = p.tpot;
    q["prefill_share_s"] = p.prefillShare;
    q["tokens_per_s_per_user"] = p.tokensPerSecondPerUser;
    q["tokens_per_s"] = p.tokensPerSecond;
    q["tokens_per_s_per_chip"] = perChip(p);
    q["tokens_per_s_per_watt"] = p.tokensPerSecondPerWatt;
    q["memory"] = p.memory;
    q["memory_per_chip_bytes"] = p.memoryPerChip;
    q["weights_per_chip_bytes"] = p.weightsPerChip;
    q["kv_per_chip_bytes"] = p.kvPerChip;
    q["capacity_per_chip_bytes"] = p.capacityPerChip;
    q["decode_bound"] = p.decodeBound;
    q["prefill_bound"] = p.prefillBound;
    q["meets_targets"] = p.meetsTargets;
    q["decode_priced_by"] = p.compiled ? "compiled layer" : "cost model";
    q["prefill_s"] = p.prompt.alone;
    q["prefill_layer_s"] = p.prompt.layer;
    q["prefill_priced_by"] = p.prompt.pricedBy;
    if (p.prompt.chunk)
      q["prefill_chunk_tokens"] = p.prompt.chunk;
    q["prefill_chunks_pipelined"] = p.prompt.chunks;
    if (p.compiled)
      q["layer_precision"] = p.layerPrecision;
    if (!p.prefillSystem.empty()) {
      q["prefill_system"] = p.prefillSystem;
      q["prefill_chips"] = p.prefillChips;
      q["prefill_replicas"] = p.prefillReplicas;
      q["prefill_tp"] = p.prefillTp;
      q["kv_move_s"] = p.kvMove;
    }
    if (!p.note.empty())
      q["note"] = p.note;
    return q;
  };
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const Plan &p : result.plans)
    plans.push_back(planJson(p));
  j["plans"] = plans;
  if (!result.alone.empty()) {
    nlohmann::ordered_json alone = nlohmann::ordered_json::array();
    for (const Result::Alone &a : result.alone) {
      nlohmann::ordered_json q =
          a.plan ? planJson(*a.plan) : nlohmann::ordered_json::object();
      if (!a.plan) {
        q["system"] = a.system;
        q["error"] = a.why;
      }
      alone.push_back(q);
    }
    j["alone"] = alone;
  }
  if (r.pareto) {
    nlohmann::ordered_json front = nlohmann::ordered_json::array();
    for (const Plan &p : result.front)
      front.push_back(planJson(p));
    j["pareto_front"] = front;
  }
  if (!result.compileFailures.empty())
    j["compile_failures"] = result.compileFailures;
  j["candidates"] = result.evaluated;
  j["seconds"] = result.seconds;
  return j.dump(2) + "\n";
}

} // namespace loom::plan
