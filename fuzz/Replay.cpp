//===- Replay.cpp - Feed files to a fuzz harness without libFuzzer --------===//
//
//   loom-fuzz-replay-<harness> --seeds DIR ... [--regressions DIR ...]
//
// Links one harness (FuzzOnnx.cpp, ...) into a plain program, so the release
// build's ctest runs every seed and every input that once crashed a harness
// through exactly the code the fuzzer runs. Each argument is a file or a
// folder (its files, sorted, not recursive). Seeds are valid inputs and
// must be accepted; a regression input only has to be answered (accepted or
// refused with one line); a crash or an abort fails the test by itself.
// Exits 1 if a seed is refused or if there are no seeds at all.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// The files `arg` names: itself, or a folder's regular files, sorted.
std::vector<fs::path> filesOf(const std::string &arg) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    for (const auto &entry : fs::directory_iterator(arg, ec))
      if (entry.is_regular_file())
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(arg, ec)) {
    files.push_back(arg);
  }
  return files;
}

} // namespace

int main(int argc, char **argv) {
  bool seeds = true;
  int numSeeds = 0, numRegressions = 0, refusedSeeds = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seeds" || arg == "--regressions") {
      seeds = arg == "--seeds";
      continue;
    }
    for (const fs::path &file : filesOf(arg)) {
      std::ifstream in(file, std::ios::binary);
      std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "%s: cannot read\n", file.c_str());
        return 1;
      }
      bool accepted = loom::fuzz::runOne(bytes.data(), bytes.size());
      std::printf("%s %s: %s\n", seeds ? "seed" : "regression", file.c_str(),
                  accepted ? "accepted" : "refused");
      if (seeds) {
        ++numSeeds;
        if (!accepted) {
          ++refusedSeeds;
          std::fprintf(stderr, "%s: a seed must be a valid input\n",
                       file.c_str());
        }
      } else {
        ++numRegressions;
      }
    }
  }
  std::printf("%d seeds (%d refused), %d regression inputs replayed\n",
              numSeeds, refusedSeeds, numRegressions);
  if (numSeeds == 0) {
    std::fprintf(stderr, "no seed files given\n");
    return 1;
  }
  return refusedSeeds ? 1 : 0;
}
