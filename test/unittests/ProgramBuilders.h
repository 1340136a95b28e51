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
#include <utility>
#include <vector>

namespace loom::rt::testing {

/// A target description for a hand-built program of a `rows` x `cols` grid
/// with `sramBytes` a tile, whose rates are so high that every timing rule
/// gives 1 cycle (docs/isa.md): tests of other checks set their durations
/// freely. The loader requires one matching the program's grid and SRAM.
inline std::string fastTargetJson(int64_t rows, int64_t cols,
                                  int64_t sramBytes) {
  return R"({"name": "test-chip", "description": "unit tests",
  "chip": {"name": "test", "clock_hz": 1.0e9,
    "tiles": {"rows": )" +
         std::to_string(rows) + R"(, "cols": )" + std::to_string(cols) +
         R"(},
    "tile": {
      "matrix": {"macs_per_cycle": {"fp32": 1000000000, "bf16": 1000000000},
                 "block": {"m": 1, "n": 1, "k": 1}, "latency_cycles": 0},
      "vector": {"lanes": 1000000000, "latency_cycles": 0},
      "sram": {"bytes": )" +
         std::to_string(sramBytes) + R"(, "bytes_per_cycle": 1.0e12}},
    "mesh": {"link_bytes_per_cycle": 1.0e12, "hop_latency_cycles": 0}},
  "system": {"chips": 4, "chips_per_node": 4, "nodes_per_rack": 1,
    "links": {"per_chip": 4, "bytes_per_second": 1.0e12,
              "latency_seconds": 1.0e-6, "topology": "ring"},
    "power_watts_per_chip": 10}})";
}

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

