// SplitHashMap: an unordered_map cut into 2^k independent sub-maps by key hash. Growing a single
// map of millions of entries rehashes all of them at once (tens of milliseconds under a lock);
// here each rehash touches one sub-map, 1/2^k of the entries. Iteration is not offered.
// Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

namespace chronoq::base {

template <typename V, size_t kParts = 256>
class SplitHashMap {
  static_assert((kParts & (kParts - 1)) == 0, "kParts must be a power of two");

 public:
  using Map = std::unordered_map<std::string, V>;

  V* Find(const std::string& key) {
    Map& m = Part(key);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  const V* Find(const std::string& key) const {
    const Map& m = Part(key);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  // Inserts when absent; returns the value and whether it was inserted.
  std::pair<V*, bool> Emplace(std::string key, V value) {
    Map& m = Part(key);
    auto [it, inserted] = m.emplace(std::move(key), std::move(value));
    if (inserted) ++size_;
    return {&it->second, inserted};
  }
  // The value for key, default-constructed when absent.
  V& operator[](std::string key) {
    Map& m = Part(key);
    auto [it, inserted] = m.try_emplace(std::move(key));
    if (inserted) ++size_;
    return it->second;
  }
  bool Erase(const std::string& key) {
    if (Part(key).erase(key) == 0) return false;
    --size_;
    return true;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // The high bits choose the part, so that the sub-map's own bucketing (low bits) stays spread.
  static size_t Index(const std::string& key) {
    return (std::hash<std::string>{}(key) >> 20) & (kParts - 1);
  }
  Map& Part(const std::string& key) { return parts_[Index(key)]; }
  const Map& Part(const std::string& key) const { return parts_[Index(key)]; }

  std::array<Map, kParts> parts_;
  size_t size_ = 0;
};

}  // namespace chronoq::base
