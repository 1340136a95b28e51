//===- Driver.h - Compile, evaluate: the library behind loom and Python -*- C++ -*-===//
//
// What `loom compile` and `loom eval` do, as functions: import an ONNX model,
// run the back end with a mapping, emit and verify the program file, and run
// the golden reference. The command-line driver (tools/loom) and the Python
// module (python/) both call these, so they cannot drift apart.
//
// Every user error (a bad model, target, option, or a model that does not
// fit) is thrown as loom::rt::Error with one line naming the file, node or
// field and the problem; nothing else is thrown.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DRIVER_DRIVER_H
#define LOOM_DRIVER_DRIVER_H

#include "loom/Frontend/ONNX/Importer.h"
#include "loom/Planner/Planner.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Tensor.h"
#include "loom/Target/TargetModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom::driver {

/// Collects the first MLIR error diagnostic as one line ("LOC: message")
/// while it lives.
struct DiagnosticCapture {
  explicit DiagnosticCapture(mlir::MLIRContext &ctx);
  mlir::ScopedDiagnosticHandler handler;
  std::string first;
};

/// An MLIR context with every Loom dialect loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// A graph input fixed at compile time (`--bind NAME=FILE`): it becomes a
/// constant of the model, so shapes computed from it are static, and the
/// compiled program no longer has it as an input.
struct Binding {
  std::string name;
  /// Where the value came from, for errors ("" when given as an array).
  std::string file;
  rt::Tensor value;
};

/// Checks `bindings` against the ONNX model at `path` and adds them to
/// `options.frozenInputs` (the importer freezes them before shape
/// inference). Throws rt::Error, one line each, for a name bound twice, a
/// name that is not a graph input (listing the inputs), a value whose dtype
/// or shape is not the input's declared type, and a named dynamic dimension
/// of the input whose size the value contradicts (a `--dim` or another
/// binding). A dynamic dimension of a bound input takes the value's size
/// (added to `options.dims`), so the other inputs that share it need no
/// `--dim`.
void applyBindings(const std::string &path,
                   const std::vector<Binding> &bindings,
                   ImportOptions &options);

/// Imports `path` (throws rt::Error with the importer's line on failure).
mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &ctx,
                                              const std::string &path,
                                              const ImportOptions &options);

/// The graph-level pipeline of `loom compile --emit=graph`: shape
/// verification and canonicalisation.
void runGraphPipeline(mlir::MLIRContext &ctx, mlir::ModuleOp module,
                      const std::string &file);

/// How the back end maps and schedules (see docs/backend.md).
struct MappingOptions {
  /// auto, sequential, pipelined or hybrid.
  std::string mapping = "auto";
  /// latency or throughput.
  std::string objective = "latency";
  /// Fail unless a new input can start every this many cycles (0: none).
  int64_t maxII = 0;
  /// Chips to partition the model over (graph-partition), and the tensor-
  /// and pipeline-parallel degrees (0: chosen by the cost model).
  int64_t chips = 1, tp = 0, pp = 0;
  /// The system the chips are the first of (0: the chips alone): chip
  /// links get the bandwidth share they have in a system this big (see
  /// loom::ChipNetwork). The planner compiles one layer this way.
  int64_t systemChips = 0;
  bool multiChip() const { return chips > 1 || tp > 1 || pp > 1; }
  /// Throws rt::Error naming the bad option, or a chip count whose compile
  /// would not fit in the memory this process may use.
  void validate() const;
  /// The bytes a compile for `chips` chips takes beyond the model's own,
  /// estimated (Driver.cpp says from what).
  static uint64_t estimatedBytes(int64_t chips);
};

/// Wall time of one pass (or step) of a compile.
struct PassTiming {
  std::string name;
  double seconds = 0;
};

/// What mapping "auto" compared: every mapping scheduled for real, and the
/// one kept for the objective.
struct MappingChoice {
  std::string chosen, objective;
  struct Candidate {
    std::string mapping;
    /// Why it has no schedule ("" when it has one).
    std::string error;
    int64_t latencyCycles = 0, intervalCycles = 0;
  };
  std::vector<Candidate> candidates;
};

