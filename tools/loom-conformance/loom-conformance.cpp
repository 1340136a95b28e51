//===- loom-conformance.cpp - ONNX conformance runner ---------------------===//
//
// Runs ONNX's own test cases (a folder with model.onnx and test_data_set_*/
// holding input_K.pb and output_K.pb) through the importer and the golden
// reference, and compares with the expected outputs by the runtime's one
// comparison (rt::compareTensors) at the tolerance of ONNX's backend test
// runner (rt::onnxTestTolerance: rtol 1e-3, atol 1e-7). Each case runs in a
// child process with a time limit, so a crash or a hang is reported as such
// and cannot take the run down.
//
//   loom-conformance DIR... [-j N] [--timeout S] [--filter SUBSTR]
//       [--report FILE] [--min-pass SUITE=N] [--max-fail N]
//
//===----------------------------------------------------------------------===//
#include "loom/Frontend/ONNX/Importer.h"
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Compare.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using loom::rt::Tensor;

namespace {

enum class Status { Pass, Fail, Unsupported, Crash, Timeout, Deviation };
const char *statusName(Status s) {
  switch (s) {
  case Status::Pass: return "PASS";
  case Status::Fail: return "FAIL";
  case Status::Unsupported: return "UNSUPPORTED";
  case Status::Crash: return "CRASH";
  case Status::Timeout: return "TIMEOUT";
  case Status::Deviation: return "DEVIATION";
  }
  return "?";
}

struct CaseResult {
  std::string suite, name;
  Status status = Status::Fail;
  std::string reason;
};

/// Compares one output with the runtime's one comparison at ONNX's
/// backend-test tolerance (rt::onnxTestTolerance: floats within rtol 1e-3,
/// atol 1e-7, NaN matching NaN; integers and booleans equal); returns an
/// empty string when it matches.
std::string compare(const Tensor &expected, const Tensor &actual) {
  if (expected.shape() != actual.shape())
    return "shape " + loom::rt::shapeToString(actual.shape()) + ", expected " +
           loom::rt::shapeToString(expected.shape());
  if (expected.dtype() != actual.dtype())
    return std::string("element type ") + loom::rt::dtypeName(actual.dtype()) +
           ", expected " + loom::rt::dtypeName(expected.dtype());
  loom::rt::Divergence d =
      loom::rt::compareTensors(expected, actual, loom::rt::onnxTestTolerance());
  if (d.ok)
    return "";
  std::ostringstream os;
  os << d.mismatches << " of " << expected.numElements()
     << " elements differ; the worst, element " << d.worst << ", is "
     << actual.getDouble(d.worst) << ", expected "
     << expected.getDouble(d.worst);
  return os.str();
}

bool isUnsupportedMessage(const std::string &msg) {
  for (const char *needle :
       {"unsupported", "unknown operator", "does not support"})
    if (msg.find(needle) != std::string::npos)
      return true;
  return false;
}

std::vector<fs::path> sortedDirs(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() &&
        e.path().filename().string().rfind(prefix, 0) == 0)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> sortedFiles(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_regular_file() &&
        e.path().filename().string().rfind(prefix, 0) == 0)
      out.push_back(e.path());
  // input_10.pb sorts after input_9.pb.
  std::sort(out.begin(), out.end(), [](const fs::path &a, const fs::path &b) {
    auto num = [](const fs::path &p) {
      std::string s = p.stem().string();
      return std::stoi(s.substr(s.find('_') + 1));
    };
    return num(a) < num(b);
  });
  return out;
}

struct DataSet {
  std::string name;
  std::vector<Tensor> inputs, expected;
};

