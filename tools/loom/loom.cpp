//===- loom.cpp - The Loom command-line driver ----------------------------===//
//
//   loom compile MODEL.onnx [--target=NAME|FILE] -o OUT.loom
//                [--emit=graph|spatial|sched] [--dim NAME=N ...]
//   loom eval MODEL.onnx --input NAME=FILE ... --output-dir DIR [--dim ...]
//   loom run OUT.loom --input NAME=FILE ... --output-dir DIR [--trace=F]
//   loom check MODEL.onnx [--target=...] [--input NAME=FILE ...]
//   loom target show NAME|FILE
//
// Every user error ends with exit code 1 and one line on stderr:
// "loom: <file or field>: <problem>".
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "loom/Driver/Calibrate.h"
#include "loom/Driver/Check.h"
#include "loom/Driver/Driver.h"
#include "loom/Frontend/LLM.h"
#include "loom/Planner/Planner.h"
#include "loom/Sweep/Sweep.h"
#include "loom/Frontend/ONNX/Importer.h"
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Compare.h"
#include "loom/Runtime/Floorplan.h"
#include "loom/Runtime/Progress.h"
#include "loom/Target/PassProgress.h"
#include "loom/Runtime/Report.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/ScheduleVerifier.h"
#include "loom/Runtime/Simulator.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Dialect/Graph/Transforms/Pipeline.h"
#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/Passes.h"
#include "loom/Target/ProgramEmitter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loom {
int runRunCommand(int argc, char **argv);
} // namespace loom

#ifdef LOOM_HAVE_TARGET
#include "loom/Target/TargetModel.h"
namespace loom {
int runTargetCommand(int argc, char **argv);
} // namespace loom
#endif

using namespace mlir;

namespace {

/// A user error: printed as one line, exit code 1.
struct UsageError {
  std::string message;
};

[[noreturn]] void usageError(const std::string &msg) { throw UsageError{msg}; }

/// Parsed command line: positional arguments and repeated --key=value flags.
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;

  std::string get(const std::string &key, const std::string &dflt = "") const {
    auto it = flags.find(key);
    return it == flags.end() ? dflt : it->second;
  }
  std::vector<std::string> all(const std::string &key) const {
    std::vector<std::string> out;
    auto [b, e] = flags.equal_range(key);
    for (auto it = b; it != e; ++it)
      out.push_back(it->second);
    return out;
  }
  bool has(const std::string &key) const { return flags.count(key); }
};

/// Parses `command`'s flags (CommandLine.cpp's table); "--flag value" and
/// "--flag=value" both work.
Args parseArgs(const loom::cli::Command &command, int argc, char **argv) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o")
      arg = "--o";
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      a.positional.push_back(arg);
      continue;
    }
    std::string key = arg.substr(2), value;
    size_t eq = key.find('=');
    bool hasValue = eq != std::string::npos;
    if (hasValue) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    const loom::cli::Flag *flag = command.flag(key);
    if (!flag)
      usageError(loom::cli::unknownFlag(command, argv[i]));
    bool isValued = !flag->isSwitch();
    if (!isValued && hasValue)
      usageError(flag->spelling() + " takes no value, got '" + arg + "'");
    if (isValued && !hasValue) {
      if (i + 1 >= argc)
        usageError("option '--" + key + "' needs a value");
      value = argv[++i];
    }
    // Only list-like flags repeat; a second --target or -o would otherwise
    // be dropped without a word.
    std::string shown = flag->spelling();
    if (!flag->repeats && a.flags.count(key))
      usageError(shown + " is given twice" +
                 (isValued ? " ('" + a.get(key) + "' and '" + value + "')"
                           : std::string()));
    a.flags.emplace(key, value);
  }
  return a;
}

/// The command `name` of the table (one the driver defines).
const loom::cli::Command &command(const char *name) {
  return *loom::cli::findCommand(name);
}

loom::ImportOptions importOptions(const Args &args) {
  loom::ImportOptions opts;
  for (const std::string &d : args.all("dim")) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      usageError("--dim expects NAME=VALUE, got '" + d + "'");
    std::string value = d.substr(eq + 1);
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    // An empty value is not 0 (strtoll reads nothing from it).
    if (value.empty() || *end != '\0' || errno == ERANGE || v < 0 ||
        !std::isdigit(static_cast<unsigned char>(value[0])))
      usageError("--dim " + d + ": value must be a non-negative integer");
    if (!opts.dims.emplace(d.substr(0, eq), v).second)
      usageError("--dim " + d + ": '" + d.substr(0, eq) +
                 "' is bound twice");
  }
  opts.kvPrecision = args.get("kv-precision", "fp32");
  return opts;
}

using loom::driver::DiagnosticCapture;
using loom::driver::MappingOptions;

