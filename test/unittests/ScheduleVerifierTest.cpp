//===- ScheduleVerifierTest.cpp - The independent schedule verifier -------===//
//
// Small programs built by hand as rt::Program values (the verifier needs no
// file and builds its own id maps), one sound schedule in layer-sequential
// form and one software-pipelined, then broken one field at a time so that
// each ViolationKind fires, with the instr and buffer it names.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/ScheduleVerifier.h"
#include "ProgramBuilders.h"
#include "loom/Runtime/Program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::testing;

namespace {

ProgramKernel kernel(int32_t id, std::string name, std::string onnxNode,
                     int32_t tileCol) {
  ProgramKernel k;
  k.id = id;
  k.name = std::move(name);
  k.onnxNodes = {std::move(onnxNode)};
  k.kind = KernelKind::Elementwise;
  k.precision = NumericFormat::F32;
  k.tileRow = 0;
  k.tileCol = tileCol;
  k.tileRows = 1;
  k.tileCols = 1;
  return k;
}

/// y = relu(x @ W) on a 1 x 2 tile grid with 1024 bytes of SRAM per tile:
/// DMA x and W in on tile 0, the matmul there, a transfer of h to tile 1
/// (a DMA and the link it crosses), the relu on tile 1.
///
///   instr 0  dma    tile 0  [0, 10)            writes b0 (x), b1 (W)
///   instr 1  matrix tile 0  [10, 30)  deps 0   reads b0, b1; writes b2 (h)
///   instr 2  dma    tile 0  [30, 40)  deps 1   reads b2; writes b3 (h, t1)
///   instr 3  link 0         [30, 40)  deps 1
///   instr 4  vector tile 1  [40, 50)  deps 2,3 reads b3; writes b4 (y)
Program sequential() {
  Program p;
  p.path = "test.loom";
  p.model = "mm_relu.onnx";
  p.targetName = "test-chip";
  p.tileRows = 1;
  p.tileCols = 2;
  p.sramBytesPerTile = 1024;
  p.clockHz = 1e9;
  p.tensors = {
      tensor(0, "x", {4, 4}, TensorKind::Input),
      tensor(1, "W", {4, 4}, TensorKind::Constant),
      tensor(2, "h", {4, 4}, TensorKind::Intermediate),
      tensor(3, "y", {4, 4}, TensorKind::Output),
  };
  p.inputs = {0};
  p.outputs = {3};
  p.kernels = {kernel(0, "mm", "MatMul_0", 0), kernel(1, "relu", "Relu_1", 1)};
  p.links = {{0, 0, 1}, {1, 1, 0}};
  p.buffers = {
      buffer(0, 0, 0, 0, 64, 0, 30),    buffer(1, 1, 0, 64, 64, 0, 30),
      buffer(2, 2, 0, 128, 64, 10, 40), buffer(3, 2, 1, 0, 64, 30, 50),
      buffer(4, 3, 1, 64, 64, 40, 50),
  };
  p.instrs = {
      instr(0, 0, Unit::Dma, 0, 0, 10, {}, {}, {0, 1}),
      instr(1, 0, Unit::Matrix, 0, 10, 20, {0}, {0, 1}, {2}),
      instr(2, -1, Unit::Dma, 0, 30, 10, {1}, {2}, {3}),
      instr(3, -1, Unit::MeshLink, 0, 30, 10, {1}, {}, {}),
      instr(4, 1, Unit::Vector, 1, 40, 10, {2, 3}, {3}, {4}),
  };
  p.totalCycles = 50;
  p.initiationInterval = 50;
  return p;
}

/// The same schedule software-pipelined at II 20: a new input every 20
/// cycles. The matrix unit of tile 0 is busy for the whole interval; the
/// DMA unit of tile 0 for [0, 10) and [30, 40) = [10, 20) modulo 20. x and
/// h on tile 0 live 30 cycles, so they rotate over 2 copies; W is resident
/// (loaded once, not by instr 0); h on tile 1 lives exactly one interval.
/// With the II raised to total_cycles it is a sound sequential program too.
Program pipelined() {
  Program p = sequential();
  p.initiationInterval = 20;
  p.mapping = "pipelined";
  p.buffers = {
      buffer(0, 0, 0, 0, 64, 0, 30, 2), // [0, 128)
      buffer(1, 1, 0, 128, 64, 0, 50, 1, /*resident=*/true),
      buffer(2, 2, 0, 192, 64, 10, 40, 2), // [192, 320)
      buffer(3, 2, 1, 0, 64, 30, 50),
      buffer(4, 3, 1, 64, 64, 40, 50),
  };
  p.instrs[0].writes = {0}; // W stays in SRAM across inputs
  return p;
}

size_t bufferPos(const Program &p, int32_t id) {
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].id == id)
      return i;
  ADD_FAILURE() << "no buffer " << id;
  return 0;
}

