// FNV-1a over the schedule-relevant facts of an attend call; see plan_key.hpp.
#include "api/plan_key.hpp"

#include "api/fnv1a.hpp"

namespace smla::api {
namespace {

void add_pool(Fnv1a* h, const KvPool& pool) {
  h->add({pool.present(), static_cast<int64_t>(pool.format), pool.block_size, pool.num_blocks,
          pool.int8_split()});
}

}  // namespace

uint64_t plan_key(const AttendArgs& a) {
  Fnv1a h;
  h.add({a.q.shape[0], a.q.shape[1], a.q.shape[2], a.indices.shape[1],
         a.extra_indices.present() ? a.extra_indices.shape[1] : -1, a.lengths.present(),
         a.extra_lengths.present(), a.sink.present(), static_cast<int64_t>(a.q.device.kind),
         a.q.device.index});
  add_pool(&h, a.kv);
  add_pool(&h, a.extra_kv);
  return h.value() == 0 ? 1 : h.value();
}

}  // namespace smla::api
