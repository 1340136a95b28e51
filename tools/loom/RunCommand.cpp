//===- RunCommand.cpp - `loom run`: a program on the simulator ------------===//
//
//   loom run OUT.loom --input NAME=FILE.npy ... --output-dir DIR
//       [--trace=FILE.json] [--stats=FILE.json] [--timing-only] [--json]
//       [--verbose] [--no-verify] [--hazards=stop|count] [--ignore-checksum]
//
// Uses only the runtime (no MLIR): load and verify the program, replay its
// schedule event by event, bind the inputs by the model's input names,
// simulate, write DIR/<output>.npy and print the statistics. --no-verify
// skips the schedule verifier (the replay still stops at the first hazard);
// --hazards=count runs on past hazards and counts them; --ignore-checksum
// runs a file edited by hand (its checksum no longer matches).
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Progress.h"
#include "loom/Runtime/Report.h"
#include "loom/Runtime/Simulator.h"
#include "loom/Runtime/TensorIO.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace loom {

namespace {

/// What `loom run`'s command line asks for.
struct RunFlags {
  std::string programPath, outputDir, tracePath, statsPath, reportPath;
  bool timingOnly = false, json = false, verbose = false;
  rt::SimOptions options;
  rt::LoadOptions loadOptions;
  int64_t stream = 1;
  std::map<std::string, std::string> inputFiles;
};

/// Reads `loom run`'s flags; throws rt::Error at a bad one.
RunFlags parseRunFlags(int argc, char **argv) {
  using rt::Error;
  RunFlags f;
  std::set<std::string> seen;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string &flag) -> std::string {
      if (a.size() > flag.size() && a[flag.size()] == '=')
        return a.substr(flag.size() + 1);
      if (i + 1 >= argc)
        throw Error("option '" + flag + "' needs a value");
      return argv[++i];
    };
    // Every flag but --input is given at most once: a second value would
    // otherwise replace the first without a word.
    auto is = [&](const std::string &flag) {
      if (a != flag && a.rfind(flag + "=", 0) != 0)
        return false;
      if (flag != "--input" && !seen.insert(flag).second)
        throw Error(flag + " is given twice");
      return true;
    };
    if (is("--input")) {
      std::string v = value("--input");
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error("--input expects NAME=FILE, got '" + v + "'");
      if (!f.inputFiles.emplace(v.substr(0, eq), v.substr(eq + 1)).second)
        throw Error("--input " + v + ": input '" + v.substr(0, eq) +
                    "' is given twice");
    } else if (is("--output-dir")) {
      f.outputDir = value("--output-dir");
    } else if (is("--trace")) {
      f.tracePath = value("--trace");
    } else if (is("--stats")) {
      f.statsPath = value("--stats");
    } else if (is("--report")) {
      f.reportPath = value("--report");
    } else if (is("--stream")) {
      std::string v = value("--stream");
      char *end = nullptr;
      long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > (1LL << 40))
        throw Error("--stream=" + v + ": expected a number of inputs >= 1");
      f.stream = n;
    } else if (is("--timing-only") && a == "--timing-only") {
      f.timingOnly = true;
    } else if (is("--no-verify") && a == "--no-verify") {
      f.options.verify = false;
    } else if (is("--ignore-checksum") && a == "--ignore-checksum") {
      f.loadOptions.checkIntegrity = false;
    } else if (is("--hazards")) {
      std::string v = value("--hazards");
      if (v != "stop" && v != "count")
        throw Error("--hazards=" + v + ": expected 'stop' or 'count'");
      f.options.stopOnHazard = v == "stop";
    } else if (is("--json") && a == "--json") {
      f.json = true;
    } else if (is("--verbose") && a == "--verbose") {
      f.verbose = true;
    } else if (a.rfind("--", 0) == 0) {
      throw Error(cli::unknownFlag(*cli::findCommand("run"), a));
    } else if (f.programPath.empty()) {
      f.programPath = a;
    } else {
      throw Error("expected one program file, got '" + f.programPath +
                  "' and '" + a + "'");
    }
  }
  if (f.programPath.empty())
    throw Error("expected a program file (OUT.loom)");
  if (!f.timingOnly && f.outputDir.empty())
    throw Error("--output-dir DIR is required (or --timing-only)");

  return f;
}

} // namespace

