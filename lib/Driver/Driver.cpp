//===- Driver.cpp - Compile, evaluate: the library behind loom and Python ===//
//
// The steps behind Driver.h's functions: read an ONNX model's inputs and
// dynamic dimensions without loading its weights, apply --bind values,
// import, run the pipelines with pass timings and a progress line, check
// the mapping options, and summarise the mapping the passes chose.
//
// It is long (over 1,000 lines) because compile, evaluate and the planner's
// layer compile share these steps and the pass pipeline; each step is a
// function of its own.
//
//===----------------------------------------------------------------------===//
#include "loom/Driver/Driver.h"
#include "loom/Frontend/LLM.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Dialect/Graph/Transforms/Pipeline.h"
#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/Passes.h"
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Progress.h"
#include "loom/Runtime/ScheduleVerifier.h"
#include "loom/Runtime/TensorIO.h"
#include "loom/Target/ProgramEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace loom::driver {

using namespace mlir;

namespace {

[[noreturn]] void fail(const std::string &msg) { throw rt::Error(msg); }

/// Appends each top-level pass's wall time to a list (nested passes run
/// once per function: their times add up under one name).
class TimingRecorder : public PassInstrumentation {
public:
  /// Shows each outermost pass on `bar` (`done` of its units finished).
  explicit TimingRecorder(std::vector<PassTiming> *out,
                          rt::Progress *bar = nullptr,
                          std::string prefix = "", int64_t done = 0)
      : out_(out), bar_(bar), prefix_(std::move(prefix)), done_(done) {}
  void runBeforePass(Pass *pass, Operation *) override {
    if (isAdaptor(pass))
      return;
    if (bar_ && starts_.empty())
      bar_->update(done_, prefix_ + pass->getArgument().str());
    starts_.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    if (!isAdaptor(pass))
      record(pass);
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (!isAdaptor(pass))
      record(pass);
  }

private:
  /// The pass manager's own adaptor that runs nested pipelines on each
  /// function: its passes are reported, not it.
  static bool isAdaptor(Pass *pass) {
    return pass->getArgument().empty() &&
           pass->getName().contains("PassAdaptor");
  }
  void record(Pass *pass) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             starts_.back())
                   .count();
    starts_.pop_back();
    if (!out_ || !starts_.empty())
      return; // only the outermost passes
    std::string name = pass->getArgument().str();
    if (name.empty())
      name = pass->getName().str();
    if (!out_->empty() && out_->back().name == name)
      out_->back().seconds += s;
    else
      out_->push_back({name, s});
  }
  std::vector<PassTiming> *out_;
  rt::Progress *bar_;
  std::string prefix_;
  int64_t done_;
  std::vector<std::chrono::steady_clock::time_point> starts_;
};

/// Calls `work` under an elapsed-time progress line for `label` (work that
/// reports no progress of its own).
template <typename Fn> auto withTicker(const std::string &label, Fn work) {
  if (!rt::Progress::enabled())
    return work();
  rt::Progress bar(label, 0);
  rt::ProgressTicker ticker(bar);
  return work();
}

std::string runBackendOnce(MLIRContext &ctx, ModuleOp module,
                           const std::string &target, bool stopAtSpatial,
                           const std::string &precision,
                           const MappingOptions &mapping,
                           OwningOpRef<ModuleOp> *spatialCopy,
                           std::vector<PassTiming> *timings,
                           rt::Progress *bar = nullptr, int64_t done = 0) {
  DiagnosticCapture diags(ctx);
  PassManager pm(&ctx);
  std::string prefix =
      mapping.mapping == "auto" ? "" : mapping.mapping + " mapping: ";
  pm.addInstrumentation(
      std::make_unique<TimingRecorder>(timings, bar, prefix, done));
  loom::graph::GraphPipelineOptions graphOpts;
  graphOpts.target = target;
  graphOpts.precision = precision;
  graphOpts.chips = mapping.chips;
  graphOpts.tp = mapping.tp;
  graphOpts.pp = mapping.pp;
  graphOpts.systemChips = mapping.systemChips;
  graphOpts.objective = mapping.objective;
  loom::graph::buildGraphPipeline(pm, graphOpts);
  loom::spatial::GraphToSpatialOptions spatialOpts;
  spatialOpts.target = target;
  spatialOpts.mapping = mapping.mapping;
  spatialOpts.objective = mapping.objective;
  pm.addNestedPass<func::FuncOp>(
      loom::spatial::createGraphToSpatial(spatialOpts));
  if (mapping.multiChip()) {
    loom::spatial::SpatialLowerCollectivesOptions collectiveOpts;
    collectiveOpts.target = target;
    pm.addNestedPass<func::FuncOp>(
        loom::spatial::createSpatialLowerCollectives(collectiveOpts));
  }
  if (failed(pm.run(module)))
    return diags.first.empty() ? "compilation failed" : diags.first;
  if (spatialCopy)
    *spatialCopy = module.clone();
  if (stopAtSpatial)
    return "";
  PassManager sched(&ctx);
  sched.addInstrumentation(
      std::make_unique<TimingRecorder>(timings, bar, prefix, done));
  loom::sched::SpatialToSchedOptions schedOpts;
  schedOpts.target = target;
  schedOpts.maxII = mapping.maxII;
  sched.addNestedPass<func::FuncOp>(
      loom::sched::createSpatialToSched(schedOpts));
  if (failed(sched.run(module)))
    return diags.first.empty() ? "scheduling failed" : diags.first;
  return "";
}

} // namespace

