"""Loom from Python: compile ONNX models for spatial dataflow chips, run them
on the simulator, and check them against the golden reference, on NumPy
arrays. docs/python.md is the tutorial.

    import loom
    prog = loom.compile("model.onnx", target="tsp-v1")   # a Program
    outputs = prog.run({"input": x})                     # {name: ndarray}
    result = loom.check("model.onnx", target="tsp-v1")   # CheckResult, .ok

What is here:
  compile(model, ...) -> Program      loom compile, as a function (bind=: --bind)
  load(path) -> Program               a .loom program file
  run(program_or_path, inputs)        functional simulation -> {name: ndarray}
  evaluate(model, inputs, dims=None)  the golden reference  -> {name: ndarray}
  check(model, inputs=None, ...)      compile + simulate + golden reference
  from_torch(module, example_inputs)  torch.onnx.export (opset 17) + compile
  synthetic_inputs(program, seed=0)   the inputs check() makes when given none
  plan(...)                           planned (issue 7): NotImplementedError
  Error                               every user error (a RuntimeError)

dtypes: float16/32/64, int8..int64, uint8..uint64 and bool map one to one
onto Loom's. NumPy has no bfloat16: a bf16 output comes back as float32
(exact), and a bf16 input is passed as float32 and rounded to bf16.
Inputs must have exactly the dtype and shape the model declares; nothing is
cast silently (a float64 array for a float32 input is an Error).
"""

import json
import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping

import numpy as np

from . import _loom
from ._loom import Error

Error.__module__ = "loom"
Error.__doc__ = ("A Loom user error (bad model, target, option or input). "
                 "str(e) is one line naming the file, node or field and the problem.")

__all__ = [
    "CheckResult",
    "Error",
    "Program",
    "check",
    "compile",
    "evaluate",
    "from_torch",
    "load",
    "plan",
    "run",
    "synthetic_inputs",
]

PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8")

# The tolerances of `loom check` per precision are the runtime's one table
# (rt::checkTolerance, docs/numerics.md): _loom.check_tolerance(precision,
# kv_precision) gives (rtol, atol, scale_tol). An element passes when
# |actual - expected| <= max(atol, scale_tol * S) + rtol * |expected|, with
# S the largest finite |expected| of that output; _loom.compare is that
# comparison, the runtime's one (rt::compareTensors), as `loom check` makes
# it.


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def _is_model_proto(obj):
    return type(obj).__name__ == "ModelProto" and hasattr(obj, "SerializeToString")


def _check_str(what, value):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return value


def _dims(dims):
    if dims is None:
        return {}
    if not isinstance(dims, Mapping):
        raise TypeError(f"dims must be a dict {{name: int}}, got {type(dims).__name__}")
    out = {}
    for name, value in dims.items():
        if not isinstance(name, str):
            raise TypeError(f"dims: names must be str, got {name!r}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"dims: '{name}' must be an int, got {value!r}")
        out[name] = int(value)
    return out


def _bind(bind):
    """bind as {name: ndarray or path str}: a path (a .npy or .pb file) is
    read by Loom as `--bind NAME=FILE` reads it."""
    if bind is None:
        return {}
    if not isinstance(bind, Mapping):
        raise TypeError(f"bind must be a dict {{name: array or path}}, got {type(bind).__name__}")
    out = {}
    for name, value in bind.items():
        if not isinstance(name, str):
            raise TypeError(f"bind: names must be str, got {name!r}")
        if isinstance(value, (str, os.PathLike)):
            value = os.fspath(value)
            out[name] = os.fsdecode(value) if isinstance(value, bytes) else value
        else:
            out[name] = _as_array(name, value)
    return out


def _bf16_inputs(path):
    """The names of an ONNX file's bf16 inputs ([] if onnx cannot read it)."""
    info = _onnx_inputs(path)
    return set(info[1]) if info else set()


class _TempDir:
    """A temporary directory deleted when this object is collected (or at
    exit), quietly: it holds a model file for the Program that keeps it."""

    def __init__(self, prefix):
        self.name = tempfile.mkdtemp(prefix=prefix)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.name, True)


