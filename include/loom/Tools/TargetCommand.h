//===- TargetCommand.h - `loom target` subcommand ---------------*- C++ -*-===//
//
// `loom target list` and `loom target show NAME|FILE [--json]`.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_TARGETCOMMAND_H
#define LOOM_TOOLS_TARGETCOMMAND_H

namespace loom {

/// Runs `loom target ...`; argv[0] is "target". Returns the exit code: 0 on
/// success, 1 on a user error after printing one line
/// "loom: <file>: <json.path>: <problem>" to stderr.
int runTargetCommand(int argc, char **argv);

} // namespace loom

#endif // LOOM_TOOLS_TARGETCOMMAND_H
