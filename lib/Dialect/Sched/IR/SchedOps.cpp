//===- SchedOps.cpp - sched dialect: verifiers ----------------------------===//
#include "loom/Dialect/Sched/IR/Sched.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace loom::sched;

#include "loom/Dialect/Sched/IR/SchedDialect.cpp.inc"

void SchedDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Sched/IR/SchedOps.cpp.inc"
      >();
}

LogicalResult InstrOp::verify() {
  StringRef unit = getUnit();
  if (unit != "matrix" && unit != "vector" && unit != "dma" && unit != "link" &&
      unit != "chip_link")
    return emitOpError("unit must be matrix, vector, dma, link or chip_link, got '")
           << unit << "'";
  if (getResource() < 0 || getStart() < 0 || getDuration() < 0 ||
      getBytes() < 0)
    return emitOpError("resource, start, duration and bytes must be "
                       "non-negative");
  if (getKernel() < -1)
    return emitOpError("kernel must be a kernel id or -1");
  if (getLatency() && *getLatency() < 0)
    return emitOpError("latency must be non-negative");
  return success();
}

LogicalResult BufferOp::verify() {
  if (getTile() < 0 || getOffset() < 0 || getSize() < 0)
    return emitOpError("tile, offset and size must be non-negative");
  if (getLiveStart() < 0 || getLiveEnd() < getLiveStart())
    return emitOpError("live range [") << getLiveStart() << ", " << getLiveEnd()
                                       << ") ends before it starts";
  if (std::optional<ArrayRef<int64_t>> box = getBox()) {
    auto shape = cast<RankedTensorType>(getValue().getType()).getShape();
    if (box->size() != 2 * shape.size())
      return emitOpError("box has ")
             << box->size() << " entries for a rank-" << shape.size()
             << " tensor (lo and hi of every dimension)";
    for (size_t d = 0; d < shape.size(); ++d)
      if ((*box)[d] < 0 || (*box)[d] > (*box)[shape.size() + d] ||
          (*box)[shape.size() + d] > shape[d])
        return emitOpError("box dimension ")
               << d << " [" << (*box)[d] << ", " << (*box)[shape.size() + d]
               << ") is not inside [0, " << shape[d] << ")";
  }
  return success();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Sched/IR/SchedOps.cpp.inc"