def _save_model_proto(model):
    """Writes an onnx.ModelProto to a new temporary directory.

    Returns (path, the _TempDir, which deletes it when collected)."""
    import onnx

    tmp = _TempDir("loom-model-")
    path = os.path.join(tmp.name, "model.onnx")
    try:
        size = model.ByteSize()
    except Exception:  # protobuf refuses to size messages over 2 GiB
        size = 1 << 31
    if size < (1 << 31) - (1 << 20):
        onnx.save_model(model, path)
    else:
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location="model.onnx.data")
    return path, tmp


def _model_file(model):
    """(path, keep-alive) of a model given as a path, an onnx.ModelProto or
    a Program that remembers its model."""
    if isinstance(model, Program):
        if model.model_path is None:
            raise Error(f"{model.name}: this program does not know its ONNX model "
                        "(it was loaded from a program file): pass the model itself")
        return model.model_path, model._keep
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return path, None
    if _is_model_proto(model):
        return _save_model_proto(model)
    raise TypeError("model must be a path, an onnx.ModelProto or a loom.Program, "
                    f"got {type(model).__name__}")


def _as_array(name, value):
    """A C-contiguous, native-endian NumPy array of `value`."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch.Tensor
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except Exception as e:
        raise Error(f"input '{name}': not convertible to a NumPy array ({e})") from None
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return np.ascontiguousarray(arr)


def _named_inputs(names, inputs, what):
    """Inputs as {name: ndarray}: from a dict, a sequence in input order, or
    a single array for a model with one input."""
    if inputs is None:
        inputs = {}
    if isinstance(inputs, Mapping):
        items = list(inputs.items())
    elif isinstance(inputs, (list, tuple)):
        if len(inputs) != len(names):
            raise Error(f"{what}: the model has {len(names)} input(s) "
                        f"({', '.join(repr(n) for n in names)}), got {len(inputs)} value(s)")
        items = list(zip(names, inputs))
    else:
        if len(names) != 1:
            raise Error(f"{what}: the model has {len(names)} inputs "
                        f"({', '.join(repr(n) for n in names)}): pass a dict {{name: array}}")
        items = [(names[0], inputs)]
    out = {}
    for name, value in items:
        if not isinstance(name, str):
            raise Error(f"{what}: input names must be str, got {name!r}")
        out[name] = _as_array(name, value)
    return out


def _onnx_inputs(path):
    """(input names, names of bf16 inputs) of an ONNX file, or None if the
    onnx package cannot read it (the importer then reports the problem)."""
    try:
        import onnx

        model = onnx.load(path, load_external_data=False)
    except Exception:
        return None
    inits = {i.name for i in model.graph.initializer}
    names, bf16 = [], []
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        names.append(inp.name)
        if inp.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16:
            bf16.append(inp.name)
    return names, bf16


# --------------------------------------------------------------------------
# Program
# --------------------------------------------------------------------------

class Program:
    """A compiled, checked Loom program, ready to simulate.

    Made by compile(), from_torch() or load(). Attributes:
      bytes           the program file's contents (save() writes them)
      name            what errors call it (the model path or the file)
      summary         the one-line summary `loom compile` prints
      mapping_report  the mappings tried and the one kept
      timings         [(step or pass name, seconds)] of the compile
      seconds         compile wall time
      model_path      the ONNX model it was compiled from (None if loaded)
      options         the compile options (target, precision, mapping, ...)
      last_stats      the statistics of the latest run(), a dict
    """

    def __init__(self, data, name, *, summary="", mapping_report="", timings=(),
                 seconds=0.0, model_path=None, options=None, keep=None):
        data = bytes(data)
        self._impl = _loom.Program.from_bytes(data, name)
        self.bytes = data
        self.name = name
        self.summary = summary
        self.mapping_report = mapping_report
        self.timings = list(timings)
        self.seconds = seconds
        self.model_path = model_path
        self.options = dict(options or {})
        self.last_stats = None
        # A temporary directory holding model_path, deleted with the Program.
        self._keep = keep

    # -- What the program is ---------------------------------------------

    @property
    def input_names(self):
        """The model's input names, in order."""
        return list(self._impl.input_names)

    @property
    def output_names(self):
        """The model's output names, in order."""
        return list(self._impl.output_names)

    @property
    def input_specs(self):
        """{name: (shape, dtype name)} of the inputs, in order ("bfloat16"
        inputs take float32 arrays)."""
        return {n: (tuple(s), d) for n, d, s in self._impl.input_specs}

    @property
    def output_specs(self):
        """{name: (shape, dtype name)} of the outputs, in order."""
        return {n: (tuple(s), d) for n, d, s in self._impl.output_specs}

    @property
    def target(self):
        """The target's name, as compiled for."""
        return self._impl.target

    @property
    def mapping(self):
        """"sequential", "pipelined" or "hybrid"."""
        return self._impl.mapping

    @property
    def total_cycles(self):
        """The schedule's latency in cycles (one input)."""
        return self._impl.total_cycles

    @property
    def clock_hz(self):
        return self._impl.clock_hz

    @property
    def num_kernels(self):
        return self._impl.num_kernels

    def __repr__(self):
        return (f"<loom.Program {self.name!r}: target {self.target}, "
                f"{self.num_kernels} kernels, {self.mapping}, {self.total_cycles} cycles>")

    # -- Running it -------------------------------------------------------

    def run(self, inputs):
        """Functional simulation: {output name: ndarray}, in output order.

        `inputs`: {name: array}, a list in input order, or one array for a
        model with one input; dtype and shape must match input_specs. Sets
        last_stats (cycles, utilisation, SRAM, per kernel; a dict)."""
        named = _named_inputs(self.input_names, inputs, self.name)
        outputs, stats = self._impl.run(named)
        self.last_stats = json.loads(stats)
        return dict(outputs)

    def run_timing(self):
        """Timing-only simulation (no arithmetic): the statistics, a dict."""
        return json.loads(self._impl.run_timing())

    def stats_text(self):
        """The statistics as `loom run` prints them."""
        return self._impl.stats_text()

    def trace(self, path=None, iterations=1):
        """The Chrome/Perfetto trace of the schedule (JSON text); written to
        `path` too when given."""
        text = self._impl.trace_json(int(iterations))
        if path is not None:
            _write_file(path, text.encode())
        return text

    def save(self, path):
        """Writes the program file (`loom run` and loom.load read it)."""
        _write_file(path, self.bytes)


