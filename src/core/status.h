// Status and Result<T>: how every expected failure travels in suanli.
//
// A function that can fail for a reason outside the program's control (bad input, a missing file, a
// busy GPU) returns a Status or a Result<T> instead of throwing. The message says what was wrong
// and how to fix it, in one line, because it is shown to a person as it is. Codes follow abseil's
// canonical codes; ExitCodeFor() and HttpStatusFor() map them to the CLI's exit status and the
// API's HTTP status.
//
// Result<T> is shaped like std::expected<T, Status> (clang 14 on Debian 12 cannot compile
// <expected>).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/check.h"

namespace suanli::core {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller sent something malformed: fix the input
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // a create collided with an existing thing
  kFailedPrecondition,  // the request is valid but not in the current state
  kResourceExhausted,   // out of capacity, quota or balance
  kUnauthenticated,     // no or bad credentials
  kPermissionDenied,    // known caller, not allowed
  kUnavailable,         // a dependency is down; retrying later may work
  kInternal,            // a bug or a broken invariant on our side
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NOT_FOUND: no GPU named ..." for logs; people see message() alone.
  std::string ToString() const;

  // Returns a copy whose message starts with `context`, e.g. the file being read.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}
inline Status NotFoundError(std::string message) {
  return {StatusCode::kNotFound, std::move(message)};
}
inline Status AlreadyExistsError(std::string message) {
  return {StatusCode::kAlreadyExists, std::move(message)};
}
inline Status FailedPreconditionError(std::string message) {
  return {StatusCode::kFailedPrecondition, std::move(message)};
}
inline Status ResourceExhaustedError(std::string message) {
  return {StatusCode::kResourceExhausted, std::move(message)};
}
inline Status UnauthenticatedError(std::string message) {
  return {StatusCode::kUnauthenticated, std::move(message)};
}
inline Status PermissionDeniedError(std::string message) {
  return {StatusCode::kPermissionDenied, std::move(message)};
}
inline Status UnavailableError(std::string message) {
  return {StatusCode::kUnavailable, std::move(message)};
}
inline Status InternalError(std::string message) {
  return {StatusCode::kInternal, std::move(message)};
}

// The process exit status for a failed CLI command: 0 only for OK; 2 for bad input, as usage errors
// are conventionally; the rest distinct so scripts can tell "not found" from "server down". README
// lists them.
int ExitCodeFor(StatusCode code);

// The HTTP status the API answers with for a failure of this code.
int HttpStatusFor(StatusCode code);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value)
      : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor): like expected
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    SUANLI_CHECK(!std::get<Status>(state_).ok(),
                 "a Result holds a value or an error, never an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok(). Reading the value of a failed Result is a bug, so it crashes loudly.
  T& value() & {
    CheckOk();
    return std::get<T>(state_);
  }
  const T& value() const& {
    CheckOk();
    return std::get<T>(state_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // OK when the Result holds a value.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }

 private:
  void CheckOk() const {
    SUANLI_CHECK(ok(), "value() of a failed Result: " + std::get<Status>(state_).ToString());
  }

  std::variant<T, Status> state_;
};

}  // namespace suanli::core

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define SUANLI_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::suanli::core::Status suanli_status_ = (expr);  \
    if (!suanli_status_.ok()) return suanli_status_; \
  } while (false)
