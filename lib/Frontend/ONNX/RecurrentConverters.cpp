//===- RecurrentConverters.cpp - RNN, GRU and LSTM, unrolled --------------===//
//
// ONNX's recurrent cells become a static schedule over the sequence: the
// importer unrolls every time step into graph ops (one matrix product of the
// whole input sequence with the input weights, then per step a matrix
// product with the recurrence weights, slices for the gates, their
// activations and the elementwise state update). Both directions,
// batch-first layout, constant sequence lengths (masks, and for the reverse
// direction a gather that reverses each sequence within its length),
// initial states, clip, LSTM peepholes and the activation lists are
// supported; LSTM's input_forget=1 is refused. The unrolled graph grows with
// the sequence length, which Loom's static shapes fix at import.
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Reference/Evaluator.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace loom::graph;

namespace loom::onnx_import {
namespace {

enum class Cell { RNN, GRU, LSTM };

/// Gates per cell, in ONNX's weight order: RNN (i), GRU (z, r, h), LSTM
/// (i, o, f, c).
int64_t gatesOf(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
}

struct Activation {
  std::string name; // lower case
  double alpha = 0, beta = 0;
};

const Refusal &kActivation = declareRefusal(
    "RNN,GRU,LSTM",
    "an activation other than Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
    "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign and Softplus");
const Refusal &kInputForget =
    declareRefusal("LSTM", "input_forget=1 (coupled input and forget gates)");

/// The activation list: `perDirection` functions for each direction, with
/// their alpha and beta taken in order from activation_alpha/_beta by the
/// functions that use them (ONNX's defaults otherwise).
std::vector<Activation> activationsOf(NodeContext &nc, Cell cell,
                                      int64_t directions) {
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = nc.attr("activations"))
    for (const std::string &s : a->strings())
      names.push_back(llvm::StringRef(s).lower());
  size_t per = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) {
      names.push_back(cell == Cell::RNN ? "tanh" : "sigmoid");
      if (cell != Cell::RNN)
        names.push_back("tanh");
      if (cell == Cell::LSTM)
        names.push_back("tanh");
    }
  if (names.size() != per * directions)
    nc.fail("activations lists " + std::to_string(names.size()) +
            " functions; expected " + std::to_string(per * directions) + " (" +
            std::to_string(per) + " per direction)");
  std::vector<double> alphas = nc.floatsAttr("activation_alpha"),
                      betas = nc.floatsAttr("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  auto take = [](const std::vector<double> &v, size_t &next, double dflt) {
    return next < v.size() ? v[next++] : dflt;
  };
  std::vector<Activation> out;
  for (const std::string &n : names) {
    Activation a{n};
    if (n == "leakyrelu") {
      a.alpha = take(alphas, nextAlpha, 0.01);
    } else if (n == "thresholdedrelu" || n == "elu") {
      a.alpha = take(alphas, nextAlpha, 1.0);
    } else if (n == "hardsigmoid") {
      a.alpha = take(alphas, nextAlpha, 0.2);
      a.beta = take(betas, nextBeta, 0.5);
    } else if (n == "affine" || n == "scaledtanh") {
      a.alpha = take(alphas, nextAlpha, 1.0);
      a.beta = take(betas, nextBeta, n == "affine" ? 0.0 : 1.0);
    } else if (n != "tanh" && n != "sigmoid" && n != "relu" &&
               n != "softsign" && n != "softplus") {
      nc.refuse(kActivation, "'" + n + "'");
    }
    out.push_back(a);
  }
  return out;
}

/// Builds the unrolled recurrence of one node.
class Unroller {
public:
  Unroller(NodeContext &nc, Cell cell) : nc(nc), cell(cell) {}
  Values run();

private:
  Values build();
  NodeContext &nc;
  Cell cell;
  int64_t steps = 0, batch = 0, inputSize = 0, hidden = 0, directions = 1;
  double clip = 0;
  bool batchFirst = false;
  Type elt;
  std::vector<int64_t> lens; // one per batch entry
  std::vector<Activation> acts;