def _write_file(path, data):
    path = os.fspath(path)
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise Error(f"{path}: cannot write: {e.strerror or e}") from None


# --------------------------------------------------------------------------
# compile, load, run, evaluate
# --------------------------------------------------------------------------

def compile(model, target="tiny", precision=None, mapping="auto", objective="latency",
            max_ii=0, dims=None, verify=True, chips=1, tp=0, pp=0, kv_precision="fp32",
            bind=None):
    """Compiles an ONNX model (a path or an onnx.ModelProto).

    target: a preset name (tiny, tsp-v1, lp30, ...) or a target JSON file;
    precision: fp32, bf16, fp16, fp8 or int8 (None: the target's
    default_precision, else fp32); mapping: auto, sequential, pipelined
    or hybrid; objective: latency or throughput; max_ii: fail unless a new
    input can start every max_ii cycles (0: no limit); dims: {name: int}
    for dynamic dimensions; verify: prove the schedule with the independent
    verifier; chips, tp, pp: split the model across chips (tensor- and
    pipeline-parallel degrees, 0: chosen; see docs/multichip.md);
    kv_precision: for an LLM config.json, the format its KV cache is stored
    in (fp32, bf16, fp16 or fp8; docs/numerics.md); bind: {input name:
    array or .npy/.pb path} fixes those inputs at compile time (`--bind`):
    they become constants, so shapes computed from them are static, and the
    Program no longer has them as inputs. Raises loom.Error on any user
    error."""
    path, keep = _model_file(model)
    if precision is None:
        precision = _loom.default_precision(_check_str("target", target))
    options = dict(target=_check_str("target", target),
                   precision=_check_str("precision", precision),
                   mapping=_check_str("mapping", mapping),
                   objective=_check_str("objective", objective),
                   max_ii=int(max_ii), dims=_dims(dims), verify=bool(verify),
                   chips=int(chips), tp=int(tp), pp=int(pp),
                   kv_precision=_check_str("kv_precision", kv_precision),
                   bind=_bind(bind))
    if options["chips"] == 1 and (options["tp"] > 1 or options["pp"] > 1):
        options["chips"] = max(1, options["tp"]) * max(1, options["pp"])
    res = _loom.compile(path, options["target"], options["precision"], options["mapping"],
                        options["objective"], options["max_ii"], options["dims"],
                        options["verify"], options["chips"], options["tp"], options["pp"],
                        options["kv_precision"], options["bind"],
                        _bf16_inputs(path) if options["bind"] else set())
    return Program(res["program"], path, summary=res["summary"],
                   mapping_report=res["mapping_report"], timings=res["timings"],
                   seconds=res["seconds"], model_path=os.path.abspath(path),
                   options=options, keep=keep)