/// The graph inputs that are not initializers, in order, with the names
/// of their dynamic dimensions ("" for a static one).
struct GraphInput {
  std::string name;
  std::vector<std::string> dimParams;
};
std::vector<GraphInput> graphInputs(const fs::path &model) {
  onnx::ModelProto proto;
  std::ifstream in(model, std::ios::binary);
  std::vector<GraphInput> inputs;
  if (!proto.ParseFromIstream(&in))
    return inputs;
  std::set<std::string> inits;
  for (const auto &i : proto.graph().initializer())
    inits.insert(i.name());
  for (const auto &i : proto.graph().input()) {
    if (inits.count(i.name()))
      continue;
    GraphInput gi{i.name(), {}};
    for (const auto &d : i.type().tensor_type().shape().dim())
      gi.dimParams.push_back(d.has_dim_param() ? d.dim_param() : "");
    inputs.push_back(gi);
  }
  return inputs;
}

/// Runs one case in this process. Returns status and reason.
///
/// Loom compiles static shapes, so when a shape argument (Reshape's shape,
/// Resize's sizes, ...) arrives as a graph input, the case is retried with
/// the inputs after the first, then all inputs, frozen to their test values.
std::pair<Status, std::string> runCase(const fs::path &dir) {
  mlir::MLIRContext ctx;
  mlir::DialectRegistry registry;
  loom::registerAllDialects(registry);
  ctx.appendDialectRegistry(registry);
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (firstError.empty())
      firstError = d.str();
    return mlir::success();
  });
  auto setDirs = sortedDirs(dir, "test_data_set_");
  if (setDirs.empty())
    return {Status::Fail, "no test_data_set_* folder"};
  std::vector<DataSet> sets;
  try {
    for (const fs::path &set : setDirs) {
      DataSet ds{set.filename().string(), {}, {}};
      for (const auto &f : sortedFiles(set, "input_"))
        ds.inputs.push_back(loom::rt::readTensorProtoFile(f.string()));
      for (const auto &f : sortedFiles(set, "output_"))
        ds.expected.push_back(loom::rt::readTensorProtoFile(f.string()));
      sets.push_back(std::move(ds));
    }
  } catch (const std::exception &e) {
    return {Status::Unsupported, std::string("test data: ") + e.what()};
  }
  std::vector<GraphInput> graphIns = graphInputs(dir / "model.onnx");
  std::string note;
  for (int mode = 0; mode < 3; ++mode) {
    bool retry = false;
    for (DataSet &ds : sets) {
      loom::ImportOptions options;
      size_t firstFrozen = mode == 1 ? 1 : 0;
      // Dynamic dimensions take their sizes from the test data.
      for (size_t i = 0; i < graphIns.size() && i < ds.inputs.size(); ++i)
        for (size_t d = 0; d < graphIns[i].dimParams.size() &&
                           d < ds.inputs[i].shape().size();
             ++d)
          if (!graphIns[i].dimParams[d].empty())
            options.dims[graphIns[i].dimParams[d]] = ds.inputs[i].shape()[d];
      if (mode > 0)
        for (size_t i = firstFrozen; i < graphIns.size() && i < ds.inputs.size();
             ++i)
          options.frozenInputs[graphIns[i].name] = ds.inputs[i];
      std::string error;
      auto module =
          loom::importOnnxFile(ctx, (dir / "model.onnx").string(), options, error);
      if (!module) {
        std::string msg = error.substr(error.find(": ") + 2);
        if (mode < 2 && msg.find("compile-time constant") != std::string::npos) {
          retry = true;
          break;
        }
        return {isUnsupportedMessage(msg) ? Status::Unsupported : Status::Fail,
                "import: " + msg};
      }
      auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
      std::vector<Tensor> inputs;
      if (mode == 0)
        inputs = ds.inputs;
      else if (mode == 1 && !ds.inputs.empty())
        inputs.push_back(ds.inputs[0]);
      if (inputs.size() != func.getNumArguments())
        return {Status::Fail, "model takes " +
                                  std::to_string(func.getNumArguments()) +
                                  " inputs, test data has " +
                                  std::to_string(inputs.size())};
      for (unsigned i = 0; i < inputs.size(); ++i) {
        auto elt = mlir::cast<mlir::RankedTensorType>(func.getArgument(i).getType())
                       .getElementType();
        // ONNX's test data stores bfloat16 as uint16 bit patterns.
        if (elt.isBF16() && inputs[i].dtype() == loom::rt::DType::U16)
          inputs[i] = inputs[i].bitcast(loom::rt::DType::BF16);
      }
      firstError.clear();
      auto outputs = loom::evaluate(func, inputs);
      if (!outputs)
        return {isUnsupportedMessage(firstError) ? Status::Unsupported
                                                 : Status::Fail,
                "eval: " + firstError};
      if (outputs->size() != ds.expected.size())
        return {Status::Fail, "output count differs"};
      for (size_t i = 0; i < ds.expected.size(); ++i) {
        Tensor actual = (*outputs)[i];
        if (actual.dtype() == loom::rt::DType::BF16 &&
            ds.expected[i].dtype() == loom::rt::DType::U16)
          actual = actual.bitcast(loom::rt::DType::U16);
        std::string diff = compare(ds.expected[i], actual);
        if (!diff.empty())
          return {Status::Fail, ds.name + " output " + std::to_string(i) +
                                    ": " + diff};
      }
    }
    if (!retry)
      return {Status::Pass, mode == 0 ? "" : mode == 1
                                ? "shape inputs frozen to their test values"
                                : "all inputs frozen to their test values"};
  }
  return {Status::Fail, "unreachable"};
}

