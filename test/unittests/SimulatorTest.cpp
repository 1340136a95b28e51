//===- SimulatorTest.cpp - Program loading, schedule checks, fast kernels -===//
//
// Programs are built here with the FlatBuffers builder API from a plain
// rt::Program description (a miniature emitter), then broken by hand to show
// that each load-time and schedule check fires with a useful message.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/OpExecutor.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/ProgramSeal.h"
#include "loom/Runtime/Reference.h"
#include "loom/Runtime/Report.h"
#include "loom/Runtime/Simulator.h"
#include "ProgramBuilders.h"

#include "loom/Runtime/Program_generated.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::testing;
namespace fbp = loom::program;

namespace {

//===----------------------------------------------------------------------===//
// A miniature emitter: rt::Program description -> .loom bytes
//===----------------------------------------------------------------------===//

std::vector<uint8_t> emit(const Program &p, bool sortInstrs = true) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fbp::Tensor>> tensors;
  for (const ProgramTensor &t : p.tensors) {
    std::vector<uint8_t> data;
    if (t.hasData) {
      const auto *bytes = static_cast<const uint8_t *>(t.constant.raw());
      data.assign(bytes, bytes + t.constant.byteSize());
    }
    tensors.push_back(fbp::CreateTensorDirect(
        b, t.id, t.name.c_str(), static_cast<fbp::DType>(t.dtype), &t.shape,
        static_cast<fbp::TensorKind>(t.kind), t.hasData ? &data : nullptr,
        t.splat, t.partAxis, t.partIndex, t.partCount,
        t.storage == NumericFormat::F32 ? nullptr
                                        : numericFormatName(t.storage)));
  }
  std::vector<flatbuffers::Offset<fbp::Kernel>> kernels;
  for (const ProgramKernel &k : p.kernels) {
    std::vector<flatbuffers::Offset<fbp::Op>> ops;
    for (const ProgramOp &op : k.ops) {
      std::vector<flatbuffers::Offset<fbp::Attr>> attrs;
      for (const auto &[name, a] : op.attrs)
        attrs.push_back(fbp::CreateAttrDirect(
            b, name.c_str(), static_cast<fbp::AttrKind>(a.kind), &a.ints,
            &a.floats, a.str.c_str()));
      ops.push_back(fbp::CreateOpDirect(b, op.name.c_str(), &op.inputs,
                                        &op.outputs, &attrs,
                                        op.onnxNode.c_str()));
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> nodes;
    for (const std::string &n : k.onnxNodes)
      nodes.push_back(b.CreateString(n));
    kernels.push_back(fbp::CreateKernelDirect(
        b, k.id, k.name.c_str(), &nodes, static_cast<fbp::KernelKind>(k.kind),
        static_cast<fbp::NumericFormat>(k.precision), k.tileRow, k.tileCol,
        k.tileRows, k.tileCols, &ops, &k.inputs, &k.outputs, k.flops, k.bytes,
        static_cast<fbp::CostBound>(k.bound), k.cycles, k.group, k.chip));
  }
  std::vector<ProgramInstr> sorted = p.instrs;
  if (sortInstrs)
    std::sort(sorted.begin(), sorted.end(),
                     [](const ProgramInstr &x, const ProgramInstr &y) {
                       return std::pair(x.start, x.id) <
                              std::pair(y.start, y.id);
                     });
  std::vector<flatbuffers::Offset<fbp::Instr>> instrs;
  for (const ProgramInstr &in : sorted)
    instrs.push_back(fbp::CreateInstrDirect(
        b, in.id, in.kernel, static_cast<fbp::Unit>(in.unit), in.resource,
        in.start, in.duration, &in.deps, &in.reads, &in.writes, in.bytes,
        in.latency));
  std::vector<flatbuffers::Offset<fbp::Buffer>> buffers;
  for (const ProgramBuffer &bf : p.buffers)
    buffers.push_back(fbp::CreateBuffer(
        b, bf.id, bf.tensor, bf.tile, bf.offset, bf.size, bf.liveStart,
        bf.liveEnd, bf.copies, bf.resident,
        bf.boxLo.empty() ? 0 : b.CreateVector(bf.boxLo),
        bf.boxHi.empty() ? 0 : b.CreateVector(bf.boxHi)));
  std::vector<flatbuffers::Offset<fbp::Link>> links;
  for (const ProgramLink &l : p.links)
    links.push_back(fbp::CreateLink(b, l.id, l.fromTile, l.toTile, l.chipLink,
                                    l.fromChip, l.toChip, l.bytesPerCycle,
                                    l.latencyCycles));
  const std::string targetJson =
      p.targetJson.empty()
          ? fastTargetJson(p.tileRows, p.tileCols, p.sramBytesPerTile)
          : p.targetJson;
  auto root = fbp::CreateProgramDirect(
      b, p.version, p.model.c_str(), p.targetName.c_str(),
      targetJson.c_str(), p.tileRows, p.tileCols, p.sramBytesPerTile,
      p.clockHz, &tensors, &p.inputs, &p.outputs, &kernels, &instrs, &buffers,
      &links, p.totalCycles, p.sramPeakBytes, p.sramLowerBoundBytes,
      p.rooflineCycles, p.mapping.c_str(), p.pipelineGroups,
      p.initiationInterval, p.chips, p.tensorParallel, p.pipelineParallel,
      p.topology.c_str(), /*output_names=*/nullptr, /*file_size=*/1,
      /*checksum=*/1);
  fbp::FinishProgramBuffer(b, root);
  if (!sealProgram(b.GetBufferPointer(), b.GetSize()))
    ADD_FAILURE() << "the test program has no integrity fields";
  return std::vector<uint8_t>(b.GetBufferPointer(),
                              b.GetBufferPointer() + b.GetSize());
}

Program load(const std::vector<uint8_t> &bytes) {
  return Program::fromBytes(bytes.data(), bytes.size(), "test.loom");
}

/// y = x @ W + b on a 1 x 2 tile grid, x: [2, 3], W: [3, 2], b: [2].
/// The schedule: DMA in, matmul, add, send the result over a mesh link to
/// tile 1, which reads it there.
Program matmulAdd(const std::string &precision = "fp32") {
  Program p;
  p.model = "mm_add.onnx";
  p.targetName = "test-chip";
  p.tileRows = 1;
  p.tileCols = 2;
  p.sramBytesPerTile = 1024;
  p.clockHz = 1e9;
  p.tensors = {
      tensor(0, "x", {2, 3}, TensorKind::Input),
      tensor(1, "W", {3, 2}, TensorKind::Constant, {1, 0, 0, 1, 1, 1}),
      tensor(2, "b", {2}, TensorKind::Constant, {10, 20}),
      tensor(3, "h", {2, 2}, TensorKind::Intermediate),
      tensor(4, "y", {2, 2}, TensorKind::Output),
  };
  p.inputs = {0};
  p.outputs = {4};
  ProgramKernel k;
  k.id = 0;
  k.name = "mm_add";
  k.onnxNodes = {"MatMul_0", "Add_1"};
  k.kind = KernelKind::MatMul;
  k.precision = *kernelPrecisionFormat(precision);
  k.tileRow = 0;
  k.tileCol = 0;
  k.tileRows = 1;
  k.tileCols = 1;
  ProgramOp mm;
  mm.name = "matmul";
  mm.inputs = {0, 1};
  mm.outputs = {3};
  mm.onnxNode = "MatMul_0";
  ProgramOp add;
  add.name = "add";
  add.inputs = {3, 2};
  add.outputs = {4};
  add.onnxNode = "Add_1";
  k.ops = {mm, add};
  k.inputs = {0, 1, 2};
  k.outputs = {4};
  k.flops = 2 * 2 * 3 * 2 + 4;
  k.bytes = 24 + 24 + 8 + 16;
  k.bound = CostBound::Compute;
  k.cycles = 40;
  p.kernels = {k};
  p.links = {{0, 0, 1}, {1, 1, 0}};
  // Buffer 3 (y) reuses buffer 0's (x) bytes once x is dead at cycle 30;
  // b (buffer 5) is resident beside them for the add.
  p.buffers = {
      {0, 0, 0, 0, 24, 0, 30, 1, false, {}, {}},
      {1, 1, 0, 32, 24, 0, 30, 1, false, {}, {}},
      {2, 3, 0, 64, 16, 10, 40, 1, false, {}, {}},
      {3, 4, 0, 0, 16, 30, 60, 1, false, {}, {}},
      {4, 4, 1, 0, 16, 40, 70, 1, false, {}, {}},
      {5, 2, 0, 96, 8, 0, 52, 1, true, {}, {}},
  };
  p.instrs = {
      instr(0, 0, Unit::Dma, 0, 0, 10, {}, {}, {0, 1}, 48),
      instr(1, 0, Unit::Matrix, 0, 10, 20, {0}, {0, 1}, {2}),
      instr(2, 0, Unit::Vector, 0, 30, 10, {1}, {2, 5}, {3}),
      instr(3, -1, Unit::MeshLink, 0, 40, 8, {2}, {3}, {4}, 16),
      instr(4, 0, Unit::Vector, 1, 48, 4, {3, 9}, {4}, {}),
      // The DMA that moves y's bytes (the link only carries them).
      instr(9, -1, Unit::Dma, 0, 40, 8, {2}, {3}, {4}, 16),
  };
  p.totalCycles = 52;
  p.sramPeakBytes = 64;
  return p;
}

Tensor xValue() {
  return Tensor::fromVector(DType::F32, {2, 3},
                            std::vector<float>{1, 2, 3, 4, 5, 6});
}

/// Runs `fn` and returns the Error message it throws ("" if none).
template <typename Fn> std::string errorOf(Fn &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::string scheduleError(const Program &p) {
  return errorOf([&] {
    Program loaded = load(emit(p));
    Simulator(loaded).checkSchedule();
  });
}

std::string scheduleErrorForDemo() {
  Program p = matmulAdd();
  p.instrs[2].start = 25;
  return scheduleError(p);
}

std::string loadError(const Program &p) {
  return errorOf([&] { load(emit(p)); });
}

#define EXPECT_HAS(haystack, needle)                                           \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)            \
      << "message: " << (haystack)

Tensor randomTensor(Shape shape, std::mt19937 &rng, float lo = -1,
                    float hi = 1) {
  Tensor t(DType::F32, std::move(shape));
  std::uniform_real_distribution<float> dist(lo, hi);
  float *d = t.mutableData<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    d[i] = dist(rng);
  return t;
}

Tensor bf16Rounded(const Tensor &t) {
  Tensor r(DType::F32, t.shape());
  for (int64_t i = 0; i < t.numElements(); ++i)
    r.mutableData<float>()[i] =
        static_cast<float>(BFloat16(t.data<float>()[i]));
  return r;
}

/// Max |a - b| / (1 + |b|).
double maxRelDiff(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t i = 0; i < std::min(a.numElements(), b.numElements()); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    worst = std::max(worst, std::abs(x - y) / (1 + std::abs(y)));
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// A correct program
//===----------------------------------------------------------------------===//

TEST(Simulator, CorrectProgramComputesMatmulAdd) {
  Program loaded = load(emit(matmulAdd()));
  EXPECT_EQ(loaded.tensors.size(), 5u);
  EXPECT_TRUE(loaded.tensor(1).hasData);
  Simulator sim(loaded);
  EXPECT_EQ(sim.inputNames(), std::vector<std::string>{"x"});
  SimResult r = sim.runFunctional({{"x", xValue()}});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].name, "y");
  const Tensor &y = r.outputs[0].value;
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  // h = x @ W = [[4, 5], [10, 11]]; y = h + [10, 20].
  std::vector<float> want = {14, 25, 20, 31};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y.data<float>()[i], want[i]) << i;