void runBackend(MLIRContext &ctx, ModuleOp module, const std::string &file,
                const std::string &target, bool stopAtSpatial,
                const std::string &precision, const MappingOptions &mapping,
                std::vector<PassTiming> *timings, MappingChoice *choice) {
  if (!rt::kernelPrecisionFormat(precision))
    fail("--precision=" + precision + ": expected " + rt::kKernelPrecisions);
  mapping.validate();
  // The program file may hold at most rt::kMaxSystemTiles tiles; refused
  // before anything is built (a target that does not load is reported by
  // the passes that read it).
  std::string targetError;
  if (std::optional<TargetModel> t = TargetModel::load(target, targetError))
    if (mapping.chips * t->tilesPerChip() > rt::kMaxSystemTiles)
      fail("--chips=" + std::to_string(mapping.chips) + ": " +
           std::to_string(mapping.chips) + " chips of " +
           std::to_string(t->tilesPerChip()) + " tiles of " + t->name() +
           " are more than the " + std::to_string(rt::kMaxSystemTiles) +
           " tiles a program may hold");
  // The bar counts the mappings scheduled (auto schedules each); a pass
  // shows its own steps on it (rt::Progress::step), and the ticker keeps
  // its time moving through a pass that reports none.
  std::vector<std::string> modes;
  if (mapping.mapping != "auto")
    modes = {mapping.mapping};
  else if (mapping.multiChip()) // No hybrid across chips.
    modes = {"sequential", "pipelined"};
  else
    modes = {"sequential", "pipelined", "hybrid"};
  rt::Progress bar("compile " + file, int64_t(modes.size()));
  rt::ProgressTicker ticker(bar);
  if (mapping.mapping != "auto") {
    std::string error = runBackendOnce(ctx, module, target, stopAtSpatial,
                                       precision, mapping, nullptr, timings,
                                       &bar);
    bar.update(1);
    if (!error.empty())
      fail(file + ": " + error);
    if (choice) {
      choice->chosen = mapping.mapping;
      choice->objective = mapping.objective;
    }
    return;
  }
  // auto: schedule every mapping for real and keep the best for the
  // objective (the pass's own estimates only rank the packings).
  struct Candidate {
    std::string mode, error;
    OwningOpRef<ModuleOp> scheduled, spatial;
    int64_t latency = 0, interval = 0;
    std::vector<PassTiming> timings;
  };
  std::vector<Candidate> candidates;
  for (const std::string &mode : modes) {
    Candidate c;
    c.mode = mode;
    c.scheduled = module.clone();
    MappingOptions forced = mapping;
    forced.mapping = mode;
    c.error = runBackendOnce(ctx, *c.scheduled, target, false, precision,
                             forced, &c.spatial, &c.timings, &bar,
                             int64_t(candidates.size()));
    if (c.error.empty())
      c.scheduled->walk([&](loom::sched::SummaryOp s) {
        c.latency = s.getTotalCycles();
        c.interval = s.getInitiationInterval() > 0 ? s.getInitiationInterval()
                                                   : s.getTotalCycles();
      });
    candidates.push_back(std::move(c));
    bar.update(int64_t(candidates.size()));
  }
  bool latency = mapping.objective == "latency";
  Candidate *best = nullptr;
  for (Candidate &c : candidates) {
    if (!c.error.empty())
      continue;
    auto key = [&](const Candidate &x) {
      return latency ? std::make_pair(x.latency, x.interval)
                     : std::make_pair(x.interval, x.latency);
    };
    if (!best || key(c) < key(*best))
      best = &c;
  }
  if (!best)
    fail(file + ": " + candidates.front().error);
  if (timings)
    timings->insert(timings->end(), best->timings.begin(), best->timings.end());
  if (choice) {
    choice->chosen = best->mode;
    choice->objective = mapping.objective;
    for (const Candidate &c : candidates) {
      size_t colon = c.error.rfind(": ");
      choice->candidates.push_back(
          {c.mode,
           colon == std::string::npos ? c.error : c.error.substr(colon + 2),
           c.latency, c.interval});
    }
  }
  std::string report = best->mode + " (objective " + mapping.objective +
                       ", best of the scheduled mappings)";
  for (const Candidate &c : candidates) {
    report += "; " + c.mode + ": ";
    if (c.error.empty())
      report += "latency " + std::to_string(c.latency) + ", interval " +
                std::to_string(c.interval) + " cycles";
    else {
      size_t colon = c.error.rfind(": ");
      report += "none (" +
                (colon == std::string::npos ? c.error
                                            : c.error.substr(colon + 2)) +
                ")";
    }
  }
  ModuleOp chosen = stopAtSpatial ? *best->spatial : *best->scheduled;
  module.getBody()->getOperations().clear();
  module.getBody()->getOperations().splice(
      module.getBody()->end(), chosen.getBody()->getOperations());
  if (auto func = module.lookupSymbol<func::FuncOp>("main")) {
    // Across chips, the partition (tp x pp, the network) leads the line.
    if (mapping.multiChip())
      if (auto own = func->getAttrOfType<StringAttr>("spatial.mapping_report"))
        report = own.getValue().str() + "; " + report;
    func->setAttr("spatial.mapping_report",
                  StringAttr::get(&ctx, report));
  }
}

