#include "core/status.h"

#include <cstdio>
#include <cstdlib>

namespace suanli::core {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string text(StatusCodeName(code_));
  text += ": ";
  text += message_;
  return text;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
      return 2;
    case StatusCode::kNotFound:
      return 3;
    case StatusCode::kAlreadyExists:
      return 4;
    case StatusCode::kFailedPrecondition:
      return 5;
    case StatusCode::kResourceExhausted:
      return 6;
    case StatusCode::kUnauthenticated:
      return 7;
    case StatusCode::kPermissionDenied:
      return 8;
    case StatusCode::kUnavailable:
      return 9;
    case StatusCode::kInternal:
      return 1;
  }
  return 1;
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

[[noreturn]] void CheckFailed(std::string_view condition, std::string_view reason, const char* file,
                              int line) {
  std::fprintf(stderr, "suanli: internal check failed at %s:%d: %.*s (%.*s)\n", file, line,
               static_cast<int>(reason.size()), reason.data(), static_cast<int>(condition.size()),
               condition.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace suanli::core