  // The same through the positional overload.
  SimResult r2 = sim.runFunctional(std::vector<Tensor>{xValue()});
  EXPECT_EQ(std::memcmp(r2.outputs[0].value.raw(), y.raw(), 16), 0);
}

TEST(Simulator, Stats) {
  Program loaded = load(emit(matmulAdd()));
  SimStats s = Simulator(loaded).runTiming().stats;
  EXPECT_EQ(s.totalCycles, 52);
  EXPECT_DOUBLE_EQ(s.seconds, 52e-9);
  ASSERT_EQ(s.units.size(), 5u);
  EXPECT_EQ(s.units[0].unit, Unit::Matrix);
  EXPECT_EQ(s.units[0].count, 2);
  EXPECT_EQ(s.units[0].busyCycles, 20);
  EXPECT_DOUBLE_EQ(s.units[0].utilisation, 20.0 / (52 * 2));
  EXPECT_EQ(s.units[1].busyCycles, 14);
  EXPECT_EQ(s.units[2].busyCycles, 18);
  EXPECT_EQ(s.units[3].count, 2);
  EXPECT_DOUBLE_EQ(s.units[3].utilisation, 8.0 / (52 * 2));
  // One chip: no chip links, no per-chip figures.
  EXPECT_EQ(s.units[4].unit, Unit::ChipLink);
  EXPECT_EQ(s.units[4].count, 0);
  EXPECT_EQ(s.chips, 1);
  EXPECT_TRUE(s.chipStats.empty());
  EXPECT_TRUE(s.chipLinks.empty());
  // Tile 0: x + W (48) live together, then W + h (40), h + y (32); x dies
  // at 30 exactly when y is born, so the peak is 24 + 24 + 16 = 64, and
  // the resident b (8) beside it all: 72.
  ASSERT_EQ(s.sramPeakPerTile.size(), 2u);
  EXPECT_EQ(s.sramPeakPerTile[0], 72);
  EXPECT_EQ(s.sramPeakPerTile[1], 16);
  EXPECT_EQ(s.sramPeakBytes, 72);
  ASSERT_EQ(s.links.size(), 2u);
  EXPECT_EQ(s.links[0].bytes, 16);
  EXPECT_EQ(s.links[1].bytes, 0);
  EXPECT_EQ(s.maxLinkBytes, 16);
  EXPECT_EQ(s.dmaBytes, 64);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].startCycle, 0);
  EXPECT_EQ(s.kernels[0].cycles(), 52);
  EXPECT_EQ(s.kernels[0].estimatedCycles, 40);

  std::string text = s.toText();
  if (std::getenv("LOOM_SIM_TEST_VERBOSE"))
    std::printf("%s%s%s\n", text.c_str(), s.toJson().c_str(),
                scheduleErrorForDemo().c_str());
  EXPECT_HAS(text, "total cycles:     52");
  EXPECT_HAS(text, "mm_add (MatMul_0, Add_1)");
  // A single-chip report says nothing of chips.
  for (const char *chipLine : {"chips:", "chip_link", "chip links", "per chip"})
    EXPECT_EQ(text.find(chipLine), std::string::npos) << text;
  auto j = nlohmann::json::parse(s.toJson());
  EXPECT_EQ(j["total_cycles"], 52);
  EXPECT_EQ(j["units"]["matrix"]["busy_cycles"], 20);
  EXPECT_EQ(j["sram_peak_bytes"], 72);
  EXPECT_EQ(j["links"][0]["bytes"], 16);
  EXPECT_EQ(j["kernels"][0]["onnx_nodes"][1], "Add_1");
  // Deterministic.
  EXPECT_EQ(s.toJson(), Simulator(loaded).checkSchedule().toJson());
}

// Tests that a long list in the text report shows its busiest rows first,
// at most kTextRows of them, and says how many it leaves out; verbose lists
// every row in program order.
TEST(SimStats, TextShowsTheBusiestOfALongList) {
  SimStats s;
  for (int32_t i = 0; i < 15; ++i) {
    LinkStats l;
    l.id = i;
    l.fromTile = i;
    l.toTile = i + 1;
    // Link 7 is the busiest, then 8, 9, ...; link 0 carries nothing.
    l.bytes = i == 7 ? 1000 : i * 10;
    l.busyCycles = l.bytes / 10;
    s.links.push_back(l);
    KernelStats k;
    k.id = i;
    k.name = "k" + std::to_string(i);
    k.endCycle = i == 3 ? 500 : i;
    s.kernels.push_back(k);
  }
  std::string text = s.toText();
  EXPECT_HAS(text, "the 10 busiest of the 14 in use");
  EXPECT_HAS(text, "  ... 4 more mesh links in use (--verbose lists all)\n");
  EXPECT_HAS(text, "  ... 5 more kernels (--verbose lists all)\n");
  // The busiest first, then by bytes: 7 (1000), 14 (140), 13, ...
  size_t first = text.find("  link 7 (7 -> 8): 1000 bytes");
  size_t second = text.find("  link 14 (14 -> 15): 140 bytes");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  // The four quietest in use (1 to 4) are left out, and 0 carries nothing.
  EXPECT_EQ(text.find("  link 4 ("), std::string::npos) << text;
  EXPECT_EQ(text.find("  link 0 ("), std::string::npos) << text;
  EXPECT_HAS(text, "kernels, the longest:");
  EXPECT_LT(text.find(" k3\n"), text.find(" k14\n"));
  EXPECT_EQ(text.find(" k4\n"), std::string::npos) << text;

  std::string all = s.toText(/*verbose=*/true);
  EXPECT_EQ(all.find("more"), std::string::npos) << all;
  EXPECT_HAS(all, "  link 1 (1 -> 2): 10 bytes");
  EXPECT_LT(all.find("  link 1 ("), all.find("  link 7 ("));
  EXPECT_HAS(all, "kernels:\n");
  EXPECT_HAS(all, " k4\n");
}

TEST(Simulator, TimingModeNeedsNoWeights) {
  Program p = matmulAdd();
  for (ProgramTensor &t : p.tensors) {
    t.hasData = false;
    t.constant = Tensor();
  }
  Program loaded = load(emit(p));
  SimResult r = Simulator(loaded).runTiming();
  EXPECT_EQ(r.stats.totalCycles, 52);
  EXPECT_TRUE(r.outputs.empty());
  std::string err = errorOf(
      [&] { Simulator(loaded).runFunctional({{"x", xValue()}}); });
  EXPECT_HAS(err, "has no data");
  EXPECT_HAS(err, "'W'");
}

/// The first output of the matmul+add program with every nonzero weight set
/// to `w`, run under `precision`. x is 1..6, exact in every format, and with
/// weights exactly 0/1 the output starts with 14.
float firstOutputWithWeight(const char *precision, float w) {
  Program p = matmulAdd(precision);
  p.tensors[1].constant = Tensor::fromVector(
      DType::F32, {3, 2}, std::vector<float>{w, 0, 0, w, w, w});
  Program loaded = load(emit(p));
  SimResult r = Simulator(loaded).runFunctional({{"x", xValue()}});
  return r.outputs[0].value.data<float>()[0];
}

TEST(Simulator, NarrowKernelsRoundMatrixInputs) {
  // 1 + 2^-10 is a binary16 but not a bfloat16; 1 + 2^-12 is neither;
  // 1.0625 is the tie between the E4M3 neighbours 1 and 1.125 and rounds to
  // even, 1.
  const float notBf16 = 1.0f + 1.0f / 1024, notFp16 = 1.0f + 1.0f / 4096;
  EXPECT_EQ(firstOutputWithWeight("bf16", notBf16), 14.0f);
  EXPECT_NE(firstOutputWithWeight("fp32", notBf16), 14.0f);
  EXPECT_EQ(firstOutputWithWeight("fp16", notFp16), 14.0f);
  EXPECT_NE(firstOutputWithWeight("fp16", notBf16), 14.0f);
  EXPECT_EQ(firstOutputWithWeight("fp8", 1.0625f), 14.0f);
  EXPECT_NE(firstOutputWithWeight("fp16", 1.0625f), 14.0f);
}

TEST(Simulator, Bf16KernelRoundsEveryOutput) {
  Program p = matmulAdd("bf16");
  float odd = 1.0f + 1.0f / 1024;
  p.tensors[1].constant = Tensor::fromVector(
      DType::F32, {3, 2}, std::vector<float>{odd, 0, 0, odd, odd, odd});
  Program loaded = load(emit(p));
  SimResult r = Simulator(loaded).runFunctional({{"x", xValue()}});
  std::vector<float> want = {14, 25, 20, 31}; // as with W exactly 0/1
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(r.outputs[0].value.data<float>()[i], want[i]) << i;
}

// A tensor stored narrow (an LLM's KV cache, --kv-precision) holds its
// values rounded: an input as it is bound, a result as it is written.
TEST(Simulator, StoredTensorsAreRounded) {
  // 1.0625 rounds to 1 in fp8 (the tie goes to even); in bf16 (8
  // significant bits: steps of 1/16 there) 14.078125 rounds to 14.0625 and
  // 14.015625 to 14.
  Tensor x = Tensor::fromVector(DType::F32, {2, 3},
                                std::vector<float>{1.0625f, 2, 3, 4, 5, 6});
  auto y00 = [&](NumericFormat xStored, NumericFormat yStored) {
    Program p = matmulAdd();
    p.tensors[2].constant = Tensor::fromVector(
        DType::F32, {2}, std::vector<float>{10.015625f, 20});
    p.tensors[0].storage = xStored;
    p.tensors[4].storage = yStored;
    Program loaded = load(emit(p));
    return Simulator(loaded).runFunctional({{"x", x}}).outputs[0]
        .value.data<float>()[0];
  };
  EXPECT_EQ(y00(NumericFormat::F32, NumericFormat::F32), 14.078125f);
  EXPECT_EQ(y00(NumericFormat::F8, NumericFormat::F32), 14.015625f);
  EXPECT_EQ(y00(NumericFormat::F32, NumericFormat::BF16), 14.0625f);
  EXPECT_EQ(y00(NumericFormat::F8, NumericFormat::BF16), 14.0f);
}

