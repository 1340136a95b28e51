//===- Check.cpp - `loom check` as a function -----------------------------===//
//
// See include/loom/Driver/Check.h.
//
//===----------------------------------------------------------------------===//
#include "loom/Driver/Check.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Pipeline.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <nlohmann/json.hpp>

#include <deque>
#include <map>

using namespace mlir;

namespace loom::driver {
namespace {

using KernelValues = std::vector<rt::Tensor>;

/// The reference value of every kernel of the kernel-formed graph (the
/// kernels the program runs, in the same order), by kernel name (the ONNX
/// node of its anchor). graph-to-spatial may add kernels (a K split's
/// partial products), which have none and are skipped.
std::map<std::string, std::deque<KernelValues>>
kernelReference(MLIRContext &ctx, ModuleOp module,
                const std::vector<rt::Tensor> &inputs,
                const CheckOptions &options) {
  DiagnosticCapture diags(ctx);
  OwningOpRef<ModuleOp> kernelModule = module.clone();
  PassManager pm(&ctx);
  graph::GraphPipelineOptions graphOpts;
  graphOpts.target = options.targetName;
  graphOpts.precision = options.precision;
  graph::buildGraphPipeline(pm, graphOpts);
  if (failed(pm.run(*kernelModule)))
    throw rt::Error(options.model + ": " + diags.first);
  std::map<std::string, std::deque<KernelValues>> byName;
  auto kernelFunc = kernelModule->lookupSymbol<func::FuncOp>("main");
  auto out = loom::evaluate(
      kernelFunc, inputs, [&](Operation *op, const KernelValues &results) {
        if (isa<graph::KernelOp>(op) &&
            op->getParentOp() == kernelFunc.getOperation())
          byName[spatial::onnxNodeName(op->getLoc())].push_back(results);
      });
  if (!out)
    throw rt::Error(options.model + ": reference on kernels: " + diags.first);
  return byName;
}

} // namespace

CheckReport checkModel(MLIRContext &ctx, ModuleOp module,
                       const TargetModel &target,
                       const std::vector<rt::Tensor> &inputs,
                       const CheckOptions &options) {
  DiagnosticCapture diags(ctx);
  auto graphFunc = module.lookupSymbol<func::FuncOp>("main");
  auto golden = loom::evaluate(graphFunc, inputs);
  if (!golden)
    throw rt::Error(options.model + ": golden reference: " + diags.first);
  // Kernel by kernel on one chip only: across chips the kernels are the
  // partitioned ones, and the reference's one-chip pipeline would refuse a
  // model that needs the chips.
  std::map<std::string, std::deque<KernelValues>> kernelRef;
  if (!options.mapping.multiChip())
    kernelRef = kernelReference(ctx, module, inputs, options);

  // Compile the module and simulate the program (the simulator verifies
  // the schedule itself before it runs).
  runBackend(ctx, module, options.model, options.targetName, false,
             options.precision, options.mapping);
  std::optional<rt::Program> program;
  emitVerified(module, target, options.model, options.targetName,
               /*verify=*/false, options.model, &program);
  rt::Simulator sim(*program);
  CheckReport report;
  report.kernelsCompared = !options.mapping.multiChip();
  rt::FunctionalHooks hooks;
  hooks.corruptKernel = options.corruptKernel;
  hooks.dropInstr = options.dropInstr;
  hooks.afterKernel = [&](const rt::ProgramKernel &k,
                          const std::map<int32_t, rt::Tensor> &outs) {
    if (!report.kernelsCompared || report.firstKernel >= 0)
      return;
    auto ref = kernelRef.find(k.name);
    if (ref == kernelRef.end() || ref->second.empty())
      return;
    const KernelValues expected = std::move(ref->second.front());
    ref->second.pop_front();
    for (size_t i = 0; i < k.outputs.size() && i < expected.size(); ++i) {
      auto it = outs.find(k.outputs[i]);
      if (it == outs.end())
        continue;
      rt::Divergence d =
          rt::compareTensors(expected[i], it->second, options.tolerance);
      if (!d.ok) {
        report.firstKernel = k.id;
        report.firstKernelName = k.name;
        report.firstKernelNodes = k.onnxNodes;
        report.firstOutput = i;
        report.firstDivergence = d;
        return;
      }
    }
  };
  rt::SimResult result = sim.runFunctional(inputs, hooks);
  bool allOk = true;
  for (size_t i = 0; i < result.outputs.size() && i < golden->size(); ++i) {
    report.outputNames.push_back(result.outputs[i].name);
    report.outputs.push_back(rt::compareTensors(
        (*golden)[i], result.outputs[i].value, options.tolerance));
    allOk &= report.outputs.back().ok;
  }
  report.stats = result.stats;
  report.passed = allOk && report.firstKernel < 0;
  return report;
}

std::string checkJson(const CheckReport &report, const CheckOptions &options) {
  // An infinite error is null.
  using Json = nlohmann::ordered_json;
  Json j;
  j["model"] = options.model;
  j["target"] = options.targetName;
  j["precision"] = options.precision;
  j["kv_precision"] = options.kvPrecision;
  j["rtol"] = options.tolerance.rtol;
  j["atol"] = options.tolerance.atol;
  j["scale_tolerance"] = options.tolerance.scaleTol;
  Json outs = Json::array();
  for (size_t i = 0; i < report.outputs.size(); ++i)
    outs.push_back({{"name", report.outputNames[i]},
                    {"match", report.outputs[i].ok},
                    {"max_abs_err", report.outputs[i].maxAbs},
                    {"max_rel_err", report.outputs[i].maxRel}});
  j["outputs"] = std::move(outs);
  j["total_cycles"] = report.stats.totalCycles;
  j["seconds"] = report.stats.seconds;
  j["roofline_cycles"] = report.stats.rooflineCycles;
  j["chips"] = report.stats.chips;
  j["kernels_compared"] = report.kernelsCompared;
  Json first = nullptr;
  if (report.firstKernel >= 0)
    first = {{"id", report.firstKernel},
             {"name", report.firstKernelName},
             {"onnx_nodes", report.firstKernelNodes},
             {"output", report.firstOutput},
             {"max_abs_err", report.firstDivergence.maxAbs}};
  j["first_divergent_kernel"] = std::move(first);
  j["passed"] = report.passed;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace loom::driver