/// The --bind NAME=FILE flags, each file read. A name bound twice is
/// refused before any file is read.
std::vector<loom::driver::Binding> bindings(const Args &args) {
  std::vector<loom::driver::Binding> out;
  std::set<std::string> names;
  for (const std::string &b : args.all("bind")) {
    size_t eq = b.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == b.size())
      usageError("--bind expects NAME=FILE.npy, got '" + b + "'");
    std::string name = b.substr(0, eq);
    if (!names.insert(name).second)
      usageError("--bind " + b + ": '" + name + "' is bound twice");
    out.push_back({name, b.substr(eq + 1), {}});
  }
  for (loom::driver::Binding &b : out)
    b.value = loom::rt::readTensorFile(b.file, b.name);
  return out;
}

/// --precision, else the target's default_precision (fp32 where it names
/// none); a target that does not load is left to the command to report.
std::string precisionOf(const Args &args) {
  if (args.has("precision"))
    return args.get("precision");
  std::string error;
  std::optional<loom::TargetModel> target =
      loom::TargetModel::load(args.get("target", "tiny"), error);
  return target ? target->defaultPrecision() : "fp32";
}

OwningOpRef<ModuleOp> importModel(MLIRContext &ctx, const Args &args) {
  if (args.positional.size() != 1)
    usageError("expected exactly one MODEL.onnx argument");
  loom::ImportOptions options = importOptions(args);
  loom::driver::applyBindings(args.positional[0], bindings(args), options);
  auto module = loom::driver::importModel(ctx, args.positional[0], options);
  // --calibrate: the int8 policy's scales from calibration inputs.
  if (args.has("calibrate")) {
    if (precisionOf(args) != "int8")
      usageError("--calibrate=DIR fixes int8 scales: it needs "
                 "--precision=int8");
    try {
      loom::driver::calibrateInt8(
          module->lookupSymbol<func::FuncOp>("main"), args.get("calibrate"));
    } catch (const std::exception &e) {
      usageError(args.positional[0] + ": " + e.what());
    }
  }
  return module;
}

MappingOptions mappingOptions(const Args &args) {
  MappingOptions m;
  m.mapping = args.get("mapping", "auto");
  m.objective = args.get("objective", "latency");
  if (args.has("max-ii")) {
    std::string v = args.get("max-ii");
    char *end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n <= 0)
      usageError("--max-ii=" + v + ": expected a positive number of cycles");
    m.maxII = n;
  }
  auto count = [&](const char *name, int64_t &into) {
    if (!args.has(name))
      return;
    std::string v = args.get(name);
    char *end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n <= 0 || n > (1 << 20))
      usageError(std::string("--") + name + "=" + v +
                 ": expected a positive number of chips");
    into = n;
  };
  count("chips", m.chips);
  count("tp", m.tp);
  count("pp", m.pp);
  count("system-chips", m.systemChips);
  // --tp/--pp alone imply the chips they need; given with --chips they
  // must agree with it (MappingOptions::validate).
  if (!args.has("chips") && (m.tp > 0 || m.pp > 0))
    m.chips = std::max<int64_t>(1, m.tp) * std::max<int64_t>(1, m.pp);
  m.validate();
  return m;
}