TEST(ProgramLoad, StorageOnlyOnComputedF32Tensors) {
  Program p = matmulAdd();
  p.tensors[1].storage = NumericFormat::F8;
  EXPECT_HAS(loadError(p), "tensor 1 'W': storage fp8 is set on a constant");
  p = matmulAdd();
  p.tensors[0].dtype = DType::I64;
  p.tensors[0].storage = NumericFormat::BF16;
  EXPECT_HAS(loadError(p), "storage bf16 is set on a i64 tensor");
  p = matmulAdd();
  p.tensors[3].storage = NumericFormat::I8;
  EXPECT_HAS(loadError(p), "tensor 3 'h': storage must be bf16, fp16 or fp8, got 'int8'");
}

TEST(Simulator, InputErrors) {
  Program loaded = load(emit(matmulAdd()));
  Simulator sim(loaded);
  EXPECT_HAS(errorOf([&] { sim.runFunctional({{"z", xValue()}}); }),
             "unknown input 'z'");
  EXPECT_HAS(errorOf([&] { sim.runFunctional(std::map<std::string, Tensor>{}); }),
             "missing input 'x'");
  Tensor wrong(DType::F32, {3, 2});
  EXPECT_HAS(errorOf([&] { sim.runFunctional({{"x", wrong}}); }),
             "is f32[3x2], the model expects f32[2x3]");
}

//===----------------------------------------------------------------------===//
// Schedule checks, one hand-broken program each
//===----------------------------------------------------------------------===//

TEST(ScheduleCheck, InstrBeforeItsDepFinished) {
  Program p = matmulAdd();
  p.instrs[2].start = 25; // the add starts while the matmul runs to 30
  std::string err = scheduleError(p);
  EXPECT_HAS(err, "schedule violation");
  EXPECT_HAS(err, "instr 2");
  EXPECT_HAS(err, "starts at cycle 25 before its dep instr 1");
  EXPECT_HAS(err, "finishes at cycle 30");
  EXPECT_HAS(err, "kernel 0 'mm_add' (onnx: MatMul_0, Add_1)");
}

TEST(ScheduleCheck, DoubleBookedUnit) {
  Program p = matmulAdd();
  p.instrs.push_back(instr(5, 0, Unit::Matrix, 0, 20, 5, {}, {}, {}));
  std::string err = scheduleError(p);
  EXPECT_HAS(err, "instr 5");
  EXPECT_HAS(err, "instr 1");
  EXPECT_HAS(err, "overlap on the matrix unit of tile 0");
  EXPECT_HAS(err, "MatMul_0");
  // The same unit on another tile is free.
  p.instrs.back().resource = 1;
  EXPECT_EQ(scheduleError(p), "");
  // Back to back is fine.
  p.instrs.back().resource = 0;
  p.instrs.back().start = 30;
  EXPECT_EQ(scheduleError(p), "");
}

TEST(ScheduleCheck, DoubleBookedLink) {
  Program p = matmulAdd();
  p.instrs.push_back(instr(5, -1, Unit::MeshLink, 0, 44, 2, {}, {}, {}, 8));
  std::string err = scheduleError(p);
  EXPECT_HAS(err, "instr 5");
  EXPECT_HAS(err, "instr 3");
  EXPECT_HAS(err, "overlap on the mesh link 0 (tile 0 -> tile 1)");
  // The reverse link is a different resource (the instr carries no bytes:
  // none of a transfer's copies routes over it).
  p.instrs.back().resource = 1;
  p.instrs.back().bytes = 0;
  EXPECT_EQ(scheduleError(p), "");
}

TEST(ScheduleCheck, OverlappingLiveBuffers) {
  Program p = matmulAdd();
  p.buffers[3].liveStart = 25; // y's bytes are x's, and x lives to 30
  std::string err = scheduleError(p);
  EXPECT_HAS(err, "buffer 3");
  EXPECT_HAS(err, "buffer 0");
  EXPECT_HAS(err, "overlap in SRAM while both are live");
  EXPECT_HAS(err, "tensor 0 'x'");
  EXPECT_HAS(err, "written by kernel 0 'mm_add' (onnx: MatMul_0, Add_1)");
  // Partly overlapping addresses from below are caught too.
  p = matmulAdd();
  p.buffers[2].offset = 40; // h [40, 56) against W [32, 56)
  EXPECT_HAS(scheduleError(p), "overlap in SRAM while both are live");
  // The same bytes on another tile do not clash (though the add on tile 0
  // may then not write them: a tile's units touch only its own SRAM).
  p = matmulAdd();
  p.buffers[3].liveStart = 25;
  p.buffers[3].tile = 1;
  p.buffers[4].offset = 512;
  p.instrs[2].start = 30;
  EXPECT_HAS(scheduleError(p), "which is in another tile's SRAM");
  EXPECT_EQ(scheduleError(p).find("overlap in SRAM"), std::string::npos);
}

TEST(ScheduleCheck, ReadOfDeadBuffer) {
  Program p = matmulAdd();
  p.buffers[2].liveEnd = 35; // h dies while the add (30-40) reads it
  std::string err = scheduleError(p);
  EXPECT_HAS(err, "instr 2");
  EXPECT_HAS(err, "reads buffer 2");
  EXPECT_HAS(err, "not live for the whole instr");
}

TEST(ScheduleCheck, WriteOfDeadBuffer) {
  Program p = matmulAdd();
  p.buffers[4].liveStart = 44; // the link writes from 40
  EXPECT_HAS(scheduleError(p), "writes buffer 4");
}

//===----------------------------------------------------------------------===//
// Load-time checks
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The replay (Replay.h): hazards found event by event, verifier off
//===----------------------------------------------------------------------===//

/// The replay's hazards of `p` with the schedule verifier off, counted.
SimStats replayed(const Program &p) {
  Program loaded = load(emit(p));
  SimOptions options;
  options.verify = false;
  options.stopOnHazard = false;
  return Simulator(loaded, options).checkSchedule();
}

/// The error a run stops with, verifier off.
std::string hazardError(const Program &p) {
  return errorOf([&] {
    Program loaded = load(emit(p));
    SimOptions options;
    options.verify = false;
    Simulator(loaded, options).checkSchedule();
  });
}

int64_t countOf(const SimStats &s, HazardKind k) {
  return s.hazardsByKind[static_cast<int>(k)];
}

TEST(Replay, SoundProgramHasNoHazardsAndSimulatesByTheRules) {
  SimStats s = replayed(matmulAdd());
  EXPECT_EQ(s.hazards, 0);
  EXPECT_TRUE(s.hazardRecords.empty());
  // Every rule of the fast target gives 1 cycle: the kernel's last instr
  // (4, vector at 48) ends at 49, against 52 scheduled.
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].simulatedCycles, 49);
  EXPECT_EQ(s.kernels[0].cycles(), 52);
  EXPECT_EQ(s.simulatedTotalCycles, 49);
  EXPECT_EQ(s.kernels[0].hazards, 0);
  EXPECT_EQ(hazardError(matmulAdd()), "");
}

TEST(Replay, OperandLate) {
  // The add starts as the matmul does: its h arrives a cycle later.
  Program p = matmulAdd();
  p.instrs[2].start = 10;
  EXPECT_EQ(countOf(replayed(p), HazardKind::OperandLate), 1);
  std::string e = hazardError(p);
  EXPECT_HAS(e, "test.loom: schedule hazard: instr 2 of kernel 0 'mm_add' "
                "(onnx: MatMul_0, Add_1) on the vector unit of tile 0 (0,0) "
                "starts at cycle 10, but buffer 2 (tensor 3 'h' [0, 2) x "
                "[0, 2), bytes [64, 80) of tile 0 (0,0)) it reads arrives at "
                "cycle 11 from instr 1 of kernel 0");
  EXPECT_HAS(e, ": 1 cycle missing (operand-late)");
  // The verifier, on by default, rejects it first.
  EXPECT_HAS(scheduleError(p), "schedule violation");
}

TEST(Replay, UnwrittenRead) {
  // Tile 1 reads y before the transfer that brings it has begun.
  Program p = matmulAdd();
  p.instrs[4].start = 35;
  SimStats s = replayed(p);
  EXPECT_EQ(countOf(s, HazardKind::UnwrittenRead), 1);
  EXPECT_EQ(s.hazards, 1);
  EXPECT_HAS(hazardError(p),
             "instr 4 of kernel 0 'mm_add' (onnx: MatMul_0, Add_1) on the "
             "vector unit of tile 1 (0,1) starts at cycle 35 and reads buffer "
             "4 (tensor 4 'y' [0, 2) x [0, 2), bytes [0, 16) of tile 1 (0,1)), "
             "bytes of which nothing has written by then (instr 3 of a "
             "transfer on mesh link 0 (tile 0 -> tile 1) writes them at cycle "
             "40) (unwritten-read)");
}

TEST(Replay, UnitBusy) {
  // A second vector instr of the kernel on tile 0 at cycle 30, beside the
  // add, which occupies the unit until 31 by its rule.
  Program p = matmulAdd();
  p.instrs.push_back(instr(10, 0, Unit::Vector, 0, 30, 4, {1}, {2}, {}));
  SimStats s = replayed(p);
  EXPECT_EQ(s.hazards, 1);
  EXPECT_EQ(countOf(s, HazardKind::UnitBusy), 1);
  EXPECT_EQ(s.kernels[0].hazards, 1);
  EXPECT_HAS(hazardError(p), "instr 10 of kernel 0 'mm_add' (onnx: MatMul_0, "
                             "Add_1) on the vector unit of tile 0 (0,0) starts "
                             "at cycle 30, but instr 2 of kernel 0");
  EXPECT_HAS(hazardError(p), "occupies it until cycle 31 by its timing rule: "
                             "1 cycle missing (unit-busy)");
}

TEST(Replay, TooFastOnASlowTarget) {
  // SRAM at 1 byte a cycle: the DMA that loads x and W (48 bytes) reads and
  // writes each byte once, 96 cycles (kernel.dma), against 10 scheduled.
  Program p = matmulAdd();
  p.targetJson = fastTargetJson(1, 2, 1024);
  const std::string fast = R"("bytes_per_cycle": 1.0e12}})";
  ASSERT_NE(p.targetJson.find(fast), std::string::npos);
  p.targetJson.replace(p.targetJson.find(fast), fast.size(),
                       R"("bytes_per_cycle": 1.0}})");
  SimStats s = replayed(p);
  EXPECT_GE(countOf(s, HazardKind::TooFast), 1);
  ASSERT_FALSE(s.hazardRecords.empty());
  EXPECT_EQ(s.hazardRecords[0].hazard.instr, 0);
  EXPECT_EQ(s.hazardRecords[0].hazard.missing, 86);
  EXPECT_HAS(hazardError(p), "instr 0 of kernel 0 'mm_add' (onnx: MatMul_0, "
                             "Add_1) on the dma unit of tile 0 (0,0) is "
                             "scheduled for 10 cycles, but its timing rule "
                             "takes 96: 86 cycles missing (too-fast)");
  // The simulated cycles follow the rules, not the schedule.
  EXPECT_GT(s.kernels[0].simulatedCycles, s.kernels[0].cycles());
}

