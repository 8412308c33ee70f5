// UniqueFunction<R(Args...)>: a move-only std::function, so that callbacks can own move-only
// state (an Asio completion handler, a promise). C++23's std::move_only_function, minus the
// small-buffer optimisation.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace chronoq {

template <typename Sig>
class UniqueFunction;

template <typename R, typename... Args>
class UniqueFunction<R(Args...)> {
 public:
  UniqueFunction() = default;
  UniqueFunction(std::nullptr_t) {}  // NOLINT
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, UniqueFunction> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  UniqueFunction(F&& f)  // NOLINT: implicit like std::function
      : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(f))) {}

  UniqueFunction(UniqueFunction&&) noexcept = default;
  UniqueFunction& operator=(UniqueFunction&&) noexcept = default;

  explicit operator bool() const { return impl_ != nullptr; }
  R operator()(Args... args) { return impl_->Call(std::forward<Args>(args)...); }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual R Call(Args... args) = 0;
  };
  template <typename F>
  struct Impl final : Base {
    explicit Impl(F f) : fn(std::move(f)) {}
    R Call(Args... args) override { return fn(std::forward<Args>(args)...); }
    F fn;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace chronoq