int runCompile(int argc, char **argv) {
  auto started = std::chrono::steady_clock::now();
  Args args = parseArgs(command("compile"), argc, argv);
  MappingOptions mapping = mappingOptions(args);
  std::unique_ptr<MLIRContext> context = loom::driver::makeContext();
  MLIRContext &ctx = *context;
  std::string emit = args.get("emit", "");
  if (!emit.empty() && emit != "graph" && emit != "spatial" && emit != "sched")
    usageError("--emit=" + emit + ": expected graph, spatial or sched");
  bool writeProgram = emit.empty();
  if (writeProgram && !args.has("o"))
    usageError("-o OUT.loom is required to write a program (or print an IR "
               "level with --emit=graph|spatial|sched)");
  std::string targetName = args.get("target", "tiny");
  std::string error;
  std::optional<loom::TargetModel> target =
      loom::TargetModel::load(targetName, error);
  if (!target)
    usageError(error);
  loom::driver::requireSpatialTarget(*target, targetName);
  if (args.has("json") && (!writeProgram || args.get("o") == "-"))
    usageError("--json prints the summary of a program written to a file "
               "(-o OUT.loom, without --emit): stdout is the JSON");
  if ((args.has("floorplan") || args.has("report")) && !writeProgram)
    usageError(std::string(args.has("floorplan") ? "--floorplan" : "--report") +
               " needs a program (-o OUT.loom, without --emit)");
  auto module = importModel(ctx, args);
  const std::string &model = args.positional[0];
  std::vector<loom::driver::PassTiming> timings = {
      {"import", std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - started)
                     .count()}};
  loom::driver::MappingChoice choice;
  if (emit == "graph")
    loom::driver::runGraphPipeline(ctx, *module, model);
  else
    loom::driver::runBackend(ctx, *module, model, targetName,
                             emit == "spatial", precisionOf(args),
                             mapping, &timings, &choice);

  std::string out = args.get("o", "-");
  std::string err;
  auto file = mlir::openOutputFile(out, &err);
  if (!file)
    usageError(out + ": " + err);
  if (writeProgram) {
    auto emitStart = std::chrono::steady_clock::now();
    std::optional<loom::rt::Program> loaded;
    bool picture = args.has("floorplan") || args.has("report");
    std::vector<uint8_t> bytes = loom::driver::emitVerified(
        *module, *target, model, targetName, !args.has("no-verify"), out,
        picture ? &loaded : nullptr);
    timings.push_back({args.has("no-verify") ? "emit" : "emit-and-verify",
                       std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - emitStart)
                           .count()});
    if (picture) {
      const loom::rt::Program &program = *loaded;
      if (args.has("floorplan"))
        loom::rt::writeTextFile(args.get("floorplan"),
                                loom::rt::renderFloorplanSvg(program));
      if (args.has("report")) {
        loom::rt::SimStats stats = loom::rt::Simulator(program).runTiming().stats;
        loom::rt::ReportInput report;
        report.program = &program;
        report.stats = &stats;
        report.producer = "loom compile";
        for (const loom::driver::PassTiming &t : timings)
          report.passTimings.push_back({t.name, t.seconds});
        loom::rt::writeTextFile(args.get("report"),
                                loom::rt::renderReportHtml(report));
      }
    }
    file->os().write(reinterpret_cast<const char *>(bytes.data()),
                     bytes.size());
  } else {
    OpPrintingFlags flags;
    if (!args.has("keep-weights"))
      flags.elideLargeResourceString(1 << 16);
    // Locations carry the ONNX node names: a module edited and read back
    // (loom-opt --sched-emit-program) still names its nodes.
    if (args.has("debug-info"))
      flags.enableDebugInfo();
    module->print(file->os(), flags);
    file->os() << "\n";
  }
  file->keep();
  std::string note =
      loom::driver::precisionNote(*target, precisionOf(args));
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  if (args.has("json")) {
    loom::driver::CompileFacts facts;
    facts.model = model;
    facts.target = targetName;
    facts.precision = precisionOf(args);
    facts.out = out;
    facts.seconds = seconds;
    facts.timings = timings;
    facts.choice = choice;
    facts.note = note;
    llvm::outs() << loom::driver::compileJson(*module, *target, facts);
    return 0;
  }
  if (args.has("o") && out != "-") {
    std::string line =
        loom::driver::scheduleSummary(*module, *target, out, seconds);
    if (!line.empty())
      llvm::outs() << line << "\n";
    std::string report = args.has("verbose")
                             ? loom::driver::mappingReport(*module)
                             : loom::driver::mappingSummary(*module, choice);
    if (!report.empty())
      llvm::outs() << "mapping: " << report << "\n";
  }
  if (!note.empty())
    llvm::errs() << note << "\n";
  return 0;
}

loom::rt::Tensor syntheticInput(RankedTensorType type, uint64_t seed);

/// The model's inputs in order, read from the --input NAME=FILE flags and
/// checked against the model's types. A missing input is an error, or with
/// `synthesizeMissing` a deterministic synthetic value.
/// The --input NAME=FILE flags, by name.
std::map<std::string, std::string> givenInputs(const Args &args) {
  std::map<std::string, std::string> given;
  for (const std::string &in : args.all("input")) {
    size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0)
      usageError("--input expects NAME=FILE, got '" + in + "'");
    if (!given.emplace(in.substr(0, eq), in.substr(eq + 1)).second)
      usageError("--input " + in + ": input '" + in.substr(0, eq) +
                 "' is given twice");
  }
  return given;
}

/// A tensor read for an input of element type `elt`: NumPy has no
/// bfloat16, so uint16 data given for a bfloat16 input is taken as its bit
/// patterns (as ONNX's test data stores them).
loom::rt::Tensor asInputType(loom::rt::Tensor t, Type elt) {
  if (elt.isBF16() && t.dtype() == loom::rt::DType::U16)
    return t.bitcast(loom::rt::DType::BF16);
  return t;
}

