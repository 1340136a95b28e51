//===- EnumNames.h - An enum value by its spelling --------------*- C++ -*-===//
//
// The parse half of the project's enums with a spelling each (KernelKind,
// CostBound, CollectiveKind, CollectiveAlgorithm): the value among the
// first N whose name is `name`. Plain C++, header only.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ENUMNAMES_H
#define LOOM_RUNTIME_ENUMNAMES_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace loom::rt {

/// The value of `Enum` among 0..N-1 whose `nameOf` is `name`; std::nullopt
/// for anything else.
template <typename Enum, size_t N, typename NameOf>
std::optional<Enum> enumNamed(std::string_view name, NameOf nameOf) {
  for (size_t i = 0; i < N; ++i)
    if (name == nameOf(static_cast<Enum>(i)))
      return static_cast<Enum>(i);
  return std::nullopt;
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_ENUMNAMES_H