TEST(Replay, SramOverwrite) {
  // y moved onto h's bytes: the add writes y while it still reads h.
  Program p = matmulAdd();
  p.buffers[3].offset = 64;
  SimStats s = replayed(p);
  EXPECT_EQ(countOf(s, HazardKind::SramOverwrite), 1);
  EXPECT_HAS(hazardError(p),
             "instr 2 of kernel 0 'mm_add' (onnx: MatMul_0, Add_1) on the "
             "vector unit of tile 0 (0,0) writes buffer 3 (tensor 4 'y' [0, 2) "
             "x [0, 2), bytes [64, 80) of tile 0 (0,0)) at cycle 30 over "
             "buffer 2 (tensor 3 'h' [0, 2) x [0, 2), bytes [64, 80) of tile "
             "0 (0,0)), whose data is read until cycle 31 by instr 2");
  EXPECT_HAS(hazardError(p), ": 1 cycle too early (sram-overwrite)");

  // h moved onto the resident b: b must stay for every input.
  Program q = matmulAdd();
  q.buffers[2].offset = 96;
  EXPECT_HAS(hazardError(q), "writes buffer 2 (tensor 3 'h' [0, 2) x [0, 2), "
                             "bytes [96, 112) of tile 0 (0,0)) at cycle 10 "
                             "over buffer 5 (tensor 2 'b'");
  EXPECT_HAS(hazardError(q), "whose data must stay to the end (sram-overwrite)");
}

TEST(Replay, RemoteAccessAndHostBinding) {
  // The add's h moved to tile 1: the vector unit of tile 0 cannot reach it.
  Program p = matmulAdd();
  p.buffers[2].tile = 1;
  p.buffers[2].offset = 256;
  SimStats s = replayed(p);
  EXPECT_GE(countOf(s, HazardKind::RemoteAccess), 2); // written and read
  EXPECT_HAS(hazardError(p), "instr 1 of kernel 0 'mm_add' (onnx: MatMul_0, "
                             "Add_1) on the matrix unit of tile 0 (0,0) at "
                             "cycle 10 uses buffer 2 (tensor 3 'h' [0, 2) x "
                             "[0, 2), bytes [256, 272) of tile 1 (0,1)), out "
                             "of its unit's reach");

  // The resident b bound onto x's bytes: the host's write at cycle 0.
  Program q = matmulAdd();
  q.buffers[5].offset = 8;
  EXPECT_HAS(hazardError(q), "the host writes buffer 5 (tensor 2 'b' [0, 2), "
                             "bytes [8, 16) of tile 0 (0,0)) at cycle 0 over "
                             "buffer 0 (tensor 0 'x'");
}

TEST(Replay, CountedHazardsAreReported) {
  Program p = matmulAdd();
  p.instrs[2].start = 10;
  p.instrs[4].start = 35;
  SimStats s = replayed(p);
  EXPECT_EQ(s.hazards, static_cast<int64_t>(s.hazardRecords.size()));
  EXPECT_GE(s.hazards, 2);
  EXPECT_EQ(s.kernels[0].hazards, s.hazards);
  std::string text = s.toText();
  EXPECT_HAS(text, "hazards:          " + std::to_string(s.hazards) +
                       " (operand-late 1, unwritten-read 1");
  EXPECT_HAS(text, "silicon would compute garbage");
  EXPECT_HAS(text, "  instr 2 of kernel 0 'mm_add'");
  auto j = nlohmann::json::parse(s.toJson());
  EXPECT_EQ(j["hazards"]["total"], s.hazards);
  EXPECT_EQ(j["hazards"]["by_kind"]["operand-late"], 1);
  EXPECT_EQ(j["hazards"]["first"][0]["kind"], "operand-late");
  EXPECT_EQ(j["hazards"]["first"][0]["instr"], 2);
  EXPECT_EQ(j["hazards"]["first"][0]["missing_cycles"], 1);
  EXPECT_EQ(j["kernels"][0]["hazards"], s.hazards);
  // The first stops a run, naming how many more there are.
  EXPECT_HAS(hazardError(p), "more hazard");
}

TEST(ProgramLoad, BufferBeyondSram) {
  Program p = matmulAdd();
  p.buffers[2].offset = 1020;
  std::string err = loadError(p);
  EXPECT_HAS(err, "test.loom: buffer 2");
  EXPECT_HAS(err, "beyond the tile's SRAM of 1024 bytes");
}

TEST(ProgramLoad, UnknownTensorId) {
  Program p = matmulAdd();
  p.kernels[0].ops[1].inputs[1] = 9;
  std::string err = loadError(p);
  EXPECT_HAS(err, "test.loom: kernel 0 'mm_add' op 1 'add'");
  EXPECT_HAS(err, "unknown tensor id 9");
  p = matmulAdd();
  p.buffers[1].tensor = 42;
  EXPECT_HAS(loadError(p), "buffer 1: unknown tensor id 42");
}

TEST(ProgramLoad, OtherReferences) {
  Program p = matmulAdd();
  p.instrs[1].deps = {77};
  EXPECT_HAS(loadError(p), "instr 1: unknown dep instr id 77");
  p = matmulAdd();
  p.instrs[1].reads = {0, 12};
  EXPECT_HAS(loadError(p), "instr 1: reads unknown buffer id 12");
  p = matmulAdd();
  p.instrs[3].resource = 5;
  EXPECT_HAS(loadError(p), "instr 3: unknown mesh link id 5");
  p = matmulAdd();
  p.instrs[1].resource = 2;
  EXPECT_HAS(loadError(p), "instr 1: tile 2 is outside the 1 x 2 tile grid");
  p = matmulAdd();
  p.instrs[1].kernel = 3;
  EXPECT_HAS(loadError(p), "instr 1: unknown kernel id 3");
  p = matmulAdd();
  p.buffers[4].tile = 2;
  EXPECT_HAS(loadError(p), "buffer 4: tile 2 is outside");
  p = matmulAdd();
  p.tensors[4].id = 3;
  EXPECT_HAS(loadError(p), "tensor 3: duplicate id");
  p = matmulAdd();
  p.links[1].toTile = 1;
  EXPECT_HAS(loadError(p), "link 1: tiles 1 and 1 are not neighbours");
}

TEST(ProgramLoad, RefusesAnOlderVersion) {
  // Version 1 programs carry no buffer boxes: their tiles' parts cannot be
  // run, so the loader asks for a recompile.
  Program p = matmulAdd();
  p.version = 1;
  std::string err = errorOf([&] { load(emit(p)); });
  EXPECT_HAS(err, "unsupported program version 1");
  EXPECT_HAS(err, "recompile");
  p.version = kProgramVersion;
  EXPECT_EQ(errorOf([&] { load(emit(p)); }), "");
}

TEST(ProgramLoad, BufferBoxes) {
  // A box must have the tensor's rank and lie inside it.
  Program p = matmulAdd();
  p.buffers[0].boxLo = {0, 0};
  p.buffers[0].boxHi = {1, 3};
  EXPECT_EQ(errorOf([&] { load(emit(p)); }), "");
  p.buffers[0].boxHi = {1, 4};
  EXPECT_HAS(errorOf([&] { load(emit(p)); }),
             "buffer 0: box dimension 1 [0, 4) is not inside [0, 3)");
  p.buffers[0].boxHi = {1};
  EXPECT_HAS(errorOf([&] { load(emit(p)); }), "for a rank-2 tensor");
}

TEST(ProgramLoad, ShapesAndData) {
  Program p = matmulAdd();
  p.tensors[3].shape = {2, -1};
  EXPECT_HAS(loadError(p), "tensor 3 'h': negative dimension");
  p = matmulAdd();
  p.tensors[3].shape = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_HAS(loadError(p), "tensor 3 'h'");
  p = matmulAdd();
  p.tensors[3].shape = {int64_t(1) << 31, int64_t(1) << 31};
  EXPECT_HAS(loadError(p), "byte size of shape");
  p = matmulAdd();
  p.tensors[1].shape = {3, 3}; // data is 6 floats
  EXPECT_HAS(loadError(p),
             "tensor 1 'W': constant data is 24 bytes, but shape [3x3] of f32 needs 36");
}

TEST(ProgramLoad, RefusesATargetThatIsMissingOrDisagrees) {
  // The timing rules read the chip of target_json: it must be there and
  // describe the grid and SRAM the schedule uses.
  Program p = matmulAdd();
  p.targetJson = " ";
  EXPECT_HAS(loadError(p), "target_json");
  p.targetJson = fastTargetJson(2, 2, p.sramBytesPerTile);
  EXPECT_HAS(loadError(p),
             "tile grid 1 x 2 differs from target_json's chip (2 x 2)");
  p.targetJson = fastTargetJson(1, 2, 4096);
  EXPECT_HAS(loadError(p), "sram_bytes_per_tile 1024 differs from "
                           "target_json's chip.tile.sram.bytes 4096");
}

TEST(ProgramLoad, GridKernelsOps) {
  Program p = matmulAdd();
  p.kernels[0].tileCol = 1;
  p.kernels[0].tileCols = 2;
  EXPECT_HAS(loadError(p), "kernel 0 'mm_add': region at (0, 1) of 1 x 2 tiles "
                           "is outside the 1 x 2 tile grid");
  p = matmulAdd();
  p.kernels[0].ops[0].name = "matmull";
  EXPECT_HAS(loadError(p), "op 0 'matmull' (onnx node 'MatMul_0'): unknown op");
  p = matmulAdd();
  p.kernels[0].precision = NumericFormat::TF32;
  EXPECT_HAS(loadError(p), "kernel 0 'mm_add': precision tf32 is no kernel "
                           "precision (expected fp32, bf16, fp16, fp8 or "
                           "int8)");
  p = matmulAdd();
  p.kernels[0].precision = static_cast<NumericFormat>(9);
  EXPECT_HAS(loadError(p), "precision format 9 is no kernel precision");
  p = matmulAdd();
  p.kernels[0].kind = KernelKind::Collective;
  EXPECT_HAS(loadError(p), "kernel 0 'mm_add': kind collective is a "
                           "collective's, not a kernel's (expected matmul, "
                           "conv, elementwise, reduction, softmax, "
                           "normalization or data_movement)");
  p = matmulAdd();
  p.kernels[0].kind = static_cast<KernelKind>(12);
  EXPECT_HAS(loadError(p), "unknown kernel kind 12");
  // The schema's enums are signed bytes: 200 is stored as -56.
  p = matmulAdd();
  p.kernels[0].kind = static_cast<KernelKind>(200);
  EXPECT_HAS(loadError(p), "unknown kernel kind -56");
  p = matmulAdd();
  p.kernels[0].bound = static_cast<CostBound>(255);
  EXPECT_HAS(loadError(p), "unknown cost bound -1");
  p = matmulAdd();
  p.kernels[0].bound = static_cast<CostBound>(6);
  EXPECT_HAS(loadError(p), "kernel 0 'mm_add': unknown cost bound 6 "
                           "(expected compute, sram, mesh, link, offchip or "
                           "fill_drain)");
  p = matmulAdd();
  p.tileRows = 0;
  EXPECT_HAS(loadError(p), "tile grid 0 x 2");
  p = matmulAdd();
  p.sramBytesPerTile = 0;
  EXPECT_HAS(loadError(p), "sram_bytes_per_tile must be positive");
  p = matmulAdd();
  p.clockHz = 0;
  EXPECT_HAS(loadError(p), "clock_hz must be a positive number");
  p = matmulAdd();
  p.instrs[2].duration = -1;
  EXPECT_HAS(loadError(p), "instr 2: bad start");
  p = matmulAdd();
  std::swap(p.instrs[1], p.instrs[2]);
  EXPECT_HAS(errorOf([&] { load(emit(p, /*sortInstrs=*/false)); }),
             "not sorted by (start, id)");
}

