//===- Run.cpp - Running a co-design sweep --------------------------------===//
//
// Points are compiled by `loom compile` processes (one MLIR context each,
// in parallel over the cores) against a target file with the point's field
// values; the program is then loaded and simulated timing-only in this
// process. See Sweep.h and docs/codesign.md.
//
//===----------------------------------------------------------------------===//
#include "loom/Sweep/Sweep.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Progress.h"
#include "loom/Runtime/Simulator.h"
#include "loom/Target/TargetModel.h"

#include <nlohmann/json.hpp>

#ifdef LOOM_HAVE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace loom::sweep {

using json = nlohmann::json;

namespace {

/// The JSON value at dotted `path`, or null.
json *at(json &doc, const std::string &path) {
  json *node = &doc;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (!node->is_object() || !node->contains(part))
      return nullptr;
    node = &(*node)[part];
  }
  return node;
}

std::string keysUnder(json &doc, const std::string &path) {
  size_t dot = path.rfind('.');
  json *parent = dot == std::string::npos ? &doc : at(doc, path.substr(0, dot));
  if (!parent || !parent->is_object())
    return "";
  std::string out;
  for (auto &[k, v] : parent->items())
    if (!k.empty() && k[0] != '_')
      out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string keyOf(const std::string &model, const std::vector<double> &values) {
  std::string k = model;
  for (double v : values)
    k += "|" + fmt(v);
  return k;
}

/// Runs `argv` and waits; its output goes to `log`. Returns the exit code.
int spawnAndWait(const std::vector<std::string> &argv, const std::string &log) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return 127;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string lastLine(const std::string &path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty())
      last = line;
  if (last.rfind("loom: ", 0) == 0)
    last = last.substr(6);
  return last;
}

json outcomeJson(const Outcome &o) {
  json j;
  j["key"] = o.point.key;
  j["model"] = o.point.model;
  j["values"] = o.point.values;
  j["ok"] = o.ok;
  if (!o.ok) {
    j["error"] = o.error;
    return j;
  }
  j["latency_s"] = o.latency;
  j["throughput_per_s"] = o.throughput;
  j["chips"] = o.chips;
  j["utilisation"] = o.utilisation;
  j["sram_peak_bytes"] = o.sramPeak;
  j["perf_per_watt"] = o.perfPerWatt;
  j["bound"] = o.bound;
  return j;
}

Outcome outcomeFrom(const json &j) {
  Outcome o;
  o.point.key = j.value("key", "");
  o.point.model = j.value("model", "");
  o.point.values = j.value("values", std::vector<double>{});
  o.ok = j.value("ok", false);
  o.error = j.value("error", "");
  o.latency = j.value("latency_s", 0.0);
  o.throughput = j.value("throughput_per_s", 0.0);
  o.chips = j.value("chips", 0.0);
  o.utilisation = j.value("utilisation", 0.0);
  o.sramPeak = j.value("sram_peak_bytes", 0.0);
  o.perfPerWatt = j.value("perf_per_watt", 0.0);
  o.bound = j.value("bound", "");
  return o;
}