  Value add(Value a, Value b) { return binaryOp<AddOp>(nc, a, b); }
  Value sub(Value a, Value b) { return binaryOp<SubOp>(nc, a, b); }
  Value mul(Value a, Value b) { return binaryOp<MulOp>(nc, a, b); }
  Value cols(Value v, int64_t gate) {
    return sliceAxis(nc, v, 1, gate * hidden, (gate + 1) * hidden, 1);
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    auto s = typeOf(v).getShape();
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(s[p]);
    return nc.create<TransposeOp>(nc.tensorType(shape, elt), v,
                                  nc.b.getDenseI64ArrayAttr(perm));
  }
  /// Entry `d` of a per-direction tensor [D, ...], without the leading axis.
  Value direction(Value v, int64_t d) {
    auto s = typeOf(v).getShape();
    return nc.reshape(sliceAxis(nc, v, 0, d, d + 1, 1), s.drop_front());
  }
  Value constant(ArrayRef<int64_t> shape, double fill) {
    rt::Tensor t(*dtypeFromType(elt), rt::Shape(shape.begin(), shape.end()));
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setDouble(i, fill);
    return nc.constant(t);
  }
  Value activate(const Activation &a, Value x);
  Value clipped(Value v) {
    if (clip <= 0)
      return v;
    v = binaryOp<MaxOp>(nc, v, nc.scalarLike(v, -clip));
    return binaryOp<MinOp>(nc, v, nc.scalarLike(v, clip));
  }
  Value reverseWithinLengths(Value seq);
  Value stateInput(size_t i, int64_t d);
  /// One direction: returns Y_d [S, B, H], the last H and (LSTM) the last C.
  std::array<Value, 3> runDirection(int64_t d, bool reverse, Value x);
};

Value Unroller::activate(const Activation &a, Value x) {
  Type t = x.getType();
  const std::string &n = a.name;
  if (n == "tanh")
    return nc.create<TanhOp>(t, x);
  if (n == "sigmoid")
    return nc.create<SigmoidOp>(t, x);
  if (n == "relu")
    return nc.create<ReluOp>(t, x);
  if (n == "softsign")
    return nc.create<SoftsignOp>(t, x);
  if (n == "softplus")
    return nc.create<SoftplusOp>(t, x);
  if (n == "leakyrelu")
    return nc.create<LeakyReluOp>(t, x, nc.b.getF64FloatAttr(a.alpha));
  if (n == "thresholdedrelu")
    return nc.create<ThresholdedReluOp>(t, x, nc.b.getF64FloatAttr(a.alpha));
  if (n == "elu")
    return nc.create<EluOp>(t, x, nc.b.getF64FloatAttr(a.alpha));
  if (n == "hardsigmoid")
    return nc.create<HardSigmoidOp>(t, x, nc.b.getF64FloatAttr(a.alpha),
                                    nc.b.getF64FloatAttr(a.beta));
  if (n == "affine")
    return add(mul(x, nc.scalarLike(x, a.alpha)), nc.scalarLike(x, a.beta));
  // scaledtanh: alpha * tanh(beta * x)
  Value inner = nc.create<TanhOp>(t, mul(x, nc.scalarLike(x, a.beta)));
  return mul(inner, nc.scalarLike(x, a.alpha));
}

/// The sequence [S, B, F] with each batch entry's first lens[b] steps in
/// reverse order (the rest in place): a gather along the time axis with
/// constant indices. Applying it twice gives the sequence back.
Value Unroller::reverseWithinLengths(Value seq) {
  auto s = typeOf(seq).getShape();
  rt::Tensor index(rt::DType::I64, rt::Shape(s.begin(), s.end()));
  int64_t features = s[2];
  for (int64_t i = 0; i < index.numElements(); ++i) {
    int64_t t = i / (batch * features), b = (i / features) % batch;
    index.setInt(i, t < lens[b] ? lens[b] - 1 - t : t);
  }
  return nc.create<GatherElementsOp>(seq.getType(), seq, nc.constant(index),
                                     nc.b.getI64IntegerAttr(0));
}

/// Direction `d` of the initial state input `i` (initial_h or initial_c) as
/// [B, H], zeros if it is not given.
Value Unroller::stateInput(size_t i, int64_t d) {
  if (!nc.hasInput(i))
    return constant({batch, hidden}, 0);
  Value v = nc.input(i);
  SmallVector<int64_t> want =
      batchFirst ? SmallVector<int64_t>{batch, directions, hidden}
                 : SmallVector<int64_t>{directions, batch, hidden};
  if (typeOf(v).getShape() != ArrayRef<int64_t>(want))
    nc.fail("initial state input " + std::to_string(i) +
            " has the wrong shape");
  if (batchFirst)
    v = transpose(v, {1, 0, 2});
  return direction(v, d);
}

