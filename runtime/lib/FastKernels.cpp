//===- FastKernels.cpp - fp32 matmul and convolution through BLAS ---------===//
//
// The simulator's functional mode runs matmul and convolution through BLIS's
// cblas_sgemm instead of the reference kernels' plain fp64 loops:
//
//  - matmul: numpy semantics (1-D promotion, broadcasting batch dims). When
//    B has no batch of its own and A's batch is dense, the whole batch folds
//    into one sgemm of M = batch * m; otherwise one sgemm per batch entry.
//  - conv: N-d grouped convolution as im2col into a per-thread buffer that is
//    reused across calls, then one sgemm per (image, group).
//
// Precision policy: with FastOptions::inputRounding set, both operands are
// rounded to bfloat16, IEEE binary16 or FP8 E4M3 (round to nearest, ties to
// even; see roundInput) and back to fp32 before the sgemm, so products are
// exact products of the narrow values (at most 2 x 11 significant bits fit
// in fp32's 24) and accumulation stays fp32, as on such a matrix unit. int8
// is quantized per tensor (roundInputs) and multiplied as the dequantized
// fp32 values, which an int8 unit's exact int32 products and sums match
// to within fp32 rounding. The bias of a conv
// is added in fp32 and is not rounded (it is not a matrix-unit operand).
//
// Determinism: the BLAS is BLIS's single-threaded build. A multi-threaded
// sgemm may split K across threads and sum partial results in an order that
// depends on the thread count, so results would change with the machine;
// single-threaded, the result depends only on the inputs (and on the CPU's
// BLIS kernel, which is fixed on a given machine).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/OpExecutor.h"

#include "Reference/Common.h"

#include <cmath>

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace loom::rt::fast {
namespace {

[[noreturn]] void fail(const char *op, const std::string &msg) {
  throw Error(std::string("fast::") + op + ": " + msg);
}

/// Nothing to set up: the serial BLIS build never starts threads.
void initBlas() {}

void checkF32(const char *op, const Tensor &t, const char *what) {
  if (!t.isValid())
    fail(op, std::string(what) + " is not a valid tensor");
  if (t.dtype() != DType::F32)
    fail(op, std::string(what) + " has element type " + dtypeName(t.dtype()) +
                 "; only f32 is supported");
}

/// The operand as fp32 values, rounded as the precision policy asks;
/// `storage` owns the rounded copy.
const float *operand(const Tensor &t, InputRounding rounding,
                     std::vector<float> &storage, double int8Scale = 0.0) {
  const float *p = t.data<float>();
  if (rounding == InputRounding::None)
    return p;
  storage.resize(static_cast<size_t>(t.numElements()));
  if (rounding == InputRounding::Int8)
    roundInputsInt8(p, storage.data(), t.numElements(), int8Scale);
  else
    roundInputs(p, storage.data(), t.numElements(), rounding);
  return storage.data();
}

int blasInt(const char *op, int64_t v) {
  if (v > 0x7fffffff)
    fail(op, "dimension " + std::to_string(v) + " exceeds the BLAS int range");
  return static_cast<int>(v);
}

/// C[m x n] = A[m x k] * B[k x n], all row-major and dense.
void sgemm(const char *op, const float *a, const float *b, float *c, int64_t m,
           int64_t k, int64_t n) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasInt(op, m),
              blasInt(op, n), blasInt(op, k), 1.0f, a, blasInt(op, k), b,
              blasInt(op, n), 0.0f, c, blasInt(op, n));
}

int64_t product(const Shape &s) {
  int64_t p = 1;
  for (int64_t d : s)
    p *= d;
  return p;
}