/// One line for stdout: what the compiled program costs.


DiagnosticCapture::DiagnosticCapture(MLIRContext &ctx)
    : handler(&ctx, [this](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Error && first.empty()) {
          // An unknown location says nothing: the callers name the file.
          if (!isa<UnknownLoc>(d.getLocation())) {
            llvm::raw_string_ostream os(first);
            os << d.getLocation() << ": ";
          }
          first += d.str();
        }
        return success();
      }) {}

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto ctx = std::make_unique<MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  return ctx;
}

/// An ONNX model's graph inputs and the names of its initializers (the
/// weights, which older models also list as inputs).
struct OnnxGraphInputs {
  std::vector<onnx::ValueInfoProto> inputs;
  std::set<std::string> initializers;
};

/// Reads an ONNX model's graph inputs; nullopt when the file cannot be read
/// as a model (the importer then says why). Only the graph's inputs and
/// the initializers' names are read: the weights are skipped over.
static std::optional<OnnxGraphInputs> onnxGraphInputs(const std::string &path) {
  using google::protobuf::io::CodedInputStream;
  using google::protobuf::internal::WireFormatLite;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return std::nullopt;
  google::protobuf::io::FileInputStream file(fd);
  file.SetCloseOnDelete(true);
  CodedInputStream in(&file);
  in.SetTotalBytesLimit(INT_MAX);
  auto isLength = [](uint32_t tag) {
    return WireFormatLite::GetTagWireType(tag) ==
           WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
  };
  // ModelProto.graph (7), in which GraphProto.input (11) and
  // GraphProto.initializer (5), of which TensorProto.name (8).
  std::vector<onnx::ValueInfoProto> inputs;
  std::set<std::string> initializers;
  for (uint32_t tag; (tag = in.ReadTag());) {
    if (WireFormatLite::GetTagFieldNumber(tag) != 7 || !isLength(tag)) {
      if (!WireFormatLite::SkipField(&in, tag))
        return std::nullopt;
      continue;
    }
    uint32_t graphBytes;
    if (!in.ReadVarint32(&graphBytes))
      return std::nullopt;
    CodedInputStream::Limit graph = in.PushLimit(graphBytes);
    for (uint32_t field; (field = in.ReadTag());) {
      int number = WireFormatLite::GetTagFieldNumber(field);
      uint32_t bytes;
      if ((number != 11 && number != 5) || !isLength(field)) {
        if (!WireFormatLite::SkipField(&in, field))
          return std::nullopt;
        continue;
      }
      if (!in.ReadVarint32(&bytes))
        return std::nullopt;
      CodedInputStream::Limit message = in.PushLimit(bytes);
      if (number == 11) {
        inputs.emplace_back();
        if (!inputs.back().ParseFromCodedStream(&in))
          return std::nullopt;
      } else {
        for (uint32_t t; (t = in.ReadTag());) {
          std::string name;
          if (WireFormatLite::GetTagFieldNumber(t) == 8 && isLength(t)) {
            if (!WireFormatLite::ReadString(&in, &name))
              return std::nullopt;
            initializers.insert(name);
          } else if (!WireFormatLite::SkipField(&in, t)) {
            return std::nullopt;
          }
        }
      }
      in.PopLimit(message);
    }
    in.PopLimit(graph);
  }
  return OnnxGraphInputs{std::move(inputs), std::move(initializers)};
}

/// The named dynamic dimensions of an ONNX model's graph inputs (those
/// that are not initializers), sorted; nullopt when the file cannot be read
/// as a model.
static std::optional<std::set<std::string>>
onnxDynamicDims(const std::string &path) {
  std::optional<OnnxGraphInputs> graph = onnxGraphInputs(path);
  if (!graph)
    return std::nullopt;
  std::set<std::string> dims;
  for (const onnx::ValueInfoProto &input : graph->inputs) {
    if (graph->initializers.count(input.name()) ||
        !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    for (const auto &d : input.type().tensor_type().shape().dim())
      if (!d.has_dim_value() && d.has_dim_param() && !d.dim_param().empty())
        dims.insert(d.dim_param());
  }
  return dims;
}

/// Refuses a --dim that names no dynamic dimension of the ONNX model at
/// `path` (it would be ignored without a word).
static void checkDimNames(const std::string &path,
                          const ImportOptions &options) {
  if (options.dims.empty())
    return;
  std::optional<std::set<std::string>> dims = onnxDynamicDims(path);
  if (!dims)
    return;
  for (const auto &[name, value] : options.dims) {
    if (dims->count(name))
      continue;
    std::string bound = "--dim " + name + "=" + std::to_string(value);
    if (dims->empty())
      fail(path + ": " + bound +
           ": the model's inputs have static shapes; there is no dynamic "
           "dimension to bind");
    std::string names;
    for (const std::string &d : *dims)
      names += (names.empty() ? "" : ", ") + d;
    fail(path + ": " + bound + ": the model has no dynamic dimension '" +
         name + "' (its dynamic dimensions: " + names + ")");
  }
}

/// `type`'s element type and shape as Loom prints them (`i64[2]`), a
/// dynamic dimension as '?'.
static std::string declaredTypeText(const onnx::TypeProto::Tensor &type) {
  std::optional<rt::DType> dt = rt::dtypeFromOnnx(type.elem_type());
  std::string text = dt ? rt::dtypeName(*dt) : std::string("?");
  if (!type.has_shape())
    return text + "[rank unknown]";
  text += "[";
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto &dim = type.shape().dim(d);
    text += (d ? "x" : "") +
            (dim.has_dim_value() ? std::to_string(dim.dim_value()) : "?");
  }
  return text + "]";
}

