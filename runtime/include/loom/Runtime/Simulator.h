//===- Simulator.h - Run and check a loaded Loom program --------*- C++ -*-===//
//
// The simulator device. Both modes first check the program's static
// schedule, stopping with loom::rt::Error at the first problem, named by
// instruction, buffer and kernel (with the kernel's ONNX nodes):
//  1. the schedule verifier (ScheduleVerifier.h) proves the scheduler's
//     lists consistent and its durations at least the ISA's timing rules
//     (SimOptions::verify turns it off);
//  2. the replay (Replay.h) runs the machine event by event: each instr
//     issues at its scheduled start and takes its rule's cycles; an operand
//     not there at the start, a unit or link still busy, a duration shorter
//     than the rule, or live SRAM bytes overwritten is a hazard (stop at the
//     first, or count them: SimOptions::stopOnHazard).
// The statistics give, per kernel, the cost model's estimate, the scheduled
// cycles and the simulated (replayed) cycles.
//
// Functional mode then runs the tile programs (TileRun.h): every tile
// computes its part of every kernel from the buffers in its SRAM, transfers
// copy bytes between tiles and chips, and the outputs are gathered from
// their buffers. Timing mode does no arithmetic, allocates no tensor and
// touches no weights: it costs time near-linear in the instrs, whatever the
// model's size.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SIMULATOR_H
#define LOOM_RUNTIME_SIMULATOR_H

#include "loom/Runtime/Program.h"
#include "loom/Runtime/Replay.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loom::rt {

struct UnitStats {
  Unit unit = Unit::Matrix;
  /// Units of this kind: one per tile of every chip (matrix, vector, dma),
  /// or the number of mesh links or chip links.
  int64_t count = 0;
  int64_t busyCycles = 0;
  /// busyCycles / (II * count) (the steady state: II is totalCycles unless
  /// pipelined); 0 when either is 0.
  double utilisation = 0;
};

struct KernelStats {
  int32_t id = 0;
  std::string name;
  std::vector<std::string> onnxNodes;
  /// First instr start to last instr end ([0, 0) if it has no instrs).
  int64_t startCycle = 0, endCycle = 0;
  int64_t cycles() const { return endCycle - startCycle; }
  /// Sum of its instrs' durations, over all units.
  int64_t busyCycles = 0;
  int64_t numInstrs = 0;
  /// The cost model's estimate, from the program.
  int64_t estimatedCycles = 0;
  /// Simulated: first instr start to the last end of its instrs in the
  /// replay (Replay.h: each issues at its scheduled start and takes its
  /// timing rule's cycles, re-derived from the program; at most cycles() in
  /// a program without hazards). Scheduled durations for a program built in
  /// code without a chip.
  int64_t simulatedCycles = 0;
  /// Hazards the replay found at its instrs (counted with
  /// SimOptions::stopOnHazard off; a run stops at the first otherwise).
  int64_t hazards = 0;
};

/// A hazard of the replay, named for reports.
struct HazardRecord {
  Hazard hazard;
  int32_t kernel = -1;
  /// describeHazard's line.
  std::string message;
};

struct LinkStats {
  int32_t id = 0;
  int32_t fromTile = 0, toTile = 0;
  int64_t bytes = 0;
  int64_t busyCycles = 0;
  /// For a chip link: the chips it joins.
  int32_t fromChip = 0, toChip = 0;
};

/// One chip's tile units (matrix, vector and DMA of each of its tiles).
struct ChipStats {
  int32_t chip = 0;
  int64_t busyCycles = 0;
  /// busyCycles / (II * tiles per chip * 3).
  double utilisation = 0;
  /// Its share of the busy cycles of all chips' tile units.
  double share = 0;
};

struct SimStats {
  std::string model, target;
  double clockHz = 0;
  /// The end of the last instr.
  int64_t totalCycles = 0;
  /// The last arrival in the replay (each instr at its scheduled start for
  /// its timing rule's cycles).
  int64_t simulatedTotalCycles = 0;
  /// Hazards of the replay: all of them, per kind (HazardKind order), and
  /// the first kMaxHazardRecords in cycle order.
  int64_t hazards = 0;
  int64_t hazardsByKind[kNumHazardKinds] = {};
  static constexpr size_t kMaxHazardRecords = 1000;
  std::vector<HazardRecord> hazardRecords;
  /// What the program says (total_cycles, sram_peak_bytes); reported beside
  /// the simulated figures.
  int64_t declaredTotalCycles = 0, declaredSramPeakBytes = 0;
  int64_t rooflineCycles = 0;
  double seconds = 0;
  /// How kernels share tiles, and the cycles between consecutive inputs of
  /// a stream (totalCycles unless pipelined).
  std::string mapping;
  int32_t pipelineGroups = 1;
  int64_t initiationInterval = 0;
  /// A stream of `stream` inputs takes (stream - 1) * II + totalCycles
  /// cycles: fill, steady state and drain.
  int64_t stream = 1;
  int64_t streamCycles = 0;
  void setStream(int64_t inputs);
  int64_t numInstrs = 0;
  /// Matrix, Vector, Dma, MeshLink, ChipLink in that order.
  std::vector<UnitStats> units;
  /// Chips of the program; per chip (indexed by chip) when there are
  /// several (empty for one chip).
  int32_t chips = 1;
  std::vector<ChipStats> chipStats;
  /// Most bytes live at once, per tile (indexed by tile) and over all tiles.
  std::vector<int64_t> sramPeakPerTile;
  int64_t sramPeakBytes = 0;
  int64_t sramBytesPerTile = 0;
  /// Per mesh link, in program order.
  std::vector<LinkStats> links;
  /// Bytes over the busiest mesh link.
  int64_t maxLinkBytes = 0;
  /// Per chip link, in program order, and the bytes over the busiest.
  std::vector<LinkStats> chipLinks;
  int64_t maxChipLinkBytes = 0;
  /// Bytes moved by DMA instrs, all tiles.
  int64_t dmaBytes = 0;
  /// Per kernel, in program (execution) order.
  std::vector<KernelStats> kernels;