/// Applies `f` elementwise with numpy broadcasting over fp32 tensors. The
/// innermost output axis is a tight loop with a fixed stride per operand (0
/// where it broadcasts), so bias and residual adds run at memory speed.
template <typename F>
Tensor broadcastF32(const Tensor &a, const Tensor &b, const Shape &outShape,
                    F f) {
  Tensor out = Tensor::uninitialized(DType::F32, outShape);
  int64_t n = out.numElements();
  if (n == 0)
    return out;
  size_t rank = outShape.size();
  auto stridesFor = [&](const Shape &in) {
    std::vector<int64_t> natural = stridesOf(in), s(rank, 0);
    size_t lead = rank - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      s[lead + d] = in[d] == 1 ? 0 : natural[d];
    return s;
  };
  std::vector<int64_t> sa = stridesFor(a.shape()), sb = stridesFor(b.shape());
  const float *pa = a.data<float>(), *pb = b.data<float>();
  float *po = out.mutableData<float>();
  int64_t inner = rank ? outShape[rank - 1] : 1;
  int64_t ia = rank ? sa[rank - 1] : 0, ib = rank ? sb[rank - 1] : 0;
  std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
  for (int64_t base = 0; base < n; base += inner) {
    int64_t offA = 0, offB = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      offA += index[d] * sa[d];
      offB += index[d] * sb[d];
    }
    for (int64_t j = 0; j < inner; ++j)
      po[base + j] = f(pa[offA + j * ia], pb[offB + j * ib]);
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// Adds the per-channel bias to an [n, m, plane] output, if there is one.
void addBias(const Tensor &bias, bool hasBias, float *yp, int64_t n,
             int64_t m, int64_t outPlane) {
  if (!hasBias)
    return;
  const float *bv = bias.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < m; ++ch) {
      float v = bv[ch];
      float *dst = yp + (b * m + ch) * outPlane;
      for (int64_t i = 0; i < outPlane; ++i)
        dst[i] += v;
    }
}

} // namespace

Tensor maxPool2d(const Tensor &x, const std::vector<int64_t> &kernel,
                 const std::vector<int64_t> &strides,
                 const std::vector<int64_t> &dilations,
                 const std::vector<int64_t> &pads, const Shape &outShape) {
  if (x.dtype() != DType::F32 || x.rank() != 4 || outShape.size() != 4 ||
      kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 ||
      pads.size() != 4 || outShape[0] != x.dim(0) || outShape[1] != x.dim(1))
    throw Error("fast max_pool: expects a 4-D f32 input with 2-D windows");
  int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  int64_t oh = outShape[2], ow = outShape[3];
  Tensor out = Tensor::uninitialized(DType::F32, outShape);
  const float *in = x.data<float>();
  float *o = out.mutableData<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float *plane = in + p * h * w;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        // NaN wins, as in the reference; an empty window gives -inf.
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t ki = 0; ki < kernel[0]; ++ki) {
          int64_t r = i * strides[0] - pads[0] + ki * dilations[0];
          if (r < 0 || r >= h)
            continue;
          for (int64_t kj = 0; kj < kernel[1]; ++kj) {
            int64_t col = j * strides[1] - pads[1] + kj * dilations[1];
            if (col < 0 || col >= w)
              continue;
            float v = plane[r * w + col];
            if (v > best || std::isnan(v))
              best = v;
            if (std::isnan(best))
              break;
          }
        }
        o[(p * oh + i) * ow + j] = best;
      }
  }
  return out;
}

Tensor unary(ref::UnaryKind kind, const Tensor &x) {
  if (kind != ref::UnaryKind::Relu || x.dtype() != DType::F32)
    return ref::unary(kind, x);
  Tensor out = Tensor::uninitialized(DType::F32, x.shape());
  const float *in = x.data<float>();
  float *o = out.mutableData<float>();
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    o[i] = in[i] > 0.0f || std::isnan(in[i]) ? in[i] : 0.0f;
  return out;
}

Tensor binary(ref::BinaryKind kind, const Tensor &a, const Tensor &b) {
  if (a.dtype() != DType::F32 || b.dtype() != DType::F32)
    throw Error("fast binary: operands must be f32");
  // The operands decide the shape (a program may declare another one, which
  // executeOp then rejects).
  Shape shape = ref::broadcastShapes(a.shape(), b.shape());
  using B = ref::BinaryKind;
  switch (kind) {
  case B::Add:
    return broadcastF32(a, b, shape, [](float x, float y) { return x + y; });
  case B::Sub:
    return broadcastF32(a, b, shape, [](float x, float y) { return x - y; });
  case B::Mul:
    return broadcastF32(a, b, shape, [](float x, float y) { return x * y; });
  case B::Div:
    return broadcastF32(a, b, shape, [](float x, float y) { return x / y; });
  case B::Max:
    return broadcastF32(a, b, shape, [](float x, float y) {
      return std::isnan(x) || std::isnan(y) ? std::nanf("") : std::max(x, y);
    });
  case B::Min:
    return broadcastF32(a, b, shape, [](float x, float y) {
      return std::isnan(x) || std::isnan(y) ? std::nanf("") : std::min(x, y);
    });
  default:
    return ref::binary(kind, a, b);
  }
}

