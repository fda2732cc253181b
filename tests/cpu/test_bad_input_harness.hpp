// Shared pieces of the bad-input suites (test_bad_input_*.cpp): poisoned buffers that prove a
// failed call wrote nothing (SPEC §5), a valid CPU attend call to break one argument at a
// time, and the assertion every case makes about the status and its message.
//
// Nothing here runs a backend: every call these suites make fails in validation, so they do
// not depend on src/reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "smla/smla.hpp"

namespace smla::test {

// A 64-byte aligned buffer filled with a recognizable byte pattern.
class Poisoned {
 public:
  explicit Poisoned(size_t bytes) : storage_(bytes + 64) {
    for (size_t i = 0; i < storage_.size(); ++i) storage_[i] = pattern(i);
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    offset_ = static_cast<size_t>((64 - base % 64) % 64);
  }
  Poisoned(const Poisoned&) = delete;
  Poisoned& operator=(const Poisoned&) = delete;

  void* data() { return storage_.data() + offset_; }
  // True while every byte, including the slack around the aligned region, is the pattern.
  bool untouched() const {
    for (size_t i = 0; i < storage_.size(); ++i)
      if (storage_[i] != pattern(i)) return false;
    return true;
  }

 private:
  static unsigned char pattern(size_t i) { return static_cast<unsigned char>(0xA5 ^ (i * 31)); }
  std::vector<unsigned char> storage_;
  size_t offset_ = 0;
};

// A valid DeepSeek-V3.2-shaped attend call on the CPU: T=4 tokens, h_q=16 heads, d_qk=576,
// k=8 main and k_x=4 extra indices, bf16 pools (main: 2 blocks of 64 slots, extra: 1 block),
// every optional argument present. Index values are garbage on purpose: never checked.
// `out` has 64 bytes of slack so a case may shift it off alignment without its byte range
// reaching a neighbouring allocation (which the aliasing check would rightly report).
struct AttendCase {
  static constexpr int64_t T = 4, H = 16, D = 576, K = 8, KX = 4, BS = 64;
  static constexpr int64_t kBlockBytes = BS * D * 2;

  Poisoned q{T * H * D * 2}, kv{2 * kBlockBytes}, extra{kBlockBytes}, indices{T * K * 4},
      lengths{T * 4}, extra_indices{T * KX * 4}, extra_lengths{T * 4}, sink{H * 4},
      out{T * H * 512 * 2 + 64}, lse{T * H * 4}, max_logits{T * H * 4}, scales{2 * BS * 4};

  AttendArgs args() {
    AttendArgs a;
    a.q = TensorView::contiguous(q.data(), DType::bf16, {T, H, D});
    a.kv = KvPool::packed(KvFormat::bf16, kv.data(), 2, BS, D);
    a.indices = TensorView::contiguous(indices.data(), DType::i32, {T, K});
    a.lengths = TensorView::contiguous(lengths.data(), DType::i32, {T});
    a.extra_kv = KvPool::packed(KvFormat::bf16, extra.data(), 1, BS, D);
    a.extra_indices = TensorView::contiguous(extra_indices.data(), DType::i32, {T, KX});
    a.extra_lengths = TensorView::contiguous(extra_lengths.data(), DType::i32, {T});
    a.sink = TensorView::contiguous(sink.data(), DType::f32, {H});
    a.scale = 0.0416667f;
    a.out = TensorView::contiguous(out.data(), DType::bf16, {T, H, 512});
    a.lse = TensorView::contiguous(lse.data(), DType::f32, {T, H});
    a.max_logits = TensorView::contiguous(max_logits.data(), DType::f32, {T, H});
    return a;
  }

  bool untouched() const {
    for (const Poisoned* p : {&q, &kv, &extra, &indices, &lengths, &extra_indices,
                              &extra_lengths, &sink, &out, &lse, &max_logits, &scales})
      if (!p->untouched()) return false;
    return true;
  }
};

// Asserts a failed call: its code, and that the message contains every fragment (the op,
// the argument, what was expected, what was given).
inline void expect_rejected(const Status& s, StatusCode code,
                            const std::vector<std::string>& fragments) {
  EXPECT_EQ(s.code(), code) << "message: " << s.message();
  for (const std::string& f : fragments)
    EXPECT_NE(s.message().find(f), std::string::npos)
        << "message lacks \"" << f << "\": " << s.message();
}

// The code a call on a CUDA device gets when no usable device is there: a CPU-only build
// says not_built, a CUDA build on a machine without a GPU says unsupported.
inline bool is_no_gpu_code(StatusCode c) {
  return c == StatusCode::not_built || c == StatusCode::unsupported;
}

}  // namespace smla::test
