//===- TensorIO.cpp - .npy and ONNX TensorProto (.pb) I/O -----------------===//
#include "loom/Runtime/TensorIO.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace loom::rt {

std::optional<DType> dtypeFromOnnx(int t) {
  switch (t) {
  case onnx::TensorProto::FLOAT: return DType::F32;
  case onnx::TensorProto::DOUBLE: return DType::F64;
  case onnx::TensorProto::FLOAT16: return DType::F16;
  case onnx::TensorProto::BFLOAT16: return DType::BF16;
  case onnx::TensorProto::INT8: return DType::I8;
  case onnx::TensorProto::INT16: return DType::I16;
  case onnx::TensorProto::INT32: return DType::I32;
  case onnx::TensorProto::INT64: return DType::I64;
  case onnx::TensorProto::UINT8: return DType::U8;
  case onnx::TensorProto::UINT16: return DType::U16;
  case onnx::TensorProto::UINT32: return DType::U32;
  case onnx::TensorProto::UINT64: return DType::U64;
  case onnx::TensorProto::BOOL: return DType::Bool;
  default: return std::nullopt;
  }
}

static std::string onnxTypeName(int t) {
  return onnx::TensorProto_DataType_IsValid(t)
             ? onnx::TensorProto_DataType_Name(
                   static_cast<onnx::TensorProto_DataType>(t))
             : "type " + std::to_string(t);
}

/// Bytes read as bool must be 0 or 1 (any other value is undefined behaviour
/// to load as a C++ bool); like NumPy and ONNX, nonzero means true.
static void normalizeBools(Tensor &t) {
  if (t.dtype() != DType::Bool)
    return;
  auto *bytes = static_cast<uint8_t *>(t.mutableRaw());
  for (size_t i = 0; i < t.byteSize(); ++i)
    bytes[i] = bytes[i] != 0;
}

Tensor tensorFromProto(const onnx::TensorProto &p, const std::string &what) {
  auto dt = dtypeFromOnnx(p.data_type());
  if (!dt)
    throw Error(what + ": unsupported element type " +
                onnxTypeName(p.data_type()));
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      throw Error(what + ": negative dimension " + std::to_string(d));
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(what + ": external data is not allowed here");
  // Check the data against the shape before allocating, so a corrupt shape
  // is an error, not a huge allocation.
  int64_t n = numElementsOf(shape);
  int64_t have = p.has_raw_data()
                     ? static_cast<int64_t>(p.raw_data().size() / dtypeSize(*dt))
                     : std::max({p.float_data_size(), p.double_data_size(),
                                 p.int32_data_size(), p.int64_data_size(),
                                 p.uint64_data_size()});
  if (have != n)
    throw Error(what + ": holds " + std::to_string(have) +
                " elements but its shape " + shapeToString(shape) + " needs " +
                std::to_string(n));
  Tensor t(*dt, shape);
  auto mismatch = [&](int64_t have) {
    return Error(what + ": holds " + std::to_string(have) +
                 " elements but its shape " + shapeToString(shape) + " needs " +
                 std::to_string(n));
  };
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.byteSize())
      throw Error(what + ": raw data has " +
                  std::to_string(p.raw_data().size()) + " bytes but shape " +
                  shapeToString(shape) + " of " + dtypeName(*dt) + " needs " +
                  std::to_string(t.byteSize()));
    if (t.byteSize())
      std::memcpy(t.mutableRaw(), p.raw_data().data(), t.byteSize());
    normalizeBools(t);
    return t;
  }
  switch (*dt) {
  case DType::F32:
    if (p.float_data_size() != n) throw mismatch(p.float_data_size());
    for (int64_t i = 0; i < n; ++i) t.mutableData<float>()[i] = p.float_data(i);
    break;
  case DType::F64:
    if (p.double_data_size() != n) throw mismatch(p.double_data_size());
    for (int64_t i = 0; i < n; ++i) t.mutableData<double>()[i] = p.double_data(i);
    break;
  case DType::I64:
    if (p.int64_data_size() != n) throw mismatch(p.int64_data_size());
    for (int64_t i = 0; i < n; ++i) t.mutableData<int64_t>()[i] = p.int64_data(i);
    break;
  case DType::U32: case DType::U64:
    if (p.uint64_data_size() != n) throw mismatch(p.uint64_data_size());
    for (int64_t i = 0; i < n; ++i) t.setInt(i, static_cast<int64_t>(p.uint64_data(i)));
    break;
  case DType::F16: case DType::BF16:
    // 16-bit floats travel as their bit patterns in int32_data.
    if (p.int32_data_size() != n) throw mismatch(p.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      t.mutableData<uint16_t>()[i] = static_cast<uint16_t>(p.int32_data(i));
    break;
  default:
    if (p.int32_data_size() != n) throw mismatch(p.int32_data_size());
    for (int64_t i = 0; i < n; ++i) t.setInt(i, p.int32_data(i));
    break;
  }
  return t;
}