void applyBindings(const std::string &path,
                   const std::vector<Binding> &bindings,
                   ImportOptions &options) {
  if (bindings.empty())
    return;
  auto flag = [](const Binding &b) {
    return "--bind " + b.name + (b.file.empty() ? "" : "=" + b.file);
  };
  if (llvm::StringRef(path).ends_with(".json"))
    fail(path + ": " + flag(bindings.front()) +
         ": --bind fixes an ONNX model's input; a config.json model has "
         "none to bind (its shapes are --dim batch, past, tokens)");
  std::optional<OnnxGraphInputs> graph = onnxGraphInputs(path);
  // Dimensions a bound value fixes, with the binding that fixed it first.
  std::map<std::string, std::pair<int64_t, const Binding *>> implied;
  for (const Binding &b : bindings) {
    if (!options.frozenInputs.emplace(b.name, b.value).second)
      fail(flag(b) + ": '" + b.name + "' is bound twice");
    // An unreadable model is the importer's to report.
    if (!graph)
      continue;
    const onnx::ValueInfoProto *input = nullptr;
    for (const onnx::ValueInfoProto &in : graph->inputs)
      if (in.name() == b.name && !graph->initializers.count(in.name()))
        input = &in;
    if (!input) {
      if (graph->initializers.count(b.name))
        fail(path + ": " + flag(b) + ": '" + b.name +
             "' is a weight of the model (an initializer), not an input");
      std::string names;
      for (const onnx::ValueInfoProto &in : graph->inputs)
        if (!graph->initializers.count(in.name()))
          names += (names.empty() ? "" : ", ") + in.name();
      fail(path + ": " + flag(b) + ": the model has no input '" + b.name +
           "' (its inputs: " + (names.empty() ? "none" : names) + ")");
    }
    if (!input->type().has_tensor_type())
      fail(path + ": " + flag(b) + ": input '" + b.name + "' is not a tensor");
    const onnx::TypeProto::Tensor &declared = input->type().tensor_type();
    std::optional<rt::DType> dt = rt::dtypeFromOnnx(declared.elem_type());
    // NumPy has no bfloat16: uint16 data holds its bit patterns.
    bool sameType =
        dt && (*dt == b.value.dtype() ||
               (*dt == rt::DType::BF16 && b.value.dtype() == rt::DType::U16));
    bool sameShape =
        !declared.has_shape() ||
        declared.shape().dim_size() == static_cast<int>(b.value.shape().size());
    for (int d = 0; sameShape && d < declared.shape().dim_size(); ++d)
      sameShape = !declared.shape().dim(d).has_dim_value() ||
                  declared.shape().dim(d).dim_value() == b.value.shape()[d];
    std::string where = b.file.empty() ? path : b.file;
    if (!sameType || !sameShape)
      fail(where + ": " + flag(b) + ": the value is " +
           rt::dtypeName(b.value.dtype()) + rt::shapeToString(b.value.shape()) +
           " but input '" + b.name + "' is " + declaredTypeText(declared));
    if (!declared.has_shape())
      continue;
    // A named dynamic dimension takes the bound value's size: a --dim that
    // says otherwise, or another binding, contradicts it.
    for (int d = 0; d < declared.shape().dim_size(); ++d) {
      const auto &dim = declared.shape().dim(d);
      if (dim.has_dim_value() || dim.dim_param().empty())
        continue;
      const std::string &param = dim.dim_param();
      int64_t size = b.value.shape()[d];
      std::string what = where + ": " + flag(b) + ": dimension " +
                         std::to_string(d) + " ('" + param + "') of input '" +
                         b.name + "' is " + std::to_string(size);
      if (auto given = options.dims.find(param);
          given != options.dims.end() && !implied.count(param)) {
        if (given->second != size)
          fail(what + ", but --dim " + param + "=" +
               std::to_string(given->second));
        continue;
      }
      auto [it, fresh] = implied.try_emplace(param, size, &b);
      if (!fresh && it->second.first != size)
        fail(what + ", but " + flag(*it->second.second) + " makes it " +
             std::to_string(it->second.first));
      options.dims[param] = size;
    }
  }
}

