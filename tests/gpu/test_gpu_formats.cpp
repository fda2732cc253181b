// GPU quantize, dequantize and write_cache against the CPU reference, byte for byte (SPEC
// §2, §3.4): the same rows through both backends must leave identical pool bytes (padding
// included, which neither may touch), and the same pool must dequantize to identical rows;
// also when the calls are replayed from a CUDA graph on new inputs, and on two streams at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/random.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "formats/numeric.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

struct FormatCase {
  int d_qk;
  KvFormat format;
  bool int8_split;
  int64_t block_padding;  // bytes added to the block stride (a view into a larger buffer)
};

constexpr FormatCase kCases[] = {
    {576, KvFormat::bf16, false, 0},        {576, KvFormat::fp8_v32, false, 0},
    {576, KvFormat::fp8_v32, false, 48},    {512, KvFormat::bf16, false, 16},
    {512, KvFormat::fp8_ds_mla, false, 0},  {512, KvFormat::fp8_ds_mla, false, 32},
    {512, KvFormat::int8_ds_mla, false, 0}, {512, KvFormat::int8_ds_mla, true, 0},
    {512, KvFormat::int8_ds_mla, true, 64},
};

constexpr int32_t kBlockSize = 16;
constexpr uint8_t kPoolFill = 0xA5;  // bytes no codec writes by chance everywhere
constexpr uint8_t kRowFill = 0x5A;
constexpr int64_t kRowPad = 8;  // bf16 elements after each row: keeps rows 16 B-aligned

// One pool's bytes on the host and on the device, with views of both.
struct PoolPair {
  std::vector<uint8_t> host_data, host_scales;
  DeviceBuffer dev_data, dev_scales;
  KvPool host, dev;

  PoolPair(const FormatCase& c, int64_t num_blocks) {
    KvPool p;
    p.format = c.format;
    p.num_blocks = num_blocks;
    p.block_size = kBlockSize;
    int64_t data_bytes = 0, scale_bytes = 0;
    if (c.int8_split) {
      p.block_stride = kBlockSize * 512 + c.block_padding;
      p.scale_block_stride = kBlockSize * 4 + c.block_padding;
      scale_bytes = num_blocks * p.scale_block_stride;
    } else {
      p.block_stride = p.packed_block_bytes(c.d_qk) + c.block_padding;
    }
    data_bytes = num_blocks * p.block_stride;
    host_data.assign(data_bytes, kPoolFill);
    host_scales.assign(scale_bytes, kPoolFill);
    dev_data = DeviceBuffer(data_bytes);
    dev_scales = DeviceBuffer(scale_bytes);
    dev_data.upload(host_data);
    dev_scales.upload(host_scales);
    host = dev = p;
    host.data = host_data.data();
    host.scales = c.int8_split ? host_scales.data() : nullptr;
    dev.data = dev_data.get();
    dev.scales = c.int8_split ? dev_scales.get() : nullptr;
    dev.device = Device::cuda(0);
  }

  ::testing::AssertionResult bytes_equal() const {
    ::testing::AssertionResult r = check_bitwise_equal("pool data", host_data, dev_data.download());
    if (!r) return r;
    return check_bitwise_equal("pool scales", host_scales, dev_scales.download());
  }
};

// Rows [n, d_qk] bf16 with row stride d_qk + kRowPad, on the host and the device.
struct RowPair {
  std::vector<uint8_t> host_bytes;
  DeviceBuffer dev_bytes;
  TensorView host, dev;

  RowPair(int64_t n, int d_qk, const std::vector<uint16_t>* values) {
    const int64_t stride = d_qk + kRowPad;
    host_bytes.assign(n * stride * 2, kRowFill);
    dev_bytes = DeviceBuffer(host_bytes.size());
    host = TensorView::strided(host_bytes.data(), DType::bf16, {n, d_qk}, {stride, 1});
    dev =
        TensorView::strided(dev_bytes.get(), DType::bf16, {n, d_qk}, {stride, 1}, Device::cuda(0));
    if (values != nullptr) {
      set(*values);
    } else {
      dev_bytes.upload(host_bytes);
    }
  }

  // New row values ([n, d_qk] packed) on both sides; the padding keeps its fill.
  void set(const std::vector<uint16_t>& values) {
    const int64_t n = host.shape[0], d_qk = host.shape[1], stride = host.stride[0];
    for (int64_t r = 0; r < n; ++r) {
      std::memcpy(host_bytes.data() + r * stride * 2, values.data() + r * d_qk, 2 * d_qk);
    }
    dev_bytes.upload(host_bytes);
  }
  // Both sides back to the fill, as an output before a call that must write every row.
  void poison() {
    std::fill(host_bytes.begin(), host_bytes.end(), kRowFill);
    dev_bytes.upload(host_bytes);
  }
  ::testing::AssertionResult bytes_equal() const {
    return check_bitwise_equal("rows", host_bytes, dev_bytes.download());
  }
};

// Slot ids [n] int32 as a strided view (every other i32, to exercise the stride), on the host
// and the device.
struct SlotPair {
  std::vector<uint8_t> host_bytes;
  DeviceBuffer dev_bytes;
  TensorView host, dev;

