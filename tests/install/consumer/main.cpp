// Consumer of an installed smla: prints the version, round-trips a few bf16 rows through a
// CPU pool with quantize/dequantize, and checks the C ABI agrees on the version. Exit status
// 0 only if every step did what it should.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "smla/smla.h"
#include "smla/smla.hpp"

int main() {
  std::printf("smla %s\n", smla::version());
  if (std::strcmp(smla::version(), smla_version()) != 0) {
    std::fprintf(stderr, "C and C++ version strings differ\n");
    return 1;
  }

  // 4 rows of d_qk = 576 bf16 in a bf16 pool of one block of 4 slots: the bf16 format is
  // the rows themselves, so dequantize must give back exactly what quantize stored.
  constexpr int kRows = 4, kDqk = 576;
  std::vector<uint16_t> rows(kRows * kDqk), back(kRows * kDqk, 0);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint16_t>(0x3f80 + i % 64);
  alignas(16) static unsigned char pool_bytes[kRows * kDqk * 2];

  const smla::KvPool pool =
      smla::KvPool::packed(smla::KvFormat::bf16, pool_bytes, 1, kRows, kDqk);
  smla::Status s = smla::quantize(
      smla::TensorView::contiguous(rows.data(), smla::DType::bf16, {kRows, kDqk}), pool);
  if (s.ok())
    s = smla::dequantize(
        pool, smla::TensorView::contiguous(back.data(), smla::DType::bf16, {kRows, kDqk}));
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", smla::status_code_name(s.code()), s.message().c_str());
    return 1;
  }
  if (back != rows) {
    std::fprintf(stderr, "bf16 round trip changed the rows\n");
    return 1;
  }
  std::printf("quantize/dequantize round trip ok\n");
  return 0;
}
