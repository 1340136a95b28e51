//===- IdIndex.h - Positions of a program's records by id -------*- C++ -*-===//
//
// Every record of a program (tensor, kernel, instr, buffer, link) has an
// id, and the loader, the schedule verifier, the timing rules and the
// replay look records up by id hundreds of thousands of times for a
// multi-chip program. The compiler numbers ids densely from 0, so a vector
// indexed by id serves them; ids a hostile or hand-edited file gives out of
// that range (negative, or far beyond the record count) go to a hash map.
// Either way the answer is the same.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_IDINDEX_H
#define LOOM_RUNTIME_IDINDEX_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace loom::rt {

class IdIndex {
public:
  /// Room for `n` records: ids up to a few times `n` stay dense.
  void reserve(size_t n) { expected_ = std::max(expected_, n); }

  /// Records that `id` is at `pos`; false (and no change) if `id` is
  /// already recorded.
  bool emplace(int32_t id, size_t pos) {
    if (find(id))
      return false;
    if (id >= 0 && static_cast<size_t>(id) < denseLimit()) {
      if (static_cast<size_t>(id) >= dense_.size())
        dense_.resize(static_cast<size_t>(id) + 1, kAbsent);
      dense_[static_cast<size_t>(id)] = static_cast<int64_t>(pos);
    } else {
      sparse_.emplace(id, static_cast<int64_t>(pos));
    }
    ++size_;
    return true;
  }

  /// The position of `id`, or nothing.
  std::optional<size_t> find(int32_t id) const {
    if (id >= 0 && static_cast<size_t>(id) < dense_.size() &&
        dense_[static_cast<size_t>(id)] != kAbsent)
      return static_cast<size_t>(dense_[static_cast<size_t>(id)]);
    if (sparse_.empty())
      return std::nullopt;
    auto it = sparse_.find(id);
    if (it == sparse_.end())
      return std::nullopt;
    return static_cast<size_t>(it->second);
  }

  size_t size() const { return size_; }

private:
  static constexpr int64_t kAbsent = -1;
  /// Ids below this are kept in the vector: its memory stays within a few
  /// times the records'.
  size_t denseLimit() const {
    return std::max<size_t>(1024, 4 * std::max(expected_, size_ + 1));
  }

  std::vector<int64_t> dense_;
  std::unordered_map<int32_t, int64_t> sparse_;
  size_t size_ = 0, expected_ = 0;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_IDINDEX_H
