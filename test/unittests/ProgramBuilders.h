//===- ProgramBuilders.h - Hand-built programs for unit tests ---*- C++ -*-===//
//
// Builders of rt::Program records shared by the simulator, verifier and
// floorplan tests, which build small programs field by field.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TEST_UNITTESTS_PROGRAMBUILDERS_H
#define LOOM_TEST_UNITTESTS_PROGRAMBUILDERS_H

#include "loom/Runtime/Program.h"

#include <string>
#include <vector>

namespace loom::rt::testing {

/// A tensor; with `data`, an f32 constant holding it.
inline ProgramTensor tensor(int32_t id, std::string name, Shape shape,
                            TensorKind kind, std::vector<float> data = {}) {
  ProgramTensor t;
  t.id = id;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.kind = kind;
  if (!data.empty()) {
    t.constant = Tensor::fromVector(DType::F32, t.shape, data);
    t.hasData = true;
  }
  return t;
}

inline ProgramInstr instr(int32_t id, int32_t kernel, Unit unit,
                          int32_t resource, int64_t start, int64_t duration,
                          std::vector<int32_t> deps = {},
                          std::vector<int32_t> reads = {},
                          std::vector<int32_t> writes = {},
                          int64_t bytes = 0) {
  ProgramInstr in;
  in.id = id;
  in.kernel = kernel;
  in.unit = unit;
  in.resource = resource;
  in.start = start;
  in.duration = duration;
  in.deps = std::move(deps);
  in.reads = std::move(reads);
  in.writes = std::move(writes);
  in.bytes = bytes;
  return in;
}

inline ProgramBuffer buffer(int32_t id, int32_t tensor, int32_t tile,
                            int64_t offset, int64_t size, int64_t liveStart,
                            int64_t liveEnd, int32_t copies = 1,
                            bool resident = false) {
  ProgramBuffer b;
  b.id = id;
  b.tensor = tensor;
  b.tile = tile;
  b.offset = offset;
  b.size = size;
  b.liveStart = liveStart;
  b.liveEnd = liveEnd;
  b.copies = copies;
  b.resident = resident;
  return b;
}

} // namespace loom::rt::testing

#endif // LOOM_TEST_UNITTESTS_PROGRAMBUILDERS_H