def load(path):
    """Loads (and checks) a .loom program file."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Error(f"{path}: cannot read: {e.strerror or e}") from None
    return Program(data, path)


def run(program, inputs):
    """Functional simulation of a Program or a .loom file: {name: ndarray}."""
    if not isinstance(program, Program):
        program = load(program)
    return program.run(inputs)


def evaluate(model, inputs, dims=None):
    """The golden reference (`loom eval`): the model's outputs {name: ndarray}
    for `inputs` ({name: array}, a list in input order, or one array).

    model: a path, an onnx.ModelProto, or a Program that knows its model
    (compile and from_torch record it; its dims and bound inputs are used
    unless given)."""
    bind = {}
    if isinstance(model, Program):
        path, keep = _model_file(model)
        names = model.input_names
        if dims is None:
            dims = model.options.get("dims")
        bind = model.options.get("bind") or {}
        bf16 = _bf16_inputs(path) if bind else set()
        bf16 |= {n for n, (_, d) in model.input_specs.items() if d == "bfloat16"}
    else:
        path, keep = _model_file(model)
        info = _onnx_inputs(path)
        names, bf16 = info if info else ([], [])
    named = _named_inputs(names, inputs, path)
    result = dict(_loom.evaluate(path, named, _dims(dims), set(bf16), bind))
    del keep  # the temporary model (if any) may go now
    return result


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------

def synthetic_inputs(program, seed=0):
    """Deterministic inputs for `program` (a Program): floats uniform in
    [-1, 1) and integers and booleans 0/1 (valid as indices and token ids),
    drawn in input order from numpy.random.default_rng(seed). bf16 inputs
    are float32 arrays."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, (shape, dtype) in program.input_specs.items():
        if dtype in ("float16", "float32", "float64", "bfloat16"):
            value = rng.uniform(-1.0, 1.0, shape)
            value = value.astype(np.float32 if dtype == "bfloat16" else dtype)
        else:
            value = rng.integers(0, 2, shape).astype(dtype)
        out[name] = np.ascontiguousarray(value)
    return out


class CheckResult:
    """What check() found. Attributes:
      ok              every output within tolerance
      max_abs_error   {output name: max |simulated - reference|}
      max_rel_error   {output name: max |simulated - reference| / |reference|}
      failures        [one line per output that does not match]
      outputs         {name: ndarray} from the simulator
      reference       {name: ndarray} from the golden reference
      inputs          {name: ndarray} the inputs used
      stats           the simulation statistics (dict)
      program         the Program that ran
      rtol, atol, scale_tol   the tolerances applied
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def report(self):
        lines = []
        for name in self.reference:
            status = "FAIL " if any(f.startswith(f"output '{name}'") for f in self.failures) \
                else "match"
            lines.append(f"{status}  output '{name}': max abs err "
                         f"{self.max_abs_error[name]:.3g}, max rel err "
                         f"{self.max_rel_error[name]:.3g}")
        lines.extend(self.failures)
        lines.append("check passed: every output matches the golden reference" if self.ok
                     else "check FAILED")
        return "\n".join(lines)

    def __repr__(self):
        errs = ", ".join(f"{n}: {e:.3g}" for n, e in self.max_abs_error.items())
        return f"<loom.CheckResult ok={self.ok} max_abs_error={{{errs}}}>"


def _compare(name, expected, actual, rtol, atol, scale_tol):
    """(max abs error, max rel error, failure line or None), by the
    runtime's comparison (_loom.compare)."""
    if actual is None:
        return float("inf"), float("inf"), f"output '{name}': the simulator did not produce it"
    if expected.shape != actual.shape:
        return (float("inf"), float("inf"),
                f"output '{name}': shape {actual.shape}, the reference has {expected.shape}")
    if expected.dtype != actual.dtype:
        return (float("inf"), float("inf"),
                f"output '{name}': dtype {actual.dtype}, the reference has {expected.dtype}")
    ok, max_abs, max_rel, worst, bad = _loom.compare(expected, actual, rtol, atol, scale_tol)
    if not ok:
        i = np.unravel_index(worst, expected.shape)
        return max_abs, max_rel, (
            f"output '{name}': {bad} of {expected.size} elements differ; worst at "
            f"{tuple(int(x) for x in i)}: simulated {actual[i]!r}, reference {expected[i]!r}")
    return max_abs, max_rel, None