std::vector<Violation> verify(const Program &p) {
  return verifySchedule(p, 100);
}

bool has(const std::vector<Violation> &v, ViolationKind kind) {
  return std::any_of(v.begin(), v.end(),
                     [&](const Violation &x) { return x.kind == kind; });
}

#define EXPECT_HAS(haystack, needle)                                           \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack)

} // namespace

//===----------------------------------------------------------------------===//
// Sound schedules
//===----------------------------------------------------------------------===//

TEST(ScheduleVerifier, SoundSequentialProgramPasses) {
  Program p = sequential();
  ASSERT_FALSE(p.pipelined());
  EXPECT_TRUE(verify(p).empty());
  EXPECT_NO_THROW(verifyScheduleOrThrow(p));
  // Peak per tile: x + W + h on tile 0 (192 bytes over [10, 30)); on tile 1
  // h and y (128 bytes over [40, 50)).
  EXPECT_EQ(sramPeakPerTile(p), (std::vector<int64_t>{192, 128}));
}

TEST(ScheduleVerifier, SoundPipelinedProgramPasses) {
  Program p = pipelined();
  ASSERT_TRUE(p.pipelined());
  std::vector<Violation> v = verify(p);
  for (const Violation &x : v)
    ADD_FAILURE() << violationKindName(x.kind) << ": " << x.message;
  // Every footprint is live all the time on tile 0 (x, h: lifetimes of 30
  // cycles cover the whole interval; W resident): 128 + 64 + 128 bytes.
  // On tile 1, h (a whole interval) and y: 128 bytes.
  EXPECT_EQ(sramPeakPerTile(p), (std::vector<int64_t>{320, 128}));
}

TEST(ScheduleVerifier, KindNames) {
  EXPECT_STREQ(violationKindName(ViolationKind::Deadlock), "deadlock");
  EXPECT_STREQ(violationKindName(ViolationKind::Dependency), "dependency");
  EXPECT_STREQ(violationKindName(ViolationKind::DataArrival), "data-arrival");
  EXPECT_STREQ(violationKindName(ViolationKind::Liveness), "liveness");
  EXPECT_STREQ(violationKindName(ViolationKind::ResourceConflict),
               "resource-conflict");
  EXPECT_STREQ(violationKindName(ViolationKind::SramBounds), "sram-bounds");
  EXPECT_STREQ(violationKindName(ViolationKind::BufferCopies), "buffer-copies");
  EXPECT_STREQ(violationKindName(ViolationKind::SramOverlap), "sram-overlap");
  EXPECT_STREQ(violationKindName(ViolationKind::Latency), "latency");
}

//===----------------------------------------------------------------------===//
// One violation kind each
//===----------------------------------------------------------------------===//

