#include "common/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/random.hpp"
#include "formats/numeric.hpp"
#include "reference/reference.hpp"

namespace smla::test {
namespace {

constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
// Row padding (elements) of the strided views: 8 bf16 = 16 B keeps rows 16-byte aligned.
constexpr int64_t kRowPad = 8;
constexpr int64_t kIndexRowPad = 3;

// The pool described by `ps` with data (and split scales) at offset 0 of their buffers.
// Returns the byte sizes of the data and scale buffers through the out-parameters.
KvPool pool_layout(const PoolSpec& ps, int d_qk, int64_t* data_bytes, int64_t* scale_bytes) {
  KvPool pool;
  pool.format = ps.format;
  pool.block_size = ps.block_size;
  pool.num_blocks = (ps.min_slots + ps.block_size - 1) / ps.block_size;
  *scale_bytes = 0;
  if (ps.int8_split) {
    // Any non-null marker makes packed_block_bytes answer for the split layout.
    pool.scales = &pool;
    pool.scale_block_stride = ps.block_size * int64_t{4} + ps.block_padding;
    *scale_bytes = pool.num_blocks * pool.scale_block_stride;
  }
  pool.block_stride = pool.packed_block_bytes(d_qk) + ps.block_padding;
  *data_bytes = pool.num_blocks * pool.block_stride;
  return pool;
}

// One selection into a pool: its indices and (when used) its lengths.
struct Selection {
  std::vector<int32_t> indices;  // [T, k]
  std::vector<int32_t> lengths;  // [T], or empty
};

// Draws a selection of width k into a pool of `slots` slots; `used` collects the slots of
// valid entries. Without poisoning, entries past a row's length point at real slots (so
// reading them would change the answer); with poisoning they point at the last slots, which
// no valid entry uses and which end up NaN.
Selection make_selection(const ProblemSpec& spec, int64_t k, bool with_lengths, int64_t slots,
                         Rng& rng, std::vector<char>& used) {
  const int64_t dead = spec.poison_unused ? slots / 8 : 0;
  const int64_t live = slots - dead;
  Selection sel;
  sel.indices.resize(spec.T * k);
  sel.lengths.resize(with_lengths ? spec.T : 0);
  const std::array<int32_t, 6> bad_values = invalid_slot_ids(slots);
  const int32_t bad_lengths[] = {0, -1, kIntMin, static_cast<int32_t>(k + 5), kIntMax};
  for (int64_t t = 0; t < spec.T; ++t) {
    int64_t length = k;
    if (with_lengths) {
      int32_t stored = static_cast<int32_t>(rng.uniform_int(0, k));
      if (spec.adversarial && rng.uniform_int(0, 3) == 0) stored = rng.pick(bad_lengths);
      sel.lengths[t] = stored;
      length = std::clamp<int64_t>(stored, 0, k);
    }
    const bool empty_row = spec.adversarial && rng.uniform_int(0, 7) == 0;
    int32_t* row = sel.indices.data() + t * k;  // k may be 0: no element to index
    for (int64_t p = 0; p < k; ++p) {
      if (p >= length) {
        row[p] = static_cast<int32_t>(dead > 0 ? rng.uniform_int(live, slots - 1)
                                               : rng.uniform_int(0, slots - 1));
        continue;
      }
      int32_t value = static_cast<int32_t>(rng.uniform_int(0, live - 1));
      if (empty_row) {
        value = rng.pick(bad_values);
      } else if (spec.adversarial && rng.uniform_int(0, 3) == 0) {
        // Half of the replacements duplicate an earlier entry of the row.
        value = (p > 0 && rng.uniform_int(0, 1) == 0) ? row[rng.uniform_int(0, p - 1)]
                                                      : rng.pick(bad_values);
      }
      row[p] = value;
      if (value >= 0 && value < slots) used[value] = 1;
    }
  }
  return sel;
}

// Fills a pool buffer: random bf16 rows quantized into the used slots (all slots when
// nothing is poisoned) by the reference writer; every other byte stays all-ones (NaN).
void fill_pool(KvPool pool, int d_qk, float stddev, const std::vector<char>& used, bool poison,
               Rng& rng, std::vector<uint8_t>& data, std::vector<uint8_t>& scales) {
  std::fill(data.begin(), data.end(), poison ? kPoisonByte : uint8_t{0});
  std::fill(scales.begin(), scales.end(), poison ? kPoisonByte : uint8_t{0});
  pool.data = data.data();
  pool.scales = pool.int8_split() ? scales.data() : nullptr;
  std::vector<uint16_t> rows;     // [n, d_qk]
  std::vector<int32_t> slot_ids;  // [n]
  for (int64_t slot = 0; slot < pool.slots(); ++slot) {
    // Draw every row so a slot's content does not depend on which slots are used.
    const size_t first = rows.size();
    for (int d = 0; d < d_qk; ++d) rows.push_back(fmt::float_to_bf16_rne(rng.normal(stddev)));
    if (poison && !used[slot]) {
      rows.resize(first);
      continue;
    }
    slot_ids.push_back(static_cast<int32_t>(slot));
  }
  const int64_t n = static_cast<int64_t>(slot_ids.size());
  const TensorView row_view = TensorView::contiguous(rows.data(), DType::bf16, {n, d_qk});
  const TensorView slot_view = TensorView::contiguous(slot_ids.data(), DType::i32, {n});
  const Status status = reference::write_cache(row_view, slot_view, pool);
  if (!status.ok()) throw std::runtime_error("workload: write_cache failed: " + status.message());
}

std::vector<uint8_t> bytes_of(const std::vector<int32_t>& values, int64_t rows, int64_t cols,
                              int64_t row_stride) {
  std::vector<uint8_t> bytes(rows * row_stride * sizeof(int32_t), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) store(bytes, r * row_stride + c, values[r * cols + c]);
  return bytes;
}

}  // namespace

std::array<int32_t, 6> invalid_slot_ids(int64_t slots) {
  return {-1, kIntMin, kIntMax, static_cast<int32_t>(slots), static_cast<int32_t>(slots + 1),
          static_cast<int32_t>(-slots)};
}

ProblemSpec random_spec(uint64_t seed, int64_t max_work) {
  Rng rng(seed * 0x2545F4914F6CDD1Dull + 17);
  ProblemSpec spec;
  spec.seed = seed;
  const int heads[] = {1, 2, 3, 8, 16, 22, 32, 57, 64, 128};
  spec.h_q = rng.pick(heads);
  spec.d_qk = rng.uniform_int(0, 1) ? 576 : 512;
  const int64_t widths[] = {0, 1, 7, 16, 33, 64, 100, 128, 256};
  spec.k = rng.pick(widths);
  spec.extra = rng.uniform_int(0, 1) == 0;
  spec.k_x = spec.extra ? rng.pick(widths) : 0;
  spec.T = rng.uniform_int(0, 9) == 0 ? 0 : rng.uniform_int(1, 6);
  // Shrink the selection, then the token count, until the work fits.
  while (spec.T * spec.h_q * (spec.k + spec.k_x) > max_work && spec.k + spec.k_x > 8) {
    spec.k /= 2;
    spec.k_x /= 2;
  }
  while (spec.T * spec.h_q * (spec.k + spec.k_x) > max_work && spec.T > 1) --spec.T;

  auto random_pool = [&](int64_t k) {
    PoolSpec p;
    const KvFormat formats576[] = {KvFormat::bf16, KvFormat::fp8_v32};
    const KvFormat formats512[] = {KvFormat::bf16, KvFormat::fp8_ds_mla, KvFormat::int8_ds_mla};
    p.format = spec.d_qk == 576 ? rng.pick(formats576) : rng.pick(formats512);
    p.int8_split = p.format == KvFormat::int8_ds_mla && rng.uniform_int(0, 1) == 1;
    const int32_t block_sizes[] = {1, 2, 16, 64, 64, 256};
    p.block_size = rng.pick(block_sizes);
    p.min_slots = rng.uniform_int(1, std::max<int64_t>(2, 2 * k + 8));
    p.block_padding = rng.uniform_int(0, 2) == 0 ? 16 * rng.uniform_int(1, 4) : 0;
    return p;
  };
  spec.kv = random_pool(spec.k);
  spec.extra_kv = random_pool(spec.k_x);
  spec.lengths = rng.uniform_int(0, 1) == 1;
  spec.extra_lengths = spec.extra && rng.uniform_int(0, 1) == 1;
  spec.sink = rng.uniform_int(0, 1) == 1;
  spec.sink_infinities = spec.sink && rng.uniform_int(0, 1) == 1;
  spec.adversarial = rng.uniform_int(0, 1) == 1;
  spec.poison_unused = rng.uniform_int(0, 1) == 1;
  spec.strided = rng.uniform_int(0, 1) == 1;
  spec.with_lse = rng.uniform_int(0, 3) != 0;
  spec.with_max_logits = rng.uniform_int(0, 3) != 0;
  // Logit spreads from near-uniform softmax (0.1 / 0.1) to peaked (1 / 1).
  const float stds[] = {0.1f, 0.3f, 1.0f};
  spec.q_std = rng.pick(stds);
  spec.kv_std = rng.pick(stds);
  return spec;
}

float ProblemSpec::softmax_scale() const {
  return scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(d_qk));
}