/// Compiles and simulates one point whose target JSON is `target`.
Outcome evaluate(const Options &o, const Point &p, const json &target,
                 const std::string &work) {
  Outcome out;
  out.point = p;
  std::string stem = std::to_string(std::hash<std::string>{}(p.key));
  std::string targetFile = work + "/" + stem + ".target.json";
  std::string program = work + "/" + stem + ".loom";
  std::string log = work + "/" + stem + ".log";
  {
    std::ofstream f(targetFile);
    f << target.dump(2) << "\n";
  }
  std::string error;
  std::optional<TargetModel> t = TargetModel::load(targetFile, error);
  if (!t) {
    out.error = "the target is invalid: " + error;
    return out;
  }
  // Each point is compiled for the sweep's objective (the partition and
  // the mapping): throughput and throughput per watt for throughput.
  std::vector<std::string> argv = {
      o.loom, "compile", p.model, "--target=" + targetFile,
      "--precision=" + o.precision,
      std::string("--objective=") +
          (o.objective == "latency" ? "latency" : "throughput"),
      "--no-verify", "-o", program};
  if (o.kvPrecision != "fp32" && p.model.ends_with(".json"))
    argv.push_back("--kv-precision=" + o.kvPrecision);
  int64_t chips = o.chips;
  for (size_t i = 0; i < o.models.size() && i < o.modelChips.size(); ++i)
    if (o.models[i] == p.model && o.modelChips[i] > 0)
      chips = o.modelChips[i];
  if (chips > 1)
    argv.push_back("--chips=" + std::to_string(chips));
  if (spawnAndWait(argv, log) != 0) {
    out.error = lastLine(log);
    if (out.error.empty())
      out.error = "loom compile failed";
    out.bound = out.error.find("does not fit") != std::string::npos ? "capacity"
                                                                    : "";
    return out;
  }
  try {
    rt::Program prog = rt::Program::load(program);
    rt::SimStats stats = rt::Simulator(prog).runTiming().stats;
    out.ok = true;
    out.latency = double(prog.totalCycles) / prog.clockHz;
    out.throughput = prog.clockHz / double(prog.initiationInterval);
    out.chips = double(prog.chips);
    out.sramPeak = double(prog.sramPeakBytes);
    for (const rt::UnitStats &u : stats.units)
      if (u.unit == rt::Unit::Matrix)
        out.utilisation = u.utilisation;
    double watts = t->powerWattsPerChip() * out.chips;
    out.perfPerWatt = watts > 0 ? out.throughput / watts : 0;
    std::map<std::string, double> byBound;
    for (const rt::ProgramKernel &k : prog.kernels)
      byBound[rt::costBoundName(k.bound)] += double(k.cycles);
    double most = -1;
    for (auto &[b, c] : byBound)
      if (c > most) {
        most = c;
        out.bound = b;
      }
  } catch (const std::exception &e) {
    out.ok = false;
    out.error = e.what();
  }
  std::remove(program.c_str());
  return out;
}

double objectiveOf(const Outcome &o, const std::string &objective) {
  if (objective == "latency")
    return o.latency > 0 ? 1.0 / o.latency : 0;
  if (objective == "perf-per-watt")
    return o.perfPerWatt;
  return o.throughput;
}

} // namespace

std::optional<Axis> parseAxis(const std::string &spec,
                              const std::string &targetJson,
                              std::string &error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--vary=" + spec + ": expected FIELD=v1,v2,...";
    return std::nullopt;
  }
  Axis a;
  a.path = spec.substr(0, eq);
  json doc = json::parse(targetJson, nullptr, false);
  json *node = at(doc, a.path);
  if (!node) {
    std::string known = keysUnder(doc, a.path);
    error = "--vary=" + spec + ": the target has no field '" + a.path + "'" +
            (known.empty() ? "" : " (there: " + known + ")");
    return std::nullopt;
  }
  if (!node->is_number()) {
    error = "--vary=" + spec + ": '" + a.path + "' is not a number in the target";
    return std::nullopt;
  }
  bool integer = node->is_number_integer();
  std::stringstream ss(spec.substr(eq + 1));
  std::string v;
  while (std::getline(ss, v, ',')) {
    char *end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x)) {
      error = "--vary=" + spec + ": '" + v + "' is not a number";
      return std::nullopt;
    }
    if (integer && x != std::floor(x)) {
      error = "--vary=" + spec + ": '" + a.path +
              "' takes whole numbers, got " + v;
      return std::nullopt;
    }
    a.values.push_back(x);
  }
  if (a.values.empty()) {
    error = "--vary=" + spec + ": no values (an empty range)";
    return std::nullopt;
  }
  return a;
}

