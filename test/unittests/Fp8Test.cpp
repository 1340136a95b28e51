//===- Fp8Test.cpp - roundToFp8E4M3 against a decode of all 256 codes -----===//
//
// The reference is brute force: decode every E4M3 code from its bit fields,
// then for each test float pick the finite code nearest to it (ties to the
// code with an even mantissa, i.e. an even code). roundToFp8E4M3 must give
// that code's value for every float tried: every code, every midpoint
// between adjacent codes and the floats just either side of it, a dense
// sweep of bit patterns over the whole range, and the specials.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using loom::rt::roundToFp8E4M3;

namespace {

/// The value of E4M3 code `c` (NaN for S.1111.111).
double decodeE4M3(uint8_t c) {
  int sign = c >> 7, exp = (c >> 3) & 0xf, mant = c & 0x7;
  if (exp == 0xf && mant == 0x7)
    return std::numeric_limits<double>::quiet_NaN();
  double v = exp == 0 ? std::ldexp(mant, -9)               // 0.mmm x 2^-6
                      : std::ldexp(8 + mant, exp - 7 - 3); // 1.mmm x 2^(e-7)
  return sign ? -v : v;
}

struct Code {
  double value;
  uint8_t bits;
};

std::vector<Code> finiteCodes() {
  std::vector<Code> codes;
  for (int c = 0; c < 256; ++c) {
    double v = decodeE4M3(static_cast<uint8_t>(c));
    if (!std::isnan(v))
      codes.push_back({v, static_cast<uint8_t>(c)});
  }
  return codes;
}

/// The brute-force rounding of finite `x`: the nearest finite code, ties to
/// the even code; beyond the largest code, the largest (saturation).
double nearestE4M3(const std::vector<Code> &codes, double x) {
  // Beyond +-448 the nearest finite code is +-448 (and |c - x| would no
  // longer be exact in double); below, every |c - x| is exact.
  if (std::fabs(x) >= 448)
    return std::copysign(448.0, x);
  const Code *best = nullptr;
  double bestErr = 0;
  for (const Code &c : codes) {
    double err = std::fabs(c.value - x);
    if (!best || err < bestErr ||
        (err == bestErr && (c.bits & 1) == 0 && (best->bits & 1) != 0 &&
         c.value != best->value)) {
      best = &c;
      bestErr = err;
    }
  }
  // +0 and -0 are both codes at distance |x|: keep x's sign.
  if (best->value == 0)
    return std::copysign(0.0, x);
  return best->value;
}

void expectRounds(const std::vector<Code> &codes, float x) {
  float got = roundToFp8E4M3(x);
  double want = nearestE4M3(codes, x);
  ASSERT_EQ(static_cast<double>(got), want) << "x = " << x;
  ASSERT_EQ(std::signbit(got), std::signbit(x)) << "x = " << x;
}

TEST(Fp8E4M3, DecodeTable) {
  std::vector<Code> codes = finiteCodes();
  EXPECT_EQ(codes.size(), 254u); // 256 less the two NaNs
  EXPECT_EQ(decodeE4M3(0x7e), 448.0);
  EXPECT_EQ(decodeE4M3(0x01), std::ldexp(1.0, -9)); // smallest subnormal
  EXPECT_EQ(decodeE4M3(0x08), std::ldexp(1.0, -6)); // smallest normal
  EXPECT_EQ(decodeE4M3(0x38), 1.0);
  EXPECT_TRUE(std::isnan(decodeE4M3(0xff)));
}

TEST(Fp8E4M3, EveryCodeIsExact) {
  for (const Code &c : finiteCodes())
    EXPECT_EQ(static_cast<double>(roundToFp8E4M3(static_cast<float>(c.value))),
              c.value)
        << int(c.bits);
}

TEST(Fp8E4M3, MidpointsTieToEven) {
  std::vector<Code> codes = finiteCodes();
  std::vector<double> pos;
  for (const Code &c : codes)
    if (c.value >= 0 && !(c.value == 0 && c.bits))
      pos.push_back(c.value);
  std::sort(pos.begin(), pos.end());
  for (size_t i = 0; i + 1 < pos.size(); ++i) {
    float mid = static_cast<float>((pos[i] + pos[i + 1]) / 2); // exact
    for (float x : {mid, std::nextafter(mid, 0.0f),
                    std::nextafter(mid, 1000.0f)}) {
      expectRounds(codes, x);
      expectRounds(codes, -x);
    }
  }
  // A few by hand: 1.0625 lies between 1 (even) and 1.125 (odd).
  EXPECT_EQ(roundToFp8E4M3(1.0625f), 1.0f);
  EXPECT_EQ(roundToFp8E4M3(1.1875f), 1.25f); // between 1.125 and 1.25 (even)
  EXPECT_EQ(roundToFp8E4M3(std::ldexp(1.0f, -10)), 0.0f); // half the min
  EXPECT_EQ(roundToFp8E4M3(std::ldexp(3.0f, -10)), std::ldexp(2.0f, -9));
}

TEST(Fp8E4M3, SweepOfAllBinades) {
  std::vector<Code> codes = finiteCodes();
  // Every 2^11-th float bit pattern of either sign covers every binade of
  // fp32 with 4096 values each, from subnormals to infinity (excluded).
  for (uint32_t u = 0; u < 0x7f800000u; u += 0x800) {
    float x;
    std::memcpy(&x, &u, 4);
    expectRounds(codes, x);
    expectRounds(codes, -x);
  }
}

TEST(Fp8E4M3, SaturationAndSpecials) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(roundToFp8E4M3(448.0f), 448.0f);
  EXPECT_EQ(roundToFp8E4M3(463.9f), 448.0f); // would round to 448 anyway
  EXPECT_EQ(roundToFp8E4M3(464.0f), 448.0f); // would round to 480: saturates
  EXPECT_EQ(roundToFp8E4M3(1e30f), 448.0f);
  EXPECT_EQ(roundToFp8E4M3(-1e30f), -448.0f);
  EXPECT_EQ(roundToFp8E4M3(inf), 448.0f);
  EXPECT_EQ(roundToFp8E4M3(-inf), -448.0f);
  EXPECT_TRUE(std::isnan(roundToFp8E4M3(std::nanf(""))));
  EXPECT_TRUE(std::signbit(roundToFp8E4M3(-0.0f)));
  EXPECT_TRUE(std::signbit(roundToFp8E4M3(-1e-30f)));
}

} // namespace