TEST(ProgramLoad, TruncatedFile) {
  std::vector<uint8_t> bytes = emit(matmulAdd());
  // (The last few bytes of a flatbuffer may be alignment padding that no
  // offset reaches: cutting only those leaves a complete program.)
  for (size_t keep : {size_t(0), size_t(7), bytes.size() / 2, bytes.size() - 16}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
    std::string err = errorOf([&] { load(cut); });
    EXPECT_HAS(err, "test.loom: ");
    EXPECT_TRUE(err.find("truncated") != std::string::npos ||
                err.find("verification failed") != std::string::npos)
        << err;
  }
}

TEST(ProgramLoad, CorruptedBytes) {
  std::vector<uint8_t> bytes = emit(matmulAdd());
  // Root offset pointing outside the buffer.
  std::vector<uint8_t> bad = bytes;
  uint32_t huge = 0x7ffffff0;
  std::memcpy(bad.data(), &huge, 4);
  EXPECT_HAS(errorOf([&] { load(bad); }), "flatbuffers verification failed");
  // The length of the kernel's name string made to run off the end.
  bad = bytes;
  const char *name = "mm_add";
  auto it = std::search(bad.begin(), bad.end(), name, name + 6);
  ASSERT_NE(it, bad.end());
  uint32_t len = 0xfffff;
  std::memcpy(&*(it - 4), &len, 4);
  EXPECT_HAS(errorOf([&] { load(bad); }), "corrupt or truncated program");

  // Every single-byte corruption either loads (and then simulates or fails
  // with an Error) or is rejected with an Error: never a crash.
  int rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    bad = bytes;
    bad[i] ^= 0xff;
    try {
      Program p = load(bad);
      Simulator sim(p);
      sim.runFunctional({{"x", xValue()}});
      (void)sim.traceJson();
    } catch (const Error &) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);

  // Random multi-byte corruptions, likewise.
  std::mt19937 rng(5);
  for (int iter = 0; iter < 2000; ++iter) {
    bad = bytes;
    int writes = 1 + static_cast<int>(rng() % 4);
    for (int w = 0; w < writes; ++w)
      bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    try {
      Program p = load(bad);
      Simulator sim(p);
      sim.runFunctional({{"x", xValue()}});
      (void)sim.traceJson();
      (void)sim.checkSchedule().toText();
    } catch (const Error &) {
    }
  }
}

TEST(ProgramLoad, WrongIdentifier) {
  std::vector<uint8_t> bytes = emit(matmulAdd());
  std::memcpy(bytes.data() + 4, "MOOL", 4);
  EXPECT_EQ(errorOf([&] { load(bytes); }),
            "test.loom: not a Loom program (file identifier is not 'LOOM')");
}

TEST(ProgramLoad, FromFile) {
  std::vector<uint8_t> bytes = emit(matmulAdd());
  std::string path = ::testing::TempDir() + "sim_test_program.loom";
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  Program p = Program::load(path);
  EXPECT_EQ(p.path, path);
  EXPECT_EQ(p.kernels.size(), 1u);
  std::remove(path.c_str());
  EXPECT_HAS(errorOf([&] { Program::load(path); }), path + ": cannot open");
}

TEST(IdIndex, DenseAndSparseIdsAnswerAlike) {
  // Ids loom writes (dense from 0) go to the vector; a hostile file's
  // negative or far ids to the hash map; a repeat is refused either way.
  IdIndex ix;
  ix.reserve(4);
  EXPECT_TRUE(ix.emplace(0, 3));
  EXPECT_TRUE(ix.emplace(7, 1));
  EXPECT_TRUE(ix.emplace(-5, 2));
  EXPECT_TRUE(ix.emplace(2000000000, 0));
  EXPECT_FALSE(ix.emplace(7, 9));
  EXPECT_FALSE(ix.emplace(-5, 9));
  EXPECT_FALSE(ix.emplace(2000000000, 9));
  EXPECT_EQ(ix.size(), 4u);
  EXPECT_EQ(ix.find(0), std::optional<size_t>(3));
  EXPECT_EQ(ix.find(7), std::optional<size_t>(1));
  EXPECT_EQ(ix.find(-5), std::optional<size_t>(2));
  EXPECT_EQ(ix.find(2000000000), std::optional<size_t>(0));
  EXPECT_EQ(ix.find(1), std::nullopt);
  EXPECT_EQ(ix.find(-1), std::nullopt);
  EXPECT_EQ(ix.find(2000000001), std::nullopt);
}

TEST(ProgramLoad, ChecksumCoversEveryByte) {
  std::vector<uint8_t> bytes = emit(matmulAdd());
  EXPECT_NO_THROW(load(bytes));
  // One bit of a weight (the last constant's last byte: the data is laid
  // out before the tables that point at it), flipped after loom wrote it.
  Program good = load(bytes);
  const ProgramTensor *weight = nullptr;
  for (const ProgramTensor &t : good.tensors)
    if (t.hasData && !t.splat)
      weight = &t;
  ASSERT_NE(weight, nullptr);
  // The weight's bytes in the file: found by their values.
  const auto *data = static_cast<const uint8_t *>(weight->constant.raw());
  size_t n = static_cast<size_t>(weight->constant.numElements()) * 4;
  auto it = std::search(bytes.begin(), bytes.end(), data, data + n);
  ASSERT_NE(it, bytes.end());
  std::vector<uint8_t> flipped = bytes;
  flipped[static_cast<size_t>(it - bytes.begin())] ^= 0x01;
  EXPECT_EQ(errorOf([&] { load(flipped); }),
            "test.loom: checksum mismatch: the file changed after loom wrote "
            "it (a corrupted copy or an edit); recompile the model, or run an "
            "edited file with --ignore-checksum");
  // Run as it stands when asked: the weight reads the flipped value.
  LoadOptions raw;
  raw.checkIntegrity = false;
  Program edited =
      Program::fromBytes(flipped.data(), flipped.size(), "test.loom", raw);
  EXPECT_NE(std::memcmp(edited.tensor(weight->id).constant.raw(),
                        weight->constant.raw(), 4),
            0);

  std::vector<uint8_t> longer = bytes;
  longer.insert(longer.end(), {0, 0, 0});
  EXPECT_EQ(errorOf([&] { load(longer); }),
            "test.loom: 3 trailing bytes after the program's " +
                std::to_string(bytes.size()) + " bytes");
}

TEST(ProgramLoad, AFileWithoutChecksumIsRefused) {
  // What an earlier loom wrote: no integrity fields.
  flatbuffers::FlatBufferBuilder b;
  auto root = loom::program::CreateProgramDirect(b, kProgramVersion);
  loom::program::FinishProgramBuffer(b, root);
  EXPECT_EQ(errorOf([&] {
              Program::fromBytes(b.GetBufferPointer(), b.GetSize(),
                                 "old.loom");
            }),
            "old.loom: the program carries no checksum (written by an "
            "earlier loom): recompile the model with this loom");
}

//===----------------------------------------------------------------------===//
// Trace
//===----------------------------------------------------------------------===//

