// Random attend workloads (SPEC §1) for the CPU and the GPU suites. A Problem owns every
// host buffer as plain bytes and builds AttendArgs over them; a GPU test mirrors each buffer
// on the device and rebases the views:
//
//   Problem p(spec);
//   for (int id = 0; id < kNumBuffers; ++id) copy p.buffer(id).bytes to device memory d[id];
//   AttendArgs a = p.args(Device::cuda(0), [&](int id) { return d[id]; });
//   ... run, then copy the output buffers (Buffer::output) back into p.buffer(id).bytes;
//   EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "smla/ops.hpp"

namespace smla::test {

struct PoolSpec {
  KvFormat format = KvFormat::bf16;
  int32_t block_size = 64;
  int64_t min_slots = 256;    // rounded up to whole blocks
  int64_t block_padding = 0;  // bytes added to each block's stride (a non-packed pool)
  bool int8_split = false;    // int8_ds_mla as two tensors (values, scales)
};

struct ProblemSpec {
  int64_t T = 4;
  int h_q = 16;
  int d_qk = 576;
  int64_t k = 64;  // width of the main selection
  PoolSpec kv;
  bool extra = false;  // a second pool with its own selection
  int64_t k_x = 0;
  PoolSpec extra_kv;
  bool lengths = false;        // per-row lengths of the main selection
  bool extra_lengths = false;  // per-row lengths of the extra selection (needs `extra`)
  bool sink = false;
  bool sink_infinities = false;  // about half of the sink entries are +inf or -inf
  // Index values -1, INT_MIN, INT_MAX, slots, slots + 1, -slots and duplicates among valid
  // ones; rows with no valid entry; lengths 0, -1, INT_MIN, > k and INT_MAX.
  bool adversarial = false;
  // Every slot no valid entry reads holds all-ones bytes, which dequantize to NaN in every
  // format; entries past a row's length point at such slots.
  bool poison_unused = false;
  // Non-contiguous views: q and out head-major with padded rows, indices with padded rows,
  // lengths with stride 2, lse and max_logits transposed ([h_q, T], like FlashMLA's
  // [b, h_q, s_q]).
  bool strided = false;
  // q broadcast over heads: one row per token, head stride 0 (an input may alias itself).
  bool q_shared_by_heads = false;
  bool with_lse = true;
  bool with_max_logits = true;
  float scale = 0.0f;   // 0: 1 / sqrt(d_qk)
  float q_std = 0.1f;   // q ~ N(0, q_std^2), rounded to bf16
  float kv_std = 0.1f;  // K rows ~ N(0, kv_std^2) before quantization
  uint64_t seed = 1;

  float softmax_scale() const;
  std::string describe() const;  // one line, for SCOPED_TRACE
};

// Every kind of slot id that is invalid in a pool of `slots` slots (SPEC §1): -1, the int32
// extremes, the first two ids past the end and a negative one of the pool's size.
std::array<int32_t, 6> invalid_slot_ids(int64_t slots);

// A random spec drawn from `seed`: h_q in 1..128 (odd values included), d_qk 576 or 512,
// every format of that d_qk in each pool (int8 in both layouts), block sizes 1, 64, 256 and
// others, block padding, an extra pool half of the time, lengths, sinks with infinities,
// adversarial indices, poisoned rows, strided views, T = 0 and k = 0 now and then. Sizes are
// kept so that T * h_q * (k + k_x) <= max_work (an attend costs about that times d_qk).
ProblemSpec random_spec(uint64_t seed, int64_t max_work);

// The buffers of a Problem. Absent ones (no extra pool, no lengths, ...) are empty.
enum BufferId : int {
  kQ,
  kKv,
  kKvScales,  // int8_ds_mla split scales of the main pool
  kIndices,
  kLengths,
  kExtraKv,
  kExtraKvScales,
  kExtraIndices,
  kExtraLengths,
  kSink,
  kOut,
  kLse,
  kMaxLogits,
  kNumBuffers
};

// Outputs are filled with this byte before a run: all-ones is a NaN in bf16 and f32 that no
// arithmetic produces, so an element left unwritten is told apart from a computed NaN.
inline constexpr uint8_t kPoisonByte = 0xFF;

struct Buffer {
  const char* name = "";
  std::vector<uint8_t> bytes;  // empty when the problem does not use it
  bool output = false;         // written by attend; poisoned by Problem::poison_outputs
};

// The elements of a view at byte offset 0 of `bytes` (layout.data is ignored), in logical
// row-major order, as float; bf16 and f32 views.
std::vector<float> read_view(const TensorView& layout, const std::vector<uint8_t>& bytes);

// Stores `value` as element `element` (not byte) of `bytes`.
template <class T>
void store(std::vector<uint8_t>& bytes, int64_t element, T value) {
  std::memcpy(bytes.data() + element * static_cast<int64_t>(sizeof(T)), &value, sizeof(T));
}

class Problem {
 public:
  explicit Problem(const ProblemSpec& spec);

  const ProblemSpec& spec() const { return spec_; }
  Buffer& buffer(int id) { return buffers_[id]; }
  const Buffer& buffer(int id) const { return buffers_[id]; }

  // Views over the host buffers.
  AttendArgs args();
  // The same views over copies of the buffers elsewhere: base(id) is where buffer `id`
  // lives (never called for an empty buffer); every view and pool gets `device`.
  AttendArgs args(Device device, const std::function<void*(int buffer_id)>& base) const;

  // Fills every output buffer (padding included) with kPoisonByte.
  void poison_outputs();

  // Outputs read back from the host buffers in logical order, as float.
  std::vector<float> out() const;         // [T, h_q, 512]
  std::vector<float> lse() const;         // [T, h_q]; empty without lse
  std::vector<float> max_logits() const;  // [T, h_q]; empty without max_logits

 private:
  ProblemSpec spec_;
  std::vector<Buffer> buffers_;
  // Views with data = byte offset 0 of their buffer; build_args adds the bases.
  AttendArgs layout_;
};

// Byte offset of flat element i (row-major over the view's shape) of a strided view.
int64_t view_byte_offset(const TensorView& view, int64_t i);

}  // namespace smla::test
