// api::Fnv1a (src/api/fnv1a.hpp), the hash of plan keys and of smla bench's outputs digests,
// against the published FNV-1a 64-bit test vectors.
#include "api/fnv1a.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace smla::api {
namespace {

uint64_t hash_of(const char* text) {
  Fnv1a h;
  h.add_bytes(text, std::strlen(text));
  return h.value();
}

TEST(Fnv1a, MatchesThePublishedVectors) {
  EXPECT_EQ(hash_of(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(hash_of("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(hash_of("foobar"), 0x85944171f73967e8ull);
}

// An int64 goes in as its eight bytes, least significant first, whatever the host's order.
TEST(Fnv1a, AddsAnIntegerAsItsLittleEndianBytes) {
  const unsigned char bytes[8] = {0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68};
  Fnv1a from_bytes;
  from_bytes.add_bytes(bytes, sizeof bytes);
  Fnv1a from_value;
  from_value.add(int64_t{0x6867666564636261});
  EXPECT_EQ(from_value.value(), from_bytes.value());
  EXPECT_EQ(from_value.value(), hash_of("abcdefgh"));
}

}  // namespace
}  // namespace smla::api
