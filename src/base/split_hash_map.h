// SplitHashMap: an unordered_map cut into 2^k independent sub-maps by key hash. Growing a single
// map of millions of entries rehashes all of them at once (tens of milliseconds under a lock);
// here each rehash touches one sub-map, 1/2^k of the entries. Iteration is not offered.
//
// SplitParts: the parts themselves and the choice of a key's part, for maps that need more than
// SplitHashMap offers (storage::MemKv: lookups by string_view, iteration, the keys' addresses for
// its ordered index). SplitHashMap is built on it, so both cut their keys the same way.
//
// Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace chronoq::base {

template <typename Map, size_t kParts>
class SplitParts {
  static_assert(kParts > 0 && (kParts & (kParts - 1)) == 0, "kParts must be a power of two");

 public:
  // The part of `key`: the hash's high bits, so that the part's own bucketing (its low bits)
  // stays spread. std::hash of a string and of its string_view agree (the standard says so).
  static size_t PartOf(std::string_view key) {
    return (std::hash<std::string_view>{}(key) >> 20) & (kParts - 1);
  }
  Map& Of(std::string_view key) { return parts_[PartOf(key)]; }
  const Map& Of(std::string_view key) const { return parts_[PartOf(key)]; }
  // Every part, for iteration.
  std::array<Map, kParts>& all() { return parts_; }
  const std::array<Map, kParts>& all() const { return parts_; }

 private:
  std::array<Map, kParts> parts_;
};

template <typename V, size_t kParts = 256>
class SplitHashMap {
 public:
  using Map = std::unordered_map<std::string, V>;

  V* Find(const std::string& key) {
    Map& m = parts_.Of(key);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  const V* Find(const std::string& key) const {
    const Map& m = parts_.Of(key);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  // Inserts when absent; returns the value and whether it was inserted.
  std::pair<V*, bool> Emplace(std::string key, V value) {
    Map& m = parts_.Of(key);
    auto [it, inserted] = m.emplace(std::move(key), std::move(value));
    if (inserted) ++size_;
    return {&it->second, inserted};
  }
  // The value for key, default-constructed when absent.
  V& operator[](std::string key) {
    Map& m = parts_.Of(key);
    auto [it, inserted] = m.try_emplace(std::move(key));
    if (inserted) ++size_;
    return it->second;
  }
  bool Erase(const std::string& key) {
    if (parts_.Of(key).erase(key) == 0) return false;
    --size_;
    return true;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  SplitParts<Map, kParts> parts_;
  size_t size_ = 0;
};

}  // namespace chronoq::base