std::vector<loom::rt::Tensor>
bindInputs(func::FuncOp func, const Args &args, const std::string &file,
           bool synthesizeMissing,
           const std::vector<std::string> &frozen = {}) {
  std::map<std::string, std::string> given = givenInputs(args);
  // Inputs the import froze to their given values are not arguments.
  for (const std::string &name : frozen)
    given.erase(name);
  std::vector<loom::rt::Tensor> inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, "graph.name").str();
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    auto it = given.find(name);
    if (it == given.end()) {
      if (!synthesizeMissing)
        usageError(file + ": input '" + name + "' is not given (--input " +
                   name + "=FILE.npy)");
      inputs.push_back(syntheticInput(type, i));
      continue;
    }
    loom::rt::Tensor t = asInputType(
        loom::rt::readTensorFile(it->second, name), type.getElementType());
    auto dt = loom::dtypeFromType(type.getElementType());
    if (t.dtype() != *dt || ArrayRef<int64_t>(t.shape()) != type.getShape())
      usageError(it->second + ": input '" + name + "' has " +
                 loom::rt::dtypeName(t.dtype()) +
                 loom::rt::shapeToString(t.shape()) + " but the model expects " +
                 loom::rt::dtypeName(*dt) +
                 loom::rt::shapeToString(loom::rt::Shape(
                     type.getShape().begin(), type.getShape().end())));
    inputs.push_back(std::move(t));
    given.erase(it);
  }
  if (!given.empty())
    usageError(file + ": the model has no input named '" +
               given.begin()->first + "'");
  return inputs;
}

int runEval(int argc, char **argv) {
  Args args = parseArgs(command("eval"), argc, argv);
  if (!args.has("output-dir"))
    usageError("--output-dir DIR is required");
  std::unique_ptr<MLIRContext> context = loom::driver::makeContext();
  MLIRContext &ctx = *context;
  if (args.positional.size() != 1)
    usageError("expected exactly one MODEL.onnx argument");
  const std::string &file = args.positional[0];
  // The reference knows every input's value, so an input that gives a
  // shape (Reshape's shape, Range's limits, ...) takes the value given.
  loom::ImportOptions options = importOptions(args);
  std::vector<std::string> frozen;
  options.frozenKnownInputs = &frozen;
  for (const auto &[name, path] : givenInputs(args)) {
    // A file that cannot be read is reported by bindInputs, after the
    // import has checked the model.
    try {
      options.knownInputs.emplace(name, loom::rt::readTensorFile(path, name));
    } catch (const std::exception &) {
    }
  }
  auto module = loom::driver::importModel(ctx, file, options);
  auto func = module->lookupSymbol<func::FuncOp>("main");

  std::vector<loom::rt::Tensor> inputs =
      bindInputs(func, args, file, /*synthesizeMissing=*/false, frozen);
  // Before anything runs: two outputs must not be written to one file.
  std::vector<std::string> names, files;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    names.push_back(
        func.getResultAttrOfType<StringAttr>(i, "graph.name").str());
  try {
    files = loom::rt::outputFileNames(names);
  } catch (const std::exception &e) {
    usageError(file + ": " + e.what());
  }
  DiagnosticCapture diags(ctx);
  auto outputs = loom::evaluate(func, inputs);
  if (!outputs)
    usageError(file + ": " + diags.first);
  std::string dir = args.get("output-dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    usageError(dir + ": cannot create directory: " + ec.message());
  for (unsigned i = 0; i < outputs->size(); ++i) {
    std::string path = dir + "/" + files[i];
    loom::rt::writeNpy(path, (*outputs)[i]);
    llvm::outs() << "wrote " << path << " "
                 << loom::rt::dtypeName((*outputs)[i].dtype())
                 << loom::rt::shapeToString((*outputs)[i].shape()) << "\n";
  }
  return 0;
}


//===----------------------------------------------------------------------===//
// loom check
//===----------------------------------------------------------------------===//

/// Deterministic inputs for `loom check` when none are given: floats
/// uniform in [-1, 1), integers in {0, 1} (valid as indices and token ids),
/// booleans false.
loom::rt::Tensor syntheticInput(RankedTensorType type, uint64_t seed) {
  auto dt = loom::dtypeFromType(type.getElementType());
  loom::rt::Tensor t(*dt, loom::rt::Shape(type.getShape().begin(),
                                          type.getShape().end()));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = double(state >> 11) / double(1ull << 53);
    if (loom::rt::isFloat(*dt))
      t.setDouble(i, 2 * u - 1);
    else if (*dt != loom::rt::DType::Bool)
      t.setInt(i, u < 0.5 ? 0 : 1);
  }
  return t;
}