TEST(Trace, EventsAreComplete) {
  Program loaded = load(emit(matmulAdd()));
  std::string text = Simulator(loaded).traceJson();
  EXPECT_EQ(text, Simulator(loaded).traceJson()); // deterministic
  auto j = nlohmann::json::parse(text);
  ASSERT_TRUE(j["traceEvents"].is_array());
  int complete = 0;
  std::map<int, std::string> threadNames;
  for (const auto &e : j["traceEvents"]) {
    for (const char *key : {"name", "ph", "ts", "pid", "tid"})
      EXPECT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    EXPECT_EQ(e["pid"], 0);
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threadNames[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_TRUE(e["args"].contains("onnx_nodes"));
      EXPECT_TRUE(e["args"].contains("kernel"));
      EXPECT_TRUE(e["args"].contains("bytes"));
    }
  }
  EXPECT_EQ(complete, 6);
  // 2 tiles x 3 units + 2 links, each named.
  EXPECT_EQ(threadNames.size(), 8u);
  EXPECT_EQ(threadNames[0], "tile 0 (0,0) matrix");
  EXPECT_EQ(threadNames[5], "tile 1 (0,1) dma");
  EXPECT_EQ(threadNames[6], "link 0 (tile 0 -> tile 1)");
  // The matmul: 20 cycles from cycle 10 at 1 GHz, on tile 0's matrix unit.
  const auto *mm = &j["traceEvents"][0];
  for (const auto &e : j["traceEvents"])
    if (e["ph"] == "X" && e["args"]["instr"] == 1)
      mm = &e;
  EXPECT_EQ((*mm)["name"], "mm_add");
  EXPECT_EQ((*mm)["tid"], 0);
  EXPECT_DOUBLE_EQ((*mm)["ts"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ((*mm)["dur"].get<double>(), 0.02);
  EXPECT_EQ((*mm)["args"]["onnx_nodes"],
            nlohmann::json::array({"MatMul_0", "Add_1"}));
}

//===----------------------------------------------------------------------===//
// Fast kernels against the reference
//===----------------------------------------------------------------------===//

TEST(FastKernels, MatmulMatchesReference) {
  std::mt19937 rng(1);
  std::vector<std::pair<Shape, Shape>> cases = {
      {{5, 7}, {7, 3}},        {{2, 3, 4}, {4, 5}},     // folded batch
      {{2, 1, 4, 6}, {3, 6, 5}},                        // broadcast both ways
      {{3, 4, 6}, {1, 6, 2}},  {{6}, {6, 4}},           // 1-D promotion
      {{3, 6}, {6}},           {{2, 3, 6}, {6}},
      {{6}, {2, 6, 3}},        {{6}, {6}},
      {{0, 4}, {4, 3}},        {{3, 0}, {0, 2}},        // empty
      {{64, 200}, {200, 33}},
  };
  for (auto &[as, bs] : cases) {
    Tensor a = randomTensor(as, rng), b = randomTensor(bs, rng);
    Tensor want = ref::matmul(a, b);
    for (bool bf16 : {false, true}) {
      Tensor got = fast::matmul(
          a, b, FastOptions{bf16 ? InputRounding::BF16 : InputRounding::None});
      ASSERT_EQ(got.shape(), want.shape())
          << shapeToString(as) << " x " << shapeToString(bs);
      if (!bf16) {
        EXPECT_LT(maxRelDiff(got, want), 1e-5)
            << shapeToString(as) << " x " << shapeToString(bs);
      } else {
        // bf16 inputs, fp32 accumulation: against the reference on
        // bf16-rounded inputs the only difference is fp32 summation.
        Tensor want16 = ref::matmul(bf16Rounded(a), bf16Rounded(b));
        EXPECT_LT(maxRelDiff(got, want16), 1e-5) << shapeToString(as);
      }
    }
  }
  // Through executeOp as the simulator calls it.
  Tensor a = randomTensor({4, 5}, rng), b = randomTensor({5, 3}, rng);
  auto outs = executeOp("matmul", {}, {a, b}, {{{4, 3}, DType::F32}},
                        ExecMode::Fast);
  EXPECT_LT(maxRelDiff(outs[0], ref::matmul(a, b)), 1e-5);
}

TEST(FastKernels, BinaryMatchesReferenceWithBroadcasting) {
  std::mt19937 rng(3);
  std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},   {{2, 3, 4}, {3, 1}},
      {{1, 3, 1}, {2, 1, 5}}, {{}, {3, 2}},       {{3, 2}, {}},
      {{0, 3}, {3}},          {{4, 1, 6}, {1, 5, 1}},
  };
  using B = ref::BinaryKind;
  for (auto &[as, bs] : cases) {
    Tensor a = randomTensor(as, rng), b = randomTensor(bs, rng);
    for (B kind : {B::Add, B::Sub, B::Mul, B::Div, B::Max, B::Min}) {
      Tensor want = ref::binary(kind, a, b);
      Tensor got = fast::binary(kind, a, b);
      ASSERT_EQ(got.shape(), want.shape()) << shapeToString(as);
      // One fp32 operation against fp64-then-rounded: at most an ulp apart.
      EXPECT_LT(maxRelDiff(got, want), 1e-6)
          << shapeToString(as) << " op " << static_cast<int>(kind);
    }
  }
  // NaN propagates through max and min as in the reference.
  Tensor n = Tensor::fromVector(DType::F32, {2}, std::vector<double>{NAN, 1});
  Tensor one = Tensor::fromVector(DType::F32, {2}, std::vector<double>{0, 2});
  EXPECT_TRUE(std::isnan(fast::binary(B::Max, n, one).getDouble(0)));
  EXPECT_EQ(fast::binary(B::Min, n, one).getDouble(1), 1.0);
  // Operands that do not broadcast are an error, not an out-of-bounds read.
  Tensor three = randomTensor({3}, rng);
  EXPECT_THROW(fast::binary(B::Add, three, one), Error);
}

TEST(FastKernels, MaxPoolMatchesReference) {
  std::mt19937 rng(5);
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, dilations, pads;
  };
  std::vector<Case> cases = {
      {{1, 2, 8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {{2, 3, 7, 9}, {3, 3}, {2, 1}, {1, 2}, {1, 0, 1, 2}},
      {{1, 1, 5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
  };
  for (const Case &c : cases) {
    Tensor x = randomTensor(c.x, rng);
    ref::PoolParams p{c.kernel, c.strides, c.dilations, c.pads, false};
    Shape out = {c.x[0], c.x[1]};
    for (int d = 0; d < 2; ++d)
      out.push_back((c.x[d + 2] + c.pads[d] + c.pads[d + 2] -
                     (c.kernel[d] - 1) * c.dilations[d] - 1) /
                        c.strides[d] +
                    1);
    Tensor want = ref::maxPool(x, p, out);
    Tensor got =
        fast::maxPool2d(x, c.kernel, c.strides, c.dilations, c.pads, out);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(maxRelDiff(got, want), 0.0) << shapeToString(c.x);
  }
}

TEST(FastKernels, ReluMatchesReference) {
  Tensor x = Tensor::fromVector(DType::F32, {5},
                                std::vector<double>{-2, -0.0, 0.0, 3, NAN});
  Tensor want = ref::unary(ref::UnaryKind::Relu, x);
  Tensor got = fast::unary(ref::UnaryKind::Relu, x);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(got.getDouble(i), want.getDouble(i)) << i;
  EXPECT_TRUE(std::isnan(got.getDouble(4)));
  EXPECT_TRUE(std::isnan(want.getDouble(4)));
}

TEST(FastKernels, MatmulErrors) {
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {4, 2});
  EXPECT_HAS(errorOf([&] { fast::matmul(a, b, {}); }),
             "contraction dimensions differ");
  Tensor d(DType::F64, {3, 2});
  EXPECT_HAS(errorOf([&] { fast::matmul(a, d, {}); }), "only f32");
  Tensor x(DType::F32, {2, 2, 3}), y(DType::F32, {3, 3, 2});
  EXPECT_HAS(errorOf([&] { fast::matmul(x, y, {}); }), "do not broadcast");
}

TEST(FastKernels, Bf16ErrorWithinTolerance) {
  std::mt19937 rng(7);
  int64_t m = 48, k = 256, n = 40;
  Tensor a = randomTensor({m, k}, rng), b = randomTensor({k, n}, rng);
  Tensor exact = ref::matmul(a, b);
  Tensor got = fast::matmul(a, b, FastOptions{InputRounding::BF16});
  double worst = 0;
  bool differs = false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      // Each product carries at most 2 * 2^-9 relative error from rounding
      // both operands to bf16 (8 significant bits, round to nearest).
      double bound = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        bound += std::abs(a.data<float>()[i * k + kk] *
                          b.data<float>()[kk * n + j]);
      bound = bound * (2.0 / 512 + 1.0 / (512.0 * 512)) + 1e-5;
      double err = std::abs(got.getDouble(i * n + j) - exact.getDouble(i * n + j));
      EXPECT_LE(err, bound);
      worst = std::max(worst, err / bound);
      differs = differs || err > 1e-4;
    }
  EXPECT_TRUE(differs) << "bf16 rounding had no effect";
}

TEST(FastKernels, ConvMatchesReference) {
  std::mt19937 rng(3);
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
    bool bias;
  };
  std::vector<Case> cases = {
      {{1, 3, 8, 8}, {4, 3, 3, 3}, {}, {}, {}, 1, false},
      {{2, 4, 9, 7}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, 2, true},
      {{1, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4, true},
      {{2, 3, 11}, {5, 3, 4}, {3}, {2}, {2, 1}, 1, true},
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 1, 2},
       {0, 1, 1, 1, 0, 0}, 1, true},
      {{1, 1, 3, 3}, {2, 1, 5, 5}, {}, {}, {1, 1, 1, 1}, 1, false},
      // Pointwise (1x1, unit stride, no padding): the path without im2col,
      // batched and grouped; and a strided 1x1 that must not take it.
      {{2, 6, 5, 4}, {8, 3, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2, true},
      {{1, 4, 6, 6}, {5, 4, 1, 1}, {2, 2}, {}, {}, 1, true},
  };
  for (const Case &c : cases) {
    Tensor x = randomTensor(c.x, rng), w = randomTensor(c.w, rng);
    Tensor bias = c.bias ? randomTensor({c.w[0]}, rng) : Tensor();
    ref::ConvParams p{c.strides, c.dilations, c.pads, c.group, {}};
    Tensor want = ref::conv(x, w, bias, p);
    Tensor got = fast::conv(x, w, bias, c.strides, c.dilations, c.pads,
                            c.group, {});
    ASSERT_EQ(got.shape(), want.shape()) << shapeToString(c.x);
    EXPECT_LT(maxRelDiff(got, want), 1e-5) << shapeToString(c.x);
    Tensor got16 = fast::conv(x, w, bias, c.strides, c.dilations, c.pads,
                              c.group, FastOptions{InputRounding::BF16});
    Tensor want16 = ref::conv(bf16Rounded(x), bf16Rounded(w), bias, p);
    EXPECT_LT(maxRelDiff(got16, want16), 1e-5) << shapeToString(c.x);
  }
  Tensor x(DType::F32, {1, 3, 4, 4}), w(DType::F32, {2, 2, 3, 3});
  EXPECT_HAS(errorOf([&] { fast::conv(x, w, Tensor(), {}, {}, {}, 1, {}); }),
             "does not match input channels");
  Tensor xi(DType::I32, {1, 3, 4, 4});
  EXPECT_HAS(errorOf([&] { fast::conv(xi, w, Tensor(), {}, {}, {}, 1, {}); }),
             "only f32");
}

TEST(FastKernels, DeterministicAndThroughput) {
  std::mt19937 rng(11);
  int64_t n = 1024;
  Tensor a = randomTensor({n, n}, rng), b = randomTensor({n, n}, rng);
  Tensor first = fast::matmul(a, b, {});
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    Tensor again = fast::matmul(a, b, {});
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    EXPECT_EQ(std::memcmp(first.raw(), again.raw(), first.byteSize()), 0);
  }
  double gflops = 2.0 * n * n * n / best / 1e9;
  std::printf("fast::matmul 1024^3 sgemm: %.3f s, %.1f GFLOP/s\n", best,
              gflops);
  RecordProperty("gflops", std::to_string(gflops));
  EXPECT_GT(gflops, 0.5);
}

//===----------------------------------------------------------------------===//
// Multi-chip programs and splat constants
//===----------------------------------------------------------------------===//

