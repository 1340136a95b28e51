//===- CommandLine.cpp - The loom driver's commands and their flags -------===//
#include "CommandLine.h"

#include "loom/GitCommit.inc"

#include "llvm/Config/llvm-config.h"

#include <algorithm>

namespace loom::cli {

std::string Flag::spelling() const {
  return name == "o" ? "-o" : "--" + name;
}

const Flag *Command::flag(llvm::StringRef n) const {
  for (const Flag &f : flags)
    if (f.name == n)
      return &f;
  return nullptr;
}

namespace {

// Flags several commands share, worded once.
Flag target() {
  return {"target", "NAME|FILE.json",
          "the chip: a preset (loom target list) or a target file; default "
          "tiny"};
}
Flag precision() {
  return {"precision", "fp32|bf16|fp16|fp8|int8",
          "the kernels' precision policy (docs/numerics.md); default the "
          "target's default_precision, else fp32"};
}
Flag calibrate() {
  return {"calibrate", "DIR",
          "with --precision=int8: fixes each matmul and conv operand's scale "
          "from the .npy samples in DIR (docs/numerics.md)"};
}
Flag kvPrecision() {
  return {"kv-precision", "fp32|bf16|fp16|fp8",
          "an LLM config.json's KV cache storage format; default fp32"};
}
Flag dim() {
  return {"dim", "NAME=N",
          "binds a dynamic dimension of the model (repeat for each)", true};
}
Flag input(const char *what) {
  return {"input", "NAME=FILE.npy",
          std::string("binds the model input NAME to a .npy or .pb file") +
              what + " (repeat for each)",
          true};
}
Flag bind() {
  return {"bind", "NAME=FILE.npy",
          "fixes input NAME to a .npy or .pb file's value at compile time; "
          "the program has no input NAME (repeat for each)",
          true};
}
Flag mapping() {
  return {"mapping", "auto|sequential|pipelined|hybrid",
          "how kernels share tiles; auto schedules each and keeps the best"};
}
Flag objective() {
  return {"objective", "latency|throughput",
          "what auto mapping and the partition optimise; default latency"};
}
Flag chips() {
  return {"chips", "N", "partitions the model over N chips; default 1"};
}
Flag tp() { return {"tp", "N", "tensor-parallel degree across chips"}; }
Flag pp() { return {"pp", "N", "pipeline-parallel stages across chips"}; }
Flag json(const char *what) {
  return {"json", "", std::string("prints ") + what +
                          " as one JSON object (docs/schema/)"};
}
Flag verbose(const char *what) { return {"verbose", "", what}; }

std::vector<Command> makeCommands() {
  std::vector<Command> c;
  c.push_back(
      {"compile",
       "MODEL.onnx|CONFIG.json -o OUT.loom | MODEL --emit=graph|spatial|sched",
       "Compiles a model for a target into a program file, or prints an IR "
       "level.",
       {{"o", "OUT.loom", "the program file to write (with --emit: the IR)"},
        target(),
        {"emit", "graph|spatial|sched",
         "prints that IR level instead of writing a program"},
        precision(),
        calibrate(),
        kvPrecision(),
        dim(),
        bind(),
        mapping(),
        objective(),
        {"max-ii", "CYCLES", "fails unless a new input can start this often"},
        chips(),
        tp(),
        pp(),
        {"system-chips", "N",
         "the chips are the first of a system of N (links get its share)"},
        {"floorplan", "FILE.svg", "writes the program's floorplan picture"},
        {"report", "FILE.html", "writes the program's report page"},
        {"no-verify", "", "skips the independent schedule verifier"},
        {"keep-weights", "", "with --emit: prints large weights in full"},
        {"debug-info", "",
         "with --emit: prints locations (the ONNX node names), so an edited "
         "module read back still names them"},
        json("the summary"),
        verbose("prints the whole mapping report (default: a summary across "
                "chips)")}});
  c.push_back({"run",
               "OUT.loom --input NAME=FILE.npy ... --output-dir DIR",
               "Runs a program file on the simulator and prints its "
               "statistics.",
               {input(""),
                {"output-dir", "DIR", "writes each output to DIR/NAME.npy"},
                {"timing-only", "",
                 "simulates the timing without values (no inputs needed)"},
                {"trace", "FILE.json", "writes a Chrome/Perfetto trace"},
                {"stats", "FILE.json", "writes the statistics as JSON"},
                {"stream", "N", "reports a stream of N inputs (fill and drain)"},
                {"report", "FILE.html", "writes the report page"},
                {"no-verify", "",
                 "skips the schedule verifier; the replay still checks"},
                {"hazards", "stop|count",
                 "at a hazard of the replay: stop (default) or count them "
                 "and run on"},
                {"ignore-checksum", "",
                 "runs a file edited by hand (its checksum no longer "
                 "matches)"},
                json("the statistics"),
                verbose("lists every link, chip and kernel (default: the "
                        "busiest 10 of each)")}});
  c.push_back({"check", "MODEL.onnx|CONFIG.json",
               "Compiles, simulates and compares every output with the "
               "golden reference.",
               {target(),
                input(", else a synthetic value"),
                dim(),
                bind(),
                precision(),
                calibrate(),
                kvPrecision(),
                mapping(),
                objective(),
                chips(),
                tp(),
                pp(),
                {"rtol", "X", "relative tolerance (fp32 default 1e-3)"},
                {"atol", "X", "absolute tolerance (fp32 default 1e-4)"},
                {"scale-tol", "X",
                 "tolerance as a fraction of each output's largest value"},
                {"debug-corrupt-kernel", "ID",
                 "corrupts kernel ID's output (tests the divergence search)"},
                {"debug-drop-instr", "ID",
                 "drops instruction ID (tests the divergence search)"},
                json("the comparison")}});
  c.push_back({"eval", "MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR",
               "Runs the golden reference evaluator alone.",
               {input(""),
                {"output-dir", "DIR", "writes each output to DIR/NAME.npy"},
                dim()}});
  c.push_back(
      {"plan",
       "--model=CONFIG.json --system=NAME|FILE.json",
       "Plans the chips, parallelism and batch an LLM needs "
       "(docs/planner.md).",
       {{"model", "CONFIG.json", "a Hugging Face style LLM config"},
        {"system", "NAME|FILE.json", "the system (decode, when disaggregated)"},
        {"prefill-system", "NAME|FILE.json",
         "plans disaggregated serving with prefill on this system"},
        {"input-len", "N", "prompt tokens; default 1024"},
        {"output-len", "N", "generated tokens; default 256"},
        {"concurrency", "N", "users decoding at once"},
        {"rate", "R", "requests per second (instead of --concurrency)"},
        {"weights", "FMT|FMT:SHARE,...",
         "weight format, or a mix of formats; default fp8"},
        {"precision", "FMT", "short form of --weights"},
        {"kv-precision", "FMT", "KV cache format; default fp8"},
        {"act-precision", "FMT", "activation format; default bf16"},
        {"ttft", "MS", "time to first token bound"},
        {"tpot", "MS", "time per output token bound"},
        {"scenario", "offline|server", "how requests arrive; default offline"},
        {"max-chips", "N",
         "the most chips a plan may take; default the system's size where "
         "it names one (lpx-rack: 256), else 10000"},
        {"max-num-tokens", "N", "the serving engine's token budget per step"},
        {"top", "N", "plans to list; default 5"},
        {"tp", "N", "fixes the tensor-parallel degree"},
        {"pp", "N", "fixes the pipeline-parallel degree"},
        {"batch", "N", "fixes the batch"},
        {"threads", "N", "worker threads of the search; default the cores"},
        {"no-compile", "", "prices layers with the cost model alone"},
        {"pareto", "",
         "prints the Pareto front of tokens/s per user against tokens/s per "
         "chip"},
        {"pareto-html", "FILE.html",
         "writes the Pareto front's picture (implies --pareto)"},
        {"json", "", "prints the plans as JSON (docs/planner.md)"}}});
  c.push_back(
      {"sweep", "--model=M1.onnx,M2.json --target=BASE --vary=FIELD=v1,v2",
       "Compiles models over a grid of target variants (docs/codesign.md).",
       {{"model", "M1,M2[@CHIPS],...", "the models (MODEL@N: on N chips)"},
        {"target", "NAME|FILE.json", "the base target; default tiny"},
        {"vary", "FIELD=v1,v2,...", "a target field and its values (repeat)",
         true},
        {"objective", "latency|throughput|perf-per-watt",
         "what the sweep ranks by; default throughput"},
        {"out", "DIR", "writes results.json and sweep.html; default sweep"},
        {"jobs", "N", "compiles at once; default the cores"},
        {"chips", "N", "chips each model is compiled for; default 1"},
        precision(),
        kvPrecision(),
        {"no-sensitivity", "", "skips the one-field-at-a-time sensitivity"}}});
  c.push_back({"ops", "[--json]",
               "Lists the ONNX operators the importer reads, the opsets it "
               "reads them at and what it refuses of them (docs/ops.md).",
               {json("the operators")}});
  c.push_back({"target", "list | show NAME|FILE.json [--json]",
               "Lists the target presets or shows one target.",
               {{"json", "", "with show: prints the target as JSON"}}});
  return c;
}

} // namespace

const std::vector<Command> &commands() {
  static const std::vector<Command> all = makeCommands();
  return all;
}

const Command *findCommand(llvm::StringRef name) {
  for (const Command &c : commands())
    if (c.name == name)
      return &c;
  return nullptr;
}

std::string usageText() {
  std::string s = "usage: loom COMMAND [FLAGS]   (loom COMMAND --help lists "
                  "its flags)\n";
  for (const Command &c : commands())
    s += "  loom " + c.name + " " + c.synopsis + "\n";
  s += "  loom --version\n";
  return s;
}

std::string helpText(const Command &command) {
  std::string s = "usage: loom " + command.name + " " + command.synopsis +
                  " [FLAGS]\n" + command.summary + "\n\nflags:\n";
  std::vector<std::string> lefts;
  size_t width = 0;
  for (const Flag &f : command.flags) {
    // A repeated flag is spelled as the docs spell it, `--dim NAME=N`.
    std::string sep = f.name == "o" || f.repeats ? " " : "=";
    lefts.push_back(f.spelling() + (f.isSwitch() ? "" : sep + f.value));
    width = std::max(width, lefts.back().size());
  }
  width = std::min<size_t>(width, 34);
  for (size_t i = 0; i < command.flags.size(); ++i) {
    std::string left = "  " + lefts[i];
    left.resize(std::max(left.size() + 2, width + 4), ' ');
    s += left + command.flags[i].help + "\n";
  }
  s += "  --help" + std::string(width + 4 - 8, ' ') + "prints this help\n";
  return s;
}

std::string versionText() {
  return std::string("loom ") + LOOM_VERSION + " (commit " LOOM_GIT_COMMIT
         ")\nMLIR " LLVM_VERSION_STRING "\n";
}

std::string didYouMean(llvm::StringRef given,
                       llvm::ArrayRef<std::string> candidates) {
  // A typo is a few edits, fewer for a short word (so `--to` is not
  // `--tp`'s typo unless one edit away).
  unsigned allowed = std::max<unsigned>(1, given.size() / 3);
  const std::string *best = nullptr;
  unsigned bestDistance = allowed + 1;
  for (const std::string &c : candidates) {
    unsigned d = given.edit_distance(c, /*AllowReplacements=*/true, allowed);
    if (d < bestDistance) {
      best = &c;
      bestDistance = d;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

std::string unknownFlag(const Command &command, llvm::StringRef arg) {
  llvm::StringRef key = arg.split('=').first;
  std::vector<std::string> spellings;
  for (const Flag &f : command.flags)
    spellings.push_back(f.spelling());
  spellings.push_back("--help");
  return "unknown option '" + arg.str() + "' for 'loom " + command.name +
         "'" + didYouMean(key, spellings);
}

bool wantsHelp(int argc, char **argv) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (a == "--help" || a == "-h")
      return true;
    if (a == "--")
      return false;
  }
  return false;
}

} // namespace loom::cli
