//===- VerifySchedule.cpp - The sched-verify pass -------------------------===//
#include "loom/Target/VerifySchedule.h"

#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Runtime/ScheduleVerifier.h"
#include "loom/Target/ProgramEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

namespace loom {

using namespace mlir;

LogicalResult verifyModuleSchedule(ModuleOp module, const TargetModel &target,
                                   const std::string &targetJson,
                                   size_t maxViolations) {
  std::vector<uint8_t> bytes;
  ProgramSource source;
  source.constantData = false;
  // The program carries its target, whose chip the timing rules read.
  source.targetJson = targetJson;
  if (failed(emitProgram(module, target, bytes, source)))
    return failure();
  std::vector<rt::Violation> violations;
  try {
    rt::Program program = rt::Program::fromBytes(
        bytes.data(), bytes.size(), "sched-verify");
    violations = rt::verifySchedule(program, maxViolations);
  } catch (const rt::Error &e) {
    return module.emitError() << "sched-verify: the program does not load: "
                              << e.what();
  }
  if (violations.empty())
    return success();
  std::map<int64_t, Operation *> instrs, buffers;
  module.walk([&](Operation *op) {
    if (auto i = dyn_cast<sched::InstrOp>(op))
      instrs[i.getId()] = op;
    else if (auto b = dyn_cast<sched::BufferOp>(op))
      buffers[b.getId()] = op;
  });
  for (const rt::Violation &v : violations) {
    Operation *at = module;
    if (v.instr >= 0 && instrs.count(v.instr))
      at = instrs[v.instr];
    else if (v.buffer >= 0 && buffers.count(v.buffer))
      at = buffers[v.buffer];
    at->emitError() << "schedule violation (" << rt::violationKindName(v.kind)
                    << "): " << v.message;
  }
  return failure();
}

namespace {

struct VerifySchedulePass
    : PassWrapper<VerifySchedulePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifySchedulePass)

  VerifySchedulePass() = default;
  VerifySchedulePass(const VerifySchedulePass &other) : PassWrapper(other) {}
  explicit VerifySchedulePass(std::string t) { target = std::move(t); }

  StringRef getArgument() const override { return "sched-verify"; }
  StringRef getDescription() const override {
    return "Prove a scheduled module's program sound with the independent "
           "schedule verifier";
  }
  void runOnOperation() override {
    std::string error;
    std::optional<TargetModel> t = TargetModel::load(target, error);
    if (!t) {
      getOperation().emitError() << "sched-verify: " << error;
      return signalPassFailure();
    }
    if (failed(verifyModuleSchedule(getOperation(), *t,
                                    TargetModel::fileText(target),
                                    std::max<int64_t>(1, maxViolations))))
      signalPassFailure();
  }

  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target preset name or JSON file"),
                             llvm::cl::init("tiny")};
  Option<int64_t> maxViolations{
      *this, "max-violations",
      llvm::cl::desc("Report up to this many violations (the first by "
                     "default)"),
      llvm::cl::init(1)};
};

/// Writes the module's program to a file as it stands, unverified: a
/// schedule edited by hand runs on the simulator, whose replay enforces the
/// timing (`loom run --no-verify`).
struct EmitProgramPass
    : PassWrapper<EmitProgramPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EmitProgramPass)

  EmitProgramPass() = default;
  EmitProgramPass(const EmitProgramPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "sched-emit-program"; }
  StringRef getDescription() const override {
    return "Write a scheduled module's program file, without verifying it";
  }
  void runOnOperation() override {
    std::string error;
    std::optional<TargetModel> t = TargetModel::load(target, error);
    if (!t) {
      getOperation().emitError() << "sched-emit-program: " << error;
      return signalPassFailure();
    }
    if (out.empty()) {
      getOperation().emitError()
          << "sched-emit-program: no output file (out=FILE.loom)";
      return signalPassFailure();
    }
    if (maxBytes < 1 || maxBytes > kMaxProgramBytes) {
      getOperation().emitError()
          << "sched-emit-program: max-bytes=" << int64_t(maxBytes)
          << ": expected 1 to " << kMaxProgramBytes
          << " (FlatBuffers' limit)";
      return signalPassFailure();
    }
    ProgramSource source;
    source.model = model;
    source.targetJson = TargetModel::fileText(target);
    source.maxBytes = maxBytes;
    std::vector<uint8_t> bytes;
    if (failed(emitProgram(getOperation(), *t, bytes, source)))
      return signalPassFailure();
    std::error_code ec;
    llvm::raw_fd_ostream os(out, ec, llvm::sys::fs::OF_None);
    if (ec) {
      getOperation().emitError()
          << "sched-emit-program: " << out << ": cannot write: "
          << ec.message();
      return signalPassFailure();
    }
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }

  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target preset name or JSON file"),
                             llvm::cl::init("tiny")};
  Option<std::string> out{*this, "out",
                          llvm::cl::desc("The program file to write")};
  Option<int64_t> maxBytes{
      *this, "max-bytes",
      llvm::cl::desc("The most bytes the file may take (default: "
                     "FlatBuffers' 2 GiB; smaller to test the refusal)"),
      llvm::cl::init(kMaxProgramBytes)};
  Option<std::string> model{*this, "model",
                            llvm::cl::desc("The model it was compiled from")};
};

} // namespace

std::unique_ptr<Pass> createVerifySchedulePass(std::string target) {
  return std::make_unique<VerifySchedulePass>(std::move(target));
}

void registerVerifySchedulePass() {
  PassRegistration<VerifySchedulePass>();
  PassRegistration<EmitProgramPass>();
}

} // namespace loom