namespace {

/// The options a sweep cannot run with, as an error; true when none.
bool checkOptions(const Options &o, std::string &error) {
  if (o.models.empty() || o.axes.empty()) {
    error = "a sweep needs --model=... and at least one --vary=FIELD=v1,...";
    return false;
  }
  // A model listed twice (m@2,m@4) would give points of one key, compiled
  // for the first entry's chips.
  for (size_t i = 0; i < o.models.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.models[i] == o.models[j]) {
        error = "--model: '" + o.models[i] +
                "' is listed twice; sweep it once (its chips with MODEL@N)";
        return false;
      }
  // Two axes of one field would label each point with both values but
  // compile it with the last.
  for (size_t i = 0; i < o.axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.axes[i].path == o.axes[j].path) {
        error = "--vary: the field '" + o.axes[i].path +
                "' is varied twice; give all its values in one --vary";
        return false;
      }
  if (o.objective != "latency" && o.objective != "throughput" &&
      o.objective != "perf-per-watt") {
    error = "--objective=" + o.objective +
            ": expected latency, throughput or perf-per-watt";
    return false;
  }
  return true;
}

/// Reads the base target's JSON into `base`.
bool readBaseTarget(const Options &o, json &base, std::string &error) {
  std::string path = o.target;
  if (TargetModel::isPresetName(o.target))
    path = TargetModel::presetsDir() + "/" + o.target + ".json";
  std::ifstream in(path);
  if (!in) {
    error = o.target + ": cannot read the target";
    return false;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  base = json::parse(buf.str(), nullptr, false);
  if (base.is_discarded()) {
    error = o.target + ": invalid JSON";
    return false;
  }
  return true;
}

/// Makes the output folder and its work folder.
bool makeFolders(const Options &o, const std::string &work,
                 std::string &error) {
  // A folder that cannot be made is an error now, not a sweep that says
  // it wrote results it did not write.
  for (const std::string &dir : {o.outDir, work}) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      error = "--out=" + o.outDir + ": cannot create " + dir + ": " +
              std::strerror(errno);
      return false;
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      error = "--out=" + o.outDir + ": " + dir + " exists and is not a folder";
      return false;
    }
  }
  return true;
}

/// Why the output folder cannot take a sweep of `settings`, or empty.
std::string settingsProblem(const Options &o, const json &settings,
                            const std::string &settingsPath) {
  std::string problem;
  if (std::ifstream prev(settingsPath); prev) {
    json old = json::parse(prev, nullptr, false);
    for (auto &[name, value] : settings.items())
      if (problem.empty() &&
          (old.is_discarded() || !old.contains(name) || old[name] != value))
        problem = o.outDir + " holds a sweep with another " + name + " (" +
                (old.is_discarded() || !old.contains(name)
                     ? std::string("unreadable")
                     : old[name].dump().substr(0, 60)) +
                "); remove it or choose another --out";
  } else if (std::ifstream(o.outDir + "/results.jsonl").good()) {
    problem = o.outDir + " holds results of a sweep whose settings were not "
                       "recorded; remove it or choose another --out";
  }
  return problem;
}

/// The points: every model at every combination, then (for sensitivity)
/// each resource improved by 10% from the first combination. `sensKeys`
/// gets the sensitivity points' keys and resources.
std::vector<std::pair<Point, json>>
makePoints(const Options &o, const json &base,
           std::vector<std::pair<std::string, std::string>> &sensKeys) {
  std::vector<std::pair<Point, json>> points;
  std::vector<size_t> index(o.axes.size(), 0);
  for (const std::string &model : o.models) {
    std::fill(index.begin(), index.end(), 0);
    while (true) {
      Point p;
      p.model = model;
      json t = base;
      for (size_t a = 0; a < o.axes.size(); ++a) {
        double v = o.axes[a].values[index[a]];
        p.values.push_back(v);
        json *node = at(t, o.axes[a].path);
        if (node->is_number_integer())
          *node = int64_t(v);
        else
          *node = v;
      }
      p.key = keyOf(model, p.values);
      points.push_back({p, t});
      size_t a = 0;
      while (a < index.size() && ++index[a] == o.axes[a].values.size())
        index[a++] = 0;
      if (a == index.size())
        break;
    }
  }
  const std::vector<std::string> resources = {
      "chip.clock_hz", "chip.tile.sram.bytes", "chip.tile.sram.bytes_per_cycle",
      "chip.mesh.link_bytes_per_cycle", "system.links.bytes_per_second"};
  // Sensitivity: the base target as given, and each resource of it
  // improved by 10%.
  if (o.sensitivity)
    for (const std::string &model : o.models) {
      Point basePoint;
      basePoint.model = model;
      basePoint.key = model + "|base";
      points.push_back({basePoint, base});
      sensKeys.push_back({basePoint.key, ""});
      for (const std::string &res : resources) {
        json t = base;
        json *node = at(t, res);
        if (!node || !node->is_number())
          continue;
        if (node->is_number_integer())
          *node = int64_t(std::llround(node->get<double>() * 1.1));
        else
          *node = node->get<double>() * 1.1;
        Point p;
        p.model = model;
        p.key = model + "|+10% " + res;
        points.push_back({p, t});
        sensKeys.push_back({p.key, res});
      }
    }
  return points;
}