std::string ProblemSpec::describe() const {
  auto pool = [](const PoolSpec& p) {
    std::ostringstream s;
    s << format_name(p.format) << (p.int8_split ? "(split)" : "") << "/bs" << p.block_size
      << "/slots>=" << p.min_slots << (p.block_padding ? "/padded" : "");
    return s.str();
  };
  std::ostringstream s;
  s << "T=" << T << " h_q=" << h_q << " d_qk=" << d_qk << " k=" << k << " kv=" << pool(kv);
  if (extra) s << " k_x=" << k_x << " extra=" << pool(extra_kv);
  s << (lengths ? " lengths" : "") << (extra_lengths ? " extra_lengths" : "")
    << (sink ? (sink_infinities ? " sink(+-inf)" : " sink") : "")
    << (adversarial ? " adversarial" : "") << (poison_unused ? " poison" : "")
    << (strided ? " strided" : "") << (q_shared_by_heads ? " q_shared_by_heads" : "")
    << (with_lse ? "" : " no-lse")
    << (with_max_logits ? "" : " no-max_logits") << " scale=" << softmax_scale()
    << " q_std=" << q_std << " kv_std=" << kv_std << " seed=" << seed;
  return s.str();
}

Problem::Problem(const ProblemSpec& spec) : spec_(spec), buffers_(kNumBuffers) {
  static const char* const names[kNumBuffers] = {"q",
                                                 "kv",
                                                 "kv_scales",
                                                 "indices",
                                                 "lengths",
                                                 "extra_kv",
                                                 "extra_kv_scales",
                                                 "extra_indices",
                                                 "extra_lengths",
                                                 "sink",
                                                 "out",
                                                 "lse",
                                                 "max_logits"};
  for (int id = 0; id < kNumBuffers; ++id) buffers_[id].name = names[id];
  for (int id : {kOut, kLse, kMaxLogits}) buffers_[id].output = true;

  Rng rng(spec.seed);
  const int64_t T = spec.T;
  const int h_q = spec.h_q;
  const int d_qk = spec.d_qk;
  const Device cpu = Device::cpu();

  // q: [T, h_q, d_qk]; strided: stored head-major [h_q, T, d_qk + pad]; shared by heads: [T,
  // d_qk] with head stride 0.
  const int64_t q_row = spec.strided ? d_qk + kRowPad : d_qk;
  buffers_[kQ].bytes.assign(T * (spec.q_shared_by_heads ? 1 : h_q) * q_row * 2, 0);
  if (spec.q_shared_by_heads) {
    layout_.q = TensorView::strided(nullptr, DType::bf16, {T, h_q, d_qk}, {q_row, 0, 1}, cpu);
  } else if (spec.strided) {
    layout_.q =
        TensorView::strided(nullptr, DType::bf16, {T, h_q, d_qk}, {q_row, T * q_row, 1}, cpu);
  } else {
    layout_.q = TensorView::contiguous(nullptr, DType::bf16, {T, h_q, d_qk}, cpu);
  }
  for (int64_t t = 0; t < T; ++t)
    for (int h = 0; h < h_q; ++h)
      for (int d = 0; d < d_qk; ++d)
        store(buffers_[kQ].bytes, t * layout_.q.stride[0] + h * layout_.q.stride[1] + d,
              fmt::float_to_bf16_rne(rng.normal(spec.q_std)));

  // Pools, selections, then the pool contents (which depend on the used slots).
  auto add_pool = [&](const PoolSpec& ps, int data_id, int scales_id, int indices_id,
                      int lengths_id, int64_t k, bool with_lengths, KvPool& pool,
                      TensorView& indices, TensorView& lengths) {
    int64_t data_bytes = 0, scale_bytes = 0;
    pool = pool_layout(ps, d_qk, &data_bytes, &scale_bytes);
    buffers_[data_id].bytes.resize(data_bytes);
    buffers_[scales_id].bytes.resize(scale_bytes);
    std::vector<char> used(pool.slots(), 0);
    const Selection sel = make_selection(spec, k, with_lengths, pool.slots(), rng, used);
    fill_pool(pool, d_qk, spec.kv_std, used, spec.poison_unused, rng, buffers_[data_id].bytes,
              buffers_[scales_id].bytes);
    pool.scales = nullptr;  // args() places it, like every other pointer
    const int64_t index_row = spec.strided ? k + kIndexRowPad : k;
    buffers_[indices_id].bytes = bytes_of(sel.indices, T, k, index_row);
    indices = TensorView::strided(nullptr, DType::i32, {T, k}, {index_row, 1}, cpu);
    if (with_lengths) {
      const int64_t stride = spec.strided ? 2 : 1;
      buffers_[lengths_id].bytes = bytes_of(sel.lengths, T, 1, stride);
      lengths = TensorView::strided(nullptr, DType::i32, {T}, {stride}, cpu);
    }
  };
  add_pool(spec.kv, kKv, kKvScales, kIndices, kLengths, spec.k, spec.lengths, layout_.kv,
           layout_.indices, layout_.lengths);
  if (spec.extra)
    add_pool(spec.extra_kv, kExtraKv, kExtraKvScales, kExtraIndices, kExtraLengths, spec.k_x,
             spec.extra_lengths, layout_.extra_kv, layout_.extra_indices, layout_.extra_lengths);

  if (spec.sink) {
    buffers_[kSink].bytes.resize(h_q * sizeof(float));
    for (int h = 0; h < h_q; ++h) {
      // Finite sinks around typical lse values (ln k plus a little), so f spans (0, 1).
      float value = static_cast<float>(rng.uniform(-1.0, 6.0));
      if (spec.sink_infinities) {
        const int64_t kind = rng.uniform_int(0, 3);
        if (kind == 0) value = std::numeric_limits<float>::infinity();
        if (kind == 1) value = -std::numeric_limits<float>::infinity();
      }
      store(buffers_[kSink].bytes, h, value);
    }
    layout_.sink = TensorView::contiguous(nullptr, DType::f32, {h_q}, cpu);
  }
  layout_.scale = spec.softmax_scale();

  // out: [T, h_q, 512]; strided: head-major [h_q, T, 512 + pad].
  const int64_t out_row = spec.strided ? kDv + kRowPad : kDv;
  buffers_[kOut].bytes.resize(T * h_q * out_row * 2);
  layout_.out = spec.strided ? TensorView::strided(nullptr, DType::bf16, {T, h_q, kDv},
                                                   {out_row, T * out_row, 1}, cpu)
                             : TensorView::contiguous(nullptr, DType::bf16, {T, h_q, kDv}, cpu);
  // lse, max_logits: [T, h_q]; strided: transposed [h_q, T].
  auto stat_view = [&]() {
    return spec.strided ? TensorView::strided(nullptr, DType::f32, {T, h_q}, {1, T}, cpu)
                        : TensorView::contiguous(nullptr, DType::f32, {T, h_q}, cpu);
  };
  if (spec.with_lse) {
    buffers_[kLse].bytes.resize(T * h_q * sizeof(float));
    layout_.lse = stat_view();
  }
  if (spec.with_max_logits) {
    buffers_[kMaxLogits].bytes.resize(T * h_q * sizeof(float));
    layout_.max_logits = stat_view();
  }
  poison_outputs();
}

