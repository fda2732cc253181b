#include "common/tolerance.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace smla::test {
namespace {

constexpr double kOutAbs = 1e-3;
constexpr double kOutRel = 1.0 / 64;
constexpr double kOutCos = 1e-5;
constexpr double kStatAbs = 1e-5;
constexpr double kStatRel = 1.0 / 16384;

// "[1, 2, 30]" for flat index `i` of a row-major `shape`.
std::string index_name(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] > 0 ? i % shape[d] : 0;
    i = shape[d] > 0 ? i / shape[d] : 0;
  }
  std::ostringstream s;
  s << "[";
  for (size_t d = 0; d < idx.size(); ++d) s << (d ? ", " : "") << idx[d];
  s << "]";
  return s.str();
}

// Shared by the element-wise checks: counts failures, remembers the first.
struct Mismatches {
  int64_t count = 0;
  int64_t first = -1;
  double first_got = 0, first_ref = 0, first_allowed = 0;
  void add(int64_t i, double got, double ref, double allowed) {
    if (count++ == 0) {
      first = i;
      first_got = got;
      first_ref = ref;
      first_allowed = allowed;
    }
  }
  std::string describe(const char* name, int64_t total, const std::vector<int64_t>& shape) const {
    std::ostringstream s;
    s.precision(9);
    s << name << ": " << count << " of " << total << " elements out of tolerance; first at "
      << index_name(first, shape) << ": got " << first_got << ", ref " << first_ref
      << ", allowed |err| " << first_allowed;
    return s.str();
  }
};

// Checks got ~ ref for one element: exact on infinities, NaN never passes.
bool close(double got, double ref, double allowed) {
  if (std::isnan(got) || std::isnan(ref)) return false;
  if (std::isinf(ref) || std::isinf(got)) return got == ref;
  return std::fabs(got - ref) <= allowed;
}

::testing::AssertionResult size_mismatch(const char* name, size_t got, size_t ref) {
  return ::testing::AssertionFailure() << name << ": " << got << " elements, reference has " << ref;
}

}  // namespace

::testing::AssertionResult check_out(const std::vector<float>& got, const std::vector<double>& ref,
                                     const std::vector<int64_t>& shape) {
  if (got.size() != ref.size()) return size_mismatch("out", got.size(), ref.size());
  Mismatches bad;
  double dot = 0, got_norm = 0, ref_norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = kOutAbs + std::fabs(ref[i]) * kOutRel;
    if (!close(got[i], ref[i], allowed)) bad.add(static_cast<int64_t>(i), got[i], ref[i], allowed);
    dot += got[i] * ref[i];
    got_norm += static_cast<double>(got[i]) * got[i];
    ref_norm += ref[i] * ref[i];
  }
  if (bad.count) return ::testing::AssertionFailure() << bad.describe("out", got.size(), shape);
  if (ref_norm == 0 || got_norm == 0) {
    if (ref_norm == got_norm) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "out: |ref|^2 = " << ref_norm << " but |out|^2 = " << got_norm
           << " (an all-zero tensor must be matched exactly)";
  }
  const double one_minus_cos = 1.0 - dot / std::sqrt(got_norm * ref_norm);
  if (!(one_minus_cos <= kOutCos))
    return ::testing::AssertionFailure()
           << "out: 1 - cos(out, ref) = " << one_minus_cos << " > " << kOutCos;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_stat(const char* name, const std::vector<float>& got,
                                      const std::vector<double>& ref,
                                      const std::vector<int64_t>& shape) {
  if (got.size() != ref.size()) return size_mismatch(name, got.size(), ref.size());
  Mismatches bad;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = kStatAbs + std::fabs(ref[i]) * kStatRel;
    if (!close(got[i], ref[i], allowed)) bad.add(static_cast<int64_t>(i), got[i], ref[i], allowed);
  }
  if (bad.count) return ::testing::AssertionFailure() << bad.describe(name, got.size(), shape);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_bitwise_equal(const char* name, const std::vector<uint8_t>& a,
                                               const std::vector<uint8_t>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure()
           << name << ": " << a.size() << " vs " << b.size() << " bytes";
  int64_t differing = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && differing++ == 0) first = static_cast<int64_t>(i);
  if (differing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << name << ": " << differing << " of " << a.size() << " bytes differ; first at byte "
         << first << " (" << int{a[first]} << " vs " << int{b[first]} << ")";
}

::testing::AssertionResult check_view_written(const Buffer& buffer, const TensorView& layout) {
  std::vector<char> covered(buffer.bytes.size(), 0);
  if (layout.present()) {
    const int elem = dtype_size(layout.dtype);
    int64_t unwritten = 0, first = -1;
    for (int64_t i = 0, n = layout.numel(); i < n; ++i) {
      const int64_t at = view_byte_offset(layout, i);
      bool poison = true;
      for (int b = 0; b < elem; ++b) {
        covered[at + b] = 1;
        poison = poison && buffer.bytes[at + b] == kPoisonByte;
      }
      if (poison && unwritten++ == 0) first = i;
    }
    if (unwritten)
      return ::testing::AssertionFailure()
             << buffer.name << ": " << unwritten << " of " << layout.numel()
             << " elements never written (still poison); first at flat index " << first;
  }
  for (size_t i = 0; i < covered.size(); ++i)
    if (!covered[i] && buffer.bytes[i] != kPoisonByte)
      return ::testing::AssertionFailure()
             << buffer.name << ": byte " << i << " lies outside the view but was written";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_writes(const Problem& problem) {
  // Offsets only: every view starts at byte 0 of its buffer.
  const AttendArgs layout = problem.args(Device::cpu(), [](int) -> void* { return nullptr; });
  for (auto [id, view] : {std::pair{kOut, layout.out}, std::pair{kLse, layout.lse},
                          std::pair{kMaxLogits, layout.max_logits}})
    if (auto r = check_view_written(problem.buffer(id), view); !r) return r;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_writes(const CombineProblem& problem) {
  const CombineArgs layout = problem.args(Device::cpu(), [](int) -> void* { return nullptr; });
  for (auto [id, view] : {std::pair{kCombineOut, layout.out}, std::pair{kCombineLse, layout.lse}})
    if (auto r = check_view_written(problem.buffer(id), view); !r) return r;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_combine(const CombineProblem& problem, const AttendResult& ref) {
  const CombineSpec& spec = problem.spec();
  if (auto r = check_writes(problem); !r) return r;
  if (auto r = check_out(problem.out(), ref.out, {spec.T, spec.h_q, kDv}); !r) return r;
  if (spec.with_lse)
    if (auto r = check_stat("lse", problem.lse(), ref.lse, {spec.T, spec.h_q}); !r) return r;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_attend(const Problem& problem, const AttendResult& ref) {
  const ProblemSpec& spec = problem.spec();
  if (auto r = check_writes(problem); !r) return r;
  if (auto r = check_out(problem.out(), ref.out, {spec.T, spec.h_q, kDv}); !r) return r;
  if (spec.with_lse)
    if (auto r = check_stat("lse", problem.lse(), ref.lse, {spec.T, spec.h_q}); !r) return r;
  if (spec.with_max_logits)
    if (auto r = check_stat("max_logits", problem.max_logits(), ref.max_logits, {spec.T, spec.h_q});
        !r)
      return r;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_outputs_identical(const Problem& a, const Problem& b) {
  for (int id = 0; id < kNumBuffers; ++id) {
    if (!a.buffer(id).output) continue;
    if (auto r = check_bitwise_equal(a.buffer(id).name, a.buffer(id).bytes, b.buffer(id).bytes); !r)
      return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace smla::test
