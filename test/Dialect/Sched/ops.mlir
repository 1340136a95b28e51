// Tests that every sched op prints in a form that parses back to the same
// module: the output of a round trip is parsed again and checked.
// RUN: %loom-opt %s | %loom-opt | FileCheck %s

// CHECK-LABEL: func.func @scheduled(
// CHECK-NEXT: sched.buffer 0 %[[X:.*]] tile 0 offset 0 size 16 live 0 to 12 : tensor<4xf32>
// CHECK-NEXT: sched.instr 0 "vector"[0] start 0 duration 12 kernel 0 bytes 0 deps [] reads [0] writes [1]
// CHECK-NEXT: sched.instr 1 "link"[3] start 12 duration 3 kernel -1 bytes 16 deps [0] reads [] writes []
// CHECK-NEXT: sched.instr 2 "chip_link"[0] start 15 duration 2 latency 1000 kernel -1 bytes 16 deps [1] reads [] writes []
// CHECK-NEXT: sched.summary {roofline_cycles = 10 : i64, sram_lower_bound_bytes = 16 : i64, sram_peak_bytes = 16 : i64, sram_peak_per_tile = array<i64: 16, 0>, total_cycles = 15 : i64}
func.func @scheduled(%x: tensor<4xf32>) -> tensor<4xf32> {
  sched.buffer 0 %x tile 0 offset 0 size 16 live 0 to 12 : tensor<4xf32>
  sched.instr 0 "vector"[0] start 0 duration 12 kernel 0 bytes 0 deps [] reads [0] writes [1]
  sched.instr 1 "link"[3] start 12 duration 3 kernel -1 bytes 16 deps [0] reads [] writes []
  sched.instr 2 "chip_link"[0] start 15 duration 2 latency 1000 kernel -1 bytes 16 deps [1] reads [] writes []
  sched.summary {roofline_cycles = 10 : i64, sram_lower_bound_bytes = 16 : i64, sram_peak_bytes = 16 : i64, sram_peak_per_tile = array<i64: 16, 0>, total_cycles = 15 : i64}
  return %x : tensor<4xf32>
}
