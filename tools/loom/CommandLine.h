//===- CommandLine.h - The loom driver's commands and their flags -*- C++ -*-===//
//
// One table of every `loom` command and the flags it takes, with a line of
// help each. The parsers of the commands read their flags from it, so
// `loom COMMAND --help`, the did-you-mean of an unknown flag and what a
// command accepts cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_LOOM_COMMANDLINE_H
#define LOOM_TOOLS_LOOM_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace loom::cli {

/// One flag of a command: `--NAME=VALUE`, or a switch `--NAME` when
/// `value` is empty. The flag "o" is spelled `-o`.
struct Flag {
  std::string name;
  /// What the value is (`N`, `FILE.json`, `NAME=N`); empty for a switch.
  std::string value;
  std::string help;
  /// Given more than once, each value counts (--input, --dim, --vary).
  bool repeats = false;
  bool isSwitch() const { return value.empty(); }
  /// `--name` or `-o`.
  std::string spelling() const;
};

struct Command {
  std::string name;
  /// What follows `loom NAME` in the usage line, flags left out.
  std::string synopsis;
  /// One sentence: what the command does.
  std::string summary;
  std::vector<Flag> flags;
  const Flag *flag(llvm::StringRef name) const;
};

/// Every command, in the order `loom --help` lists them.
const std::vector<Command> &commands();
/// The command named `name`, or null.
const Command *findCommand(llvm::StringRef name);

/// `loom --help`: one usage line per command.
std::string usageText();
/// `loom COMMAND --help`: the usage line, the summary and each flag on a
/// line of its own.
std::string helpText(const Command &command);
/// `loom --version`: Loom's version and commit, and the MLIR it was built
/// with.
std::string versionText();

/// " (did you mean 'X'?)" for the candidate closest to `given` by edit
/// distance, when one is close enough to be a typo of it; "" otherwise.
std::string didYouMean(llvm::StringRef given,
                       llvm::ArrayRef<std::string> candidates);

/// The problem with `--KEY` (or `-o`) given to `command` when it takes no
/// such flag: "unknown option 'ARG' for 'loom NAME'", with a did-you-mean.
std::string unknownFlag(const Command &command, llvm::StringRef arg);

/// Whether the arguments ask for help (`--help` or `-h`).
bool wantsHelp(int argc, char **argv);

} // namespace loom::cli

#endif // LOOM_TOOLS_LOOM_COMMANDLINE_H
