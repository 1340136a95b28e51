//===- TensorIOTest.cpp - .npy / .pb round trips and errors ---------------===//
#include "loom/Runtime/TensorIO.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace loom::rt;

namespace {

std::string tempPath(const char *name) {
  return ::testing::TempDir() + "/" + name;
}

TEST(TensorIO, NpyRoundTripKeepsShapeTypeAndData) {
  Tensor t(DType::F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.setDouble(i, i * 0.5 - 1);
  std::string p = tempPath("rt.npy");
  writeNpy(p, t);
  Tensor r = readNpy(p);
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(r.getDouble(i), i * 0.5 - 1);
}

TEST(TensorIO, NpyScalarAndOneDimensional) {
  Tensor s(DType::I64, {});
  s.setInt(0, 42);
  writeNpy(tempPath("s.npy"), s);
  EXPECT_EQ(readNpy(tempPath("s.npy")).shape(), Shape{});
  EXPECT_EQ(readNpy(tempPath("s.npy")).getInt(0), 42);
  Tensor v(DType::Bool, {3});
  v.setInt(1, 1);
  writeNpy(tempPath("v.npy"), v);
  Tensor r = readNpy(tempPath("v.npy"));
  EXPECT_EQ(r.shape(), Shape{3});
  EXPECT_EQ(r.getInt(1), 1);
  EXPECT_EQ(r.getInt(2), 0);
}

TEST(TensorIO, TruncatedNpyIsAnError) {
  Tensor t(DType::F64, {100});
  std::string p = tempPath("trunc.npy");
  writeNpy(p, t);
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(p, std::ios::binary).write(bytes.data(), bytes.size() - 8);
  EXPECT_THROW(readNpy(p), Error);
}

TEST(TensorIO, GarbageIsNotNpy) {
  std::string p = tempPath("garbage.npy");
  std::ofstream(p) << "hello world";
  try {
    readNpy(p);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("not a .npy file"), std::string::npos);
  }
}

TEST(TensorIO, SanitizeFileName) {
  EXPECT_EQ(sanitizeFileName("a/b:c d.e-f_g"), "a_b_c_d.e-f_g");
  // Never hidden, never a parent folder, never empty.
  EXPECT_EQ(sanitizeFileName(".."), "_.");
  EXPECT_EQ(sanitizeFileName(".hidden"), "_hidden");
  EXPECT_EQ(sanitizeFileName(""), "_");
}

TEST(TensorIO, OutputFileNamesRefuseCollisions) {
  EXPECT_EQ(outputFileNames({"Y", "a/b", ".."}),
            (std::vector<std::string>{"Y.npy", "a_b.npy", "_..npy"}));
  try {
    outputFileNames({"a_b", "x", "a/b"});
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "outputs 'a_b' and 'a/b' would both be written to a_b.npy");
  }
  // One name twice is one output (the parts of a split output, say).
  EXPECT_EQ(outputFileNames({"Y", "Y"}),
            (std::vector<std::string>{"Y.npy", "Y.npy"}));
}

TEST(TensorIO, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(static_cast<float>(Half(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(Half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 4096)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
}

} // namespace