  explicit SlotPair(const std::vector<int32_t>& ids) {
    const int64_t n = static_cast<int64_t>(ids.size());
    host_bytes.assign(2 * n * 4, 0);
    dev_bytes = DeviceBuffer(host_bytes.size());
    host = TensorView::strided(host_bytes.data(), DType::i32, {n}, {2});
    dev = TensorView::strided(dev_bytes.get(), DType::i32, {n}, {2}, Device::cuda(0));
    set(ids);
  }
  void set(const std::vector<int32_t>& ids) {
    if (ids.size() * 8 != host_bytes.size()) {
      throw std::runtime_error("SlotPair::set: the view holds a different number of ids");
    }
    for (size_t i = 0; i < ids.size(); ++i) std::memcpy(host_bytes.data() + 8 * i, &ids[i], 4);
    dev_bytes.upload(host_bytes);
  }
};

// The slots of a pool of `slots` in a scrambled order (every third, from `offset` on), among
// every kind of invalid id, and duplicates: the reference keeps the last row naming a slot,
// and so must the GPU (a byte mix of two rows would be neither).
std::vector<int32_t> scrambled_slot_ids(int64_t slots, int64_t offset) {
  std::vector<int32_t> ids;
  for (int64_t i = offset; i < slots; i += 3) {
    ids.push_back(static_cast<int32_t>((i * 37) % slots));
  }
  for (int32_t bad : invalid_slot_ids(slots)) ids.insert(ids.begin() + (ids.size() / 2), bad);
  ids.push_back(ids[0]);
  ids.push_back(ids[5]);
  ids.push_back(ids[0]);
  return ids;
}

// n rows of bf16 bit patterns: normal values at a per-row magnitude from 1e-6 to 1e4, and
// the values that stress the codecs: NaN, +-inf, bf16's largest finite value, subnormals,
// signed zeros, an all-zero tile and a tile of one huge value among tiny ones.
std::vector<uint16_t> make_rows(int64_t n, int d_qk, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> v(n * d_qk);
  const uint16_t specials[] = {0x7FC0, 0x7F80, 0xFF80, 0x7F7F, 0xFF7F,
                               0x0001, 0x8001, 0x0000, 0x8000, 0x3F80};
  for (int64_t r = 0; r < n; ++r) {
    const double magnitude = std::pow(10.0, rng.uniform(-6.0, 4.0));
    for (int d = 0; d < d_qk; ++d) {
      v[r * d_qk + d] = fmt::float_to_bf16_rne(rng.normal(magnitude));
    }
    if (r % 3 == 1) v[r * d_qk + rng.uniform_int(0, d_qk - 1)] = rng.pick(specials);
    if (r % 7 == 2) {
      for (int d = 0; d < 64; ++d) v[r * d_qk + d] = 0;
    }
    if (r % 5 == 3) v[r * d_qk + 64 + rng.uniform_int(0, 63)] = 0x7B00;  // ~6.6e35
  }
  return v;
}

std::string case_label(const FormatCase& c) {
  return std::string(format_name(c.format)) + "_" + std::to_string(c.d_qk) +
         (c.int8_split ? "_split" : "") + (c.block_padding ? "_padded" : "");
}

// GoogleTest (and so CTest's test names) print a parameter through this.
void PrintTo(const FormatCase& c, std::ostream* os) { *os << case_label(c); }

class GpuFormats : public ::testing::TestWithParam<FormatCase> {};

TEST_P(GpuFormats, QuantizeIsByteExactWithTheReference) {
  SMLA_REQUIRE_GPU();
  const FormatCase c = GetParam();
  const int64_t n = 150;  // leaves the last blocks' slots untouched
  PoolPair pool(c, 12);
  const std::vector<uint16_t> values = make_rows(n, c.d_qk, 21);
  RowPair rows(n, c.d_qk, &values);
  ASSERT_TRUE(status_ok(quantize(rows.host, pool.host)));
  ASSERT_TRUE(status_ok(quantize(rows.dev, pool.dev)));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(pool.bytes_equal());
}

TEST_P(GpuFormats, DequantizeIsByteExactWithTheReference) {
  SMLA_REQUIRE_GPU();
  const FormatCase c = GetParam();
  const int64_t n = 150;
  PoolPair pool(c, 12);
  const std::vector<uint16_t> values = make_rows(n, c.d_qk, 22);
  RowPair source(n, c.d_qk, &values);
  // The reference writes the pool; both backends then read the same bytes.
  ASSERT_TRUE(status_ok(quantize(source.host, pool.host)));
  pool.dev_data.upload(pool.host_data);
  pool.dev_scales.upload(pool.host_scales);
  RowPair out(n, c.d_qk, nullptr);
  ASSERT_TRUE(status_ok(dequantize(pool.host, out.host)));
  ASSERT_TRUE(status_ok(dequantize(pool.dev, out.dev)));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(out.bytes_equal());
}