TEST(ScheduleVerifier, DeadlockCycle) {
  Program p = sequential();
  p.instrs[1].deps.push_back(4); // matmul waits for the relu, which waits
                                 // for the transfer, which waits for it
  std::vector<Violation> v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Deadlock);
  EXPECT_HAS(v.front().message, "the dependencies form a cycle");
  EXPECT_HAS(v.front().message, "instr 1 waits for");
  EXPECT_HAS(v.front().message, "instr 4 waits for");
  // A self-dependency is a cycle too.
  p = sequential();
  p.instrs[0].deps = {0};
  v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Deadlock);
  EXPECT_HAS(v.front().message, "instr 0 waits for instr 0");
}

TEST(ScheduleVerifier, StartBeforeDepEnds) {
  Program p = sequential();
  p.instrs[4].start = 35; // the relu starts while the transfer runs to 40
  std::vector<Violation> v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Dependency);
  EXPECT_EQ(v.front().instr, 4);
  EXPECT_HAS(v.front().message, "instr 4 [kernel 1 'relu' (onnx: Relu_1)");
  EXPECT_HAS(v.front().message, "starts at cycle 35 before its dep instr 2");
  EXPECT_HAS(v.front().message, "finishes at cycle 40");
  // Starting exactly when the dep ends is fine (half-open intervals).
  p = sequential();
  p.instrs[4].start = 40;
  EXPECT_TRUE(verify(p).empty());
  // A dep that does not exist.
  p.instrs[4].deps.push_back(77);
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::Dependency);
  EXPECT_HAS(v.front().message, "depends on instr 77, which does not exist");
}

TEST(ScheduleVerifier, ReadWithoutDependingOnTheWriter) {
  Program p = sequential();
  // The relu still starts after the link (and so, by the clock, after the
  // DMA), but nothing orders it after the DMA that writes h on tile 1.
  p.instrs[4].deps = {3};
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::DataArrival);
  EXPECT_EQ(v.front().instr, 4);
  EXPECT_EQ(v.front().buffer, 3);
  EXPECT_HAS(v.front().message, "instr 4");
  EXPECT_HAS(v.front().message, "reads buffer 3 (tensor 2 'h', tile 1 (0,1)");
  EXPECT_HAS(v.front().message, "written by instr 2");
  EXPECT_HAS(v.front().message, "without depending on it");
}

TEST(ScheduleVerifier, ReadOfAComputedBufferNoOneWrites) {
  Program p = sequential();
  p.instrs[2].writes.clear(); // the DMA no longer fills h on tile 1
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::DataArrival);
  EXPECT_EQ(v.front().instr, 4);
  EXPECT_EQ(v.front().buffer, 3);
  EXPECT_HAS(v.front().message, "which no instr writes");
  // A model input with no writer is data from the host: fine.
  p = sequential();
  p.instrs[0].writes = {1};
  EXPECT_TRUE(verify(p).empty());
}

TEST(ScheduleVerifier, AccessOutsideTheLifetime) {
  Program p = sequential();
  p.buffers[bufferPos(p, 2)].liveEnd = 35; // the DMA reads h over [30, 40)
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::Liveness);
  EXPECT_EQ(v.front().instr, 2);
  EXPECT_EQ(v.front().buffer, 2);
  EXPECT_HAS(v.front().message, "instr 2 [transfer, dma unit of tile 0 (0,0)");
  EXPECT_HAS(v.front().message, "reads buffer 2");
  EXPECT_HAS(v.front().message, "not live for the whole instr");
  // Writes too: y is born after the relu starts writing it.
  p = sequential();
  p.buffers[bufferPos(p, 4)].liveStart = 41;
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::Liveness);
  EXPECT_EQ(v.front().buffer, 4);
  EXPECT_HAS(v.front().message, "writes buffer 4");
}