def check(model, inputs=None, target="tiny", precision=None, mapping="auto",
          rtol=None, atol=None, scale_tol=None, objective="latency", dims=None, seed=0,
          bind=None):
    """Compiles `model`, simulates it, runs the golden reference on the same
    inputs and compares every output (`loom check`, without the per-kernel
    divergence search). Returns a CheckResult (.ok, .max_abs_error, ...).

    model: a path or onnx.ModelProto (compiled with target, precision (None:
    the target's default_precision, else fp32), mapping, objective, dims,
    bind), or a Program that knows its model (not
    recompiled; its bound inputs are used). inputs: as for Program.run, or None for
    synthetic_inputs(program, seed). An element passes when
    |sim - ref| <= max(atol, scale_tol * S) + rtol * |ref|, S the output's
    largest |ref|; None takes `loom check`'s value for the precision
    (fp32: rtol 1e-3, atol 1e-4, scale_tol 1e-4; bf16: scale_tol 0.04;
    fp16: 4e-3; fp8: 1.0; int8: 0.2; rtol = atol = 0 for the narrow ones),
    and for a Program compiled with a narrow kv_precision the looser of the
    two scale tolerances."""
    if isinstance(model, Program):
        program = model
        path, keep = _model_file(program)
        precision = program.options.get("precision", "fp32")
        if dims is None:
            dims = program.options.get("dims")
        if bind is not None:
            raise Error(f"{program.name}: check(program, bind=...): the program is "
                        "compiled; its inputs were bound by compile(bind=...)")
    else:
        path, keep = _model_file(model)
        program = compile(path, target=target, precision=precision, mapping=mapping,
                          objective=objective, dims=dims, bind=bind)
        program._keep = keep
        precision = program.options["precision"]
    bind = program.options.get("bind") or {}
    # A KV cache stored narrow (kv_precision) is rounded too: the looser of
    # the two formats' tolerances, as `loom check --kv-precision` takes.
    kv = program.options.get("kv_precision", "fp32")
    d_rtol, d_atol, d_scale = _loom.check_tolerance(precision, kv)
    rtol = d_rtol if rtol is None else float(rtol)
    atol = d_atol if atol is None else float(atol)
    scale_tol = d_scale if scale_tol is None else float(scale_tol)

    if inputs is None:
        named = synthetic_inputs(program, seed)
    else:
        named = _named_inputs(program.input_names, inputs, program.name)
    outputs = program.run(named)
    bf16 = {n for n, (_, d) in program.input_specs.items() if d == "bfloat16"}
    if bind:
        bf16 |= _bf16_inputs(path)
    reference = dict(_loom.evaluate(path, named, _dims(dims), bf16, bind))

    max_abs, max_rel, failures = {}, {}, []
    for name, expected in reference.items():
        max_abs[name], max_rel[name], failure = _compare(
            name, expected, outputs.get(name), rtol, atol, scale_tol)
        if failure:
            failures.append(failure)
    return CheckResult(ok=not failures, max_abs_error=max_abs, max_rel_error=max_rel,
                       failures=failures, outputs=outputs, reference=reference,
                       inputs=named, stats=program.last_stats, program=program,
                       rtol=rtol, atol=atol, scale_tol=scale_tol)


