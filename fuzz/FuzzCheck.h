//===- FuzzCheck.h - What every fuzz harness checks -------------*- C++ -*-===//
//
// Each harness in fuzz/ feeds one input to one of Loom's readers and checks
// the answer: either the input is accepted, or it is refused with one
// non-empty line that starts with the name the input was given ("fuzz.onnx:
// ..."), the form `loom` prints. Anything else (a crash, a sanitizer report,
// an exception other than the reader's own, an empty or multi-line message)
// aborts, which libFuzzer and the replay test report as a failure.
//
// A harness defines loom::fuzz::runOne, which returns true if the input was
// accepted, and LLVMFuzzerTestOneInput, which calls it. fuzz/Replay.cpp
// calls runOne on files.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_FUZZ_FUZZCHECK_H
#define LOOM_FUZZ_FUZZCHECK_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace loom::fuzz {

/// Runs the harness on one input; true if the reader accepted it.
bool runOne(const uint8_t *data, size_t size);

/// Aborts unless `error` is one non-empty line starting with "<name>: ".
inline void checkErrorLine(const std::string &error, const std::string &name) {
  const char *problem = nullptr;
  if (error.empty())
    problem = "the error message is empty";
  else if (error.find('\n') != std::string::npos ||
           error.find('\r') != std::string::npos)
    problem = "the error message is not one line";
  else if (error.rfind(name + ": ", 0) != 0)
    problem = "the error message does not start with the input's name";
  if (!problem)
    return;
  std::fprintf(stderr, "loom fuzz: %s: <<<%s>>>\n", problem, error.c_str());
  std::abort();
}

} // namespace loom::fuzz

#endif // LOOM_FUZZ_FUZZCHECK_H