OwningOpRef<ModuleOp> importModel(MLIRContext &ctx, const std::string &path,
                                  const ImportOptions &options) {
  std::string error;
  if (llvm::StringRef(path).ends_with(".json")) {
    // A Hugging Face config.json: build the decode step (no weights).
    std::optional<LlmConfig> config = readLlmConfig(path, error);
    if (!config)
      fail(error);
    DecodeStepOptions decode;
    for (const auto &[name, value] : options.dims) {
      if (name == "batch")
        decode.batch = value;
      else if (name == "past")
        decode.pastLength = value;
      else if (name == "tokens")
        decode.tokens = value;
      else if (name == "layers")
        decode.layers = value;
      else if (name == "body")
        decode.bodyOnly = value != 0;
      else
        fail(path + ": --dim " + name +
             ": a config.json model takes --dim batch=N, --dim past=N (the "
             "KV cache length), --dim tokens=N (new tokens a sequence: 1, a "
             "decode step; more, a prefill chunk), --dim layers=N and --dim "
             "body=1 (the layers alone, without embedding and head)");
    }
    decode.kvPrecision = options.kvPrecision;
    OwningOpRef<ModuleOp> module =
        withTicker("build " + path, [&] {
          return buildDecodeStep(ctx, *config, decode, error);
        });
    if (!module)
      fail(error.empty() ? path + ": could not build the decode step"
                         : error);
    return module;
  }
  if (options.kvPrecision != "fp32")
    fail(path + ": --kv-precision applies to an LLM config.json (its KV "
                "cache); this is an ONNX model");
  checkDimNames(path, options);
  auto module = withTicker("import " + path, [&] {
    return importOnnxFile(ctx, path, options, error);
  });
  if (!module)
    fail(error);
  return module;
}

void runGraphPipeline(MLIRContext &ctx, ModuleOp module,
                      const std::string &file) {
  DiagnosticCapture diags(ctx);
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(graph::createGraphVerifyShapes());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(module)))
    fail(file + ": " + diags.first);
}

/// The bytes this process may allocate: the machine's memory, or less
/// under an address-space limit (ulimit -v).
static uint64_t availableMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t bytes = pages > 0 && pageSize > 0
                       ? uint64_t(pages) * uint64_t(pageSize)
                       : std::numeric_limits<uint64_t>::max();
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<uint64_t>(bytes, limit.rlim_cur);
  return bytes;
}

uint64_t MappingOptions::estimatedBytes(int64_t chips) {
  // Every per-chip argument and result of the function rewrites its
  // attribute array (8 bytes a chip) in four places of graph-partition and
  // graph-to-spatial, and MLIR keeps every array it uniqued: 32 x chips^2
  // bytes, 3.3 GB for tiny_cnn on 10,000 chips as measured. Each chip's
  // own IR adds about 64 KiB.
  uint64_t n = static_cast<uint64_t>(std::max<int64_t>(chips, 0));
  return 32 * n * n + 65536 * n;
}

void MappingOptions::validate() const {
  if (mapping != "auto" && mapping != "sequential" && mapping != "pipelined" &&
      mapping != "hybrid")
    fail("--mapping=" + mapping +
         ": expected auto, sequential, pipelined or hybrid");
  if (objective != "latency" && objective != "throughput")
    fail("--objective=" + objective + ": expected latency or throughput");
  if (maxII < 0)
    fail("--max-ii=" + std::to_string(maxII) +
         ": expected a positive number of cycles");
  if (chips < 1 || chips > (1 << 20))
    fail("--chips=" + std::to_string(chips) + ": expected 1 to 1048576");
  if (tp < 0 || tp > chips * 1024 || pp < 0 || pp > chips * 1024)
    fail("--" + std::string(tp < 0 || tp > chips * 1024 ? "tp=" : "pp=") +
         std::to_string(tp < 0 || tp > chips * 1024 ? tp : pp) +
         ": expected a positive number of chips");
  // Refused before anything is built: half the memory is left for the
  // model and the passes' own state.
  uint64_t need = estimatedBytes(chips), have = availableMemoryBytes();
  if (need > have / 2)
    fail("--chips=" + std::to_string(chips) + ": compiling for " +
         std::to_string(chips) + " chips takes about " + std::to_string(need) +
         " bytes of memory, more than half of the " + std::to_string(have) +
         " this process may use");
  // --tp and --pp split the chips: chips = tp x pp.
  // (Worded as graph-partition words them, which the Python module's
  // users see too.)
  if (tp > 0 && pp > 0 && tp * pp != chips)
    fail("--tp=" + std::to_string(tp) + " --pp=" + std::to_string(pp) +
         ": tp " + std::to_string(tp) + " x pp " + std::to_string(pp) +
         " is " + std::to_string(tp * pp) + " chips, not the " +
         std::to_string(chips) + " asked for (--chips)");
  if ((tp > 0 && chips % tp) || (pp > 0 && chips % pp)) {
    bool badTp = tp > 0 && chips % tp;
    std::string what = badTp ? "tp" : "pp";
    int64_t value = badTp ? tp : pp;
    fail("--" + what + "=" + std::to_string(value) + ": " + what + " " +
         std::to_string(value) + " does not divide " + std::to_string(chips) +
         " chips (--chips)");
  }
  if (systemChips > 0 && systemChips < chips)
    fail("--system-chips=" + std::to_string(systemChips) +
         " is fewer than --chips=" + std::to_string(chips) +
         " (the chips are the first of the system)");
  if (multiChip() && mapping == "hybrid")
    fail("--mapping=hybrid: across chips each chip's kernels are placed one "
         "at a time; use sequential (one input at a time) or pipelined (the "
         "pipeline stages overlap inputs)");
}