std::array<Value, 3> Unroller::runDirection(int64_t d, bool reverse, Value x) {
  // Each direction and each step gets a location of its own below the
  // node's ("LSTM_1/d0/t3"), so diagnostics and `loom check` can tell the
  // kernels of the unrolled steps apart.
  Location nodeLoc = nc.loc;
  std::string prefix =
      (isa<NameLoc>(nodeLoc) ? cast<NameLoc>(nodeLoc).getName().str()
                             : std::string("recurrence")) +
      "/d" + std::to_string(d);
  auto at = [&](const std::string &part) {
    nc.loc = NameLoc::get(nc.b.getStringAttr(prefix + "/" + part), nodeLoc);
  };
  struct Restore {
    NodeContext &nc;
    Location loc;
    ~Restore() { nc.loc = loc; }
  } restore{nc, nodeLoc};
  at("input");
  int64_t gates = gatesOf(cell);
  Value w = transpose(direction(nc.input(1), d), {1, 0}); // [I, G*H]
  Value r = transpose(direction(nc.input(2), d), {1, 0}); // [H, G*H]
  // Input and recurrence biases, added once to the input products; GRU's
  // linear_before_reset keeps the recurrence bias of its h gate apart.
  bool resetAfter = cell == Cell::GRU && nc.intAttr("linear_before_reset", 0);
  Value inputBias, hGateBias;
  if (nc.hasInput(3)) {
    Value bias = direction(nc.input(3), d); // [2*G*H]
    Value wb = sliceAxis(nc, bias, 0, 0, gates * hidden, 1);
    Value rb = sliceAxis(nc, bias, 0, gates * hidden, 2 * gates * hidden, 1);
    if (resetAfter) {
      hGateBias = sliceAxis(nc, rb, 0, 2 * hidden, 3 * hidden, 1);
      rb =
          nc.create<ConcatOp>(nc.tensorType({gates * hidden}, elt),
                              ValueRange{sliceAxis(nc, rb, 0, 0, 2 * hidden, 1),
                                         constant({hidden}, 0)},
                              nc.b.getI64IntegerAttr(0));
    }
    inputBias = add(wb, rb);
  }
  Value peephole;
  if (cell == Cell::LSTM && nc.hasInput(7))
    peephole = direction(nc.input(7), d); // [3*H]: i, o, f
  Value seq = reverse ? reverseWithinLengths(x) : x;
  Value xw = nc.create<MatMulOp>(
      nc.tensorType({steps, batch, gates * hidden}, elt), seq, w);
  if (inputBias)
    xw = add(xw, inputBias);
  const Activation *f = &acts[d * (acts.size() / directions)];
  Value h = stateInput(5, d);
  Value c = cell == Cell::LSTM ? stateInput(6, d) : Value();
  auto peep = [&](int64_t k) {
    return sliceAxis(nc, peephole, 0, k * hidden, (k + 1) * hidden, 1);
  };
  Values ys;
  for (int64_t t = 0; t < steps; ++t) {
    at("t" + std::to_string(t));
    Value xt =
        nc.reshape(sliceAxis(nc, xw, 0, t, t + 1, 1), {batch, gates * hidden});
    Value hNew, cNew;
    if (cell == Cell::RNN) {
      Value hr = nc.create<MatMulOp>(nc.tensorType({batch, hidden}, elt), h, r);
      hNew = activate(f[0], clipped(add(xt, hr)));
    } else if (cell == Cell::GRU) {
      Value rzr = sliceAxis(nc, r, 1, 0, 2 * hidden, 1);
      Value rh = sliceAxis(nc, r, 1, 2 * hidden, 3 * hidden, 1);
      Value hr =
          nc.create<MatMulOp>(nc.tensorType({batch, 2 * hidden}, elt), h, rzr);
      Value z = activate(f[0], clipped(add(cols(xt, 0), cols(hr, 0))));
      Value rg = activate(f[0], clipped(add(cols(xt, 1), cols(hr, 1))));
      Value candidate;
      if (resetAfter) {
        Value hh =
            nc.create<MatMulOp>(nc.tensorType({batch, hidden}, elt), h, rh);
        if (hGateBias)
          hh = add(hh, hGateBias);
        candidate = add(cols(xt, 2), mul(rg, hh));
      } else {
        candidate = add(cols(xt, 2),
                        nc.create<MatMulOp>(nc.tensorType({batch, hidden}, elt),
                                            mul(rg, h), rh));
      }
      Value hc = activate(f[1], clipped(candidate));
      // (1 - z) * hc + z * h
      hNew = add(hc, mul(z, sub(h, hc)));
    } else {
      Value pre = add(xt, nc.create<MatMulOp>(
                              nc.tensorType({batch, 4 * hidden}, elt), h, r));
      Value pi = cols(pre, 0), po = cols(pre, 1), pf = cols(pre, 2),
            pc = cols(pre, 3);
      if (peephole) {
        pi = add(pi, mul(peep(0), c));
        pf = add(pf, mul(peep(2), c));
      }
      Value ig = activate(f[0], clipped(pi));
      Value fg = activate(f[0], clipped(pf));
      Value cc = activate(f[1], clipped(pc));
      cNew = add(mul(fg, c), mul(ig, cc));
      if (peephole)
        po = add(po, mul(peep(1), cNew));
      Value og = activate(f[0], clipped(po));
      hNew = mul(og, activate(f[2], cNew));
    }
    // Entries whose sequence has ended keep their state and output zeros.
    bool allLive = llvm::all_of(lens, [&](int64_t l) { return t < l; });
    Value y = hNew;
    if (!allLive) {
      rt::Tensor live(*dtypeFromType(elt), {batch, 1});
      for (int64_t b = 0; b < batch; ++b)
        live.setDouble(b, t < lens[b] ? 1.0 : 0.0);
      Value m = nc.constant(live);
      Value keep = sub(nc.scalarLike(m, 1.0), m);
      y = mul(hNew, m);
      hNew = add(y, mul(h, keep));
      if (cNew)
        cNew = add(mul(cNew, m), mul(c, keep));
    }
    h = hNew;
    c = cNew;
    ys.push_back(nc.reshape(y, {1, batch, hidden}));
  }
  at("output");
  Value yd = nc.create<ConcatOp>(nc.tensorType({steps, batch, hidden}, elt), ys,
                                 nc.b.getI64IntegerAttr(0));
  if (reverse)
    yd = reverseWithinLengths(yd);
  return {yd, h, c};
}