  /// A human-readable report (one figure per line, kernels in a table).
  /// A list longer than kTextRows (links, chip links, chips, kernels) shows
  /// its busiest kTextRows, sorted, and says how many it leaves out, unless
  /// `verbose`.
  std::string toText(bool verbose = false) const;
  static constexpr size_t kTextRows = 10;
  /// The same as one JSON object (deterministic key order).
  std::string toJson() const;
};

/// Named output tensors of a functional run, in the model's output order.
struct SimOutput {
  std::string name;
  int32_t tensorId = 0;
  Tensor value;
};

struct SimResult {
  SimStats stats;
  /// Empty in timing mode.
  std::vector<SimOutput> outputs;
};

/// Hooks into functional execution, for `loom check`.
struct FunctionalHooks {
  /// Called after each kernel with the values of its outputs (by tensor id)
  /// that are still held (outputs nobody reads are dropped at once).
  std::function<void(const ProgramKernel &,
                     const std::map<int32_t, Tensor> &)>
      afterKernel;
  /// Debugging aid: add 1 to every float output of this kernel id, to show
  /// that a divergence is found and attributed to the right kernel.
  int32_t corruptKernel = -1;
  /// Fault injection: the instr of this id does nothing (its DMA copies no
  /// bytes, its kernel part computes nothing), so a dropped halo or
  /// partial-sum transfer shows as a wrong answer at the kernel that needed
  /// it (loom check --debug-drop-instr).
  int32_t dropInstr = -1;
};

struct SimOptions {
  /// Run the schedule verifier (ScheduleVerifier.h) before the replay; off
  /// (`loom run --no-verify`), the replay's hazards are the only check.
  bool verify = true;
  /// Stop at the first hazard of the replay (Error naming the instr, its
  /// kernel and ONNX nodes, and the cycles missing); off (`--hazards=count`)
  /// the run goes on and the statistics count them. The values of a run
  /// with hazards are computed as if every instr waited for its operands:
  /// silicon would compute garbage.
  bool stopOnHazard = true;
};

class Simulator {
public:
  /// The program must outlive the simulator.
  explicit Simulator(const Program &program, SimOptions options = {});
  /// A temporary program would dangle.
  explicit Simulator(Program &&) = delete;

  /// Verifies the schedule (unless options say not to), replays it event by
  /// event (Replay.h) and computes statistics; no arithmetic, no weights
  /// touched. Throws Error on a schedule violation or, when stopping on
  /// hazards, on the first hazard.
  SimStats checkSchedule() const;

  /// Timing mode: checkSchedule() in a result without outputs.
  SimResult runTiming() const;

  /// Functional mode: checks the schedule, then computes the outputs.
  /// `inputs` maps the model's input names (the input tensors' names) to
  /// values whose dtype and shape must match the program's. Unknown names
  /// and missing inputs are errors.
  SimResult runFunctional(const std::map<std::string, Tensor> &inputs,
                          const FunctionalHooks &hooks = {}) const;
  /// The same with inputs in the model's input order.
  SimResult runFunctional(const std::vector<Tensor> &inputs,
                          const FunctionalHooks &hooks = {}) const;

  /// The Chrome/Perfetto trace of the schedule (JSON object with a
  /// "traceEvents" array): pid = chip (0 for a single chip), one tid per
  /// tile unit (tile * 3 + {matrix 0, vector 1, dma 2}, tile system-wide)
  /// and per mesh link (3 * tiles + link position) in the chip of its
  /// tiles; chip links are tracks "chip A -> B" (tid 3 * tiles + link
  /// position) of their own process (pid = chips, "chip links");
  /// 'X' events named by kernel with args
  /// {onnx_nodes, kernel, bytes, instr, unit}, ts/dur in microseconds at the
  /// program's clock, and 'M' thread_name/process_name events naming each
  /// track. A transfer's events are named "transfer A -> B" by the kernels
  /// on both ends (args from_kernels, to_kernels) and carry both kernels'
  /// ONNX nodes; flow events ('s'/'f', cat "flow") link each transfer DMA
  /// instr to the kernel instr that produced its data and the one that
  /// reads it. Deterministic.
  /// With `iterations` > 1, the first that many inputs of a stream, each
  /// shifted by the initiation interval, their events' args carrying
  /// "iteration".
  std::string traceJson(int64_t iterations = 1) const;

  /// The names of the model's inputs, in order.
  std::vector<std::string> inputNames() const;

private:
  const Program &program_;
  SimOptions options_;
};

/// Writes `text` to `path`; throws Error "<path>: cannot write: ..." on
/// failure.
void writeTextFile(const std::string &path, const std::string &text);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SIMULATOR_H