AttendArgs Problem::args() {
  return args(Device::cpu(), [this](int id) -> void* { return buffers_[id].bytes.data(); });
}

AttendArgs Problem::args(Device device, const std::function<void*(int buffer_id)>& base) const {
  AttendArgs a = layout_;
  auto place = [&](TensorView& view, int id) {
    if (!view.present()) return;
    view.device = device;
    if (!buffers_[id].bytes.empty()) view.data = base(id);
  };
  auto place_pool = [&](KvPool& pool, int data_id, int scales_id) {
    if (!pool.present()) return;
    pool.device = device;
    pool.data = base(data_id);
    if (!buffers_[scales_id].bytes.empty()) pool.scales = base(scales_id);
  };
  place(a.q, kQ);
  place_pool(a.kv, kKv, kKvScales);
  place(a.indices, kIndices);
  place(a.lengths, kLengths);
  place_pool(a.extra_kv, kExtraKv, kExtraKvScales);
  place(a.extra_indices, kExtraIndices);
  place(a.extra_lengths, kExtraLengths);
  place(a.sink, kSink);
  place(a.out, kOut);
  place(a.lse, kLse);
  place(a.max_logits, kMaxLogits);
  return a;
}

void Problem::poison_outputs() {
  for (Buffer& b : buffers_)
    if (b.output) std::fill(b.bytes.begin(), b.bytes.end(), kPoisonByte);
}

std::vector<float> Problem::out() const { return read_view(layout_.out, buffers_[kOut].bytes); }

std::vector<float> Problem::lse() const { return read_view(layout_.lse, buffers_[kLse].bytes); }

std::vector<float> Problem::max_logits() const {
  return read_view(layout_.max_logits, buffers_[kMaxLogits].bytes);
}

int64_t view_byte_offset(const TensorView& view, int64_t i) {
  int64_t offset = 0;
  for (int d = view.rank - 1; d >= 0; --d) {
    offset += (i % view.shape[d]) * view.stride[d];
    i /= view.shape[d];
  }
  return offset * dtype_size(view.dtype);
}

std::vector<float> read_view(const TensorView& layout, const std::vector<uint8_t>& bytes) {
  std::vector<float> values;
  if (!layout.present()) return values;
  const int64_t n = layout.numel();
  values.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* at = bytes.data() + view_byte_offset(layout, i);
    if (layout.dtype == DType::bf16) {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      values.push_back(fmt::bf16_to_float(bits));
    } else {
      float x;
      std::memcpy(&x, at, 4);
      values.push_back(x);
    }
  }
  return values;
}

}  // namespace smla::test