Tensor readTensorProtoFile(const std::string &path,
                           const std::string &inputName) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open file");
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    throw Error(path + ": not a valid ONNX TensorProto");
  if (!inputName.empty() && !proto.name().empty() &&
      proto.name() != inputName)
    throw Error(path + ": holds tensor '" + proto.name() + "', not input '" +
                inputName + "'");
  return tensorFromProto(proto, path);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

static std::string npyDescr(DType dt) {
  switch (dt) {
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::F16: return "<f2";
  case DType::BF16: return "<V2"; // NumPy has no bfloat16; raw 2-byte void.
  case DType::I8: return "|i1";
  case DType::I16: return "<i2";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::U8: return "|u1";
  case DType::U16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  case DType::Bool: return "|b1";
  }
  return "";
}

static std::optional<DType> dtypeFromDescr(std::string d) {
  if (d.size() == 3 && (d[0] == '=' || d[0] == '|' || d[0] == '<'))
    d[0] = '<';
  static const std::pair<const char *, DType> table[] = {
      {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
      {"<i1", DType::I8},  {"<i2", DType::I16}, {"<i4", DType::I32},
      {"<i8", DType::I64}, {"<u1", DType::U8},  {"<u2", DType::U16},
      {"<u4", DType::U32}, {"<u8", DType::U64}, {"<b1", DType::Bool}};
  for (auto &[name, dt] : table)
    if (d == name)
      return dt;
  return std::nullopt;
}

/// Returns the value text of `key` in the header dict, or "" if absent.
static std::string headerField(const std::string &h, const std::string &key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos)
    return "";
  size_t colon = h.find(':', k);
  if (colon == std::string::npos)
    return "";
  size_t start = h.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos)
    return "";
  if (h[start] == '(') {
    size_t end = h.find(')', start);
    return end == std::string::npos ? "" : h.substr(start, end - start + 1);
  }
  size_t end = h.find_first_of(",}", start);
  return h.substr(start, end == std::string::npos ? std::string::npos
                                                  : end - start);
}

/// Header text as quoted in an error: control and non-ASCII bytes become
/// '?' (the message stays one line) and long text is cut.
static std::string printable(std::string text) {
  if (text.size() > 64)
    text = text.substr(0, 61) + "...";
  for (char &c : text)
    if (static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x7f)
      c = '?';
  return text;
}

