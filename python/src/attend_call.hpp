// One attend, assembled from Python arrays: the shape queries (workspace, plan), the plan
// and the run all see the same smla::AttendArgs. The Python layer builds a call, asks its
// sizes, allocates those buffers with the caller's framework, then runs it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "array_views.hpp"

namespace smla::python {

// A KV pool argument as Python passes it: the cache array, its format name and, for
// int8_ds_mla in two arrays, the scales.
struct PoolArrays {
  InArray cache;
  std::string format;
  std::optional<InArray> scales;
};

class AttendCall {
 public:
  AttendCall(InArray q, PoolArrays kv, InArray indices, float scale, OutArray out,
             std::optional<OutArray> lse, std::optional<OutArray> max_logits,
             std::optional<InArray> lengths, std::optional<PoolArrays> extra_kv,
             std::optional<InArray> extra_indices, std::optional<InArray> extra_lengths,
             std::optional<InArray> sink);

  size_t workspace_size() const;
  size_t plan_size() const;
  // Fills a plan in `buffer` (plan_size() bytes on the call's device) on `stream`.
  Plan make_plan(std::optional<OutArray> buffer, uintptr_t stream) const;
  // `plan` may be absent (the schedule is then made inside the call).
  void run(std::optional<OutArray> workspace, const Plan* plan, uintptr_t stream) const;

 private:
  AttendArgs args_;
  // The arrays behind args_' raw pointers, held for as long as the call object lives.
  std::vector<InArray> inputs_;
  std::vector<OutArray> outputs_;
};

// A raw pointer and byte count of a caller-allocated buffer (workspace or plan).
void* buffer_pointer(const std::optional<OutArray>& buffer, size_t* bytes, const char* name);

inline Stream to_stream(uintptr_t handle) { return reinterpret_cast<Stream>(handle); }

}  // namespace smla::python