TEST(ScheduleVerifier, DoubleBookedUnitAndLink) {
  Program p = sequential();
  p.instrs.push_back(instr(5, -1, Unit::Dma, 0, 5, 10, {}, {}, {}));
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "instr 5");
  EXPECT_HAS(v.front().message, "instr 0");
  EXPECT_HAS(v.front().message, "overlap on the dma unit of tile 0 (0,0)");
  // Back to back on the unit, or the same cycles on another unit, is fine.
  p.instrs.back().start = 10;
  EXPECT_TRUE(verify(p).empty());
  p.instrs.back().start = 5;
  p.instrs.back().unit = Unit::Vector;
  EXPECT_TRUE(verify(p).empty());

  p = sequential();
  p.instrs.push_back(instr(5, -1, Unit::MeshLink, 0, 39, 3, {}, {}, {}));
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message,
             "overlap on the mesh link 0 (tile 0 -> tile 1)");
  EXPECT_HAS(v.front().message, "instr 3");
  p.instrs.back().resource = 1; // the reverse link is another resource
  EXPECT_TRUE(verify(p).empty());
  p.instrs.back().resource = 9; // no such link
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "runs on a link that does not exist");
}

TEST(ScheduleVerifier, DoubleBookedAcrossIterations) {
  // The relu runs [40, 50) = [0, 10) modulo 20 on tile 1's vector unit;
  // another vector instr there over [25, 30) never meets it in one input
  // but meets the next input's relu at [5, 10) modulo 20.
  Program p = pipelined();
  p.instrs.push_back(instr(5, 1, Unit::Vector, 1, 25, 5, {}, {}, {}));
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "instr 5");
  EXPECT_HAS(v.front().message, "instr 4");
  EXPECT_HAS(v.front().message, "overlap on the vector unit of tile 1 (0,1)");
  EXPECT_HAS(v.front().message,
             "across inputs of the stream, initiation interval 20");
  // Not pipelined, the same pair is disjoint.
  Program q = p;
  q.initiationInterval = q.totalCycles;
  EXPECT_FALSE(has(verify(q), ViolationKind::ResourceConflict));
  // [15, 21) wraps to [15, 20) + [0, 1) modulo 20 and meets the relu in
  // its second piece.
  p.instrs.back().start = 15;
  p.instrs.back().duration = 6;
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "instr 5");
  EXPECT_HAS(v.front().message, "instr 4");
  // [30, 40) is [10, 20) modulo 20: free.
  p.instrs.back().start = 30;
  p.instrs.back().duration = 10;
  EXPECT_TRUE(verify(p).empty());
  // The matrix unit of tile 0 is busy for exactly the interval: any other
  // matrix instr there collides with some input's matmul.
  p.instrs.back() = instr(5, 0, Unit::Matrix, 0, 45, 1, {}, {}, {});
  v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "instr 1");
}

TEST(ScheduleVerifier, InstrLongerThanTheInterval) {
  // Alone on its unit, but 21 cycles at an interval of 20: the next input's
  // run starts before it ends.
  Program p = pipelined();
  p.instrs.push_back(instr(5, 1, Unit::Matrix, 1, 0, 21, {}, {}, {}));
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_EQ(v.front().instr, 5);
  EXPECT_HAS(v.front().message, "runs 21 cycles, longer than the initiation "
                                "interval 20");
  EXPECT_HAS(v.front().message, "matrix unit of tile 1 (0,1)");
  // Exactly the interval is fine.
  p.instrs.back().duration = 20;
  EXPECT_TRUE(verify(p).empty());
}