TEST_P(GpuFormats, WriteCacheIsByteExactAndSkipsInvalidSlots) {
  SMLA_REQUIRE_GPU();
  const FormatCase c = GetParam();
  const int64_t num_blocks = 8;
  const int64_t slots = num_blocks * kBlockSize;
  PoolPair pool(c, num_blocks);
  const SlotPair ids(scrambled_slot_ids(slots, 0));
  const int64_t n = ids.host.shape[0];
  const std::vector<uint16_t> values = make_rows(n, c.d_qk, 23);
  RowPair rows(n, c.d_qk, &values);

  ASSERT_TRUE(status_ok(write_cache(rows.host, ids.host, pool.host)));
  ASSERT_TRUE(status_ok(write_cache(rows.dev, ids.dev, pool.dev)));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(pool.bytes_equal());
}

// An engine captures its cache writes in the decode step's CUDA graph: the three operations
// recorded once on a stream, then replayed on new rows and new slot ids written into the
// captured buffers, must leave what the reference leaves after the same calls.
TEST_P(GpuFormats, OperationsCapturedInACudaGraphReplayOnNewRowsAndSlots) {
  SMLA_REQUIRE_GPU();
  const FormatCase c = GetParam();
  const int64_t num_blocks = 6;
  const int64_t slots = num_blocks * kBlockSize;
  PoolPair quantized(c, num_blocks), cache(c, num_blocks);
  SlotPair ids(scrambled_slot_ids(slots, 0));
  const int64_t n = ids.host.shape[0];  // <= slots: quantize's rows fit its pool
  RowPair rows(n, c.d_qk, nullptr);
  RowPair read_back(slots, c.d_qk, nullptr);

  TestStream stream;
  CapturedGraph graph(stream);
  SMLA_CUDA_ASSERT(graph.begin());
  const Status q = quantize(rows.dev, quantized.dev, stream.smla());
  const Status w = write_cache(rows.dev, ids.dev, cache.dev, stream.smla());
  const Status d = dequantize(cache.dev, read_back.dev, stream.smla());
  SMLA_CUDA_ASSERT(graph.end());
  ASSERT_TRUE(status_ok(q));
  ASSERT_TRUE(status_ok(w));
  ASSERT_TRUE(status_ok(d));

  for (int replay = 0; replay < 2; ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    rows.set(make_rows(n, c.d_qk, 31 + replay));
    ids.set(scrambled_slot_ids(slots, replay + 1));
    read_back.poison();
    SMLA_CUDA_ASSERT(graph.replay());
    ASSERT_TRUE(status_ok(quantize(rows.host, quantized.host)));
    ASSERT_TRUE(status_ok(write_cache(rows.host, ids.host, cache.host)));
    ASSERT_TRUE(status_ok(dequantize(cache.host, read_back.host)));
    EXPECT_TRUE(quantized.bytes_equal());
    EXPECT_TRUE(cache.bytes_equal());
    EXPECT_TRUE(read_back.bytes_equal());
  }
}

// The same operations on two streams at once, each stream on its own pool and rows, keep to
// them (no state shared between concurrent calls).
TEST_P(GpuFormats, TwoStreamsAtOnce) {
  SMLA_REQUIRE_GPU();
  const FormatCase c = GetParam();
  const int64_t num_blocks = 8;
  struct Lane {
    PoolPair pool;
    SlotPair ids;
    RowPair rows, read_back;
    TestStream stream;
    Lane(const FormatCase& c, int64_t num_blocks, int64_t offset, uint64_t seed)
        : pool(c, num_blocks),
          ids(scrambled_slot_ids(num_blocks * kBlockSize, offset)),
          rows(ids.host.shape[0], c.d_qk, nullptr),
          read_back(num_blocks * kBlockSize, c.d_qk, nullptr) {
      rows.set(make_rows(ids.host.shape[0], c.d_qk, seed));
    }
  };
  Lane a(c, num_blocks, 0, 41), b(c, num_blocks, 2, 42);
  // Both streams' calls are queued before either stream is waited on.
  for (Lane* lane : {&a, &b}) {
    ASSERT_TRUE(status_ok(write_cache(lane->rows.dev, lane->ids.dev, lane->pool.dev,
                                      lane->stream.smla())));
    ASSERT_TRUE(status_ok(dequantize(lane->pool.dev, lane->read_back.dev, lane->stream.smla())));
  }
  for (Lane* lane : {&a, &b}) {
    SMLA_CUDA_ASSERT(cudaStreamSynchronize(lane->stream.get()));
    ASSERT_TRUE(status_ok(write_cache(lane->rows.host, lane->ids.host, lane->pool.host)));
    ASSERT_TRUE(status_ok(dequantize(lane->pool.host, lane->read_back.host)));
    EXPECT_TRUE(lane->pool.bytes_equal());
    EXPECT_TRUE(lane->read_back.bytes_equal());
  }
}

std::string case_name(const ::testing::TestParamInfo<FormatCase>& info) {
  return case_label(info.param);
}

INSTANTIATE_TEST_SUITE_P(Formats, GpuFormats, ::testing::ValuesIn(kCases), case_name);

}  // namespace
}  // namespace smla::test::gpu
