//===- loom.cpp - The Loom command-line driver ----------------------------===//
//
//   loom compile MODEL.onnx [--emit=graph] [-o OUT] [--dim NAME=N ...]
//   loom eval MODEL.onnx --input NAME=FILE ... --output-dir DIR [--dim ...]
//   loom target show NAME|FILE
//
// Every user error ends with exit code 1 and one line on stderr:
// "loom: <file or field>: <problem>".
//
//===----------------------------------------------------------------------===//
#include "loom/Frontend/ONNX/Importer.h"
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

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

/// Flags that take a value; "--flag value" and "--flag=value" both work.
Args parseArgs(int argc, char **argv, const std::vector<std::string> &valued,
               const std::vector<std::string> &switches) {
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
    bool isValued = std::find(valued.begin(), valued.end(), key) != valued.end();
    bool isSwitch =
        std::find(switches.begin(), switches.end(), key) != switches.end();
    if (!isValued && !isSwitch)
      usageError("unknown option '" + arg + "'");
    if (isValued && !hasValue) {
      if (i + 1 >= argc)
        usageError("option '--" + key + "' needs a value");
      value = argv[++i];
    }
    a.flags.emplace(key, value);
  }
  return a;
}

loom::ImportOptions importOptions(const Args &args) {
  loom::ImportOptions opts;
  for (const std::string &d : args.all("dim")) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      usageError("--dim expects NAME=VALUE, got '" + d + "'");
    char *end = nullptr;
    long long v = std::strtoll(d.c_str() + eq + 1, &end, 10);
    if (*end != '\0' || v < 0)
      usageError("--dim " + d + ": value must be a non-negative integer");
    opts.dims[d.substr(0, eq)] = v;
  }
  return opts;
}

/// Collects MLIR error diagnostics so they can be printed as one line.
struct DiagnosticCapture {
  explicit DiagnosticCapture(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error && first.empty()) {
            std::string loc;
            llvm::raw_string_ostream os(loc);
            os << d.getLocation();
            first = loc + ": " + d.str();
          }
          return success();
        }) {}
  ScopedDiagnosticHandler handler;
  std::string first;
};

OwningOpRef<ModuleOp> importModel(MLIRContext &ctx, const Args &args) {
  if (args.positional.size() != 1)
    usageError("expected exactly one MODEL.onnx argument");
  std::string error;
  auto module = loom::importOnnxFile(ctx, args.positional[0],
                                     importOptions(args), error);
  if (!module)
    usageError(error);
  return module;
}

/// Runs the graph-level pipeline: shape verification and canonicalisation.
void runGraphPipeline(MLIRContext &ctx, ModuleOp module,
                      const std::string &file) {
  DiagnosticCapture diags(ctx);
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(loom::graph::createGraphVerifyShapes());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(module)))
    usageError(file + ": " + diags.first);
}

int runCompile(int argc, char **argv) {
  Args args = parseArgs(argc, argv, {"emit", "o", "dim", "target"},
                        {"keep-weights"});
  MLIRContext ctx;
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  ctx.appendDialectRegistry(registry);
  std::string emit = args.get("emit", "");
  if (emit != "graph")
    usageError(emit.empty()
                   ? "only --emit=graph is implemented so far (partial: "
                     "mapping, scheduling and program emission come with the "
                     "single-chip backend)"
                   : "--emit=" + emit + " is not implemented yet (partial: "
                                       "only --emit=graph)");
#ifdef LOOM_HAVE_TARGET
  // The graph level does not depend on the target yet, but a bad target is
  // reported now rather than silently ignored.
  if (args.has("target")) {
    std::string error;
    if (!loom::TargetModel::load(args.get("target"), error))
      usageError(error);
  }
#endif
  auto module = importModel(ctx, args);
  runGraphPipeline(ctx, *module, args.positional[0]);
  std::string out = args.get("o", "-");
  std::string err;
  auto file = mlir::openOutputFile(out, &err);
  if (!file)
    usageError(out + ": " + err);
  OpPrintingFlags flags;
  if (!args.has("keep-weights"))
    flags.elideLargeResourceString(1 << 16);
  module->print(file->os(), flags);
  file->os() << "\n";
  file->keep();
  return 0;
}

int runEval(int argc, char **argv) {
  Args args = parseArgs(argc, argv, {"input", "output-dir", "dim"}, {});
  if (!args.has("output-dir"))
    usageError("--output-dir DIR is required");
  MLIRContext ctx;
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  ctx.appendDialectRegistry(registry);
  auto module = importModel(ctx, args);
  const std::string &file = args.positional[0];
  auto func = module->lookupSymbol<func::FuncOp>("main");

  std::map<std::string, std::string> given;
  for (const std::string &in : args.all("input")) {
    size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0)
      usageError("--input expects NAME=FILE, got '" + in + "'");
    given[in.substr(0, eq)] = in.substr(eq + 1);
  }
  std::vector<loom::rt::Tensor> inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, "graph.name").str();
    auto it = given.find(name);
    if (it == given.end())
      usageError(file + ": input '" + name + "' is not given (--input " +
                 name + "=FILE.npy)");
    loom::rt::Tensor t = loom::rt::readTensorFile(it->second);
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    auto dt = loom::dtypeFromType(type.getElementType());
    if (t.dtype() != *dt ||
        ArrayRef<int64_t>(t.shape()) != type.getShape())
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
    usageError(file + ": the model has no input named '" + given.begin()->first +
               "'");
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
    std::string name =
        func.getResultAttrOfType<StringAttr>(i, "graph.name").str();
    std::string path = dir + "/" + loom::rt::sanitizeFileName(name) + ".npy";
    loom::rt::writeNpy(path, (*outputs)[i]);
    llvm::outs() << "wrote " << path << " "
                 << loom::rt::dtypeName((*outputs)[i].dtype())
                 << loom::rt::shapeToString((*outputs)[i].shape()) << "\n";
  }
  return 0;
}

void printUsage() {
  llvm::errs() << "usage:\n"
                  "  loom compile MODEL.onnx --emit=graph [-o OUT] [--dim NAME=N]\n"
                  "  loom eval MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR\n"
                  "  loom target show NAME|FILE.json | loom target list\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    printUsage();
    return 1;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "compile")
      return runCompile(argc - 2, argv + 2);
    if (cmd == "eval")
      return runEval(argc - 2, argv + 2);
#ifdef LOOM_HAVE_TARGET
    if (cmd == "target")
      return loom::runTargetCommand(argc - 1, argv + 1);
#endif
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      printUsage();
      return 0;
    }
    usageError("unknown command '" + cmd + "' (try: compile, eval, target)");
  } catch (const UsageError &e) {
    std::string msg = e.message;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    llvm::errs() << "loom: " << msg << "\n";
    return 1;
  } catch (const std::exception &e) {
    llvm::errs() << "loom: " << e.what() << "\n";
    return 1;
  }
}