/// `loom check MODEL.onnx --target=...`: reads the options and the inputs,
/// runs loom::driver::checkModel and prints its report (text or --json).
int runCheck(int argc, char **argv) {
  Args args = parseArgs(command("check"), argc, argv);
  MappingOptions mapping = mappingOptions(args);
  std::unique_ptr<MLIRContext> context = loom::driver::makeContext();
  MLIRContext &ctx = *context;
  std::string targetName = args.get("target", "tiny");
  std::string precision = precisionOf(args);
  std::string error;
  std::optional<loom::TargetModel> target =
      loom::TargetModel::load(targetName, error);
  if (!target)
    usageError(error);
  loom::driver::requireSpatialTarget(*target, targetName);
  auto parseNumber = [&](const char *key, double dflt) {
    std::string v = args.get(key, "");
    if (v.empty())
      return dflt;
    char *end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (*end || d < 0)
      usageError(std::string("--") + key + "=" + v +
                 ": expected a non-negative number");
    return d;
  };
  // The tolerances per format (rt::checkTolerance, docs/numerics.md),
  // each overridable. A KV cache stored narrow (--kv-precision) rounds the
  // cache too: the looser of the two formats' tolerances applies.
  std::string kv = args.get("kv-precision", "fp32");
  const loom::rt::Tolerance defaults = loom::rt::checkTolerance(precision, kv);
  loom::rt::Tolerance tol;
  tol.rtol = parseNumber("rtol", defaults.rtol);
  tol.atol = parseNumber("atol", defaults.atol);
  tol.scaleTol = parseNumber("scale-tol", defaults.scaleTol);
  // An index: whole and in int range (1.5 was read as 1, 1e300 overflowed
  // the conversion).
  auto parseIndex = [&](const char *key) {
    if (!args.has(key))
      return -1;
    std::string v = args.get(key);
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || errno == ERANGE || n < 0 ||
        n > std::numeric_limits<int>::max())
      usageError(std::string("--") + key + "=" + v +
                 ": expected a whole non-negative number");
    return static_cast<int>(n);
  };
  int corrupt = parseIndex("debug-corrupt-kernel");
  // Fault injection: one instr of the compiled program does nothing (a
  // halo's DMA, say), so check shows the kernel that needed its bytes.
  int dropInstr = parseIndex("debug-drop-instr");

  // A bound input is a constant of the program: it takes no --input.
  for (const std::string &b : args.all("bind")) {
    std::string name = b.substr(0, b.find('='));
    if (givenInputs(args).count(name))
      usageError("--bind " + b + ": input '" + name +
                 "' is also given with --input; a bound input is a constant "
                 "of the program, not an input");
  }
  auto module = importModel(ctx, args);
  const std::string &model = args.positional[0];
  auto graphFunc = module->lookupSymbol<func::FuncOp>("main");

  // Inputs: given files, or synthetic values.
  std::vector<loom::rt::Tensor> inputs =
      bindInputs(graphFunc, args, model, /*synthesizeMissing=*/true);
  loom::driver::CheckOptions options;
  options.model = model;
  options.targetName = targetName;
  options.precision = precision;
  options.kvPrecision = kv;
  options.tolerance = tol;
  options.mapping = mapping;
  options.corruptKernel = corrupt;
  options.dropInstr = dropInstr;
  const loom::driver::CheckReport report =
      loom::driver::checkModel(ctx, *module, *target, inputs, options);
  auto divergenceLine = [&] {
    llvm::errs() << "loom: " << model
                 << ": the compiled program diverges from the golden reference"
                 << (report.firstKernel >= 0
                         ? " at kernel '" + report.firstKernelName + "'"
                         : std::string())
                 << "\n";
  };
  if (args.has("json")) {
    llvm::outs() << loom::driver::checkJson(report, options) << "\n";
    if (!report.passed)
      divergenceLine();
    return report.passed ? 0 : 1;
  }
  for (size_t i = 0; i < report.outputs.size(); ++i) {
    const loom::rt::Divergence &d = report.outputs[i];
    llvm::outs() << (d.ok ? "match    " : "MISMATCH ") << "output '"
                 << report.outputNames[i] << "': max abs err "
                 << llvm::format("%.3g", d.maxAbs) << ", max rel err "
                 << llvm::format("%.3g", d.maxRel) << " (rtol "
                 << llvm::format("%g", tol.rtol) << ", atol "
                 << llvm::format("%g", tol.atol) << ", scale tolerance "
                 << llvm::format("%g", tol.scaleTol) << ")\n";
  }
  const loom::rt::SimStats &stats = report.stats;
  llvm::outs() << "simulated " << stats.totalCycles << " cycles ("
               << llvm::format("%.1f", stats.seconds * 1e6)
               << " us) on " << targetName << ", roofline "
               << stats.rooflineCycles << " cycles, " << precision << "\n";
  if (!report.kernelsCompared)
    llvm::outs() << "across chips only the outputs are compared: the search "
                    "for the first divergent kernel works on one chip\n";
  if (report.firstKernel >= 0) {
    std::string nodes;
    for (const std::string &n : report.firstKernelNodes)
      nodes += (nodes.empty() ? "" : ", ") + n;
    llvm::outs() << "first divergent kernel: " << report.firstKernel << " '"
                 << report.firstKernelName << "' (ONNX nodes: " << nodes
                 << "), output " << report.firstOutput << ": max abs err "
                 << llvm::format("%.3g", report.firstDivergence.maxAbs)
                 << "\n";
  }
  if (!report.passed) {
    divergenceLine();
    return 1;
  }
  llvm::outs() << "check passed: every output matches the golden reference\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// loom ops