/// Resume: what earlier runs finished.
std::map<std::string, Outcome> readFinished(const Options &o,
                                            const std::string &jsonl) {
  std::map<std::string, Outcome> done;
  std::ifstream prev(jsonl);
  std::string line;
  while (std::getline(prev, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("key"))
      done[j["key"].get<std::string>()] = outcomeFrom(j);
  }
  for (int r = 1; r < 1024; ++r) {
    std::ifstream part(o.outDir + "/results.rank" + std::to_string(r) + ".jsonl");
    if (!part)
      break;
    while (std::getline(part, line)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.contains("key"))
        done[j["key"].get<std::string>()] = outcomeFrom(j);
    }
  }
  return done;
}

/// Evaluates the points `todo` on o.jobs threads, appending each result to
/// `sink` and `done` as it finishes.
void evaluatePoints(const Options &o,
                    const std::vector<std::pair<Point, json>> &points,
                    const std::vector<size_t> &todo, const std::string &work,
                    std::ofstream &sink, std::map<std::string, Outcome> &done) {
  std::mutex mu;
  std::atomic<size_t> next{0}, finished{0};
  rt::Progress bar("sweep", int64_t(todo.size()));
  unsigned jobs = o.jobs > 0 ? unsigned(o.jobs)
                             : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < std::min<size_t>(jobs, todo.size()); ++w)
    pool.emplace_back([&] {
      for (size_t n = next++; n < todo.size(); n = next++) {
        const auto &[p, t] = points[todo[n]];
        Outcome out = evaluate(o, p, t, work);
        std::lock_guard<std::mutex> lock(mu);
        sink << outcomeJson(out).dump() << "\n";
        sink.flush();
        done[p.key] = out;
        bar.update(int64_t(++finished), p.key);
      }
    });
  for (std::thread &th : pool)
    th.join();
  bar.finish();
}

#ifdef LOOM_HAVE_MPI
/// Rank 0 takes in the other ranks' results.
void gatherRanks(const Options &o, int size, const std::string &jsonl,
                 std::map<std::string, Outcome> &done) {
  for (int r = 1; r < size; ++r) {
    std::ifstream part(o.outDir + "/results.rank" + std::to_string(r) + ".jsonl");
    std::string line;
    std::ofstream all(jsonl, std::ios::app);
    while (std::getline(part, line)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.contains("key")) {
        done[j["key"].get<std::string>()] = outcomeFrom(j);
        all << line << "\n";
      }
    }
    part.close();
    std::remove((o.outDir + "/results.rank" + std::to_string(r) + ".jsonl").c_str());
  }
}
#endif

