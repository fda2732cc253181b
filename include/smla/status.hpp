// Status: the result of every smla call. No exception crosses the library boundary;
// a failed call returns a code and a message that names the argument, what was expected
// and what was given (SPEC §5).
#pragma once

#include <string>
#include <utility>

namespace smla {

enum class StatusCode : int {
  ok = 0,
  invalid_argument = 1,  // a dtype, shape, stride, alignment, placement or option is wrong
  not_built = 2,         // the call needs a backend or kernel variant this build does not hold
  unsupported = 3,       // the device cannot run the call (no CUDA device, too old an arch)
  cuda_error = 4,        // the CUDA runtime reported an error
  internal = 5,          // a bug in smla
};

const char* status_code_name(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return {}; }

  bool ok() const { return code_ == StatusCode::ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

}  // namespace smla
