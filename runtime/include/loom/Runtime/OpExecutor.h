//===- OpExecutor.h - Execute one graph op by name --------------*- C++ -*-===//
//
// The runtime's view of a graph-dialect op: its mnemonic ("matmul", "add",
// "conv", ...), its attributes by their ODS names, and the types of its
// results. The golden reference evaluator (compiler side) and the simulator
// (runtime side) both execute ops through executeOp, so the two can only
// differ where they choose to: the reference kernels accumulate in fp64, the
// fast kernels use BLAS in fp32 and emulate the kernel's precision policy.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_OPEXECUTOR_H
#define LOOM_RUNTIME_OPEXECUTOR_H

#include "loom/Runtime/Reference.h"
#include "loom/Runtime/Tensor.h"
#include "loom/Runtime/TargetDesc.h"

#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace loom::rt {

/// One attribute value. Bool and Int use `ints[0]`; Float uses `floats[0]`.
struct AttrValue {
  enum class Kind { Int, Ints, Float, Floats, String, Bool } kind = Kind::Int;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string str;
};
using AttrMap = std::map<std::string, AttrValue>;

/// The declared type of one result.
struct ResultType {
  Shape shape;
  DType dtype = DType::F32;
};

enum class ExecMode {
  /// The golden reference kernels (fp64 accumulation, plain loops).
  Reference,
  /// Fast kernels: BLAS for matmul and convolution.
  Fast,
};

/// How a kernel's precision policy rounds the matrix unit's inputs
/// (matmul/conv operands) before an fp32-accumulating product.
enum class InputRounding {
  None,    ///< fp32 inputs
  BF16,    ///< bfloat16, round to nearest even (loom::rt::BFloat16)
  FP16,    ///< IEEE binary16, round to nearest even (loom::rt::Half)
  FP8E4M3, ///< FP8 E4M3, round to nearest even, saturating (roundToFp8E4M3)
  /// int8, symmetric per tensor: scale s = max|x| / 127 over the finite
  /// values, x -> s x clamp(round-to-nearest-even(x / s), -127, 127)
  /// (in double); an all-zero tensor stays zero, inf and NaN pass through.
  /// Kernels multiply and sum the dequantized values in fp32, which an int8
  /// unit's exact int32 arithmetic matches to within fp32 rounding.
  Int8,
};

/// The input rounding of a kernel precision ("fp32", "bf16", "fp16",
/// "fp8", "int8"); nullopt for any other string.
std::optional<InputRounding> inputRoundingOf(std::string_view precision);

/// `v` rounded as `r` says, returned as fp32. Int8 is per tensor (its
/// scale depends on every element): use roundInputs.
float roundInput(float v, InputRounding r);

/// The `n` values of `src` rounded as `r` says into `dst` (which may be
/// `src`): what a matmul or conv kernel of that precision reads.
void roundInputs(const float *src, float *dst, int64_t n, InputRounding r);

/// `t` as a tensor stored in `format` holds it: a new f32 tensor of its
/// values rounded to bf16, fp16 or fp8 (E4M3), as roundInput; `t` itself
/// for fp32 or a tensor that is not f32.
Tensor roundToStorage(const Tensor &t, NumericFormat format);

/// Options of fast execution.
struct FastOptions {
  /// Rounding of matmul/conv inputs (accumulation stays fp32).
  InputRounding inputRounding = InputRounding::None;
  /// Under Int8, the fixed scale of each operand (0, 1) that calibration
  /// chose (the op's `calibrated_int8_scales`); 0 takes the tensor's own
  /// max|x| / 127 as roundInputs does.
  double int8Scales[2] = {0.0, 0.0};
};

/// Int8 rounding at a fixed `scale`: x -> scale x clamp(rne(x / scale),
/// -127, 127), values beyond the calibrated range saturating; `scale` <= 0
/// takes the tensor's own max|x| / 127 (roundInputs).
void roundInputsInt8(const float *src, float *dst, int64_t n, double scale);

/// Executes the graph op `name` (its mnemonic, without "graph.") on
/// `inputs` (an absent trailing optional operand is simply not passed).
/// Throws loom::rt::Error naming the op and the problem; checks that every
/// result has its declared shape and element type.
std::vector<Tensor> executeOp(const std::string &name, const AttrMap &attrs,
                              const std::vector<Tensor> &inputs,
                              const std::vector<ResultType> &results,
                              ExecMode mode, const FastOptions &fast = {});

/// True if executeOp knows `name`.
bool isKnownOp(const std::string &name);

namespace fast {
/// fp32 2-D max pooling over [N, C, H, W] (explicit pads, given output
/// shape), without the indices result.
Tensor maxPool2d(const Tensor &x, const std::vector<int64_t> &kernel,
                 const std::vector<int64_t> &strides,
                 const std::vector<int64_t> &dilations,
                 const std::vector<int64_t> &pads, const Shape &outShape);
/// fp32 relu as a tight loop (other kinds and types: the reference kernel).
Tensor unary(ref::UnaryKind kind, const Tensor &x);
/// fp32 elementwise add/sub/mul/div/max/min with numpy broadcasting (other
/// kinds fall back to the reference kernel). Same results as the reference
/// up to fp32 rounding of the one operation.
Tensor binary(ref::BinaryKind kind, const Tensor &a, const Tensor &b);
/// fp32 numpy matmul through BLAS (sgemm), batched with broadcasting.
Tensor matmul(const Tensor &a, const Tensor &b, const FastOptions &opts);
/// The int8 matmul of an int8 kernel (a, b int8 or uint8, zero points
/// subtracted as the operands are loaded), accumulated in int32 a block of
/// K at a time: the same integers as ref::qmatmul, bit for bit.
Tensor qmatmul(const Tensor &a, const Tensor &b, int64_t aZero,
               int64_t bZero);
/// fp32 N-d grouped convolution through im2col + sgemm.
Tensor conv(const Tensor &x, const Tensor &w, const Tensor &bias,
            const std::vector<int64_t> &strides,
            const std::vector<int64_t> &dilations,
            const std::vector<int64_t> &pads, int64_t group,
            const FastOptions &opts);
} // namespace fast

} // namespace loom::rt

#endif // LOOM_RUNTIME_OPEXECUTOR_H