/// Runs the back end on a graph-level module: the graph pipeline (fusion
/// into kernels, precision, layout), graph-to-spatial and, unless
/// `stopAtSpatial`, spatial-to-sched. With mapping "auto" every mapping is
/// scheduled and the best for the objective kept (its figures, and every
/// other mapping's, in the function's "spatial.mapping_report"). Appends
/// the chosen run's pass timings to `timings` when given.
void runBackend(mlir::MLIRContext &ctx, mlir::ModuleOp module,
                const std::string &file, const std::string &target,
                bool stopAtSpatial, const std::string &precision = "fp32",
                const MappingOptions &mapping = {},
                std::vector<PassTiming> *timings = nullptr,
                MappingChoice *choice = nullptr);

/// Throws rt::Error when `target` (given as `--target=name`) is a GPU
/// system (one tile with off-chip memory, as the planner models a GPU):
/// the compiler maps onto spatial chips, and the GPU presets serve
/// `loom plan`.
void requireSpatialTarget(const TargetModel &target, const std::string &name);

/// The JSON text a target was loaded from (a preset or a file).
std::string targetJsonText(const std::string &nameOrPath);

/// `out`'s one-line summary of a scheduled module ("" if not scheduled).
std::string scheduleSummary(mlir::ModuleOp module, const TargetModel &target,
                            const std::string &out, double seconds);
/// The mapping report of a scheduled module ("" if none).
std::string mappingReport(mlir::ModuleOp module);
/// The mapping report in a line that fits a screen: across chips, the
/// partition and the mapping kept, and how many others were compared
/// (which the full report lists); on one chip, the full report.
std::string mappingSummary(mlir::ModuleOp module, const MappingChoice &choice);

/// What `loom compile --json` prints (docs/schema/compile.schema.json):
/// the figures of scheduleSummary and the mapping report, as one object.
struct CompileFacts {
  std::string model, target, precision, out;
  double seconds = 0;
  std::vector<PassTiming> timings;
  MappingChoice choice;
  std::string note;
};
std::string compileJson(mlir::ModuleOp module, const TargetModel &target,
                        const CompileFacts &facts);

/// Emits the scheduled `module`'s program and, unless `verify` is false,
/// proves its schedule with the independent verifier (a violation is an
/// internal error, thrown). `name` names the program in errors. With
/// `loaded`, the program as the runtime loads it is kept there too (loaded
/// once, for the verifier and the caller).
std::vector<uint8_t> emitVerified(mlir::ModuleOp module,
                                  const TargetModel &target,
                                  const std::string &model,
                                  const std::string &targetName, bool verify,
                                  const std::string &name,
                                  std::optional<rt::Program> *loaded = nullptr);

struct CompileOptions {
  std::string target = "tiny";
  /// Inputs fixed at compile time (applyBindings).
  std::vector<Binding> bindings;
  std::string precision = "fp32";
  MappingOptions mapping;
  ImportOptions import;
  bool verify = true;
};

struct Compiled {
  /// The program file's bytes.
  std::vector<uint8_t> program;
  /// The summary line (as `loom compile` prints it, for the name "program")
  /// and the mapping report.
  std::string summary, mappingReport;
  /// Import and each pass of the chosen back end, in order.
  std::vector<PassTiming> timings;
  double seconds = 0;
};

/// `loom compile MODEL --target=... -o -`, as a function.
Compiled compile(const std::string &modelPath, const CompileOptions &options);

struct Evaluated {
  std::vector<std::string> names;
  std::vector<rt::Tensor> values;
};

/// The golden reference (`loom eval`): the model's outputs, by name, for
/// inputs given by name (every input required, dtype and shape checked).
Evaluated evaluate(const std::string &modelPath,
                   const std::map<std::string, rt::Tensor> &inputs,
                   const ImportOptions &options = {});

/// A note when the target's matrix unit does not run `precision` (whose
/// matmul and conv kernels then go to the vector unit), naming the formats
/// it runs; empty when it does (or for fp32).
std::string precisionNote(const TargetModel &target,
                          const std::string &precision);

/// The planner's layer compiler (plan::LayerCompiler): one layer of an LLM
/// config's decode step or prefill chunk alone (`--dim layers=1 --dim
/// body=1`), compiled for `layer.tp` chips of `system` (as the first chips
/// of a system of `layer.systemChips`, see MappingOptions::systemChips) at
/// kernel precision `layer.precision` (plan::layerPrecision) with the KV
/// cache stored at `layer.kvStorage` (plan::layerKvStorage); its scheduled
/// latency in seconds.
std::optional<double> compileLayerSeconds(const std::string &configPath,
                                          const std::string &system,
                                          const plan::LayerSpec &layer,
                                          std::string &error);

} // namespace loom::driver

#endif // LOOM_DRIVER_DRIVER_H