TEST(ScheduleVerifier, BufferOutsideTheSram) {
  Program p = sequential();
  p.buffers[bufferPos(p, 4)].offset = 1024 - 32; // [992, 1056)
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramBounds);
  EXPECT_EQ(v.front().buffer, 4);
  EXPECT_HAS(v.front().message, "buffer 4 (tensor 3 'y', tile 1 (0,1), bytes "
                                "[992, 1056)");
  EXPECT_HAS(v.front().message, "outside its tile's SRAM of 1024 bytes");
  // Ending exactly at the end is inside.
  p.buffers[bufferPos(p, 4)].offset = 1024 - 64;
  EXPECT_TRUE(verify(p).empty());
  // Every copy counts: 2 copies of 64 bytes from 960 end at 1088.
  Program q = pipelined();
  q.buffers[bufferPos(q, 4)].offset = 1024 - 64;
  q.buffers[bufferPos(q, 4)].copies = 2;
  v = verify(q);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::SramBounds);
  EXPECT_HAS(v.front().message, "in 2 copies");
  // A negative offset and a tile that does not exist.
  p = sequential();
  p.buffers[bufferPos(p, 4)].offset = -1;
  EXPECT_TRUE(has(verify(p), ViolationKind::SramBounds));
  p = sequential();
  p.buffers[bufferPos(p, 4)].tile = 2;
  v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::SramBounds);
  EXPECT_HAS(v.front().message, "on a tile that does not exist");
}

TEST(ScheduleVerifier, TooFewCopiesForTheLifetime) {
  Program p = pipelined();
  p.buffers[bufferPos(p, 0)].copies = 1; // x lives 30 cycles at II 20
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::BufferCopies);
  EXPECT_EQ(v.front().buffer, 0);
  EXPECT_HAS(v.front().message, "buffer 0 (tensor 0 'x'");
  EXPECT_HAS(v.front().message, "lives 30 cycles but its 1 copies cover only "
                                "20 at initiation interval 20");
  // h on tile 1 lives exactly 20 cycles in 1 copy: covered. One more cycle
  // is not.
  p = pipelined();
  p.buffers[bufferPos(p, 3)].liveEnd = 51;
  v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_TRUE(has(v, ViolationKind::BufferCopies));
  EXPECT_EQ(v.front().buffer, 3);
  // Not pipelined, copies do not matter: x may live the whole run.
  p = sequential();
  p.buffers[bufferPos(p, 0)].liveEnd = 50;
  EXPECT_TRUE(verify(p).empty());
}

TEST(ScheduleVerifier, OverlappingLiveBuffers) {
  Program p = sequential();
  // y on tile 1 moved onto h's bytes while h is live (until 50).
  p.buffers[bufferPos(p, 4)].offset = 32;
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 4");
  EXPECT_HAS(v.front().message, "buffer 3");
  EXPECT_HAS(v.front().message, "overlap in SRAM while both are live");
  // Touching address ranges do not overlap.
  p.buffers[bufferPos(p, 4)].offset = 64;
  EXPECT_TRUE(verify(p).empty());
}