namespace {
} // namespace

Tensor matmul(const Tensor &a, const Tensor &b, const FastOptions &opts) {
  const char *op = "matmul";
  checkF32(op, a, "A");
  checkF32(op, b, "B");
  if (a.rank() < 1 || b.rank() < 1)
    fail(op, "operands must have rank >= 1");
  initBlas();

  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail(op, "contraction dimensions differ: " + shapeToString(a.shape()) +
                 " x " + shapeToString(b.shape()));

  // Broadcast the batch dims (right-aligned); strides count whole matrices.
  Shape ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank);
  std::vector<int64_t> strideA(rank, 0), strideB(rank, 0);
  std::vector<int64_t> sa = stridesOf(ba), sb = stridesOf(bb);
  for (size_t i = 0; i < rank; ++i) {
    int64_t ia = static_cast<int64_t>(i + ba.size()) - static_cast<int64_t>(rank);
    int64_t ib = static_cast<int64_t>(i + bb.size()) - static_cast<int64_t>(rank);
    int64_t da = ia >= 0 ? ba[ia] : 1, db = ib >= 0 ? bb[ib] : 1;
    if (da != db && da != 1 && db != 1)
      fail(op, "batch dimensions " + shapeToString(a.shape()) + " and " +
                   shapeToString(b.shape()) + " do not broadcast");
    batch[i] = da == 1 ? db : da;
    if (da != 1)
      strideA[i] = sa[ia];
    if (db != 1)
      strideB[i] = sb[ib];
  }
  Shape outShape = batch;
  if (a.rank() > 1)
    outShape.push_back(m);
  if (b.rank() > 1)
    outShape.push_back(n);

  std::vector<float> aStore, bStore;
  const float *ap =
      operand(a, opts.inputRounding, aStore, opts.int8Scales[0]);
  const float *bp =
      operand(b, opts.inputRounding, bStore, opts.int8Scales[1]);
  // Every element is written by an sgemm (beta = 0), so no clearing.
  Tensor out = Tensor::uninitialized(DType::F32, outShape);
  float *cp = out.mutableData<float>();
  int64_t numBatch = product(batch);
  if (numBatch == 0)
    return out;

  // B shared by every batch entry and A dense over the batch: one sgemm.
  if (product(bb) == 1 && product(ba) == numBatch) {
    sgemm(op, ap, bp, cp, numBatch * m, k, n);
    return out;
  }
  std::vector<int64_t> idx(rank, 0);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t offA = 0, offB = 0;
    for (size_t d = 0; d < rank; ++d) {
      offA += idx[d] * strideA[d];
      offB += idx[d] * strideB[d];
    }
    sgemm(op, ap + offA * m * k, bp + offB * k * n, cp + bi * m * n, m, k, n);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < batch[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {
/// An 8-bit operand minus its zero point, as int16 (9 bits suffice).
std::vector<int16_t> centered16(const Tensor &t, int64_t zero,
                                const char *what) {
  const char *op = "matmul";
  if (t.dtype() != DType::I8 && t.dtype() != DType::U8)
    fail(op, std::string(what) + " must be int8 or uint8, got " +
                 dtypeName(t.dtype()));
  int64_t lo = t.dtype() == DType::I8 ? -128 : 0;
  if (zero < lo || zero > lo + 255)
    fail(op, std::string(what) + "'s zero point " + std::to_string(zero) +
                 " is outside its type's range");
  std::vector<int16_t> v(static_cast<size_t>(t.numElements()));
  auto z = static_cast<int16_t>(zero);
  if (t.dtype() == DType::I8) {
    const int8_t *p = t.data<int8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<int16_t>(p[i] - z);
  } else {
    const uint8_t *p = t.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<int16_t>(p[i] - z);
  }
  return v;
}

/// c[m x n] = a[m x k] * b[k x n] with a 32-bit accumulator that wraps
/// (as unsigned arithmetic, so mod 2^32 like the reference's int64 sum
/// cast to int32), K in blocks of 256 so a row of c stays in cache.
void igemm(const int16_t *a, const int16_t *b, int32_t *c, int64_t m,
           int64_t k, int64_t n) {
  constexpr int64_t kBlock = 256;
  std::vector<uint32_t> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0u);
    for (int64_t p0 = 0; p0 < k; p0 += kBlock)
      for (int64_t p = p0; p < std::min(k, p0 + kBlock); ++p) {
        auto av = static_cast<uint32_t>(static_cast<int32_t>(a[i * k + p]));
        const int16_t *brow = b + p * n;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += av * static_cast<uint32_t>(static_cast<int32_t>(brow[j]));
      }
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = static_cast<int32_t>(acc[j]);
  }
}
} // namespace

