//===- _loom.cpp - The Python extension behind the `loom` package ---------===//
//
// A thin pybind11 layer over the same library the command-line driver uses
// (include/loom/Driver/Driver.h) and the runtime (Program, Simulator): the
// pure-Python package python/loom/__init__.py builds the user-facing API on
// top of it. Everything here works on NumPy arrays and plain Python values;
// nothing here is meant to be called directly by users.
//
// Errors: loom::rt::Error (every user error: a bad model, target, option or
// input) becomes `loom.Error`, a subclass of RuntimeError, carrying the
// one-line message unchanged.
//
// dtypes: rt::DType <-> NumPy by kind and width (f32 float32, f64 float64,
// f16 float16, i8..i64, u8..u64, bool). NumPy has no bfloat16: a bf16 output
// comes back as float32 (exact: every bf16 value is a float32), and a bf16
// input is given as float32 and rounded to the nearest bf16 (the program or
// the caller says which inputs are bf16); any other dtype for a bf16 input is
// an error.
//
// The GIL is released while compiling, evaluating and simulating.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"
#include "loom/Frontend/LLM.h"
#include "loom/Planner/Planner.h"
#include "loom/Runtime/Compare.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Simulator.h"
#include "loom/Runtime/Tensor.h"
#include "loom/Runtime/TensorIO.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace rt = loom::rt;
namespace driver = loom::driver;

namespace {

/// The NumPy dtype name of a runtime dtype ("bfloat16" has no NumPy type:
/// its values travel as float32).
const char *numpyName(rt::DType dt) {
  switch (dt) {
  case rt::DType::F32: return "float32";
  case rt::DType::F64: return "float64";
  case rt::DType::F16: return "float16";
  case rt::DType::BF16: return "bfloat16";
  case rt::DType::I8: return "int8";
  case rt::DType::I16: return "int16";
  case rt::DType::I32: return "int32";
  case rt::DType::I64: return "int64";
  case rt::DType::U8: return "uint8";
  case rt::DType::U16: return "uint16";
  case rt::DType::U32: return "uint32";
  case rt::DType::U64: return "uint64";
  case rt::DType::Bool: return "bool";
  }
  return "?";
}

/// The runtime dtype of a NumPy dtype, or nullopt if there is none.
std::optional<rt::DType> dtypeOf(const py::dtype &dt) {
  char kind = dt.kind();
  auto size = dt.itemsize();
  switch (kind) {
  case 'f':
    if (size == 4) return rt::DType::F32;
    if (size == 8) return rt::DType::F64;
    if (size == 2) return rt::DType::F16;
    break;
  case 'i':
    if (size == 1) return rt::DType::I8;
    if (size == 2) return rt::DType::I16;
    if (size == 4) return rt::DType::I32;
    if (size == 8) return rt::DType::I64;
    break;
  case 'u':
    if (size == 1) return rt::DType::U8;
    if (size == 2) return rt::DType::U16;
    if (size == 4) return rt::DType::U32;
    if (size == 8) return rt::DType::U64;
    break;
  case 'b':
    if (size == 1) return rt::DType::Bool;
    break;
  default:
    break;
  }
  return std::nullopt;
}

std::string describeDType(const py::dtype &dt) {
  return py::str(static_cast<const py::handle &>(dt)).cast<std::string>();
}

/// Copies a NumPy array into a runtime tensor. `name` names the input in
/// errors; `bf16` says the consumer expects bf16 (float32 values, rounded).
rt::Tensor toTensor(const std::string &name, const py::handle &value,
                    bool bf16) {
  py::array a = py::array::ensure(value, py::array::c_style);
  if (!a)
    throw rt::Error("input '" + name + "': not convertible to a NumPy array");
  py::dtype dt = a.dtype();
  if (dt.byteorder() == '>')
    throw rt::Error("input '" + name + "': big-endian arrays are not "
                    "supported (use arr.astype(arr.dtype.newbyteorder('=')))");
  std::optional<rt::DType> d = dtypeOf(dt);
  if (!d)
    throw rt::Error("input '" + name + "': NumPy dtype " + describeDType(dt) +
                    " is not supported (float16/32/64, int8..int64, "
                    "uint8..uint64, bool)");
  rt::Shape shape(a.shape(), a.shape() + a.ndim());
  if (bf16) {
    if (*d != rt::DType::F32)
      throw rt::Error("input '" + name + "' is bf16: pass its values as a "
                      "float32 array (NumPy has no bfloat16; they are rounded "
                      "to bf16), not " + describeDType(dt));
    return rt::Tensor::fromBytes(rt::DType::F32, shape, a.data())
        .castTo(rt::DType::BF16);
  }
  return rt::Tensor::fromBytes(*d, shape, a.data());
}

/// Copies a runtime tensor into a new NumPy array (bf16 as float32).
py::array toNumpy(const rt::Tensor &value) {
  rt::Tensor t =
      value.dtype() == rt::DType::BF16 ? value.castTo(rt::DType::F32) : value;
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::array out(py::dtype(numpyName(t.dtype())), shape);
  if (t.byteSize())
    std::memcpy(out.mutable_data(), t.raw(), t.byteSize());
  return out;
}

std::map<std::string, rt::Tensor> toTensors(const py::dict &inputs,
                                            const std::set<std::string> &bf16) {
  std::map<std::string, rt::Tensor> out;
  for (auto [key, value] : inputs) {
    if (!py::isinstance<py::str>(key))
      throw rt::Error("input names must be strings, got " +
                      py::repr(key).cast<std::string>());
    std::string name = key.cast<std::string>();
    out.emplace(name, toTensor(name, value, bf16.count(name) != 0));
  }
  return out;
}

/// The `bind` argument of compile and check ({name: array or path}) as
/// driver bindings: a path (str) is read as `--bind NAME=FILE` reads it.
std::vector<driver::Binding> toBindings(const py::dict &bind,
                                        const std::set<std::string> &bf16) {
  std::vector<driver::Binding> out;
  for (auto [key, value] : bind) {
    if (!py::isinstance<py::str>(key))
      throw rt::Error("bind: input names must be strings, got " +
                      py::repr(key).cast<std::string>());
    driver::Binding b;
    b.name = key.cast<std::string>();
    if (py::isinstance<py::str>(value)) {
      b.file = value.cast<std::string>();
      b.value = rt::readTensorFile(b.file, b.name);
    } else {
      b.value = toTensor(b.name, value, bf16.count(b.name) != 0);
    }
    out.push_back(std::move(b));
  }
  return out;
}

/// A loaded, checked program; owns the rt::Program the simulator refers to.
class PyProgram {
public:
  explicit PyProgram(rt::Program p)
      : program_(std::make_shared<rt::Program>(std::move(p))) {}