//===----------------------------------------------------------------------===//

/// "1-21", or "1-9, 11-21" when the opsets have a gap.
std::string opsetRanges(const loom::OnnxOpSupport &op) {
  std::string s;
  for (auto [first, last] : op.opsets)
    s += (s.empty() ? "" : ", ") + std::to_string(first) +
         (first == last ? "" : "-" + std::to_string(last));
  return s;
}

/// `loom ops [--json]`: the ONNX operators the importer reads, from its own
/// tables (loom::onnxOpSupport); docs/ops.md is generated from the JSON.
int runOps(int argc, char **argv) {
  Args args = parseArgs(command("ops"), argc, argv);
  if (!args.positional.empty())
    usageError("ops takes no positional arguments, got '" + args.positional[0] +
               "'");
  std::vector<loom::OnnxOpSupport> ops = loom::onnxOpSupport();
  auto [first, last] = loom::onnxOpsetRange();
  if (args.has("json")) {
    // docs/schema/ops.schema.json.
    using Json = nlohmann::ordered_json;
    Json j;
    j["opsets"] = {first, last};
    Json list = Json::array();
    for (const loom::OnnxOpSupport &op : ops) {
      Json o;
      o["name"] = op.name;
      o["domain"] = op.domain;
      o["how"] = op.how;
      Json ranges = Json::array();
      for (auto [a, b] : op.opsets)
        ranges.push_back({a, b});
      o["opsets"] = std::move(ranges);
      Json refuses = Json::array();
      for (const loom::OnnxOpSupport::Refused &r : op.refuses)
        refuses.push_back(
            {{"what", r.what},
             {"since_opset", r.sinceOpset ? Json(r.sinceOpset) : Json()}});
      o["refuses"] = std::move(refuses);
      list.push_back(std::move(o));
    }
    j["operators"] = std::move(list);
    llvm::outs() << j.dump(1) << "\n";
    return 0;
  }
  size_t converted = 0, expanded = 0, partial = 0, width = 0;
  for (const loom::OnnxOpSupport &op : ops) {
    (op.how == "function" ? expanded : converted) += 1;
    partial += !op.refuses.empty();
    width = std::max(width, op.name.size());
  }
  llvm::outs() << "ONNX operators the importer reads (models of opsets "
               << first << " to " << last << "): " << ops.size() << ", "
               << converted << " converted and " << expanded
               << " expanded from their ONNX function bodies; " << partial
               << " refuse part of what ONNX allows\n";
  std::string domain = "-";
  for (const loom::OnnxOpSupport &op : ops) {
    if (op.domain != domain) {
      domain = op.domain;
      llvm::outs() << "\n"
                   << (domain.empty() ? std::string("default domain (ai.onnx)")
                                      : "domain " + domain)
                   << ": operator, opsets, how\n";
    }
    std::string name = op.name;
    name.resize(width + 2, ' ');
    std::string opsets = opsetRanges(op);
    opsets.resize(std::max<size_t>(opsets.size() + 2, 12), ' ');
    llvm::outs() << "  " << name << opsets
                 << (op.how == "function" ? "function body" : "converter")
                 << "\n";
    for (const loom::OnnxOpSupport::Refused &r : op.refuses)
      llvm::outs() << "      refuses"
                   << (r.sinceOpset
                           ? " (opset " + std::to_string(r.sinceOpset) + "+)"
                           : std::string())
                   << ": " << r.what << "\n";
  }
  return 0;
}

