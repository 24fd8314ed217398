// Status and Result: how offline gpuperf code reports failure. No exceptions cross
// a gpuperf API; every fallible function returns one of these.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpuperf {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kIoError,
  kNotATrace,           // the input is not a gpuperf trace at all
  kUnsupportedVersion,  // a gpuperf trace, but of a format version we cannot read
  kCorrupt,             // damaged beyond what the reader can recover
  kInternal,
  kBusy,  // another process writes the file now (gpuperf/trace_lock.h)
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status Error(StatusCode code, std::string message) {
  return Status(code, std::move(message));
}

// Holds either a value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : value_(std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(value_);
  }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> value_;
};

#define GP_STATUS_CONCAT_INNER(a, b) a##b
#define GP_STATUS_CONCAT(a, b) GP_STATUS_CONCAT_INNER(a, b)

#define GP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::gpuperf::Status gp_status_ = (expr);   \
    if (!gp_status_.ok()) return gp_status_; \
  } while (0)

#define GP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define GP_ASSIGN_OR_RETURN(lhs, expr) \
  GP_ASSIGN_OR_RETURN_IMPL(GP_STATUS_CONCAT(gp_result_, __LINE__), lhs, expr)

}  // namespace gpuperf
