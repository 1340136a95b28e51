//===- FuzzProgram.cpp - Fuzz the program loader and schedule check ------===//
//
// Bytes -> rt::Program::fromBytes (the FlatBuffers verifier and the loader's
// own contract checks), then the simulator's timing-only run twice: with
// the schedule verifier off and hazards counted (the event-by-event replay
// on a program nothing has proven), and as `loom run` does (the verifier,
// then the replay). All report a bad program with loom::rt::Error; any other
// exception, or a crash, is a failure.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "loom/Runtime/Program.h"
#include "loom/Runtime/Simulator.h"

bool loom::fuzz::runOne(const uint8_t *data, size_t size) {
  try {
    // The checksum would refuse nearly every mutation before the checks
    // behind it; the fuzzer checks those (and a unit test the checksum).
    rt::LoadOptions raw;
    raw.checkIntegrity = false;
    rt::Program program = rt::Program::fromBytes(data, size, "fuzz.loom", raw);
    try {
      rt::SimOptions unverified;
      unverified.verify = false;
      unverified.stopOnHazard = false;
      rt::SimStats s = rt::Simulator(program, unverified).runTiming().stats;
      if (s.toJson().empty() || s.toText().empty())
        std::abort();
    } catch (const rt::Error &e) {
      checkErrorLine(e.what(), "fuzz.loom");
    }
    rt::Simulator simulator(program);
    rt::SimResult result = simulator.runTiming();
    if (result.stats.toJson().empty() || result.stats.toText().empty())
      std::abort();
    return true;
  } catch (const rt::Error &e) {
    checkErrorLine(e.what(), "fuzz.loom");
    return false;
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::runOne(data, size);
  return 0;
}