/// `loom plan --model=CONFIG.json --system=NAME|FILE.json [...]`: capacity
/// planning (docs/planner.md).
int runPlan(int argc, char **argv) {
  Args args = parseArgs(command("plan"), argc, argv);
  if (!args.positional.empty())
    usageError("plan takes no positional arguments (the model is --model=CONFIG.json)");
  if (!args.has("model") || !args.has("system"))
    usageError("plan needs --model=CONFIG.json and --system=NAME|FILE.json");
  // `unset`: the flag is a degree, batch, load or bound, which must be
  // above 0: 0 is what the Request reads as not given ("search" or
  // "none"), as `loom compile` refuses --tp=0; `unset` says what leaving
  // it out does.
  auto number = [&](const char *name, double dflt, bool integer,
                    const char *unset = nullptr) -> double {
    if (!args.has(name))
      return dflt;
    std::string v = args.get(name);
    char *end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    const bool parsed = !v.empty() && *end == '\0' &&
                        (!integer || x == std::floor(x));
    if (unset && (!parsed || !(x > 0) || x > 1e12))
      usageError(std::string("--") + name + "=" + v + ": expected " +
                 (integer ? "a whole number from 1 to 1e12"
                          : "a number above 0, at most 1e12") +
                 " (leave it out " + unset + ")");
    if (!parsed || !(x >= 0))
      usageError(std::string("--") + name + "=" + v + ": expected a " +
                 (integer ? "non-negative whole" : "non-negative") +
                 " number");
    if (x > 1e12)
      usageError(std::string("--") + name + "=" + v +
                 ": expected at most 1e12");
    return x;
  };
  loom::plan::Request r;
  r.inputLen = int64_t(number("input-len", 1024, true));
  r.outputLen = int64_t(number("output-len", 256, true));
  // A load is either a number of requests in flight or a rate of them.
  if (args.has("concurrency") && args.has("rate"))
    usageError("--concurrency and --rate both given: the load is one or the "
               "other");
  if (args.has("weights") && args.has("precision"))
    usageError("--weights and --precision both given: --precision is the "
               "short form of --weights");
  r.concurrency = int64_t(number("concurrency", 0, true, "for no load"));
  r.requestRate = number("rate", 0, false, "for no load");
  r.weights = args.get("weights", args.get("precision", "fp8"));
  r.kv = args.get("kv-precision", "fp8");
  r.activations = args.get("act-precision", "bf16");
  r.ttft = number("ttft", 0, false, "for no bound") / 1e3;
  r.tpot = number("tpot", 0, false, "for no bound") / 1e3;
  // Not given: the system's own size where it names one, else 10,000.
  r.maxChips = int64_t(number("max-chips", 0, true));
  if (args.has("max-chips") && r.maxChips < 1)
    usageError("--max-chips must be at least 1");
  r.pareto = args.has("pareto") || args.has("pareto-html");
  r.top = int64_t(number("top", 5, true));
  // An int: 1e12 passed number()'s bound but not the conversion.
  double threads = number("threads", 0, true);
  if (threads > 4096)
    usageError("--threads=" + args.get("threads") + ": expected at most 4096");
  r.threads = int(threads);
  r.tp = int64_t(number("tp", 0, true, "to search it"));
  r.pp = int64_t(number("pp", 0, true, "to search it"));
  r.batch = int64_t(number("batch", 0, true, "to search it"));
  r.maxNumTokens = int64_t(number(
      "max-num-tokens", double(loom::plan::kDefaultMaxNumTokens), true));
  r.compile = !args.has("no-compile");
  r.scenario = args.get("scenario", "offline");
  // Layers compile against the target as given (a file is not a preset).
  r.systemSource = args.get("system");
  r.prefillSystemSource = args.get("prefill-system");
  std::string modelPath = args.get("model"), error;
  std::optional<loom::LlmConfig> config = loom::readLlmConfig(modelPath, error);
  if (!config)
    usageError(error);
  auto load = [&](const std::string &name) {
    std::optional<loom::TargetModel> t = loom::TargetModel::load(name, error);
    if (!t)
      usageError(error);
    return *t;
  };
  loom::TargetModel system = load(args.get("system"));
  std::optional<loom::plan::Result> result;
  if (args.has("prefill-system")) {
    loom::TargetModel prefill = load(args.get("prefill-system"));
    result = loom::plan::planDisaggregated(*config, modelPath, prefill, system,
                                           r, loom::driver::compileLayerSeconds,
                                           error);
  } else {
    result = loom::plan::plan(*config, modelPath, system, r,
                              loom::driver::compileLayerSeconds, error);
  }
  if (!result)
    usageError(modelPath + ": " + error);
  if (args.has("pareto-html"))
    loom::rt::writeTextFile(args.get("pareto-html"),
                            loom::plan::formatParetoHtml(*result, r));
  if (args.has("json"))
    llvm::outs() << loom::plan::formatJson(*result, r);
  else if (r.pareto)
    llvm::outs() << loom::plan::formatParetoTable(*result, r);
  else
    llvm::outs() << loom::plan::formatTable(*result, r);
  return 0;
}