Tensor qmatmul(const Tensor &a, const Tensor &b, int64_t aZero,
               int64_t bZero) {
  const char *op = "matmul";
  if (a.rank() < 1 || b.rank() < 1)
    fail(op, "operands must have rank >= 1");
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail(op, "contraction dimensions differ: " + shapeToString(a.shape()) +
                 " x " + shapeToString(b.shape()));
  Shape ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank);
  std::vector<int64_t> strideA(rank, 0), strideB(rank, 0);
  std::vector<int64_t> sa = stridesOf(ba), sb = stridesOf(bb);
  for (size_t i = 0; i < rank; ++i) {
    int64_t ia = static_cast<int64_t>(i + ba.size()) - static_cast<int64_t>(rank);
    int64_t ib = static_cast<int64_t>(i + bb.size()) - static_cast<int64_t>(rank);
    int64_t da = ia >= 0 ? ba[ia] : 1, db = ib >= 0 ? bb[ib] : 1;
    if (da != db && da != 1 && db != 1)
      fail(op, "batch dimensions " + shapeToString(a.shape()) + " and " +
                   shapeToString(b.shape()) + " do not broadcast");
    batch[i] = da == 1 ? db : da;
    if (da != 1)
      strideA[i] = sa[ia];
    if (db != 1)
      strideB[i] = sb[ib];
  }
  Shape outShape = batch;
  if (a.rank() > 1)
    outShape.push_back(m);
  if (b.rank() > 1)
    outShape.push_back(n);
  std::vector<int16_t> av = centered16(a, aZero, "A"),
                       bv = centered16(b, bZero, "B");
  Tensor out = Tensor::uninitialized(DType::I32, outShape);
  int32_t *cp = out.mutableData<int32_t>();
  int64_t numBatch = product(batch);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t offA = 0, offB = 0;
    for (size_t d = 0; d < rank; ++d) {
      offA += idx[d] * strideA[d];
      offB += idx[d] * strideB[d];
    }
    igemm(av.data() + offA * m * k, bv.data() + offB * k * n,
          cp + bi * m * n, m, k, n);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < batch[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

Tensor conv(const Tensor &x, const Tensor &w, const Tensor &bias,
            const std::vector<int64_t> &strides,
            const std::vector<int64_t> &dilations,
            const std::vector<int64_t> &pads, int64_t group,
            const FastOptions &opts) {
  const char *op = "conv";
  checkF32(op, x, "X");
  checkF32(op, w, "W");
  bool hasBias = bias.raw() != nullptr && bias.numElements() > 0;
  if (hasBias)
    checkF32(op, bias, "B");
  if (x.rank() < 3)
    fail(op, "input must have rank >= 3, got " + shapeToString(x.shape()));
  if (w.rank() != x.rank())
    fail(op, "weight rank differs from input rank: " +
                 shapeToString(w.shape()) + " vs " + shapeToString(x.shape()));
  if (group < 1)
    fail(op, "group must be positive");
  initBlas();

  size_t r = static_cast<size_t>(x.rank() - 2);
  int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), g = group;
  auto [cg, mg] = ref::convGroupChannels("fast::conv", x, w, g);
  if (hasBias && (bias.rank() != 1 || bias.dim(0) != m))
    fail(op, "bias shape " + shapeToString(bias.shape()) + " should be [" +
                 std::to_string(m) + "]");
  auto perAxis = [&](const char *what, const std::vector<int64_t> &v,
                     size_t count, int64_t dflt) {
    if (v.empty())
      return std::vector<int64_t>(count, dflt);
    if (v.size() != count)
      fail(op, std::string(what) + " has " + std::to_string(v.size()) +
                   " entries, expected " + std::to_string(count));
    return v;
  };
  Shape in(x.shape().begin() + 2, x.shape().end());
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> st = perAxis("strides", strides, r, 1);
  std::vector<int64_t> dl = perAxis("dilations", dilations, r, 1);
  std::vector<int64_t> pd = perAxis("pads", pads, 2 * r, 0);
  Shape outSp(r);
  for (size_t d = 0; d < r; ++d) {
    if (st[d] < 1 || dl[d] < 1 || kernel[d] < 1)
      fail(op, "kernel, strides and dilations must be positive");
    if (pd[d] < 0 || pd[d + r] < 0)
      fail(op, "pads must be non-negative");
    int64_t span = dl[d] * (kernel[d] - 1) + 1;
    int64_t padded = in[d] + pd[d] + pd[d + r];
    if (padded < span)
      fail(op, "kernel is larger than the padded input");
    outSp[d] = (padded - span) / st[d] + 1;
  }
  Shape outShape = {n, m};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  // Every element is written by an sgemm (beta = 0), so no clearing.
  Tensor out = Tensor::uninitialized(DType::F32, outShape);

  int64_t inPlane = product(in), outPlane = product(outSp);
  int64_t taps = product(kernel);
  if (out.numElements() == 0)
    return out;

  std::vector<float> xStore, wStore;
  const float *xp = operand(x, opts.inputRounding, xStore,
                            opts.int8Scales[0]);
  const float *wp = operand(w, opts.inputRounding, wStore,
                            opts.int8Scales[1]);
  float *yp = out.mutableData<float>();

  // A 1x1 convolution with unit strides and no padding reads the input
  // planes as they are: they already are the im2col matrix.
  bool pointwise = taps == 1 && outPlane == inPlane &&
                   std::all_of(st.begin(), st.end(), [](int64_t v) { return v == 1; }) &&
                   std::all_of(pd.begin(), pd.end(), [](int64_t v) { return v == 0; });
  if (pointwise) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t gi = 0; gi < g; ++gi)
        sgemm(op, wp + gi * mg * cg, xp + (b * c + gi * cg) * inPlane,
              yp + (b * m + gi * mg) * outPlane, mg, cg, outPlane);
    addBias(bias, hasBias, yp, n, m, outPlane);
    return out;
  }

  // im2col buffer: col[(ci * taps + kk) * outPlane + o], reused across calls.
  thread_local std::vector<float> col;
  col.resize(static_cast<size_t>(cg * taps * outPlane));
  // The input offset of every (tap, output position), -1 in the padding;
  // shared by every channel, image and group.
  std::vector<int64_t> src(static_cast<size_t>(taps * outPlane));
  {
    std::vector<int64_t> inStrides = stridesOf(in);
    std::vector<int64_t> kIdx(r, 0), oIdx(r, 0);
    for (int64_t kk = 0; kk < taps; ++kk) {
      std::fill(oIdx.begin(), oIdx.end(), 0);
      for (int64_t o = 0; o < outPlane; ++o) {
        int64_t off = 0;
        bool ok = true;
        for (size_t d = 0; d < r; ++d) {
          int64_t i = oIdx[d] * st[d] - pd[d] + kIdx[d] * dl[d];
          ok = ok && i >= 0 && i < in[d];
          off += i * inStrides[d];
        }
        src[kk * outPlane + o] = ok ? off : -1;
        for (size_t d = r; d-- > 0;) {
          if (++oIdx[d] < outSp[d])
            break;
          oIdx[d] = 0;
        }
      }
      for (size_t d = r; d-- > 0;) {
        if (++kIdx[d] < kernel[d])
          break;
        kIdx[d] = 0;
      }
    }
  }

  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < g; ++gi) {
      const float *xg = xp + (b * c + gi * cg) * inPlane;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const float *plane = xg + ci * inPlane;
        float *dst = col.data() + ci * taps * outPlane;
        for (int64_t j = 0, e = taps * outPlane; j < e; ++j) {
          int64_t s = src[j];
          dst[j] = s >= 0 ? plane[s] : 0.0f;
        }
      }
      sgemm(op, wp + gi * mg * cg * taps, col.data(),
            yp + (b * m + gi * mg) * outPlane, mg, cg * taps, outPlane);
    }
  addBias(bias, hasBias, yp, n, m, outPlane);

  return out;
}

} // namespace loom::rt::fast