int runRunCommand(int argc, char **argv) {
  using rt::Error;
  RunFlags f = parseRunFlags(argc, argv);

  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  auto loadStart = Clock::now();
  // Loading (and a timing-only run, which verifies the schedule) report
  // nothing as they go: a ticking line says the work is alive. (A
  // functional run draws its own line, kernel by kernel.)
  std::optional<rt::Progress> bar;
  std::optional<rt::ProgressTicker> ticker;
  bar.emplace("run " + f.programPath, 0);
  ticker.emplace(*bar);
  bar->update(0, "load");
  rt::Program program = rt::Program::load(f.programPath, f.loadOptions);
  // Before anything runs: two outputs must not be written to one file.
  if (!f.timingOnly) {
    try {
      rt::outputFileNames(program.outputNames);
    } catch (const Error &e) {
      throw Error(f.programPath + ": " + e.what());
    }
  }
  rt::Simulator sim(program, f.options);
  rt::SimResult result;
  double loadSeconds = seconds(loadStart, Clock::now());
  auto simStart = Clock::now();
  double simSeconds = 0;
  if (f.timingOnly) {
    bar->update(0, "verify and simulate the timing");
    result = sim.runTiming();
    simSeconds = seconds(simStart, Clock::now());
    ticker.reset();
    bar.reset();
  } else {
    ticker.reset();
    bar.reset();
    std::map<std::string, rt::Tensor> inputs;
    for (const std::string &name : sim.inputNames()) {
      auto it = f.inputFiles.find(name);
      if (it == f.inputFiles.end())
        throw Error(f.programPath + ": input '" + name +
                    "' is not given (--input " + name + "=FILE.npy)");
      inputs[name] = rt::readTensorFile(it->second, name);
      f.inputFiles.erase(it);
    }
    if (!f.inputFiles.empty())
      throw Error(f.programPath + ": the model has no input named '" +
                  f.inputFiles.begin()->first + "'");
    simStart = Clock::now();
    result = sim.runFunctional(inputs);
    simSeconds = seconds(simStart, Clock::now());
    std::error_code ec;
    std::filesystem::create_directories(f.outputDir, ec);
    if (ec)
      throw Error(f.outputDir + ": cannot create directory: " + ec.message());
    std::vector<std::string> names;
    for (const rt::SimOutput &out : result.outputs)
      names.push_back(out.name);
    std::vector<std::string> files = rt::outputFileNames(names);
    for (size_t i = 0; i < result.outputs.size(); ++i)
      rt::writeNpy(f.outputDir + "/" + files[i], result.outputs[i].value);
  }
  result.stats.setStream(f.stream);
  // The trace shows the first inputs of a stream (fill and steady state).
  if (!f.tracePath.empty())
    rt::writeTextFile(f.tracePath, sim.traceJson(std::min<int64_t>(f.stream, 16)));
  if (!f.statsPath.empty())
    rt::writeTextFile(f.statsPath, result.stats.toJson());
  if (!f.reportPath.empty()) {
    rt::ReportInput report;
    report.program = &program;
    report.stats = &result.stats;
    report.producer = "loom run";
    rt::writeTextFile(f.reportPath, rt::renderReportHtml(report));
  }
  // With --json, stdout is the statistics alone (as --stats writes them),
  // deterministic: the host's times are left out.
  if (f.json) {
    std::cout << result.stats.toJson();
    return 0;
  }
  std::cout << result.stats.toText(f.verbose);
  // Host time, kept out of the statistics so those stay byte-identical.
  std::printf("host: program loaded in %.3f s, simulated (%s) in %.3f s\n",
              loadSeconds, f.timingOnly ? "timing only" : "functional",
              simSeconds);
  return 0;
}

} // namespace loom