  static PyProgram fromBytes(const py::bytes &data, const std::string &name) {
    std::string_view view = data;
    return PyProgram(rt::Program::fromBytes(view.data(), view.size(), name));
  }

  const rt::Program &program() const { return *program_; }

  std::vector<std::string> names(const std::vector<int32_t> &ids) const {
    // A model input or output split across chips is several program
    // tensors (parts) of one name: listed once.
    std::vector<std::string> out;
    for (int32_t id : ids) {
      const std::string &n = program_->tensor(id).name;
      if (std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
    }
    return out;
  }

  /// (name, NumPy dtype name, shape) per tensor id.
  std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>
  specs(const std::vector<int32_t> &ids) const {
    std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> out;
    std::set<std::string> seen;
    for (int32_t id : ids) {
      const rt::ProgramTensor &t = program_->tensor(id);
      if (!seen.insert(t.name).second)
        continue;
      // The whole model tensor, not one chip's part of it.
      std::vector<int64_t> shape = t.shape;
      if (t.isPart() && t.partAxis >= 0)
        shape[t.partAxis] *= t.partCount;
      out.emplace_back(t.name, numpyName(t.dtype), shape);
    }
    return out;
  }

  /// Functional simulation: ([(name, array)], stats JSON).
  std::pair<std::vector<std::pair<std::string, py::array>>, std::string>
  run(const py::dict &inputs) const {
    std::set<std::string> bf16;
    for (int32_t id : program_->inputs)
      if (program_->tensor(id).dtype == rt::DType::BF16)
        bf16.insert(program_->tensor(id).name);
    std::map<std::string, rt::Tensor> tensors = toTensors(inputs, bf16);
    rt::SimResult result;
    {
      py::gil_scoped_release release;
      rt::Simulator sim(*program_);
      result = sim.runFunctional(tensors);
    }
    std::vector<std::pair<std::string, py::array>> outputs;
    for (const rt::SimOutput &o : result.outputs)
      outputs.emplace_back(o.name, toNumpy(o.value));
    return {std::move(outputs), result.stats.toJson()};
  }

  /// Timing-only simulation: stats JSON.
  std::string runTiming() const {
    py::gil_scoped_release release;
    rt::Simulator sim(*program_);
    return sim.runTiming().stats.toJson();
  }

  std::string statsText() const {
    py::gil_scoped_release release;
    rt::Simulator sim(*program_);
    return sim.runTiming().stats.toText();
  }

  std::string traceJson(int64_t iterations) const {
    if (iterations < 1)
      throw rt::Error("trace: iterations must be at least 1, got " +
                      std::to_string(iterations));
    py::gil_scoped_release release;
    rt::Simulator sim(*program_);
    return sim.traceJson(iterations);
  }

private:
  std::shared_ptr<const rt::Program> program_;
};

py::dict compileModel(const std::string &model, const std::string &target,
                      const std::string &precision, const std::string &mapping,
                      const std::string &objective, int64_t maxII,
                      const std::map<std::string, int64_t> &dims, bool verify,
                      int64_t chips, int64_t tp, int64_t pp,
                      const std::string &kvPrecision, const py::dict &bind,
                      const std::set<std::string> &bindBf16) {
  driver::CompileOptions options;
  options.bindings = toBindings(bind, bindBf16);
  options.import.kvPrecision = kvPrecision;
  options.target = target;
  options.precision = precision;
  options.mapping.mapping = mapping;
  options.mapping.objective = objective;
  options.mapping.maxII = maxII;
  options.mapping.chips = chips;
  options.mapping.tp = tp;
  options.mapping.pp = pp;
  options.import.dims = dims;
  options.verify = verify;
  driver::Compiled compiled;
  {
    py::gil_scoped_release release;
    options.mapping.validate();
    compiled = driver::compile(model, options);
  }
  py::dict out;
  out["program"] = py::bytes(reinterpret_cast<const char *>(
                                 compiled.program.data()),
                             compiled.program.size());
  out["summary"] = compiled.summary;
  out["mapping_report"] = compiled.mappingReport;
  py::list timings;
  for (const driver::PassTiming &t : compiled.timings)
    timings.append(py::make_tuple(t.name, t.seconds));
  out["timings"] = timings;
  out["seconds"] = compiled.seconds;
  return out;
}

std::vector<std::pair<std::string, py::array>>
evaluateModel(const std::string &model, const py::dict &inputs,
              const std::map<std::string, int64_t> &dims,
              const std::set<std::string> &bf16Inputs, const py::dict &bind) {
  std::map<std::string, rt::Tensor> tensors = toTensors(inputs, bf16Inputs);
  std::vector<driver::Binding> bindings = toBindings(bind, bf16Inputs);
  loom::ImportOptions options;
  options.dims = dims;
  driver::Evaluated result;
  {
    py::gil_scoped_release release;
    driver::applyBindings(model, bindings, options);
    result = driver::evaluate(model, tensors, options);
  }
  std::vector<std::pair<std::string, py::array>> outputs;
  for (size_t i = 0; i < result.names.size(); ++i)
    outputs.emplace_back(result.names[i], toNumpy(result.values[i]));
  return outputs;
}

std::string planModel(const std::string &config, const std::string &system,
                      const std::string &prefillSystem,
                      const std::map<std::string, double> &numbers,
                      const std::map<std::string, std::string> &strings,
                      bool compile) {
  std::string error;
  std::optional<loom::LlmConfig> c = loom::readLlmConfig(config, error);
  if (!c)
    throw rt::Error(error);
  auto target = [&](const std::string &name) {
    std::optional<loom::TargetModel> t = loom::TargetModel::load(name, error);
    if (!t)
      throw rt::Error(error);
    return *t;
  };
  loom::plan::Request r;
  auto num = [&](const char *k, double d) {
    auto it = numbers.find(k);
    return it == numbers.end() ? d : it->second;
  };
  r.inputLen = int64_t(num("input_len", 1024));
  r.outputLen = int64_t(num("output_len", 256));
  r.concurrency = int64_t(num("concurrency", 0));
  r.requestRate = num("rate", 0);
  r.ttft = num("ttft_ms", 0) / 1e3;
  r.tpot = num("tpot_ms", 0) / 1e3;
  r.maxChips = int64_t(num("max_chips", 0)); // 0: the system's size, or 10,000
  r.top = int64_t(num("top", 5));
  r.tp = int64_t(num("tp", 0));
  r.pp = int64_t(num("pp", 0));
  r.batch = int64_t(num("batch", 0));
  r.maxNumTokens =
      int64_t(num("max_num_tokens", double(loom::plan::kDefaultMaxNumTokens)));
  auto str = [&](const char *k, const std::string &d) {
    auto it = strings.find(k);
    return it == strings.end() ? d : it->second;
  };
  r.weights = str("weights", "fp8");
  r.kv = str("kv", "fp8");
  r.activations = str("activations", "bf16");
  r.scenario = str("scenario", "offline");
  r.compile = compile;
  // Layers compile against the target as given (a file is not a preset).
  r.systemSource = system;
  r.prefillSystemSource = prefillSystem;
  std::optional<loom::plan::Result> result;
  {
    py::gil_scoped_release release;
    loom::TargetModel decode = target(system);
    if (!prefillSystem.empty())
      result = loom::plan::planDisaggregated(*c, config, target(prefillSystem), decode,
                                       r, driver::compileLayerSeconds, error);
    else
      result = loom::plan::plan(*c, config, decode, r, driver::compileLayerSeconds,
                          error);
  }
  if (!result)
    throw rt::Error(config + ": " + error);
  return loom::plan::formatJson(*result, r);
}

} // namespace

PYBIND11_MODULE(_loom, m) {
  m.doc() = "Loom's compiler and simulator (internal; use the `loom` package)";

  py::register_exception<rt::Error>(m, "Error", PyExc_RuntimeError);

  m.def("compile", &compileModel, py::arg("model"), py::arg("target"),
        py::arg("precision"), py::arg("mapping"), py::arg("objective"),
        py::arg("max_ii"), py::arg("dims"), py::arg("verify"),
        py::arg("chips") = 1, py::arg("tp") = 0, py::arg("pp") = 0,
        py::arg("kv_precision") = "fp32", py::arg("bind") = py::dict(),
        py::arg("bind_bf16") = std::set<std::string>(),
        "Compiles an ONNX file: dict(program=bytes, summary, mapping_report, "
        "timings=[(name, seconds)], seconds). bind: {input name: array or "
        "path} fixed at compile time (--bind).");
  m.def("plan", &planModel, py::arg("config"), py::arg("system"),
        py::arg("prefill_system"), py::arg("numbers"), py::arg("strings"),
        py::arg("compile"),
        "Capacity planning (loom plan): the plans as JSON text.");
  m.def(
      "default_precision",
      [](const std::string &target) {
        std::string error;
        std::optional<loom::TargetModel> t =
            loom::TargetModel::load(target, error);
        if (!t)
          throw rt::Error(error);
        return t->defaultPrecision();
      },
      py::arg("target"),
      "The precision a compile for `target` takes without one: its "
      "default_precision, else fp32.");
  m.def(
      "check_tolerance",
      [](const std::string &precision, const std::string &kvPrecision) {
        rt::Tolerance t = rt::checkTolerance(precision, kvPrecision);
        return py::make_tuple(t.rtol, t.atol, t.scaleTol);
      },
      py::arg("precision"), py::arg("kv_precision") = "fp32",
      "loom check's tolerances for a precision and KV-cache format: "
      "(rtol, atol, scale_tol).");
  m.def(
      "compare",
      [](const py::handle &expected, const py::handle &actual, double rtol,
         double atol, double scaleTol) {
        rt::Tensor e = toTensor("expected", expected, false);
        rt::Tensor a = toTensor("actual", actual, false);
        rt::Tolerance tol;
        tol.rtol = rtol;
        tol.atol = atol;
        tol.scaleTol = scaleTol;
        rt::Divergence d = rt::compareTensors(e, a, tol);
        return py::make_tuple(d.ok, d.maxAbs, d.maxRel, d.worst, d.mismatches);
      },
      py::arg("expected"), py::arg("actual"), py::arg("rtol"), py::arg("atol"),
      py::arg("scale_tol"),
      "loom check's comparison of two arrays (rt::compareTensors): (ok, "
      "max_abs, max_rel, worst flat index or -1, elements that differ).");
  m.def("evaluate", &evaluateModel, py::arg("model"), py::arg("inputs"),
        py::arg("dims"), py::arg("bf16_inputs"), py::arg("bind") = py::dict(),
        "The golden reference: [(output name, array)]. bind: inputs fixed "
        "at import, as compile's.");

  py::class_<PyProgram>(m, "Program")
      .def_static("from_bytes", &PyProgram::fromBytes, py::arg("data"),
                  py::arg("name"))
      .def_property_readonly(
          "input_names",
          [](const PyProgram &p) { return p.names(p.program().inputs); })
      .def_property_readonly(
          "output_names",
          [](const PyProgram &p) { return p.names(p.program().outputs); })
      .def_property_readonly(
          "input_specs",
          [](const PyProgram &p) { return p.specs(p.program().inputs); })
      .def_property_readonly(
          "output_specs",
          [](const PyProgram &p) { return p.specs(p.program().outputs); })
      .def_property_readonly("model",
                             [](const PyProgram &p) { return p.program().model; })
      .def_property_readonly(
          "target", [](const PyProgram &p) { return p.program().targetName; })
      .def_property_readonly(
          "mapping", [](const PyProgram &p) { return p.program().mapping; })
      .def_property_readonly(
          "total_cycles",
          [](const PyProgram &p) { return p.program().totalCycles; })
      .def_property_readonly(
          "clock_hz", [](const PyProgram &p) { return p.program().clockHz; })
      .def_property_readonly(
          "num_kernels",
          [](const PyProgram &p) { return p.program().kernels.size(); })
      .def("run", &PyProgram::run, py::arg("inputs"))
      .def("run_timing", &PyProgram::runTiming)
      .def("stats_text", &PyProgram::statsText)
      .def("trace_json", &PyProgram::traceJson, py::arg("iterations") = 1);
}