/// An f32 splat constant: every element of `shape` is `value`.
inline ProgramTensor splatTensor(int32_t id, std::string name, Shape shape,
                                 float value) {
  ProgramTensor t;
  t.id = id;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.kind = TensorKind::Constant;
  t.constant = Tensor::fromVector(DType::F32, {}, std::vector<float>{value});
  t.hasData = true;
  t.splat = true;
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

/// A chip link record from chip `from` to chip `to` of a program with
/// `tilesPerChip` tiles per chip.
inline ProgramLink chipLink(int32_t id, int32_t from, int32_t to,
                            int32_t tilesPerChip) {
  ProgramLink l;
  l.id = id;
  l.chipLink = true;
  l.fromChip = from;
  l.toChip = to;
  l.fromTile = from * tilesPerChip;
  l.toTile = to * tilesPerChip;
  l.bytesPerCycle = 4;
  l.latencyCycles = 2;
  return l;
}

/// y = x @ W + b on 2 chips of 1 x 2 tiles (system tiles 0, 1 on chip 0;
/// 2, 3 on chip 1), x: [2, 3], W: [3, 2], b: [2] a splat of 10. The matmul
/// runs on chip 0's first tile, its result h crosses chip link 4 (chip 0 ->
/// chip 1) to chip 1's first tile (tile 2), where the add runs.
///
///   instr 0  dma       tile 0  [0, 10)            writes b0 (x), b1 (W)
///   instr 1  matrix    tile 0  [10, 30)  deps 0   reads b0, b1; writes b2
///   instr 2  dma       tile 0  [30, 40)  deps 1   reads b2; writes b3
///   instr 3  chip_link link 4  [30, 40)  deps 1   reads b2; writes b3
///   instr 4  dma       tile 2  [0, 10)            writes b4 (b)
///   instr 5  vector    tile 2  [40, 50)  deps 2-4 reads b3, b4; writes b5
inline Program twoChipProgram() {
  Program p;
  p.path = "two_chips.loom";
  p.model = "mm_add.onnx";
  p.targetName = "test-chip";
  p.tileRows = 1;
  p.tileCols = 2;
  p.chips = 2;
  p.pipelineParallel = 2;
  p.topology = "ring";
  p.sramBytesPerTile = 1024;
  p.clockHz = 1e9;
  p.tensors = {
      tensor(0, "x", {2, 3}, TensorKind::Input),
      tensor(1, "W", {3, 2}, TensorKind::Constant, {1, 0, 0, 1, 1, 1}),
      splatTensor(2, "b", {2}, 10),
      tensor(3, "h", {2, 2}, TensorKind::Intermediate),
      tensor(4, "y", {2, 2}, TensorKind::Output),
  };
  p.inputs = {0};
  p.outputs = {4};
  auto kernel = [](int32_t id, std::string name, std::string node,
                   int32_t chip, std::string op, std::vector<int32_t> inputs,
                   int32_t output) {
    ProgramKernel k;
    k.id = id;
    k.name = std::move(name);
    k.onnxNodes = {node};
    k.kind = op == "matmul" ? KernelKind::MatMul : KernelKind::Elementwise;
    k.precision = NumericFormat::F32;
    k.tileRows = 1;
    k.tileCols = 1;
    k.chip = chip;
    k.cycles = 20;
    ProgramOp o;
    o.name = std::move(op);
    o.inputs = inputs;
    o.outputs = {output};
    o.onnxNode = std::move(node);
    k.ops = {o};
    k.inputs = std::move(inputs);
    k.outputs = {output};
    return k;
  };
  p.kernels = {kernel(0, "mm", "MatMul_0", 0, "matmul", {0, 1}, 3),
               kernel(1, "add", "Add_1", 1, "add", {3, 2}, 4)};
  p.links = {{0, 0, 1}, {1, 1, 0}, {2, 2, 3}, {3, 3, 2},
             chipLink(4, 0, 1, 2), chipLink(5, 1, 0, 2)};
  p.links[2].fromChip = p.links[2].toChip = 1;
  p.links[3].fromChip = p.links[3].toChip = 1;
  p.buffers = {
      buffer(0, 0, 0, 0, 24, 0, 30),    buffer(1, 1, 0, 32, 24, 0, 30),
      buffer(2, 3, 0, 64, 16, 10, 40),  buffer(3, 3, 2, 0, 16, 30, 50),
      buffer(4, 2, 2, 16, 8, 0, 50),    buffer(5, 4, 2, 32, 16, 40, 50),
  };
  p.instrs = {
      instr(0, 0, Unit::Dma, 0, 0, 10, {}, {}, {0, 1}, 48),
      instr(4, 1, Unit::Dma, 2, 0, 10, {}, {}, {4}, 8),
      instr(1, 0, Unit::Matrix, 0, 10, 20, {0}, {0, 1}, {2}),
      instr(2, -1, Unit::Dma, 0, 30, 10, {1}, {2}, {3}, 16),
      instr(3, -1, Unit::ChipLink, 4, 30, 10, {1}, {2}, {3}, 16),
      instr(5, 1, Unit::Vector, 2, 40, 10, {2, 3, 4}, {3, 4}, {5}),
  };
  p.totalCycles = 50;
  p.initiationInterval = 50;
  return p;
}

/// A program of about 200k instrs and 120k buffers on 2 chips of 8 x 8
/// tiles, in rounds 100 cycles apart. Each round every tile loads a buffer
/// (DMA), transforms it (vector) and sends the result to a partner tile
/// (DMA and link), whose matrix unit reads it: local tiles 2k and 2k+1
/// swap over mesh links, local tile 0 of each chip sends to the other chip
/// over a chip link, local tile 1 keeps its result.
inline Program largeTwoChipProgram(int64_t rounds) {
  constexpr int32_t kPerChip = 64;
  Program p;
  p.path = "large.loom";
  p.model = "large.onnx";
  p.tileRows = 8;
  p.tileCols = 8;
  p.chips = 2;
  p.sramBytesPerTile = 1024;
  p.clockHz = 1e9;
  p.tensors = {tensor(0, "x", {16}, TensorKind::Input),
               tensor(1, "h", {16}, TensorKind::Intermediate)};
  p.inputs = {0};
  ProgramKernel k;
  k.id = 0;
  k.name = "k";
  k.tileRows = k.tileCols = 8;
  p.kernels = {k};
  auto dest = [](int32_t t) {
    int32_t chip = t / kPerChip, local = t % kPerChip;
    return local == 0 ? (1 - chip) * kPerChip : chip * kPerChip + (local ^ 1);
  };
  for (int32_t t = 0; t < 2 * kPerChip; ++t)
    if (t % kPerChip >= 2)
      p.links.push_back({t, t, dest(t)});
  p.links.push_back(chipLink(1000, 0, 1, kPerChip));
  p.links.push_back(chipLink(1001, 1, 0, kPerChip));
  // Fast enough for the 10-cycle instrs below (rule link.chip).
  p.links[p.links.size() - 2].bytesPerCycle = 64;
  p.links.back().bytesPerCycle = 64;
  int32_t nextInstr = 0, nextBuffer = 0;
  for (int64_t r = 0; r < rounds; ++r) {
    int64_t base = r * 100;
    for (int32_t t = 0; t < 2 * kPerChip; ++t) {
      int32_t local = t % kPerChip;
      int32_t x = nextBuffer++, y = nextBuffer++;
      p.buffers.push_back(buffer(x, 0, t, 0, 64, base, base + 30));
      p.buffers.push_back(buffer(y, 1, t, 64, 64, base + 10, base + 40));
      int32_t a = nextInstr++, b = nextInstr++;
      p.instrs.push_back(instr(a, 0, Unit::Dma, t, base, 10, {}, {}, {x}));
      p.instrs.push_back(
          instr(b, 0, Unit::Vector, t, base + 10, 20, {a}, {x}, {y}));
      if (local == 1)
        continue;
      int32_t to = dest(t), z = nextBuffer++;
      p.buffers.push_back(buffer(z, 1, to, 128, 64, base + 30, base + 60));
      int32_t c = nextInstr++, d = nextInstr++, e = nextInstr++;
      p.instrs.push_back(
          instr(c, -1, Unit::Dma, t, base + 30, 10, {b}, {y}, {z}, 64));
      p.instrs.push_back(instr(
          d, -1, local == 0 ? Unit::ChipLink : Unit::MeshLink,
          local == 0 ? 1000 + t / kPerChip : t, base + 30, 10, {b}, {y}, {z},
          64));
      p.instrs.push_back(
          instr(e, 0, Unit::Matrix, to, base + 40, 20, {c, d}, {z}, {}));
    }
  }
  p.totalCycles = rounds * 100;
  p.initiationInterval = p.totalCycles;
  return p;
}

} // namespace loom::rt::testing

#endif // LOOM_TEST_UNITTESTS_PROGRAMBUILDERS_H