struct Running {
  pid_t pid;
  int fd;
  size_t index;
  std::chrono::steady_clock::time_point start;
  std::string output;
};

/// Reads what a child wrote: "<status>\t<reason>".
void finish(Running &r, int waitStatus, bool timedOut, CaseResult &result) {
  if (timedOut) {
    result.status = Status::Timeout;
    result.reason = "exceeded the time limit";
    return;
  }
  if (WIFSIGNALED(waitStatus)) {
    result.status = Status::Crash;
    result.reason = std::string("signal ") + strsignal(WTERMSIG(waitStatus));
    return;
  }
  size_t tab = r.output.find('\t');
  if (tab == std::string::npos || WEXITSTATUS(waitStatus) != 0) {
    result.status = Status::Crash;
    result.reason = "exit code " + std::to_string(WEXITSTATUS(waitStatus));
    return;
  }
  std::string s = r.output.substr(0, tab);
  result.reason = r.output.substr(tab + 1);
  result.status = s == "PASS"   ? Status::Pass
                  : s == "FAIL" ? Status::Fail
                                : Status::Unsupported;
}

void runAll(const std::vector<fs::path> &cases, std::vector<CaseResult> &results,
            int jobs, int timeoutSec) {
  std::vector<Running> running;
  size_t next = 0;
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
      int fds[2];
      if (pipe(fds) != 0) {
        perror("pipe");
        std::exit(2);
      }
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        auto [status, reason] = runCase(cases[next]);
        std::replace(reason.begin(), reason.end(), '\n', ' ');
        std::string line = std::string(statusName(status)) + "\t" + reason;
        (void)!write(fds[1], line.data(), line.size());
        close(fds[1]);
        _exit(0);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], next, std::chrono::steady_clock::now(), ""});
      ++next;
    }
    std::vector<pollfd> pfds;
    for (auto &r : running)
      pfds.push_back({r.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 100);
    for (size_t i = 0; i < running.size();) {
      Running &r = running[i];
      char buf[4096];
      bool eof = false;
      if (pfds.size() > i && (pfds[i].revents & (POLLIN | POLLHUP))) {
        ssize_t n = read(r.fd, buf, sizeof buf);
        if (n > 0)
          r.output.append(buf, n);
        else
          eof = true;
      }
      bool timedOut = std::chrono::steady_clock::now() - r.start >
                      std::chrono::seconds(timeoutSec);
      if (!eof && !timedOut) {
        ++i;
        continue;
      }
      if (timedOut)
        kill(r.pid, SIGKILL);
      int status = 0;
      waitpid(r.pid, &status, 0);
      close(r.fd);
      finish(r, status, timedOut, results[r.index]);
      running.erase(running.begin() + i);
      pfds.erase(pfds.begin() + i);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<fs::path> roots;
  int jobs = 2, timeoutSec = 120;
  long maxFail = -1;
  std::string filter, report;
  std::map<std::string, long> minPass;
  std::map<std::string, std::string> deviations;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "loom-conformance: " << a << " needs a value\n";
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "-j") jobs = std::max(1, std::stoi(value()));
    else if (a == "--timeout") timeoutSec = std::stoi(value());
    else if (a == "--filter") filter = value();
    else if (a == "--report") report = value();
    else if (a == "--max-fail") maxFail = std::stol(value());
    else if (a == "--known-deviations") {
      // Lines "<case name> <reason>": cases whose expected data Loom
      // deliberately disagrees with; '#' starts a comment.
      std::ifstream in(value());
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
          continue;
        size_t sp = line.find_first_of(" \t");
        deviations[line.substr(0, sp)] =
            sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
      }
    }
    else if (a == "--min-pass") {
      std::string v = value();
      size_t eq = v.find('=');
      minPass[v.substr(0, eq)] = std::stol(v.substr(eq + 1));
    } else roots.push_back(a);
  }
  std::vector<fs::path> cases;
  std::vector<CaseResult> results;
  for (const fs::path &root : roots) {
    if (!fs::is_directory(root)) {
      std::cerr << "loom-conformance: " << root.string() << ": not a folder\n";
      return 1;
    }
    for (const fs::path &dir : sortedDirs(root, "")) {
      if (!fs::exists(dir / "model.onnx"))
        continue;
      std::string name = dir.filename().string();
      if (!filter.empty() && name.find(filter) == std::string::npos)
        continue;
      cases.push_back(dir);
      results.push_back({root.filename().string(), name, Status::Fail, ""});
    }
  }
  runAll(cases, results, jobs, timeoutSec);

  for (CaseResult &r : results) {
    auto it = deviations.find(r.name);
    if (it != deviations.end() && r.status == Status::Fail) {
      r.status = Status::Deviation;
      r.reason += " (known: " + it->second + ")";
    }
  }
  std::ostringstream table;
  std::map<std::string, std::map<Status, long>> totals;
  for (const CaseResult &r : results) {
    table << statusName(r.status) << "\t" << r.suite << "/" << r.name;
    if (!r.reason.empty())
      table << "\t" << r.reason;
    table << "\n";
    ++totals[r.suite][r.status];
    ++totals["all"][r.status];
  }
  table << "\nsuite               cases   pass   fail  unsupported  crash  timeout  deviation\n";
  for (auto &[suite, t] : totals) {
    long n = 0;
    for (auto &[s, c] : t)
      n += c;
    char line[160];
    std::snprintf(line, sizeof line,
                  "%-18s %6ld %6ld %6ld %12ld %6ld %8ld %10ld\n", suite.c_str(),
                  n, t[Status::Pass], t[Status::Fail], t[Status::Unsupported],
                  t[Status::Crash], t[Status::Timeout], t[Status::Deviation]);
    table << line;
  }
  std::cout << table.str();
  if (!report.empty())
    std::ofstream(report) << table.str();

  int rc = 0;
  auto &all = totals["all"];
  if (all[Status::Crash] || all[Status::Timeout]) {
    std::cerr << "loom-conformance: " << all[Status::Crash] << " crashes, "
              << all[Status::Timeout] << " timeouts\n";
    rc = 1;
  }
  if (maxFail >= 0 && all[Status::Fail] > maxFail) {
    std::cerr << "loom-conformance: " << all[Status::Fail]
              << " cases give wrong results or fail to import (allowed: "
              << maxFail << ")\n";
    rc = 1;
  }
  for (auto &[suite, n] : minPass)
    if (totals[suite][Status::Pass] < n) {
      std::cerr << "loom-conformance: " << suite << ": "
                << totals[suite][Status::Pass] << " cases pass, need " << n
                << "\n";
      rc = 1;
    }
  return rc;
}
