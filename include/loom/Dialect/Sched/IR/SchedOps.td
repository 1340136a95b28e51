//===- SchedOps.td - The sched dialect ---------------------*- tablegen -*-===//
//
// The static schedule: every instruction on every resource with its exact
// start cycle, and every SRAM buffer with its tile, offset and lifetime.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SCHED_OPS
#define LOOM_SCHED_OPS

include "mlir/IR/OpBase.td"

/// A 64-bit signless integer attribute read back as a signed int64_t (I64Attr
/// returns uint64_t, which would turn -1 into 2^64 - 1).
def Sched_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
    "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

def Sched_Dialect : Dialect {
  let name = "sched";
  let cppNamespace = "::loom::sched";
  let summary = "Per-resource instructions with start cycles, SRAM buffers";
  let description = [{
    The `sched` dialect annotates a spatial-form function with its timing and
    memory. The spatial ops stay: they say what is computed and moved; the
    sched ops beside them say when and where.

    - `sched.instr`: one instruction on one resource (`unit` "matrix",
      "vector" or "dma" of tile `resource`, or mesh link `resource` for
      "link"), running over cycles [start, start + duration). `kernel` is
      the spatial kernel's id, or -1 for a transfer; `deps` are instruction
      ids that must have finished; `reads` and `writes` are buffer ids;
      `bytes` is what a DMA or link instruction moves.
    - `sched.buffer`: the shard of a tensor held by one tile's SRAM at
      [offset, offset + size), live over cycles [live_start, live_end).
    - `sched.summary`: the makespan, the SRAM peak (the highest byte any
      tile's allocation reaches) against its lower bound (the most bytes
      live at once on a tile), and the roofline bound.

    Nothing is left to run-time arbitration: the schedule is the timing.
  }];
}

class Sched_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sched_Dialect, mnemonic, traits>;

def Sched_InstrOp : Sched_Op<"instr"> {
  let summary = "One instruction on one resource with an exact start cycle";
  let description = [{
    Example:
    ```mlir
    sched.instr 4 "matrix" [0] start 12 duration 40 kernel 1 bytes 0 deps [2, 3] reads [5, 6] writes [7]
    sched.instr 9 "chip_link" [3] start 60 duration 8 latency 1000 kernel -1 bytes 1024 deps [4] reads [7] writes [8]
    ```

    The resource is busy for `duration` cycles from `start`. A chip link's
    message then takes `latency` more cycles to arrive (the link carries
    other messages meanwhile): what the instruction writes is ready at
    start + duration + latency, and instructions that depend on it start
    no earlier.
  }];
  let arguments = (ins Sched_I64Attr:$id, StrAttr:$unit, Sched_I64Attr:$resource,
                       Sched_I64Attr:$start, Sched_I64Attr:$duration, Sched_I64Attr:$kernel,
                       Sched_I64Attr:$bytes, DenseI64ArrayAttr:$deps,
                       DenseI64ArrayAttr:$reads, DenseI64ArrayAttr:$writes,
                       OptionalAttr<Sched_I64Attr>:$latency);
  let assemblyFormat = [{
    $id $unit `[` $resource `]` `start` $start `duration` $duration
    (`latency` $latency^)?
    `kernel` $kernel `bytes` $bytes `deps` $deps `reads` $reads
    `writes` $writes attr-dict
  }];
  let hasVerifier = 1;
}

def Sched_BufferOp : Sched_Op<"buffer"> {
  let summary = "A tensor's shard in one tile's SRAM over a live range";
  let description = [{
    Example:
    ```mlir
    sched.buffer 3 %w tile 0 offset 1024 size 512 live 0 to 900 : tensor<8x16xf32>
    sched.buffer 4 %a tile 1 offset 0 size 256 live 40 to 700 {copies = 2 : i64} : tensor<8x8xf32>
    ```
    In a software-pipelined schedule (`sched.summary`'s
    `initiation_interval` below its `total_cycles`) iteration k of the
    stream uses slot `k mod copies`, at `offset + (k mod copies) * size`;
    `resident` buffers (weights) have one slot shared by every iteration.
    `box` (lo of every dimension, then hi) is the part of the tensor the
    buffer holds, elements `[lo, hi)`; absent, it holds the whole tensor.
    Boxes of one tensor on different tiles may overlap: a halo or a
    multicast operand.
  }];
  let arguments = (ins Sched_I64Attr:$id, AnyRankedTensor:$value, Sched_I64Attr:$tile,
                       Sched_I64Attr:$offset, Sched_I64Attr:$size, Sched_I64Attr:$live_start,
                       Sched_I64Attr:$live_end,
                       DefaultValuedAttr<Sched_I64Attr, "1">:$copies,
                       UnitAttr:$resident,
                       OptionalAttr<DenseI64ArrayAttr>:$box);
  let assemblyFormat = [{
    $id $value `tile` $tile `offset` $offset `size` $size `live` $live_start
    `to` $live_end attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def Sched_SummaryOp : Sched_Op<"summary"> {
  let summary = "Totals of a schedule";
  let description = [{
    `sram_peak_per_tile` lists, per tile, the highest byte its allocation
    reaches; `sram_peak_bytes` is their maximum and `sram_lower_bound_bytes`
    the most bytes live at once on any tile. `roofline_cycles` is the cost
    model's lower bound for the whole graph on the chip. `mapping` says how
    kernels share tiles ("sequential", "pipelined" or "hybrid", with
    `pipeline_groups` groups); `initiation_interval` is the cycles between
    consecutive inputs of a stream (0: not pipelined, one input at a time).

    Example:
    ```mlir
    sched.summary {roofline_cycles = 800 : i64, sram_lower_bound_bytes = 4096 : i64, sram_peak_bytes = 4096 : i64, sram_peak_per_tile = array<i64: 4096>, total_cycles = 1000 : i64}
    ```
  }];
  let arguments = (ins Sched_I64Attr:$total_cycles, Sched_I64Attr:$sram_peak_bytes,
                       Sched_I64Attr:$sram_lower_bound_bytes,
                       DenseI64ArrayAttr:$sram_peak_per_tile,
                       Sched_I64Attr:$roofline_cycles,
                       DefaultValuedStrAttr<StrAttr, "sequential">:$mapping,
                       DefaultValuedAttr<Sched_I64Attr, "1">:$pipeline_groups,
                       DefaultValuedAttr<Sched_I64Attr, "0">:$initiation_interval);
  let assemblyFormat = "attr-dict";
}

#endif // LOOM_SCHED_OPS