TEST(ScheduleVerifier, OverlappingBuffersAcrossIterations) {
  // A scratch buffer on tile 1 at y's offset, live [0, 5): disjoint from y
  // ([40, 50)) in one input, but y is [0, 10) modulo 20.
  Program p = pipelined();
  p.tensors.push_back(tensor(4, "scratch", {4}, TensorKind::Intermediate));
  p.buffers.push_back(buffer(5, 4, 1, 64, 16, 0, 5));
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 5");
  EXPECT_HAS(v.front().message, "buffer 4");
  EXPECT_HAS(v.front().message,
             "across inputs of the stream, initiation interval 20");
  // Not pipelined, the same buffers pass.
  Program q = p;
  q.initiationInterval = q.totalCycles;
  EXPECT_TRUE(verify(q).empty());
  // Live [15, 22) wraps to [15, 20) + [0, 2) modulo 20: clashes with y.
  p.buffers.back().liveStart = 15;
  p.buffers.back().liveEnd = 22;
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 4");
  // Live [10, 15) = [10, 15) modulo 20: clear of y's [0, 10) and of h's.
  p.buffers.back().liveStart = 10;
  p.buffers.back().liveEnd = 15;
  p.buffers.back().offset = 128;
  EXPECT_TRUE(verify(p).empty());
  // At y's offset again: [10, 15) is still clear of y.
  p.buffers.back().offset = 64;
  EXPECT_TRUE(verify(p).empty());
  // A resident buffer is live always: W's bytes on tile 0 clash with any
  // buffer placed there, whatever its lifetime.
  p = pipelined();
  p.buffers.push_back(buffer(5, 4, 0, 160, 16, 3, 4));
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 1 (tensor 1 'W'");
  EXPECT_HAS(v.front().message, "resident");
  // Even when its stated lifetime is short: two buffers on tile 1 at
  // [512, 528) and [520, 536), live [0, 1) and [5, 6), clash only because
  // the first is resident.
  p = pipelined();
  p.tensors.push_back(tensor(4, "table", {4}, TensorKind::Constant));
  p.tensors.push_back(tensor(5, "scratch", {4}, TensorKind::Intermediate));
  p.buffers.push_back(buffer(5, 4, 1, 512, 16, 0, 1, 1, /*resident=*/true));
  p.buffers.push_back(buffer(6, 5, 1, 520, 16, 5, 6));
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 6");
  EXPECT_HAS(v.front().message, "buffer 5");
  // Not resident, the constant would be a weight the next input may find
  // overwritten; as a scratch value it is fine.
  p.buffers[bufferPos(p, 5)].resident = false;
  EXPECT_TRUE(has(verify(p), ViolationKind::DataArrival));
  p.tensors.back().kind = TensorKind::Intermediate;
  p.tensors[p.tensors.size() - 2].kind = TensorKind::Intermediate;
  EXPECT_TRUE(verify(p).empty());
  // Nor does a resident buffer's stated lifetime bound its readers.
  p = pipelined();
  p.buffers[bufferPos(p, 1)].liveStart = 0;
  p.buffers[bufferPos(p, 1)].liveEnd = 1;
  EXPECT_TRUE(verify(p).empty());
  p.buffers[bufferPos(p, 1)].resident = false;
  EXPECT_TRUE(has(verify(p), ViolationKind::Liveness));
  // Every copy of a rotating buffer counts: x's 2 copies span [0, 128).
  p = pipelined();
  p.buffers.push_back(buffer(5, 4, 0, 100, 16, 3, 4));
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::SramOverlap);
  EXPECT_HAS(v.front().message, "buffer 0 (tensor 0 'x'");
}

TEST(ScheduleVerifier, InstrAfterTheStatedLatency) {
  Program p = sequential();
  p.totalCycles = 45;
  p.initiationInterval = 45;
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::Latency);
  EXPECT_EQ(v.front().instr, 4);
  EXPECT_HAS(v.front().message, "ends after the program's total_cycles 45");
}

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

TEST(ScheduleVerifier, ChecksRunInOrderAndStopAtTheLimit) {
  // Three faults: the link starts before the matmul it depends on ends, h
  // lies past the SRAM, the relu ends after total_cycles.
  Program p = sequential();
  p.instrs[3].start = 29;
  p.buffers[bufferPos(p, 2)].offset = 1000;
  p.totalCycles = 45;
  p.initiationInterval = 45;
  std::vector<Violation> all = verifySchedule(p, 100);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(all[1].kind, ViolationKind::SramBounds);
  EXPECT_EQ(all[2].kind, ViolationKind::Latency);
  std::vector<Violation> first = verifySchedule(p, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(verifySchedule(p, 2).size(), 2u);
  // The first violation, with the file name, as an Error.
  try {
    verifyScheduleOrThrow(p);
    ADD_FAILURE() << "verifyScheduleOrThrow did not throw";
  } catch (const Error &e) {
    EXPECT_HAS(e.what(), "test.loom: schedule violation: instr 3");
  }
}

namespace {

TEST(ScheduleVerifier, HostDataLifetimes) {
  // A model input no instr writes must be there from cycle 0 (here the DMA
  // brings in only the weight).
  Program p = sequential();
  p.instrs[0].writes = {1};
  EXPECT_TRUE(verify(p).empty());
  p.buffers[0].liveStart = 5;
  std::vector<Violation> v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Liveness);
  EXPECT_HAS(v.front().message, "holds a model input but is not live from cycle 0");
  EXPECT_EQ(v.front().buffer, 0);
  // A model output a kernel writes must live to the end of the iteration.
  p = sequential();
  p.buffers[4].liveEnd = 49;
  p.instrs[4].duration = 9;
  v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Liveness);
  EXPECT_HAS(v.front().message, "holds a model output but dies before the end of the iteration (50)");
  // A weight no instr writes that is not resident in a stream: its bytes
  // could be reused before the next input reads them.
  p = pipelined();
  for (ProgramBuffer &b : p.buffers)
    if (b.tensor == 1)
      b.resident = false;
  EXPECT_TRUE(has(verify(p), ViolationKind::DataArrival));
}

