// FNV-1a, 64-bit: the project's one non-cryptographic hash (plan keys, plan_key.cpp; the
// outputs digests of `smla bench`, tools/smla/bench_check.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace smla::api {

class Fnv1a {
 public:
  // The eight bytes of `value`, least significant first (the same on every host).
  void add(int64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      add_byte(static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * byte)));
    }
  }
  void add(std::initializer_list<int64_t> values) {
    for (int64_t v : values) add(v);
  }
  // `count` bytes from `data`, in memory order.
  void add_bytes(const void* data, size_t count) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < count; ++i) add_byte(bytes[i]);
  }
  uint64_t value() const { return hash_; }

 private:
  void add_byte(uint8_t byte) { hash_ = (hash_ ^ byte) * 0x100000001b3ull; }

  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace smla::api