/// Reads a .npy from `in`, whose bytes after the current position number
/// `available`; `path` names it in errors. Everything the header claims is
/// checked against those bytes before anything is allocated.
static Tensor readNpyStream(std::istream &in, uint64_t available,
                            const std::string &path) {
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(magic[6]);
  uint32_t headerLen = 0;
  uint64_t prefix = 10;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char *>(b), 2))
      throw Error(path + ": truncated .npy header");
    headerLen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char *>(b), 4))
      throw Error(path + ": truncated .npy header");
    headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
    prefix = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (headerLen > (1u << 20))
    throw Error(path + ": .npy header too large");
  if (prefix + headerLen > available)
    throw Error(path + ": truncated .npy header");
  std::string header(headerLen, '\0');
  if (!in.read(header.data(), headerLen))
    throw Error(path + ": truncated .npy header");
  std::string descr = headerField(header, "descr");
  std::string order = headerField(header, "fortran_order");
  std::string shapeText = headerField(header, "shape");
  if (descr.size() < 2 || order.empty() || shapeText.size() < 2 ||
      shapeText.front() != '(' || shapeText.back() != ')')
    throw Error(path + ": malformed .npy header");
  descr = descr.substr(1, descr.size() - 2);
  auto dt = dtypeFromDescr(descr);
  if (!dt)
    throw Error(path + ": unsupported .npy dtype '" + printable(descr) + "'");
  if (order != "False")
    throw Error(path + ": Fortran-ordered .npy arrays are not supported");
  Shape shape;
  std::string inner = shapeText.substr(1, shapeText.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos)
      continue;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str() + a, &end, 10);
    bool junk = item.find_first_not_of(' ', end - item.c_str()) !=
                std::string::npos;
    if (end == item.c_str() + a || junk || errno == ERANGE || v < 0)
      throw Error(path + ": malformed .npy shape " + printable(shapeText));
    if (shape.size() >= 64)
      throw Error(path + ": .npy shape " + printable(shapeText) +
                  " has more than 64 dimensions");
    shape.push_back(v);
  }
  // The data must be in the file: checking first refuses a header that
  // claims more elements than the file holds (or than 64 bits can count)
  // without allocating for them.
  uint64_t bytes = dtypeSize(*dt);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      throw Error(path + ": .npy shape " + printable(shapeText) +
                  " overflows 64 bits in bytes");
  uint64_t left = available - prefix - headerLen;
  if (bytes > left)
    throw Error(path + ": truncated .npy data: shape " + shapeToString(shape) +
                " of " + dtypeName(*dt) + " needs " + std::to_string(bytes) +
                " bytes, the file has " + std::to_string(left));
  Tensor t(*dt, shape);
  if (t.byteSize() &&
      !in.read(static_cast<char *>(t.mutableRaw()),
               static_cast<std::streamsize>(t.byteSize())))
    throw Error(path + ": truncated .npy data: shape " + shapeToString(shape) +
                " needs " + std::to_string(t.byteSize()) + " bytes");
  normalizeBools(t);
  return t;
}

Tensor readNpy(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path + ": is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw Error(path + ": cannot open file");
  std::streamoff size = in.tellg();
  in.seekg(0);
  if (size < 0 || !in)
    throw Error(path + ": cannot read file");
  return readNpyStream(in, static_cast<uint64_t>(size), path);
}

Tensor readNpyBytes(const void *data, size_t size, const std::string &name) {
  std::istringstream in(
      std::string(static_cast<const char *>(data), size), std::ios::binary);
  return readNpyStream(in, size, name);
}

void writeNpy(const std::string &path, const Tensor &t) {
  std::ostringstream h;
  h << "{'descr': '" << npyDescr(t.dtype())
    << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i)
    h << t.shape()[i] << (t.shape().size() == 1 || i + 1 < t.shape().size() ? "," : "")
      << (i + 1 < t.shape().size() ? " " : "");
  h << "), }";
  std::string header = h.str();
  // Pad so the data starts on a 64-byte boundary, ending with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error(path + ": cannot open for writing");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lenBytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char *>(t.raw()),
            static_cast<std::streamsize>(t.byteSize()));
  if (!out)
    throw Error(path + ": write failed");
}

Tensor readTensorFile(const std::string &path, const std::string &inputName) {
  auto endsWith = [&](const char *s) {
    size_t n = std::strlen(s);
    return path.size() >= n && path.compare(path.size() - n, n, s) == 0;
  };
  if (endsWith(".pb"))
    return readTensorProtoFile(path, inputName);
  return readNpy(path);
}

std::string sanitizeFileName(const std::string &name) {
  std::string out = name.empty() ? "_" : name;
  for (char &c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
          c == '_' || c == '-'))
      c = '_';
  if (out[0] == '.')
    out[0] = '_';
  return out;
}

std::vector<std::string>
outputFileNames(const std::vector<std::string> &names) {
  std::vector<std::string> files;
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < names.size(); ++i) {
    files.push_back(sanitizeFileName(names[i]) + ".npy");
    // One name twice is one value (listed twice, or the parts of an
    // output split across chips): its file is written once, whole.
    auto [it, inserted] = owner.emplace(files.back(), i);
    if (!inserted && names[it->second] != names[i])
      throw Error("outputs '" + names[it->second] + "' and '" + names[i] +
                  "' would both be written to " + files.back());
  }
  return files;
}

} // namespace loom::rt