/// Numbers the ops of each step ("LSTM_1/d0/t3.2", and "LSTM_1/out.0"
/// for those that assemble the outputs): `loom check` pairs the compiled
/// kernels with the reference's by name, and several kernels of one node
/// would otherwise share one.
void numberOpsAfter(Block *block, Operation *last) {
  llvm::StringMap<int> seen;
  auto it = last ? std::next(Block::iterator(last)) : block->begin();
  for (Operation &op : llvm::make_range(it, block->end())) {
    auto name = dyn_cast<NameLoc>(op.getLoc());
    if (!name)
      continue;
    // The node's own location (outside the steps) becomes "node/out".
    bool step = isa<NameLoc>(name.getChildLoc());
    std::string base = name.getName().str() + (step ? "" : "/out");
    int k = seen[base]++;
    op.setLoc(NameLoc::get(
        StringAttr::get(op.getContext(), base + "." + std::to_string(k)),
        step ? name.getChildLoc() : Location(name)));
  }
}

Values Unroller::run() {
  Block *block = nc.b.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  Values outs = build();
  numberOpsAfter(block, last);
  return outs;
}

Values Unroller::build() {
  Value x = nc.input(0);
  auto xt = typeOf(x);
  elt = xt.getElementType();
  if (!isa<FloatType>(elt))
    nc.fail("X must hold floating-point values");
  batchFirst = nc.intAttr("layout", 0) != 0;
  if (xt.getRank() != 3)
    nc.fail("X must have rank 3");
  if (batchFirst)
    x = transpose(x, {1, 0, 2});
  auto s = typeOf(x).getShape();
  steps = s[0];
  batch = s[1];
  inputSize = s[2];
  std::string dir = nc.stringAttr("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    nc.fail("direction must be forward, reverse or bidirectional, not '" + dir +
            "'");
  directions = dir == "bidirectional" ? 2 : 1;
  int64_t gates = gatesOf(cell);
  auto rShape = typeOf(nc.input(2)).getShape();
  if (rShape.size() != 3 || rShape[0] != directions ||
      rShape[1] != gates * rShape[2])
    nc.fail("R must be [num_directions, " + std::to_string(gates) +
            "*hidden_size, hidden_size]");
  hidden = rShape[2];
  if (nc.hasAttr("hidden_size") && nc.intAttr("hidden_size", 0) != hidden)
    nc.fail("hidden_size differs from R's shape");
  auto wShape = typeOf(nc.input(1)).getShape();
  if (wShape.size() != 3 || wShape[0] != directions ||
      wShape[1] != gates * hidden || wShape[2] != inputSize)
    nc.fail("W must be [num_directions, " + std::to_string(gates) +
            "*hidden_size, input_size]");
  if (nc.hasInput(3) && typeOf(nc.input(3)).getShape() !=
                            ArrayRef<int64_t>({directions, 2 * gates * hidden}))
    nc.fail("B must be [num_directions, " + std::to_string(2 * gates) +
            "*hidden_size]");
  if (cell == Cell::LSTM && nc.hasInput(7) &&
      typeOf(nc.input(7)).getShape() !=
          ArrayRef<int64_t>({directions, 3 * hidden}))
    nc.fail("P must be [num_directions, 3*hidden_size]");
  if (cell == Cell::LSTM && nc.intAttr("input_forget", 0))
    nc.refuse(kInputForget);
  clip = nc.hasAttr("clip") ? nc.floatAttr("clip", 0) : 0;
  if (nc.hasAttr("clip") && !(clip > 0))
    nc.fail("clip must be positive");
  lens.assign(batch, steps);
  if (nc.hasInput(4)) {
    rt::Tensor given = nc.requireConstant(4, "sequence_lens");
    if (given.numElements() != batch)
      nc.fail("sequence_lens has " + std::to_string(given.numElements()) +
              " values for a batch of " + std::to_string(batch));
    for (int64_t b = 0; b < batch; ++b) {
      lens[b] = given.getInt(b);
      if (lens[b] < 0 || lens[b] > steps)
        nc.fail("sequence_lens[" + std::to_string(b) +
                "] = " + std::to_string(lens[b]) + " is outside [0, " +
                std::to_string(steps) + "]");
    }
  }
  acts = activationsOf(nc, cell, directions);

  Values yParts, hParts, cParts;
  for (int64_t d = 0; d < directions; ++d) {
    auto [yd, hd, cd] = runDirection(d, dir == "reverse" || d == 1, x);
    yParts.push_back(nc.reshape(yd, {steps, 1, batch, hidden}));
    hParts.push_back(nc.reshape(hd, {1, batch, hidden}));
    if (cd)
      cParts.push_back(nc.reshape(cd, {1, batch, hidden}));
  }
  auto concat = [&](const Values &parts, int64_t axis) {
    SmallVector<int64_t> shape(typeOf(parts[0]).getShape());
    shape[axis] *= parts.size();
    if (parts.size() == 1)
      return parts[0];
    return nc.create<ConcatOp>(nc.tensorType(shape, elt), parts,
                               nc.b.getI64IntegerAttr(axis));
  };
  Value y = concat(yParts, 1);  // [S, D, B, H]
  Value yh = concat(hParts, 0); // [D, B, H]
  Value yc = cParts.empty() ? Value() : concat(cParts, 0);
  if (batchFirst) {
    y = transpose(y, {2, 0, 1, 3}); // [B, S, D, H]
    yh = transpose(yh, {1, 0, 2});  // [B, D, H]
    if (yc)
      yc = transpose(yc, {1, 0, 2});
  }
  Values outs = {y, yh};
  if (cell == Cell::LSTM)
    outs.push_back(yc);
  return outs;
}

} // namespace

void addRecurrentConverters(llvm::StringMap<Converter> &t) {
  t["RNN"] = [](NodeContext &nc) { return Unroller(nc, Cell::RNN).run(); };
  t["GRU"] = [](NodeContext &nc) { return Unroller(nc, Cell::GRU).run(); };
  t["LSTM"] = [](NodeContext &nc) { return Unroller(nc, Cell::LSTM).run(); };
}

} // namespace loom::onnx_import