TEST(ScheduleVerifier, TwoLinkRecordsOfOneWireAreOneResource) {
  // A second record for the wire tile 0 -> tile 1, booked while link 0 is.
  Program p = sequential();
  p.links.push_back({7, 0, 1});
  p.instrs.push_back(instr(5, -1, Unit::MeshLink, 7, 32, 4));
  std::vector<Violation> v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message, "overlap on the mesh link");
  // On the reverse wire it is a different resource.
  p.links.back() = {7, 1, 0};
  p.links[1] = {1, 1, 2};
  EXPECT_FALSE(has(verify(p), ViolationKind::ResourceConflict));
}

} // namespace

//===----------------------------------------------------------------------===//
// Multi-chip programs
//===----------------------------------------------------------------------===//

namespace {

/// The position of instr `id` in p.instrs.
size_t instrPos(const Program &p, int32_t id) {
  for (size_t i = 0; i < p.instrs.size(); ++i)
    if (p.instrs[i].id == id)
      return i;
  ADD_FAILURE() << "no instr " << id;
  return 0;
}

} // namespace

TEST(ScheduleVerifier, TwoChipProgramWithAChipLinkTransferPasses) {
  Program p = twoChipProgram();
  std::vector<Violation> v = verify(p);
  for (const Violation &x : v)
    ADD_FAILURE() << violationKindName(x.kind) << ": " << x.message;
  EXPECT_EQ(p.numTiles(), 4);
  // Per system-wide tile: chip 0 holds x, W and h on tile 0; chip 1 holds
  // h, b and y on tile 2 (its first tile).
  EXPECT_EQ(sramPeakPerTile(p), (std::vector<int64_t>{64, 0, 40, 0}));

  // Tiles are named by chip and chip-local row and column.
  p.instrs[instrPos(p, 5)].start = 39;
  v = verify(p);
  // Before the DMA and the chip link end, and before y's buffer is live.
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].kind, ViolationKind::Dependency);
  EXPECT_EQ(v[1].kind, ViolationKind::Dependency);
  EXPECT_EQ(v[2].kind, ViolationKind::Liveness);
  EXPECT_HAS(v[0].message, "vector unit of tile 2 (chip 1, 0,0)");
  EXPECT_HAS(v[0].message, "dma unit of tile 0 (chip 0, 0,0)");
  EXPECT_HAS(v[1].message, "chip link 4 (chip 0 -> chip 1)");
}

// A chip link instr with a latency: the link is free after its duration,
// but what it writes arrives `latency` later; readers must wait for that,
// the buffer must stay live until then, and the program must last that
// long.
TEST(ScheduleVerifier, ChipLinkLatencyDelaysTheArrivalNotTheLink) {
  Program p = twoChipProgram();
  ProgramInstr &link = p.instrs[instrPos(p, 3)];
  ASSERT_EQ(link.unit, Unit::ChipLink);
  int64_t end = link.end();
  link.duration -= 5;
  link.latency = 5;
  ASSERT_EQ(link.arrival(), end);
  for (const Violation &x : verify(p))
    ADD_FAILURE() << violationKindName(x.kind) << ": " << x.message;
  // Another message may take the link as soon as its duration is over.
  p.instrs.push_back(instr(6, -1, Unit::ChipLink, 4, end - 5, 5));
  for (const Violation &x : verify(p))
    ADD_FAILURE() << violationKindName(x.kind) << ": " << x.message;
  p.instrs.pop_back();
  // A longer latency: the reader now starts before the data arrives.
  p.instrs[instrPos(p, 3)].latency = 6;
  std::vector<Violation> v = verify(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, ViolationKind::Dependency);
  EXPECT_HAS(v.front().message, "delivers at cycle " + std::to_string(end + 1));
}

