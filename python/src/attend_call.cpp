#include "attend_call.hpp"

namespace smla::python {

namespace {

int q_d_qk(const InArray& q) {
  return q.ndim() == 0 ? 0 : static_cast<int>(q.shape(q.ndim() - 1));
}

}  // namespace

void* buffer_pointer(const std::optional<OutArray>& buffer, size_t* bytes, const char* name) {
  *bytes = 0;
  if (!buffer) return nullptr;
  if (buffer->ndim() != 1 || (buffer->shape(0) > 1 && buffer->stride(0) != 1)) {
    throw_invalid(std::string(name) + ": expected a contiguous 1-D byte buffer");
  }
  *bytes = buffer->nbytes();
  return *bytes == 0 ? nullptr : buffer->data();
}

AttendCall::AttendCall(InArray q, PoolArrays kv, InArray indices, float scale, OutArray out,
                       std::optional<OutArray> lse, std::optional<OutArray> max_logits,
                       std::optional<InArray> lengths, std::optional<PoolArrays> extra_kv,
                       std::optional<InArray> extra_indices,
                       std::optional<InArray> extra_lengths, std::optional<InArray> sink) {
  const int d_qk = q_d_qk(q);
  args_.q = tensor_view(q, "q");
  args_.kv = kv_pool(kv.cache, kv.format, d_qk, kv.scales, "kv");
  args_.indices = tensor_view(indices, "indices");
  args_.lengths = optional_view(lengths, "lengths");
  if (extra_kv) {
    args_.extra_kv = kv_pool(extra_kv->cache, extra_kv->format, d_qk, extra_kv->scales,
                             "extra_kv");
  }
  args_.extra_indices = optional_view(extra_indices, "extra_indices");
  args_.extra_lengths = optional_view(extra_lengths, "extra_lengths");
  args_.sink = optional_view(sink, "sink");
  args_.scale = scale;
  args_.out = tensor_view(out, "out");
  args_.lse = optional_view(lse, "lse");
  args_.max_logits = optional_view(max_logits, "max_logits");

  inputs_ = {q, kv.cache, indices};
  for (const auto* optional : {&lengths, &extra_indices, &extra_lengths, &sink, &kv.scales}) {
    if (*optional) inputs_.push_back(**optional);
  }
  if (extra_kv) {
    inputs_.push_back(extra_kv->cache);
    if (extra_kv->scales) inputs_.push_back(*extra_kv->scales);
  }
  outputs_ = {out};
  if (lse) outputs_.push_back(*lse);
  if (max_logits) outputs_.push_back(*max_logits);
}

size_t AttendCall::workspace_size() const {
  size_t bytes = 0;
  throw_if_error(smla::attend_workspace_size(args_, &bytes));
  return bytes;
}

size_t AttendCall::plan_size() const {
  size_t bytes = 0;
  throw_if_error(smla::plan_size(args_, &bytes));
  return bytes;
}

Plan AttendCall::make_plan(std::optional<OutArray> buffer, uintptr_t stream) const {
  Plan plan;
  plan.data = buffer_pointer(buffer, &plan.bytes, "plan buffer");
  Status status;
  {
    nb::gil_scoped_release release;
    status = smla::make_plan(args_, &plan, to_stream(stream));
  }
  throw_if_error(status);
  return plan;
}

void AttendCall::run(std::optional<OutArray> workspace, const Plan* plan,
                     uintptr_t stream) const {
  Workspace ws;
  ws.data = buffer_pointer(workspace, &ws.bytes, "workspace");
  Status status;
  {
    // The CPU backend runs for long and on its own threads; other Python threads may go on.
    nb::gil_scoped_release release;
    status = smla::attend(args_, ws, to_stream(stream), plan);
  }
  throw_if_error(status);
}

}  // namespace smla::python