void requireSpatialTarget(const TargetModel &target, const std::string &name) {
  // A GPU is modelled as one tile with its HBM as off-chip memory (the
  // planner's cost model); a tile grid with DRAM beside it (wormhole) is
  // still a spatial chip the compiler maps onto.
  if (!target.hasOffChipMemory() || target.tilesPerChip() > 1)
    return;
  fail("--target=" + name + ": " + target.name() +
       " is a GPU system (one tile with off-chip memory, as the planner "
       "models a GPU): the GPU presets serve the planner (loom plan "
       "--system=" + name +
       "); the compiler maps onto spatial chips (loom target list)");
}

std::string targetJsonText(const std::string &nameOrPath) {
  return TargetModel::fileText(nameOrPath);
}

namespace {
/// The kernels and the schedule summary of a scheduled module (a null
/// summary if it is not scheduled).
std::pair<int64_t, loom::sched::SummaryOp> scheduleOf(ModuleOp module) {
  int64_t kernels = 0;
  loom::sched::SummaryOp summary;
  module.walk([&](Operation *op) {
    if (isa<loom::spatial::KernelOp>(op))
      ++kernels;
    if (auto s = dyn_cast<loom::sched::SummaryOp>(op))
      summary = s;
  });
  return {kernels, summary};
}

/// The function's integer attribute `name`, or `dflt`.
int64_t intAttr(ModuleOp module, const char *name, int64_t dflt) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  auto a = func ? func->getAttrOfType<IntegerAttr>(name) : IntegerAttr();
  return a ? a.getInt() : dflt;
}

/// graph-partition's report split into its clauses: what it chose, then
/// each partition it priced (empty on one chip).
std::vector<std::string> partitionClauses(ModuleOp module) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  auto a = func ? func->getAttrOfType<StringAttr>(graph::kPartitionReportAttr)
                : StringAttr();
  std::vector<std::string> clauses;
  if (!a)
    return clauses;
  llvm::SmallVector<llvm::StringRef> parts;
  a.getValue().split(parts, "; ");
  for (llvm::StringRef p : parts)
    clauses.push_back(p.str());
  return clauses;
}
} // namespace

std::string scheduleSummary(ModuleOp module, const TargetModel &target,
                            const std::string &out, double seconds) {
  auto [kernels, summary] = scheduleOf(module);
  if (!summary)
    return "";
  int64_t cycles = summary.getTotalCycles();
  int64_t roof = std::max<int64_t>(1, summary.getRooflineCycles());
  int64_t ii = summary.getInitiationInterval() > 0
                   ? summary.getInitiationInterval()
                   : std::max<int64_t>(1, cycles);
  auto mib = [](int64_t bytes) { return double(bytes) / (1 << 20); };
  // A precision the matrix unit does not run: the roofline above is the
  // vector unit's; say the matrix unit's beside it.
  std::string matrixRoof;
  auto mCycles = summary->getAttrOfType<IntegerAttr>("matrix_roofline_cycles");
  auto mFormat = summary->getAttrOfType<StringAttr>("matrix_roofline_format");
  if (mCycles && mFormat)
    matrixRoof = "; at " + mFormat.getValue().str() +
                 ", the matrix unit's fastest format, " +
                 std::to_string(mCycles.getInt()) + " cycles";
  char line[768];
  std::snprintf(
      line, sizeof line,
      "%s: %lld kernels, %s mapping, latency %lld cycles (%.1f us), "
      "interval %lld cycles (%.0f inputs/s), roofline %lld cycles (latency "
      "%.2fx, interval %.2fx%s), SRAM peak %.2f MiB/tile vs lower bound "
      "%.2f MiB (tile has %.2f MiB), compiled in %.2f s",
      out.c_str(), (long long)kernels, summary.getMapping().str().c_str(),
      (long long)cycles, target.cyclesToSeconds(double(cycles)) * 1e6,
      (long long)ii, 1.0 / target.cyclesToSeconds(double(ii)),
      (long long)roof, double(cycles) / double(roof),
      double(ii) / double(roof), matrixRoof.c_str(),
      mib(summary.getSramPeakBytes()),
      mib(summary.getSramLowerBoundBytes()), mib(target.sramBytesPerTile()),
      seconds);
  return line;
}


std::string mappingReport(ModuleOp module) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  auto report =
      func ? func->getAttrOfType<StringAttr>("spatial.mapping_report")
           : StringAttr();
  return report ? report.getValue().str() : "";
}

