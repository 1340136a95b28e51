//===- ProgramSeal.h - A program file's length and checksum -----*- C++ -*-===//
//
// A program file carries its own length and a checksum of its bytes
// (Program.fbs: file_size, checksum), so that a file changed after loom
// wrote it, a flipped bit in a weight as much as a hand-edited field or
// bytes appended at its end, is refused at load instead of running with
// other numbers. The checksum is XXH3-64 (libxxhash) of the whole file with
// the checksum field's own 8 bytes read as zeros. The writer stores both
// fields with placeholder values, finishes the buffer and seals it in
// place; the loader, after the FlatBuffers verifier has checked the
// buffer's structure, recomputes both.
//
// Header-only (xxhash's inline mode), so that the compiler's emitter and
// the runtime's loader share one definition without a link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_PROGRAMSEAL_H
#define LOOM_RUNTIME_PROGRAMSEAL_H

#include "loom/Runtime/Program_generated.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstddef>
#include <cstdint>

namespace loom::rt {

/// Where a program's integrity fields are in its buffer, or null where the
/// buffer does not store them. `data` must be a verified program buffer.
struct ProgramSealFields {
  const uint8_t *fileSize = nullptr;
  const uint8_t *checksum = nullptr;
};

inline ProgramSealFields programSealFields(const uint8_t *data) {
  const auto *root =
      reinterpret_cast<const flatbuffers::Table *>(loom::program::GetProgram(data));
  return {root->GetAddressOf(loom::program::Program::VT_FILE_SIZE),
          root->GetAddressOf(loom::program::Program::VT_CHECKSUM)};
}

/// The checksum of the `size` bytes at `data`, the 8 bytes at `field`
/// (inside them) read as zeros.
inline uint64_t programChecksum(const uint8_t *data, size_t size,
                                const uint8_t *field) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  size_t at = static_cast<size_t>(field - data);
  static const uint8_t zeros[8] = {};
  XXH3_64bits_update(&state, data, at);
  XXH3_64bits_update(&state, zeros, sizeof(zeros));
  XXH3_64bits_update(&state, data + at + 8, size - at - 8);
  return XXH3_64bits_digest(&state);
}

/// Seals a finished program buffer in place: writes its length and its
/// checksum. False if the buffer stores neither field (the builder must
/// add both, with non-default placeholders).
inline bool sealProgram(uint8_t *data, size_t size) {
  ProgramSealFields f = programSealFields(data);
  if (!f.fileSize || !f.checksum)
    return false;
  auto *fileSize = const_cast<uint8_t *>(f.fileSize);
  auto *checksum = const_cast<uint8_t *>(f.checksum);
  flatbuffers::WriteScalar<uint64_t>(fileSize, static_cast<uint64_t>(size));
  flatbuffers::WriteScalar<uint64_t>(checksum, 0);
  flatbuffers::WriteScalar<uint64_t>(checksum,
                                     programChecksum(data, size, checksum));
  return true;
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_PROGRAMSEAL_H
