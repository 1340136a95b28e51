//===- VerifySchedule.h - The sched-verify pass -----------------*- C++ -*-===//
//
// `sched-verify{target=NAME}` writes the scheduled module's program (without
// weight data) into memory, loads it as the runtime would, and runs the
// independent schedule verifier (runtime/include/loom/Runtime/
// ScheduleVerifier.h) on it: what is proven is exactly the file the runtime
// will get, and nothing of the scheduler's own bookkeeping is trusted. Each
// violation is an error at the sched.instr or sched.buffer it names.
//
// `sched-emit-program{target=NAME out=FILE.loom}` writes the module's
// program (with its weights) as it stands, unverified, so that a schedule
// edited by hand can be run: `loom run --no-verify` then leaves the
// simulator's event-by-event replay (runtime/include/loom/Runtime/Replay.h)
// to catch its hazards.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_VERIFYSCHEDULE_H
#define LOOM_TARGET_VERIFYSCHEDULE_H

#include "loom/Target/TargetModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace loom {

/// Verifies the schedule of `module` for `target`; emits one error per
/// violation (at most `maxViolations`) and returns failure if any.
/// `targetJson` is the target's JSON text, which the program carries and
/// whose chip the instructions' timing rules read.
mlir::LogicalResult verifyModuleSchedule(mlir::ModuleOp module,
                                         const TargetModel &target,
                                         const std::string &targetJson,
                                         size_t maxViolations = 8);

/// The pass, with its `target` option.
std::unique_ptr<mlir::Pass> createVerifySchedulePass(std::string target = "tiny");
/// Registers sched-verify and sched-emit-program.
void registerVerifySchedulePass();

} // namespace loom

#endif // LOOM_TARGET_VERIFYSCHEDULE_H