std::string mappingSummary(ModuleOp module, const MappingChoice &choice) {
  std::string full = mappingReport(module);
  std::vector<std::string> partitions = partitionClauses(module);
  int64_t chips = intAttr(module, spatial::kChipsAttr, 1);
  if (chips <= 1 || partitions.empty())
    return full;
  // "across N chips (tp T x pp P, NET network)", graph-to-spatial's lead.
  std::string line = full.substr(0, full.find(": "));
  auto [kernels, summary] = scheduleOf(module);
  if (!choice.chosen.empty())
    line += ", " + choice.chosen + " mapping (objective " + choice.objective +
            ")";
  else if (summary)
    line += ", " + summary.getMapping().str() + " mapping";
  size_t others = choice.candidates.empty() ? 0 : choice.candidates.size() - 1;
  size_t priced = partitions.size() - 1;
  line += "; " + std::to_string(priced) + " partition" +
          (priced == 1 ? "" : "s") + " priced";
  if (others > 0)
    line += " and " + std::to_string(others) + " other mapping" +
            (others == 1 ? "" : "s") + " scheduled";
  return line + " (--verbose lists them)";
}

std::string compileJson(ModuleOp module, const TargetModel &target,
                        const CompileFacts &facts) {
  using Json = nlohmann::ordered_json;
  auto [kernels, summary] = scheduleOf(module);
  Json j;
  j["program"] = facts.out;
  j["model"] = facts.model;
  j["target"] = facts.target;
  j["precision"] = facts.precision;
  j["kernels"] = kernels;
  if (summary) {
    int64_t cycles = summary.getTotalCycles();
    int64_t ii = summary.getInitiationInterval() > 0
                     ? summary.getInitiationInterval()
                     : std::max<int64_t>(1, cycles);
    j["mapping"] = summary.getMapping().str();
    j["latency_cycles"] = cycles;
    j["latency_seconds"] = target.cyclesToSeconds(double(cycles));
    j["interval_cycles"] = ii;
    j["inputs_per_second"] = 1.0 / target.cyclesToSeconds(double(ii));
    j["roofline_cycles"] = summary.getRooflineCycles();
    if (auto m = summary->getAttrOfType<IntegerAttr>("matrix_roofline_cycles"))
      j["matrix_roofline_cycles"] = m.getInt();
    if (auto f = summary->getAttrOfType<StringAttr>("matrix_roofline_format"))
      j["matrix_roofline_format"] = f.getValue().str();
    j["sram_peak_bytes"] = summary.getSramPeakBytes();
    j["sram_lower_bound_bytes"] = summary.getSramLowerBoundBytes();
  }
  j["sram_bytes_per_tile"] = target.sramBytesPerTile();
  j["chips"] = intAttr(module, spatial::kChipsAttr, 1);
  j["tp"] = intAttr(module, spatial::kTensorParallelAttr, 1);
  j["pp"] = intAttr(module, spatial::kPipelineParallelAttr, 1);
  Json choice;
  choice["objective"] = facts.choice.objective;
  choice["chosen"] = facts.choice.chosen;
  Json candidates = Json::array();
  for (const MappingChoice::Candidate &c : facts.choice.candidates) {
    Json cj;
    cj["mapping"] = c.mapping;
    if (c.error.empty()) {
      cj["latency_cycles"] = c.latencyCycles;
      cj["interval_cycles"] = c.intervalCycles;
    } else {
      cj["error"] = c.error;
    }
    candidates.push_back(std::move(cj));
  }
  choice["candidates"] = std::move(candidates);
  std::vector<std::string> partitions = partitionClauses(module);
  choice["partitions"] =
      partitions.empty() ? std::vector<std::string>()
                         : std::vector<std::string>(partitions.begin() + 1,
                                                    partitions.end());
  choice["report"] = mappingReport(module);
  j["mapping_report"] = std::move(choice);
  Json passes = Json::array();
  for (const PassTiming &t : facts.timings)
    passes.push_back({{"name", t.name}, {"seconds", t.seconds}});
  j["passes"] = std::move(passes);
  j["compile_seconds"] = facts.seconds;
  if (!facts.note.empty())
    j["note"] = facts.note;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::vector<uint8_t> emitVerified(ModuleOp module, const TargetModel &target,
                                  const std::string &model,
                                  const std::string &targetName, bool verify,
                                  const std::string &name,
                                  std::optional<rt::Program> *loaded) {
  DiagnosticCapture diags(*module.getContext());
  ProgramSource source{model, targetJsonText(targetName)};
  std::vector<uint8_t> bytes;
  // Emitting and verifying a large program take seconds: the line says
  // which is running and keeps its time moving.
  rt::Progress bar("write " + name, verify ? 2 : 1);
  rt::ProgressTicker ticker(bar);
  bar.update(0, "emit-program");
  if (failed(emitProgram(module, target, bytes, source)))
    fail(model + ": " + diags.first);
  if (verify || loaded) {
    bar.update(1, verify ? "verify the schedule" : "load");
    rt::Program program =
        rt::Program::fromBytes(bytes.data(), bytes.size(), name);
    // The independent verifier proves the very file about to be written.
    std::vector<rt::Violation> v =
        verify ? rt::verifySchedule(program, 1) : std::vector<rt::Violation>{};
    if (!v.empty())
      fail(model + ": internal error: the compiled schedule fails "
                   "verification (" +
           std::string(rt::violationKindName(v.front().kind)) +
           "): " + v.front().message);
    if (loaded)
      loaded->emplace(std::move(program));
  }
  bar.update(verify ? 2 : 1);
  return bytes;
}

Compiled compile(const std::string &modelPath, const CompileOptions &options) {
  auto started = std::chrono::steady_clock::now();
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(options.target, error);
  if (!target)
    fail(error);
  requireSpatialTarget(*target, options.target);
  std::unique_ptr<MLIRContext> ctx = makeContext();
  Compiled result;
  ImportOptions import = options.import;
  applyBindings(modelPath, options.bindings, import);
  auto module = importModel(*ctx, modelPath, import);
  result.timings.push_back(
      {"import", std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - started)
                     .count()});
  runBackend(*ctx, *module, modelPath, options.target, false,
             options.precision, options.mapping, &result.timings);
  auto emitStart = std::chrono::steady_clock::now();
  result.program = emitVerified(*module, *target, modelPath, options.target,
                                options.verify, modelPath);
  result.timings.push_back(
      {options.verify ? "emit-and-verify" : "emit",
       std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                     emitStart)
           .count()});
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  result.summary = scheduleSummary(*module, *target, "program", result.seconds);
  result.mappingReport = mappingReport(*module);
  return result;
}

