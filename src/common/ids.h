// Strong identifier types. A JobId cannot be passed where a NodeId is expected.
// Plain value types: copyable, hashable, ordered; thread-compatible.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>

namespace tiresias {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int64_t v) : v_(v) {}
  constexpr int64_t value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;
  std::string str() const { return std::to_string(v_); }

 private:
  int64_t v_ = -1;
};

using JobId = StrongId<struct JobIdTag>;
using NodeId = StrongId<struct NodeIdTag>;

}  // namespace tiresias

template <typename Tag>
struct std::hash<tiresias::StrongId<Tag>> {
  size_t operator()(const tiresias::StrongId<Tag>& id) const noexcept {
    return std::hash<int64_t>{}(id.value());
  }
};