# --------------------------------------------------------------------------
# from_torch, plan
# --------------------------------------------------------------------------

def _count_tensors(value):
    if hasattr(value, "detach") and hasattr(value, "shape"):
        return 1
    if isinstance(value, (list, tuple)):
        return sum(_count_tensors(v) for v in value)
    if isinstance(value, Mapping):
        return sum(_count_tensors(v) for v in value.values())
    return 0


def from_torch(module, example_inputs, target="tiny", path=None, input_names=None,
               output_names=None, opset=17, **compile_kwargs):
    """Exports a torch.nn.Module with torch.onnx.export and compiles it.

    example_inputs: a tensor or a tuple of tensors (their shapes are the
    program's: no dynamic axes). The module is put in eval mode. The ONNX
    file goes to `path` (kept) or to a temporary directory that lives as long
    as the Program; Program.model_path names it, so check(program) and
    evaluate(program, ...) use it. Inputs are named input0, input1, ... and
    outputs output0, ... unless input_names / output_names say otherwise.
    compile_kwargs: precision, mapping, objective, max_ii, verify."""
    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    module.eval()
    if input_names is None:
        input_names = [f"input{i}" for i in range(len(example_inputs))]
    if output_names is None:
        with torch.no_grad():
            n = _count_tensors(module(*example_inputs))
        output_names = [f"output{i}" for i in range(n)]
    keep = None
    if path is None:
        keep = _TempDir("loom-torch-")
        path = os.path.join(keep.name, type(module).__name__ + ".onnx")
    path = os.fspath(path)
    # Not under torch.no_grad(): torch 1.13 takes fast paths there (fused
    # MultiheadAttention) that have no ONNX export (scripts/export_zoo.py).
    torch.onnx.export(module, example_inputs, path, opset_version=opset,
                      do_constant_folding=True, input_names=list(input_names),
                      output_names=list(output_names), export_params=True)
    program = compile(path, target=target, **compile_kwargs)
    program._keep = keep
    return program


def plan(model, system, input_len=1024, output_len=256, concurrency=0, rate=0,
         weights="fp8", kv="fp8", activations="bf16", ttft_ms=0, tpot_ms=0,
         max_chips=0, top=5, prefill_system=None, compile=True, tp=0, pp=0,
         batch=0, max_num_tokens=None, scenario="offline"):
    """Capacity planning (`loom plan`, docs/planner.md): the best plans for
    serving the LLM whose Hugging Face config.json is `model` on `system`
    (a target preset or JSON file), as a dict: {"request": ..., "plans":
    [{"chips", "tp", "pp", "ep", "dp", "batch", "ttft_s", "tpot_s" (per
    output token under the plan's load), "decode_step_s", "prefill_share_s",
    "tokens_per_s", ...}], ...}. `max_num_tokens` is the serving engine's
    token budget per step (None: `loom plan`'s default, 8192) and
    `scenario` "offline" or "server" (Poisson arrivals; needs ttft_ms), as
    `loom plan`'s flags; `max_chips` 0 searches up to the system's own size
    where it names one (lpx-rack: 256 chips), else 10,000. Raises loom.Error on
    bad input, when no plan meets the targets (naming the nearest) or the
    model fits nowhere."""
    import json as _json
    numbers = dict(input_len=input_len, output_len=output_len, concurrency=concurrency,
                   rate=rate, ttft_ms=ttft_ms, tpot_ms=tpot_ms, max_chips=max_chips,
                   top=top, tp=tp, pp=pp, batch=batch)
    if max_num_tokens is not None:
        numbers["max_num_tokens"] = max_num_tokens
    numbers = {k: float(v) for k, v in numbers.items()}
    strings = dict(weights=_check_str("weights", weights), kv=_check_str("kv", kv),
                   activations=_check_str("activations", activations),
                   scenario=_check_str("scenario", scenario))
    text = _loom.plan(os.fspath(model), _check_str("system", system),
                      prefill_system or "", numbers, strings, bool(compile))
    return _json.loads(text)