Evaluated evaluate(const std::string &modelPath,
                   const std::map<std::string, rt::Tensor> &inputs,
                   const ImportOptions &options) {
  std::unique_ptr<MLIRContext> ctx = makeContext();
  auto module = importModel(*ctx, modelPath, options);
  auto func = module->lookupSymbol<func::FuncOp>("main");
  std::vector<rt::Tensor> args;
  std::map<std::string, rt::Tensor> given = inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, "graph.name").str();
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    auto it = given.find(name);
    if (it == given.end())
      fail(modelPath + ": input '" + name + "' is not given");
    std::optional<rt::DType> dt = dtypeFromType(type.getElementType());
    const rt::Tensor &t = it->second;
    if (!dt || t.dtype() != *dt ||
        llvm::ArrayRef<int64_t>(t.shape()) != type.getShape())
      fail(modelPath + ": input '" + name + "' is " + rt::dtypeName(t.dtype()) +
           rt::shapeToString(t.shape()) + " but the model expects " +
           (dt ? rt::dtypeName(*dt) : std::string("?")) +
           rt::shapeToString(
               rt::Shape(type.getShape().begin(), type.getShape().end())));
    args.push_back(t);
    given.erase(it);
  }
  if (!given.empty())
    fail(modelPath + ": the model has no input named '" +
         given.begin()->first + "'");
  DiagnosticCapture diags(*ctx);
  auto outputs = loom::evaluate(func, args);
  if (!outputs)
    fail(modelPath + ": " + diags.first);
  Evaluated result;
  for (unsigned i = 0; i < outputs->size(); ++i) {
    result.names.push_back(
        func.getResultAttrOfType<StringAttr>(i, "graph.name").str());
    result.values.push_back(std::move((*outputs)[i]));
  }
  return result;
}

std::string precisionNote(const TargetModel &target,
                          const std::string &precision) {
  std::optional<rt::NumericFormat> f = rt::kernelPrecisionFormat(precision);
  // fp32 too: on a chip whose matrix unit runs only narrow formats (TSP,
  // LPX, Wormhole) an fp32 compile would otherwise run every matmul on the
  // vector unit without a word.
  if (!f || target.matrixSupports(*f))
    return "";
  std::string runs;
  for (rt::NumericFormat g : rt::kAllNumericFormats)
    if (target.matrixSupports(g))
      runs += std::string(runs.empty() ? "" : ", ") + rt::numericFormatName(g);
  return "note: " + target.name() + "'s matrix unit does not run " +
         precision + " (it runs " + (runs.empty() ? "nothing" : runs) +
         "): its matmul and conv kernels run on the vector unit" +
         (runs.empty() ? std::string()
                       : "; --precision=" +
                             runs.substr(0, runs.find(',')) +
                             " runs them on the matrix unit");
}

std::optional<double> compileLayerSeconds(const std::string &configPath,
                                          const std::string &system,
                                          const plan::LayerSpec &layer,
                                          std::string &error) {
  CompileOptions options;
  options.import.kvPrecision = layer.kvStorage;
  options.target = system;
  options.precision = layer.precision;
  options.mapping.mapping = "sequential";
  options.mapping.tp = layer.tp;
  options.mapping.pp = 1;
  options.mapping.chips = layer.tp;
  options.mapping.systemChips =
      layer.systemChips > layer.tp ? layer.systemChips : 0;
  options.verify = false;
  // One layer alone. (Two layers less one measure the same within 1% on
  // the Llama-3-70B layer at tp 8, 7.36 against 7.31 us, so one compile
  // is enough.)
  auto seconds = [&](int64_t layers) {
    options.import.dims = {{"layers", layers},
                           {"body", 1},
                           {"batch", layer.batch},
                           {"tokens", layer.tokens},
                           {"past", layer.past}};
    Compiled c = compile(configPath, options);
    rt::Program p = rt::Program::fromBytes(c.program.data(), c.program.size(),
                                           configPath);
    return double(p.totalCycles) / p.clockHz;
  };
  try {
    return seconds(1);
  } catch (const rt::Error &e) {
    error = e.what();
    return std::nullopt;
  }
}

} // namespace loom::driver
