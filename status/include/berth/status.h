// berth's one error convention: a Status carries a code (mapped to a gRPC code at the server), an
// optional errno, and a lowercase chain of context, outermost first:
//   "create sandbox 3f2a…: pin netns: mount: EPERM (Operation not permitted)".
// Errors cross module boundaries as these values; no module lets an exception escape.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace berth {

enum class Code {
  ok,
  invalid_argument,
  not_found,
  already_exists,
  failed_precondition,
  deadline_exceeded,
  resource_exhausted,
  unavailable,
  unauthenticated,
  unimplemented,
  internal,
  cancelled,  // the caller's client went away
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message, int sys_errno = 0)
      : code_(code), message_(std::move(message)), errno_(sys_errno) {}

  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  int sys_errno() const { return errno_; }

  // Prefixes the message with what was being done: s.context("pin netns").
  Status context(std::string_view what) const {
    if (ok()) return *this;
    return Status(code_, std::string(what) + ": " + message_, errno_);
  }

 private:
  Code code_ = Code::ok;
  std::string message_;
  int errno_ = 0;
};

inline Status ok_status() { return {}; }
inline Status invalid_argument(std::string m) { return {Code::invalid_argument, std::move(m)}; }
inline Status not_found(std::string m) { return {Code::not_found, std::move(m)}; }
inline Status already_exists(std::string m) { return {Code::already_exists, std::move(m)}; }
inline Status failed_precondition(std::string m) { return {Code::failed_precondition, std::move(m)}; }
inline Status deadline_exceeded(std::string m) { return {Code::deadline_exceeded, std::move(m)}; }
inline Status internal_error(std::string m) { return {Code::internal, std::move(m)}; }
inline Status unimplemented(std::string m) { return {Code::unimplemented, std::move(m)}; }

// "what: ENOENT (No such file or directory)", code internal unless given (ENOSPC and EDQUOT:
// resource_exhausted instead, a full disk being the node's state).
Status errno_status(int err, std::string_view what, Code code = Code::internal);

const char* code_name(Code code);

// A value or the Status saying why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status good;
    return ok() ? good : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace berth
