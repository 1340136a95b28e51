//===- Sweep.h - Co-design sweeps over target fields ------------*- C++ -*-===//
//
// `loom sweep`: compiles every model at every combination of target field
// values (JSON paths into a base target), records what each point costs,
// and draws the results (docs/codesign.md).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SWEEP_SWEEP_H
#define LOOM_SWEEP_SWEEP_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::sweep {

/// One field of the target varied over values: `path` is its JSON path in
/// the target file, dot-separated ("chip.tile.sram.bytes").
struct Axis {
  std::string path;
  std::vector<double> values;
};

/// One point of a sweep: a model and one value per axis.
struct Point {
  std::string model;             // the model file as given
  std::vector<double> values;    // one per axis, in axis order
  /// A stable key ("model|v1|v2|..."), the order results are written in.
  std::string key;
};

/// What one point costs (ok), or why it failed (error).
struct Outcome {
  Point point;
  bool ok = false;
  std::string error;
  double latency = 0;     // seconds for one input
  double throughput = 0;  // inputs per second (1 / interval)
  double chips = 0;
  double utilisation = 0; // busy share of the matrix units
  double sramPeak = 0;    // bytes on the busiest tile
  double perfPerWatt = 0; // inputs per second per watt
  /// The bound of the kernels that take most of the time (compute, sram,
  /// mesh, link, fill_drain, or capacity when it does not fit).
  std::string bound;
};

/// Per model: the objective's gain when one resource improves by 10%.
struct Sensitivity {
  std::string model;
  std::string resource; // a JSON path
  double gain = 0;      // relative improvement of the objective
};

/// What `loom sweep` was asked.
struct Options {
  std::vector<std::string> models; // ONNX files or LLM config.json files
  /// Chips to compile each model for (parallel to `models`; 0: `chips`).
  std::vector<int64_t> modelChips;
  std::string target;              // the base target: preset or file
  std::vector<Axis> axes;
  std::string objective = "throughput"; // latency | throughput | perf-per-watt
  std::string outDir;
  int jobs = 0;                    // parallel compiles (0: the cores)
  int64_t chips = 1;               // --chips for every compile
  std::string precision = "fp32";
  /// The KV cache's storage format for the LLM config.json models
  /// (`--kv-precision`); ONNX models are compiled without it.
  std::string kvPrecision = "fp32";
  std::string loom;                // the loom binary that compiles a point
  bool sensitivity = true;
};

/// Reads "PATH=v1,v2,..." against the base target's JSON text: the path
/// must name a number in it, the values must be numbers of its kind (whole
/// numbers for an integer field), and there must be at least one.
std::optional<Axis> parseAxis(const std::string &spec,
                              const std::string &targetJson,
                              std::string &error);

/// Runs the sweep: every point's result lands in OUT/results.jsonl as it
/// finishes (a rerun skips the points there), then OUT/results.json (every
/// point, sorted: deterministic) and OUT/sweep.html. Under `mpirun` each
/// rank takes every size-th point and rank 0 merges. Returns false with
/// one line in `error` on a bad request.
bool run(const Options &options, std::string &error);

/// Renders the sweep as one self-contained HTML page: per model a Pareto
/// front (throughput against chips and against SRAM per chip, the Pareto
/// points joined and marked), a heat map of the objective over the first
/// two axes (other axes at their first value), the sensitivity table, and
/// the table of every point (failures with their reason).
std::string renderHtml(const std::vector<Axis> &axes,
                       const std::vector<Outcome> &outcomes,
                       const std::vector<Sensitivity> &sensitivity,
                       const std::string &objective, const std::string &title);

/// The points on the Pareto front of (cost, benefit): no other point has
/// lower-or-equal cost and higher-or-equal benefit with one strictly
/// better. Indices into `points`, sorted by cost.
std::vector<size_t>
paretoFront(const std::vector<std::pair<double, double>> &points);

} // namespace loom::sweep

#endif // LOOM_SWEEP_SWEEP_H
