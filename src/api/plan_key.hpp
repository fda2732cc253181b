// The key that ties a Plan to the arguments it was made for (ops.hpp: a plan stays valid
// while the shapes, the pools' slot counts and the lengths are unchanged). The API layer
// stamps it in make_plan and compares it in attend, so no backend can run a stale plan.
#pragma once

#include <cstdint>

#include "smla/ops.hpp"

namespace smla::api {

// A hash of everything a schedule depends on that the host can see: T, h_q, d_qk, k, k_x,
// each pool's format, block size and slot count, which optional inputs are present, and the
// device. Lengths VALUES live in device memory and are the caller's promise. Never 0 (the
// key of an empty plan).
uint64_t plan_key(const AttendArgs& args);

}  // namespace smla::api