/// `loom sweep --model=M1,M2 --target=BASE --vary=FIELD=v1,v2 ...
/// --out=DIR`: co-design sweeps (docs/codesign.md).
int runSweep(int argc, char **argv) {
  Args args = parseArgs(command("sweep"), argc, argv);
  if (!args.positional.empty())
    usageError("sweep takes no positional arguments (models are --model=A,B)");
  loom::sweep::Options o;
  std::string models = args.get("model");
  for (size_t at = 0; !models.empty();) {
    size_t comma = models.find(',', at);
    o.models.push_back(models.substr(at, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - at));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  // MODEL@N compiles that model for N chips.
  for (std::string &m : o.models) {
    int64_t n = 0;
    if (size_t at = m.rfind('@'); at != std::string::npos) {
      std::string v = m.substr(at + 1);
      char *end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || x < 1 || x > (1 << 20))
        usageError("--model=" + models + ": '" + m +
                   "': expected MODEL or MODEL@CHIPS");
      n = x;
      m = m.substr(0, at);
    }
    o.modelChips.push_back(n);
    if (m.empty() || !llvm::sys::fs::exists(m))
      usageError("--model=" + models + ": '" + m + "' is not a file");
  }
  o.target = args.get("target", "tiny");
  std::string error;
  std::string targetText = loom::driver::targetJsonText(o.target);
  std::optional<loom::TargetModel> base = loom::TargetModel::load(o.target, error);
  if (!base)
    usageError(error);
  loom::driver::requireSpatialTarget(*base, o.target);
  for (const std::string &spec : args.all("vary")) {
    std::optional<loom::sweep::Axis> axis =
        loom::sweep::parseAxis(spec, targetText, error);
    if (!axis)
      usageError(error);
    o.axes.push_back(*axis);
  }
  o.objective = args.get("objective", "throughput");
  o.outDir = args.get("out", "sweep");
  o.precision = precisionOf(args);
  o.kvPrecision = args.get("kv-precision", "fp32");
  if (!loom::rt::storageFormat(o.kvPrecision))
    usageError("--kv-precision=" + o.kvPrecision + ": expected " +
               loom::rt::kStorageFormats);
  auto count = [&](const char *name, int64_t dflt) -> int64_t {
    if (!args.has(name))
      return dflt;
    std::string v = args.get(name);
    char *end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0 || n > (1 << 20))
      usageError(std::string("--") + name + "=" + v + ": expected a count");
    return n;
  };
  o.jobs = int(count("jobs", 0));
  o.chips = count("chips", 1);
  if (o.chips < 1) // As compile refuses it.
    usageError("--chips=0: expected a positive number of chips");
  o.sensitivity = !args.has("no-sensitivity");
  o.loom = llvm::sys::fs::getMainExecutable(nullptr, (void *)&runSweep);
  if (!loom::sweep::run(o, error))
    usageError(error);
  llvm::outs() << "sweep: " << o.outDir << "/results.json, " << o.outDir
               << "/sweep.html\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << loom::cli::usageText();
    return 1;
  }
  std::string cmd = argv[1];
  // Long passes report their steps on the innermost progress bar.
  loom::passStepHook = &loom::rt::Progress::step;
  try {
    if (cmd == "--version" || cmd == "version") {
      llvm::outs() << loom::cli::versionText();
      return 0;
    }
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      // `loom help COMMAND` is `loom COMMAND --help`.
      if (argc > 2) {
        const loom::cli::Command *c = loom::cli::findCommand(argv[2]);
        if (!c) {
          std::vector<std::string> names;
          for (const loom::cli::Command &known : loom::cli::commands())
            names.push_back(known.name);
          usageError(std::string("help: unknown command '") + argv[2] + "'" +
                     loom::cli::didYouMean(argv[2], names));
        }
        llvm::outs() << loom::cli::helpText(*c);
        return 0;
      }
      llvm::outs() << loom::cli::usageText();
      return 0;
    }
    const loom::cli::Command *command = loom::cli::findCommand(cmd);
    if (!command) {
      std::vector<std::string> names;
      for (const loom::cli::Command &c : loom::cli::commands())
        names.push_back(c.name);
      usageError("unknown command '" + cmd + "'" +
                 loom::cli::didYouMean(cmd, names) +
                 " (try: compile, run, check, eval, plan, sweep, ops, target; "
                 "loom --help)");
    }
    if (loom::cli::wantsHelp(argc - 2, argv + 2)) {
      llvm::outs() << loom::cli::helpText(*command);
      return 0;
    }
    if (cmd == "compile")
      return runCompile(argc - 2, argv + 2);
    if (cmd == "eval")
      return runEval(argc - 2, argv + 2);
    if (cmd == "check")
      return runCheck(argc - 2, argv + 2);
    if (cmd == "run")
      return loom::runRunCommand(argc - 2, argv + 2);
    if (cmd == "plan")
      return runPlan(argc - 2, argv + 2);
    if (cmd == "ops")
      return runOps(argc - 2, argv + 2);
    if (cmd == "sweep")
      return runSweep(argc - 2, argv + 2);
#ifdef LOOM_HAVE_TARGET
    if (cmd == "target")
      return loom::runTargetCommand(argc - 1, argv + 1);
#endif
    usageError("unknown command '" + cmd + "'");
  } catch (const UsageError &e) {
    std::string msg = e.message;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    llvm::errs() << "loom: " << msg << "\n";
    return 1;
  } catch (const std::exception &e) {
    // Names from a model can hold line breaks: the error stays one line.
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::replace(msg.begin(), msg.end(), '\r', ' ');
    llvm::errs() << "loom: " << msg << "\n";
    return 1;
  }
}
