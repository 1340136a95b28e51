//===- FuzzNpy.cpp - Fuzz the .npy reader ---------------------------------===//
//
// Bytes -> rt::readNpyBytes, then every element of an accepted tensor read
// as a double (the dtype conversions). The reader reports a bad file with
// loom::rt::Error; any other exception, or a crash, is a failure.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "loom/Runtime/TensorIO.h"

#include <cmath>

bool loom::fuzz::runOne(const uint8_t *data, size_t size) {
  try {
    rt::Tensor t = rt::readNpyBytes(data, size, "fuzz.npy");
    if (t.byteSize() > size)
      std::abort(); // The data must have come from the input.
    double sum = 0;
    for (int64_t i = 0; i < t.numElements(); ++i)
      sum += std::isfinite(t.getDouble(i)) ? 1 : 0;
    return sum >= 0;
  } catch (const rt::Error &e) {
    checkErrorLine(e.what(), "fuzz.npy");
    return false;
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::runOne(data, size);
  return 0;
}
