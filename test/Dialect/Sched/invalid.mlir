// Tests that each verifier in SchedOps.cpp rejects what it should.
// RUN: %loom-opt --split-input-file --verify-diagnostics %s

// Tests that the unit is one of the four kinds of resource.
func.func @bad_unit() {
  // expected-error @+1 {{unit must be matrix, vector, dma, link or chip_link, got 'gpu'}}
  sched.instr 0 "gpu"[0] start 0 duration 1 kernel 0 bytes 0 deps [] reads [] writes []
  return
}

// -----

// Tests that a chip link's latency cannot be negative.
func.func @negative_latency() {
  // expected-error @+1 {{latency must be non-negative}}
  sched.instr 0 "chip_link"[0] start 0 duration 1 latency -1 kernel -1 bytes 4 deps [] reads [] writes []
  return
}

// -----

// Tests that a start cycle cannot be negative.
func.func @negative_start() {
  // expected-error @+1 {{resource, start, duration and bytes must be non-negative}}
  sched.instr 0 "matrix"[0] start -1 duration 1 kernel 0 bytes 0 deps [] reads [] writes []
  return
}

// -----

// Tests that a buffer's live range cannot end before it starts.
func.func @backwards_live_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{live range [10, 5) ends before it starts}}
  sched.buffer 0 %x tile 0 offset 0 size 16 live 10 to 5 : tensor<4xf32>
  return
}
