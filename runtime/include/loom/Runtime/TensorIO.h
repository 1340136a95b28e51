//===- TensorIO.h - .npy and ONNX TensorProto (.pb) I/O ---------*- C++ -*-===//
#ifndef LOOM_RUNTIME_TENSORIO_H
#define LOOM_RUNTIME_TENSORIO_H

#include "loom/Runtime/Tensor.h"

#include <cstddef>
#include <optional>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace loom::rt {

/// Reads a NumPy .npy file (format 1.0-3.0, little-endian, C order).
/// Throws Error naming the file and the problem.
Tensor readNpy(const std::string &path);
/// Reads a .npy held in memory; `name` stands for the file in errors.
Tensor readNpyBytes(const void *data, size_t size, const std::string &name);
/// Writes `t` as a .npy file (format 1.0). Throws Error on failure.
void writeNpy(const std::string &path, const Tensor &t);

/// Reads a serialized ONNX TensorProto (.pb), as in ONNX's test data.
/// With `inputName`, a tensor that carries another name is refused (a .pb
/// file of one input given for another).
Tensor readTensorProtoFile(const std::string &path,
                           const std::string &inputName = "");
/// Converts a TensorProto with its data inline (not external) to a Tensor.
/// `what` names the tensor in error messages.
Tensor tensorFromProto(const onnx::TensorProto &proto, const std::string &what);
/// Maps an ONNX TensorProto data type to a DType, or nullopt if unsupported.
std::optional<DType> dtypeFromOnnx(int onnxType);
/// Reads a tensor from `path`, choosing the format by extension
/// (.npy or .pb). A .pb tensor's name, when it has one, must be
/// `inputName` if that is given.
Tensor readTensorFile(const std::string &path,
                      const std::string &inputName = "");

/// The file name an output is written under: characters outside
/// [A-Za-z0-9._-] become '_', and so does a leading '.' (no hidden files,
/// no '..'); an empty name is "_".
std::string sanitizeFileName(const std::string &name);

/// The .npy file names (sanitizeFileName + ".npy") of outputs named
/// `names`, in order. Throws Error naming both outputs when two different
/// names would be written to the same file (one name given twice is one
/// output, and gets one file).
std::vector<std::string>
outputFileNames(const std::vector<std::string> &names);

} // namespace loom::rt

#endif // LOOM_RUNTIME_TENSORIO_H