/// Writes results.json and sweep.html from the finished points.
bool writeResults(const Options &o,
                  const std::vector<std::pair<Point, json>> &points,
                  const std::vector<std::pair<std::string, std::string>> &sensKeys,
                  std::map<std::string, Outcome> &done, std::string &error) {
  // The results in point order: the same bytes for any job or rank count.
  std::vector<Outcome> ordered;
  std::set<std::string> sensSet;
  for (auto &[k, r] : sensKeys)
    sensSet.insert(k);
  for (const auto &[p, t] : points)
    if (!sensSet.count(p.key) && done.count(p.key))
      ordered.push_back(done[p.key]);
  std::vector<Sensitivity> sens;
  for (const std::string &model : o.models) {
    auto found = done.find(model + "|base");
    if (found == done.end() || !found->second.ok)
      continue;
    const Outcome *basePoint = &found->second;
    for (auto &[k, res] : sensKeys) {
      if (res.empty() || k.rfind(model + "|", 0) != 0 || !done.count(k) ||
          !done[k].ok)
        continue;
      double b = objectiveOf(*basePoint, o.objective);
      double n = objectiveOf(done[k], o.objective);
      sens.push_back({model, res, b > 0 ? n / b - 1 : 0});
    }
  }
  json result;
  result["target"] = o.target;
  result["objective"] = o.objective;
  json axes = json::array();
  for (const Axis &a : o.axes)
    axes.push_back({{"path", a.path}, {"values", a.values}});
  result["axes"] = axes;
  json rows = json::array();
  for (const Outcome &x : ordered)
    rows.push_back(outcomeJson(x));
  result["points"] = rows;
  json sj = json::array();
  for (const Sensitivity &s : sens)
    sj.push_back({{"model", s.model}, {"resource", s.resource}, {"gain", s.gain}});
  result["sensitivity"] = sj;
  auto writeFile = [&](const std::string &file, const std::string &text) {
    std::ofstream out(o.outDir + "/" + file);
    out << text;
    out.close();
    if (!out)
      error = o.outDir + "/" + file + ": cannot write";
    return bool(out);
  };
  return writeFile("results.json", result.dump(2) + "\n") &&
         writeFile("sweep.html", renderHtml(o.axes, ordered, sens,
                                            o.objective,
                                            "Sweep of " + o.target));
}

} // namespace

bool run(const Options &o, std::string &error) {
  int rank = 0, size = 1;
#ifdef LOOM_HAVE_MPI
  bool mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  if (mpi) {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  // An error return finalizes too (every rank returns the same error), so
  // mpirun reports the message, not a rank that exited without finalizing.
  struct FinalizeOnReturn {
    bool armed;
    ~FinalizeOnReturn() {
      if (armed)
        MPI_Finalize();
    }
  } finalize{mpi};
#else
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) {
    error = "this loom was built without MPI (install libopenmpi-dev and "
            "rebuild) but runs under mpirun";
    return false;
  }
#endif
  if (!checkOptions(o, error))
    return false;
  json base;
  if (!readBaseTarget(o, base, error))
    return false;
  std::string work = o.outDir + "/work";
  if (!makeFolders(o, work, error))
    return false;

  // What a point's result depends on besides its key (the model and the
  // axes' values). A directory holds the results of one setting, so a
  // resumed sweep never mixes in points compiled otherwise.
  json settings = {{"target", base},       {"precision", o.precision},
                   {"kv_precision", o.kvPrecision},
                   {"objective", o.objective}, {"chips", o.chips},
                   {"model_chips", o.modelChips}};
  std::string settingsPath = o.outDir + "/settings.json";
  std::string problem = settingsProblem(o, settings, settingsPath);
#ifdef LOOM_HAVE_MPI
  // Every rank reads the folder as it was before rank 0 writes to it.
  if (mpi)
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  if (!problem.empty()) {
    error = problem;
    return false;
  }
  if (rank == 0) {
    // Written whole, then renamed: a reader never sees half of it.
    std::ofstream(settingsPath + ".tmp") << settings.dump(2) << "\n";
    std::rename((settingsPath + ".tmp").c_str(), settingsPath.c_str());
  }

  std::vector<std::pair<std::string, std::string>> sensKeys; // key, resource
  std::vector<std::pair<Point, json>> points = makePoints(o, base, sensKeys);

  std::string jsonl = o.outDir + "/results.jsonl";
  std::map<std::string, Outcome> done = readFinished(o, jsonl);
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i)
    if (int(i % size_t(size)) == rank && !done.count(points[i].first.key))
      todo.push_back(i);

  std::string mine = rank == 0 ? jsonl
                               : o.outDir + "/results.rank" +
                                     std::to_string(rank) + ".jsonl";
  std::ofstream sink(mine, std::ios::app);
  if (!sink) {
    error = mine + ": cannot write";
    return false;
  }
  evaluatePoints(o, points, todo, work, sink, done);
  sink.close();

#ifdef LOOM_HAVE_MPI
  finalize.armed = false; // finalized below
  if (mpi) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
      MPI_Finalize();
      return true;
    }
    gatherRanks(o, size, jsonl, done);
    MPI_Finalize();
  }
#endif

  return writeResults(o, points, sensKeys, done, error);
}

} // namespace loom::sweep