TEST(ScheduleVerifier, OverlappingInstrsOnAChipLinkConflict) {
  Program p = twoChipProgram();
  p.instrs.push_back(instr(6, -1, Unit::ChipLink, 4, 38, 4));
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_EQ(v.front().instr, 6);
  EXPECT_HAS(v.front().message, "instr 3");
  EXPECT_HAS(v.front().message,
             "overlap on the chip link 4 (chip 0 -> chip 1)");
  // After the transfer, or on the reverse chip link, it is free.
  p.instrs.back().start = 40;
  EXPECT_TRUE(verify(p).empty());
  p.instrs.back().start = 38;
  p.instrs.back().resource = 5;
  EXPECT_TRUE(verify(p).empty());
  // A second record of the chip 0 -> chip 1 bundle is the same resource.
  p.links.push_back(chipLink(7, 0, 1, 2));
  p.instrs.back().resource = 7;
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  // A mesh link of chip 0 is not the chip link, though its first tile is
  // an end of both.
  p.instrs.back().unit = Unit::MeshLink;
  p.instrs.back().resource = 0;
  EXPECT_TRUE(verify(p).empty());
}

TEST(ScheduleVerifier, LinkInstrOnALinkOfTheOtherKindIsRejected) {
  Program p = twoChipProgram();
  // The chip-link transfer names mesh link 0 (tile 0 -> tile 1).
  p.instrs[instrPos(p, 3)].resource = 0;
  std::vector<Violation> v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_EQ(v.front().instr, 3);
  EXPECT_HAS(v.front().message,
             "is a chip-link instr but link 0 is a mesh link");

  // A mesh-link instr naming a chip link.
  p = twoChipProgram();
  p.instrs.push_back(instr(6, -1, Unit::MeshLink, 5, 0, 4));
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().kind, ViolationKind::ResourceConflict);
  EXPECT_HAS(v.front().message,
             "is a mesh-link instr but link 5 is a chip link");

  // A chip link that does not exist.
  p.instrs.back().unit = Unit::ChipLink;
  p.instrs.back().resource = 9;
  v = verify(p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_HAS(v.front().message, "runs on a link that does not exist");
}

TEST(ScheduleVerifier, LargeMultiChipProgramVerifies) {
  Program p = largeTwoChipProgram(/*rounds=*/320);
  ASSERT_GE(p.instrs.size(), 200000u);
  ASSERT_GE(p.buffers.size(), 100000u);
  auto start = std::chrono::steady_clock::now();
  std::vector<Violation> v = verify(p);
  std::vector<int64_t> peak = sramPeakPerTile(p);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  for (const Violation &x : v)
    ADD_FAILURE() << violationKindName(x.kind) << ": " << x.message;
  // Two of a tile's three buffers of a round are live at once.
  EXPECT_EQ(peak, std::vector<int64_t>(128, 128));
  // The time is a figure, not a bound (no timed tests): about 0.2 s in a
  // release build; a quadratic check would take minutes.
  std::printf("verified %zu instrs, %zu buffers in %.3f s\n", p.instrs.size(),
              p.buffers.size(), seconds);

  // Broken in one place, found and named.
  p.instrs[p.instrs.size() / 2].start += 1;
  v = verify(p);
  EXPECT_FALSE(v.empty());
}
