// Result<T>: a value or a non-OK Status. Spelled like std::expected (has_value, value, error,
// operator*, operator->) so that moving to C++23 is a type alias. Value type.
#pragma once

#include <utility>
#include <variant>

#include "base/check.h"
#include "base/status.h"

namespace chronoq {

template <typename T>
class [[nodiscard]] Result {
 public:
  // A value is copied or moved once into place (not into a parameter first, then into place).
  Result(const T& value) : v_(value) {}            // NOLINT: implicit by design
  Result(T&& value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    CQ_CHECK(!std::get<Status>(v_).ok(), "Result constructed from an OK status");
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    CQ_CHECK(has_value(), "Result::value() on error: {}", error().ToString());
    return std::get<0>(v_);
  }
  const T& value() const& {
    CQ_CHECK(has_value(), "Result::value() on error: {}", error().ToString());
    return std::get<0>(v_);
  }
  T&& value() && {
    CQ_CHECK(has_value(), "Result::value() on error: {}", error().ToString());
    return std::get<0>(std::move(v_));
  }
  const Status& error() const {
    static const Status kOk;
    return has_value() ? kOk : std::get<Status>(v_);
  }
  // The status: OK when a value is held.
  Status status() const { return error(); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  void IgnoreError() const {}

 private:
  std::variant<T, Status> v_;
};

}  // namespace chronoq

#define CQ_CONCAT_INNER_(a, b) a##b
#define CQ_CONCAT_(a, b) CQ_CONCAT_INNER_(a, b)
#define CQ_ASSIGN_OR_RETURN(lhs, expr) \
  CQ_ASSIGN_OR_RETURN_(CQ_CONCAT_(cq_result_, __LINE__), lhs, expr)
#define CQ_ASSIGN_OR_RETURN_(tmp, lhs, expr) \
  auto tmp = (expr);                         \
  if (!tmp.has_value()) return tmp.error();  \
  lhs = std::move(tmp).value()
