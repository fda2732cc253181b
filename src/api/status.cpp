// Names of the status codes, as printed in messages, by the CLI and by the C ABI.
#include "smla/status.hpp"

namespace smla {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::not_built: return "not_built";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::cuda_error: return "cuda_error";
    case StatusCode::internal: return "internal";
  }
  // A value outside the enum can only come through the C ABI (a cast integer).
  return "unknown";
}

}  // namespace smla
