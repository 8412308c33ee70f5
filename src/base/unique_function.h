// UniqueFunction<R(Args...)>: a move-only std::function, so that callbacks can own move-only
// state (an Asio completion handler, a promise). C++23's std::move_only_function, minus the
// small-buffer optimisation.
//
// A call passes its arguments on by reference down to the callable: an argument given as an
// rvalue of the parameter's type (`done(std::move(result))`) is moved nowhere on the way, however
// many callbacks wrap one another (each layer of a send's answer used to move its Result twice).
// Anything else (an lvalue, another type) is converted to the parameter's type first, once, as a
// call of a function taking it by value would.
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
  template <typename... A>
  requires(sizeof...(A) == sizeof...(Args) && (std::is_convertible_v<A&&, Args> && ...)) R
  operator()(A&&... args) {
    return impl_->Call(Pass<Args>(std::forward<A>(args))...);
  }

 private:
  // An argument for a parameter of type T, which Call takes as T&&: a non-const rvalue of type T
  // (or a reference parameter's argument) as it is; an lvalue or const value of type T as a copy;
  // anything else as it is, converted where it binds to the parameter. Temporaries live until
  // the end of the call.
  template <typename T, typename U>
  static decltype(auto) Pass(U&& u) {
    using V = std::remove_cvref_t<U>;
    constexpr bool kSameType = std::is_same_v<V, T> || std::is_base_of_v<T, V>;
    constexpr bool kNotMovable =
        std::is_lvalue_reference_v<U> || std::is_const_v<std::remove_reference_t<U>>;
    if constexpr (!std::is_reference_v<T> && kSameType && kNotMovable) {
      return T(std::forward<U>(u));
    } else {
      return std::forward<U>(u);
    }
  }
  struct Base {
    virtual ~Base() = default;
    virtual R Call(Args&&... args) = 0;
  };
  template <typename F>
  struct Impl final : Base {
    explicit Impl(F f) : fn(std::move(f)) {}
    R Call(Args&&... args) override { return fn(std::forward<Args>(args)...); }
    F fn;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace chronoq