TEST(ProgramLoad, MultiChipFields) {
  Program loaded = load(emit(twoChipProgram()));
  EXPECT_EQ(loaded.chips, 2);
  EXPECT_EQ(loaded.pipelineParallel, 2);
  EXPECT_EQ(loaded.tensorParallel, 1);
  EXPECT_EQ(loaded.topology, "ring");
  EXPECT_EQ(loaded.tilesPerChip(), 2);
  EXPECT_EQ(loaded.numTiles(), 4);
  EXPECT_EQ(loaded.chipOf(3), 1);
  EXPECT_EQ(loaded.kernel(1).chip, 1);
  const ProgramLink &cl = loaded.link(4);
  EXPECT_TRUE(cl.chipLink);
  EXPECT_EQ(cl.fromChip, 0);
  EXPECT_EQ(cl.toChip, 1);
  EXPECT_EQ(cl.fromTile, 0);
  EXPECT_EQ(cl.toTile, 2);
  EXPECT_DOUBLE_EQ(cl.bytesPerCycle, 4);
  EXPECT_EQ(cl.latencyCycles, 2);
  // A mesh link's chips are its tiles'.
  EXPECT_FALSE(loaded.link(2).chipLink);
  EXPECT_EQ(loaded.link(2).fromChip, 1);
  EXPECT_EQ(loaded.instr(3).unit, Unit::ChipLink);
  EXPECT_STREQ(unitName(Unit::ChipLink), "chip_link");
  // The splat keeps its one element; value() expands it.
  const ProgramTensor &b = loaded.tensor(2);
  EXPECT_TRUE(b.splat);
  EXPECT_TRUE(b.hasData);
  EXPECT_EQ(b.constant.numElements(), 1);
  Tensor full = b.value();
  ASSERT_EQ(full.shape(), (Shape{2}));
  EXPECT_EQ(full.data<float>()[0], 10.0f);
  EXPECT_EQ(full.data<float>()[1], 10.0f);
  // A single-chip program reads as one chip.
  Program one = load(emit(matmulAdd()));
  EXPECT_EQ(one.chips, 1);
  EXPECT_EQ(one.numTiles(), one.tilesPerChip());
}

// A chip link instr's latency round-trips; the link is busy for its
// duration alone, and the program lasts until the message arrives.
TEST(ProgramLoad, ChipLinkLatency) {
  Program p = twoChipProgram();
  ProgramInstr *link = nullptr;
  for (ProgramInstr &in : p.instrs)
    if (in.unit == Unit::ChipLink)
      link = &in;
  ASSERT_NE(link, nullptr);
  int64_t arrival = link->end();
  link->duration -= 4;
  link->latency = 4;
  Program loaded = load(emit(p));
  EXPECT_EQ(loaded.instr(link->id).latency, 4);
  EXPECT_EQ(loaded.instr(link->id).arrival(), arrival);
  SimStats s = Simulator(loaded).runTiming().stats;
  EXPECT_EQ(s.chipLinks[0].busyCycles, 6);
  EXPECT_EQ(s.totalCycles, load(emit(twoChipProgram())).totalCycles);
  link->latency = -1;
  EXPECT_HAS(errorOf([&] { load(emit(p)); }), "negative latency -1");
}

TEST(ProgramLoad, MultiChipErrors) {
  auto broken = [](auto edit) {
    Program p = twoChipProgram();
    edit(p);
    return loadError(p);
  };
  EXPECT_HAS(broken([](Program &p) { p.chips = 0; }),
             "chips must be in [1, 2^20], got 0");
  EXPECT_HAS(broken([](Program &p) { p.chips = (1 << 20) + 1; }),
             "chips must be in [1, 2^20]");
  EXPECT_HAS(broken([](Program &p) {
               p.tileRows = 4096;
               p.tileCols = 4096;
               p.chips = 2;
             }),
             "33554432 tiles in all, more than the 1048576 a program may "
             "hold");
  // The fuzzer's 655,360 chips of 16 tiles: within the chip cap, but the
  // simulator's per-chip and per-tile statistics took 12 s and 1.5 GB.
  EXPECT_HAS(broken([](Program &p) {
               p.tileRows = 4;
               p.tileCols = 4;
               p.chips = 655360;
             }),
             "chips 655360 of 4 x 4 tiles: 10485760 tiles in all, more than "
             "the 1048576 a program may hold");
  EXPECT_HAS(broken([](Program &p) { p.tensorParallel = 3; }),
             "tensor_parallel 3 and pipeline_parallel 2 must be in [1, "
             "chips = 2]");
  EXPECT_HAS(broken([](Program &p) { p.kernels[1].chip = 2; }),
             "kernel 1 'add': chip 2 is outside the program's 2 chips");
  EXPECT_HAS(broken([](Program &p) { p.kernels[1].chip = -1; }),
             "chip -1 is outside");
  EXPECT_HAS(broken([](Program &p) {
               p.links[4].toChip = 2;
               p.links[4].toTile = 4;
             }),
             "chip link 4: tile 4 is outside the 2 chips of 1 x 2 tiles");
  EXPECT_HAS(broken([](Program &p) { p.links[4].toChip = 5; }),
             "chip link 4: chip 5 is outside the program's 2 chips");
  EXPECT_HAS(broken([](Program &p) {
               p.links[4].toChip = 0;
               p.links[4].toTile = 0;
             }),
             "chip link 4: joins chip 0 to itself");
  EXPECT_HAS(broken([](Program &p) { p.links[4].toTile = 3; }),
             "chip link 4: from_tile 0 and to_tile 3 are not the first tiles "
             "of chips 0 and 1 (0 and 2)");
  EXPECT_HAS(broken([](Program &p) { p.links[4].bytesPerCycle = -1; }),
             "bytes_per_cycle and latency_cycles must be non-negative");
  // Tiles 1 and 2 are neighbours by index but on different chips.
  EXPECT_HAS(broken([](Program &p) { p.links.push_back({9, 1, 2}); }),
             "link 9: tiles 1 and 2 are not neighbours (they are on chips 0 "
             "and 1; a mesh link stays on one chip)");
  EXPECT_HAS(broken([](Program &p) { p.instrs[4].resource = 0; }),
             "instr 3: a chip_link instr on link 0, which is a mesh link");
  EXPECT_HAS(broken([](Program &p) {
               p.instrs.push_back(instr(9, -1, Unit::MeshLink, 5, 40, 1));
             }),
             "instr 9: a mesh_link instr on link 5, which is a chip link");
  EXPECT_HAS(broken([](Program &p) { p.instrs[4].resource = 9; }),
             "instr 3: unknown chip link id 9");
  EXPECT_HAS(broken([](Program &p) { p.buffers[3].tile = 4; }),
             "buffer 3: tile 4 is outside the 2 chips of 1 x 2 tiles");
  EXPECT_HAS(broken([](Program &p) { p.instrs[5].resource = 4; }),
             "instr 5: tile 4 is outside the 2 chips of 1 x 2 tiles");
  // Splats.
  EXPECT_HAS(broken([](Program &p) {
               p.tensors[2].constant = Tensor::fromVector(
                   DType::F32, {2}, std::vector<float>{10, 10});
             }),
             "tensor 2 'b': constant data is 8 bytes, but a splat of f32 "
             "needs one element, 4");
  EXPECT_HAS(broken([](Program &p) { p.tensors[3].splat = true; }),
             "tensor 3 'h': splat is set on an intermediate tensor");
  EXPECT_HAS(broken([](Program &p) {
               p.tensors[2].hasData = false;
               p.tensors[2].constant = Tensor();
             }),
             "tensor 2 'b': splat constant has no data");
  EXPECT_EQ(broken([](Program &) {}), "");
}

TEST(Simulator, TileProgramsReportWhatNoInstrWrote) {
  // Dropping the transfer of h to chip 1 leaves the add reading a buffer
  // nothing wrote: an error naming the instr, the kernel and the buffer.
  Program two = load(emit(twoChipProgram()));
  FunctionalHooks dropTransfer;
  dropTransfer.dropInstr = 2;
  std::string err = errorOf([&] {
    Simulator(two).runFunctional({{"x", xValue()}}, dropTransfer);
  });
  EXPECT_HAS(err, "instr 5 of kernel 1 'add'");
  EXPECT_HAS(err, "reads buffer 3 (tensor 3 'h'");
  EXPECT_HAS(err, "before anything wrote it");
  // Dropping the matmul leaves its result unwritten: the DMA that moves it
  // to tile 1 says so.
  Program one = load(emit(matmulAdd()));
  FunctionalHooks dropKernel;
  dropKernel.dropInstr = 1;
  err = errorOf([&] {
    Simulator(one).runFunctional({{"x", xValue()}}, dropKernel);
  });
  EXPECT_HAS(err, "instr 9 (a transfer) on tile 0 (0,0)");
  EXPECT_HAS(err, "reads buffer 3 (tensor 4 'y'");
  EXPECT_HAS(err, "before anything wrote it");
  // Without the move to tile 1, the output has elements no tile wrote.
  Program noMove = matmulAdd();
  noMove.instrs.resize(3);
  Program loadedNoMove = load(emit(noMove));
  err = errorOf([&] {
    Simulator(loadedNoMove).runFunctional({{"x", xValue()}}, dropKernel);
  });
  EXPECT_HAS(err, "output tensor 4 'y'");
  EXPECT_HAS(err, "held by no buffer any tile wrote");
}

TEST(Simulator, TwoChipFunctionalRunExpandsTheSplat) {
  Program loaded = load(emit(twoChipProgram()));
  SimResult r = Simulator(loaded).runFunctional({{"x", xValue()}});
  ASSERT_EQ(r.outputs.size(), 1u);
  // x @ W = [[4, 5], [10, 11]], plus the splat 10.
  std::vector<float> want = {14, 15, 20, 21};
  ASSERT_EQ(r.outputs[0].value.shape(), (Shape{2, 2}));
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(r.outputs[0].value.data<float>()[i], want[i]) << i;
}

TEST(Simulator, SplatOfEveryDtypeExpands) {
  for (DType dt : {DType::F32, DType::F16, DType::I8, DType::I64, DType::Bool,
                   DType::F64}) {
    ProgramTensor t;
    t.kind = TensorKind::Constant;
    t.dtype = dt;
    t.shape = {3, 5};
    t.splat = true;
    t.hasData = true;
    Tensor one(dt, {});
    one.setDouble(0, 1);
    t.constant = one;
    Tensor full = t.value();
    ASSERT_EQ(full.shape(), (Shape{3, 5})) << dtypeName(dt);
    for (int64_t i = 0; i < 15; ++i)
      EXPECT_EQ(full.getDouble(i), 1.0) << dtypeName(dt) << " " << i;
  }
  // A bool splat is checked like any bool constant, when expanded.
  ProgramTensor bad;
  bad.kind = TensorKind::Constant;
  bad.dtype = DType::Bool;
  bad.shape = {4};
  bad.splat = bad.hasData = true;
  uint8_t two = 2;
  bad.constant = Tensor::fromBytes(DType::Bool, {}, &two);
  EXPECT_HAS(errorOf([&] { bad.value(); }), "byte other than 0 or 1");
  // An empty shape expands to nothing.
  uint8_t one = 1;
  bad.constant = Tensor::fromBytes(DType::Bool, {}, &one);
  bad.shape = {0, 4};
  EXPECT_EQ(bad.value().numElements(), 0);
  // No data, no value.
  bad.hasData = false;
  EXPECT_HAS(errorOf([&] { bad.value(); }), "constant has no data");
}

TEST(Simulator, TimingOnlyNeverExpandsSplats) {
  // A weight of 3 x 2^32 elements (48 GiB if expanded) as a splat: loading
  // and timing touch its one element only.
  Program p = twoChipProgram();
  p.tensors[1] = splatTensor(1, "W", {3, int64_t(1) << 32}, 1);
  Program loaded = load(emit(p));
  EXPECT_EQ(loaded.tensor(1).constant.byteSize(), 4u);
  SimResult r = Simulator(loaded).runTiming();
  EXPECT_EQ(r.stats.totalCycles, 50);
  EXPECT_TRUE(r.outputs.empty());
}

TEST(Simulator, TwoChipStats) {
  Program loaded = load(emit(twoChipProgram()));
  SimStats s = Simulator(loaded).runTiming().stats;
  EXPECT_EQ(s.chips, 2);
  ASSERT_EQ(s.units.size(), 5u);
  EXPECT_EQ(s.units[0].count, 4); // a matrix unit per tile, both chips
  EXPECT_EQ(s.units[3].count, 4); // mesh links
  EXPECT_EQ(s.units[4].unit, Unit::ChipLink);
  EXPECT_EQ(s.units[4].count, 2);
  EXPECT_EQ(s.units[4].busyCycles, 10);
  EXPECT_DOUBLE_EQ(s.units[4].utilisation, 10.0 / (50 * 2));
  ASSERT_EQ(s.links.size(), 4u);
  ASSERT_EQ(s.chipLinks.size(), 2u);
  EXPECT_EQ(s.chipLinks[0].id, 4);
  EXPECT_EQ(s.chipLinks[0].fromChip, 0);
  EXPECT_EQ(s.chipLinks[0].toChip, 1);
  EXPECT_EQ(s.chipLinks[0].bytes, 16);
  EXPECT_EQ(s.chipLinks[0].busyCycles, 10);
  EXPECT_EQ(s.chipLinks[1].bytes, 0);
  EXPECT_EQ(s.maxChipLinkBytes, 16);
  EXPECT_EQ(s.maxLinkBytes, 0);
  // Chip 0: DMA 10 + matrix 20 + DMA 10; chip 1: DMA 10 + vector 10.
  ASSERT_EQ(s.chipStats.size(), 2u);
  EXPECT_EQ(s.chipStats[0].busyCycles, 40);
  EXPECT_EQ(s.chipStats[1].busyCycles, 20);
  EXPECT_DOUBLE_EQ(s.chipStats[0].share, 40.0 / 60);
  EXPECT_DOUBLE_EQ(s.chipStats[1].utilisation, 20.0 / (50 * 2 * 3));

  std::string text = s.toText();
  EXPECT_HAS(text, "chips:            2\n");
  EXPECT_HAS(text, "chip_link");
  EXPECT_HAS(text, "chip links:       2, busiest carries 16 bytes\n");
  EXPECT_HAS(text,
             "  chip link 4 (chip 0 -> chip 1): 16 bytes, 10 busy cycles\n");
  EXPECT_HAS(text, "share  66.67%");
  auto j = nlohmann::json::parse(s.toJson());
  EXPECT_EQ(j["chips"], 2);
  EXPECT_EQ(j["units"]["chip_link"]["busy_cycles"], 10);
  EXPECT_EQ(j["chip_links"][0]["from_chip"], 0);
  EXPECT_EQ(j["chip_links"][0]["to_chip"], 1);
  EXPECT_EQ(j["chip_links"][0]["bytes"], 16);
  EXPECT_EQ(j["max_chip_link_bytes"], 16);
  EXPECT_EQ(j["per_chip"][1]["busy_cycles"], 20);
  EXPECT_EQ(j["links"].size(), 4u);
}

TEST(Trace, ChipLinksHaveTracks) {
  Program loaded = load(emit(twoChipProgram()));
  auto j = nlohmann::json::parse(Simulator(loaded).traceJson());
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, std::string> processes;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_name")
      processes[e["pid"].get<int>()] = e["args"]["name"];
  }
  EXPECT_EQ(processes[0], "chip 0 (test-chip)");
  EXPECT_EQ(processes[1], "chip 1 (test-chip)");
  EXPECT_EQ(processes[2], "chip links");
  // tids: 4 tiles x 3 units, then links by position (chip link 4 is 4th).
  EXPECT_EQ(threads[std::make_pair(1, 6)], "tile 2 (chip 1, 0,0) matrix");
  EXPECT_EQ(threads[std::make_pair(2, 16)], "chip 0 -> chip 1 (chip link 4)");
  EXPECT_EQ(threads[std::make_pair(1, 14)], "link 2 (tile 2 -> tile 3)");
  // Every event's track is named, and the chip-link transfer is on its own.
  int chipLinkEvents = 0;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "M")
      continue;
    auto track = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    EXPECT_TRUE(threads.count(track)) << e.dump();
    if (e["ph"] == "X" && e["args"]["unit"] == "chip_link") {
      ++chipLinkEvents;
      EXPECT_EQ(track, std::make_pair(2, 16));
      EXPECT_EQ(e["name"], "transfer mm -> add");
    }
  }
  EXPECT_EQ(chipLinkEvents, 1);
}

// A copy that crossed to chip 1 and is passed on over its mesh (a transfer
// that depends on a transfer) is named after the kernel that made the
// value, not "input".
TEST(Trace, ForwardedCopyNamesTheProducer) {
  Program p = twoChipProgram();
  p.buffers.push_back(buffer(6, 3, 3, 0, 16, 50, 60));
  p.instrs.push_back(instr(6, -1, Unit::Dma, 2, 50, 10, {3}, {3}, {6}, 16));
  p.totalCycles = p.initiationInterval = 60;
  Program loaded = load(emit(p));
  auto j = nlohmann::json::parse(Simulator(loaded).traceJson());
  int forwarded = 0;
  for (const auto &e : j["traceEvents"])
    if (e["ph"] == "X" && e["args"]["kernel_id"] == -1 &&
        e["args"]["unit"] == "dma" && e["pid"] == 1) {
      ++forwarded;
      EXPECT_EQ(e["name"], "transfer mm -> output") << e.dump();
      EXPECT_EQ(e["args"]["from_kernels"], nlohmann::json::array({0}));
    }
  EXPECT_EQ(forwarded, 1);
}

TEST(Simulator, LargeMultiChipProgramLoadsAndTimes) {
  Program p = largeTwoChipProgram(/*rounds=*/320);
  std::vector<uint8_t> bytes = emit(p);
  auto start = std::chrono::steady_clock::now();
  Program loaded = load(bytes);
  SimStats s = Simulator(loaded).runTiming().stats;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_EQ(s.numInstrs, static_cast<int64_t>(p.instrs.size()));
  EXPECT_EQ(s.chipLinks.size(), 2u);
  // Each chip link carries 64 bytes per round.
  EXPECT_EQ(s.chipLinks[0].bytes, 320 * 64);
  EXPECT_EQ(s.chipStats.size(), 2u);
  EXPECT_EQ(s.hazards, 0);
  // The time is a figure, not a bound (no timed tests).
  std::printf("loaded and timed %zu instrs, %zu buffers in %.3f s\n",
              p.instrs.size(), p.buffers.size(), seconds);
}

TEST(Report, ChipsInTheHeatMapAndTimeline) {
  Program loaded = load(emit(twoChipProgram()));
  SimStats stats = Simulator(loaded).runTiming().stats;
  ReportInput in;
  in.program = &loaded;
  in.stats = &stats;
  in.producer = "test";
  std::string html = renderReportHtml(in);
  EXPECT_HAS(html, "(2 chips of 1 x 2 tiles, ");
  EXPECT_HAS(html, "One grid per chip.");
  EXPECT_HAS(html, "font-weight=\"bold\">chip 1</text>");
  EXPECT_HAS(html, "<title>tile 2 (chip 1, 0,0)\nmatrix: 0 busy cycles");
  EXPECT_HAS(html, ">chip link 4 (0 -&gt; 1)</text>");
  EXPECT_EQ(html.find("Partial"), std::string::npos);

  // More chips than the map shows: it says so.
  Program many = twoChipProgram();
  many.chips = 40;
  Program manyLoaded = load(emit(many));
  stats = Simulator(manyLoaded).runTiming().stats;
  in.program = &manyLoaded;
  html = renderReportHtml(in);
  EXPECT_HAS(html, "Partial: chips 0-15 of 40 shown, 24 not shown.");
  EXPECT_HAS(html, "font-weight=\"bold\">chip 15</text>");
  EXPECT_EQ(html.find("font-weight=\"bold\">chip 16</text>"),
            std::string::npos);

  // One chip: no chip labels in the map.
  Program one = load(emit(matmulAdd()));
  stats = Simulator(one).runTiming().stats;
  in.program = &one;
  html = renderReportHtml(in);
  EXPECT_EQ(html.find("One grid per chip"), std::string::npos);
  EXPECT_HAS(html, "(1 x 2 tiles, ");
  EXPECT_HAS(html, "<title>tile 1\nmatrix: ");
}

/// The loom-verify-mutations tool built beside this test, or "" if absent.
std::string verifyMutationsTool() {
  if (const char *env = std::getenv("LOOM_VERIFY_MUTATIONS"))
    return env;
  std::error_code ec;
  std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "";
  std::filesystem::path tool = self.parent_path() / "loom-verify-mutations";
  return std::filesystem::exists(tool, ec) ? tool.string() : "";
}

TEST(VerifyMutations, ChipLinkMutationsOfAMultiChipProgramAreRejected) {
  std::string tool = verifyMutationsTool();
  if (tool.empty())
    GTEST_SKIP() << "loom-verify-mutations is not built beside this test";
  // Two rounds: chip-link transfers both ways at once, beside mesh links.
  std::vector<uint8_t> bytes = emit(largeTwoChipProgram(/*rounds=*/2));
  std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("loom-mutations-" + std::to_string(::getpid()) + ".loom");
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  std::string command =
      "'" + tool + "' --per-kind 8 --seed 1 '" + file.string() + "' 2>&1";
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char chunk[4096];
  while (size_t n = fread(chunk, 1, sizeof chunk, pipe))
    output.append(chunk, n);
  int status = pclose(pipe);
  std::filesystem::remove(file);
  EXPECT_EQ(status, 0) << output;
  EXPECT_HAS(output, "2 chips, ");
  EXPECT_HAS(output, "programs: all rejected");
  // Each chip-link kind applied mutations and every one was rejected with
  // the kind it should show as: "kind programs applied rejected expected".
  for (const char *kind : {"double-book-chip-link", "chip-link-early-start",
                           "chip-link-early", "chip-link-kind"}) {
    size_t at = output.find(std::string("\n") + kind + " ");
    ASSERT_NE(at, std::string::npos) << kind << "\n" << output;
    std::istringstream row(output.substr(at + 1));
    std::string name;
    int64_t programs = 0, applied = 0, rejected = 0, expected = 0;
    row >> name >> programs >> applied >> rejected >> expected;
    EXPECT_EQ(programs, 1) << kind;
    EXPECT_GT(applied, 0) << kind;
    EXPECT_EQ(rejected, applied) << kind;
    EXPECT_EQ(expected, applied) << kind << "\n" << output;
  }
}

} // namespace
