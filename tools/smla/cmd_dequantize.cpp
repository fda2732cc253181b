// `smla dequantize`: a KV cache pool -> float32 rows (the bf16 values SPEC §2 defines).
#include <cstdio>

#include "args.hpp"
#include "cli.hpp"
#include "json.hpp"
#include "smla/ops.hpp"
#include "tensor_io.hpp"

namespace smla::cli {

namespace {

const CommandSpec kSpec{
    "dequantize",
    "smla dequantize --format F --block-size B --d-qk D --count N cache.npy rows.npy",
    "Reads a uint8 [num_blocks, block_bytes] pool in format F and writes slots 0..N-1 as float32\n"
    "rows [N, D] (exact: every dequantized value is a bf16).",
    {{"--format", "F", "bf16 | fp8_v32 | fp8_ds_mla | int8_ds_mla (interleaved)"},
     {"--block-size", "B", "slots per block the pool was written with"},
     {"--d-qk", "D", "row width: 576 or 512"},
     {"--count", "N", "rows to read, at most num_blocks * B"}},
    2,
    2};

}  // namespace

int dequantize_command(const std::vector<std::string>& argv) {
  const Args args(kSpec, argv);
  if (args.print_help_if_asked()) return kExitOk;
  const KvFormat format = format_option(args, "--format");
  const int32_t block_size = block_size_option(args);
  const int d_qk = d_qk_option(args);
  const int64_t count = args.required_integer("--count", 0, int64_t{1} << 40);
  const std::string& rows_path = args.positional()[1];

  NpyInput cache = read_input(args.positional()[0], NpyDType::u8, 2, "cache");
  const KvPool pool = cache_pool(cache, format, block_size, d_qk);
  if (count > pool.slots()) {
    throw failure(cache.path + ": --count " + std::to_string(count) + " exceeds the pool's " +
                  std::to_string(pool.slots()) + " slots");
  }
  std::vector<uint16_t> rows(static_cast<size_t>(count * d_qk));
  check_status(dequantize(pool, TensorView::contiguous(rows.data(), DType::bf16, {count, d_qk})),
               "dequantize");
  const NpyArray out = f32_from_bf16(rows, {count, d_qk});
  write_npy(rows_path, out);

  if (args.json()) {
    JsonObject json;
    json.add("command", "dequantize").add("ok", true).add("format", format_name(format));
    json.add("rows", count).add("d_qk", d_qk).add("output", rows_path);
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("dequantized %lld rows of d_qk %d from %s into %s\n", static_cast<long long>(count),
                d_qk, cache.path.c_str(), rows_path.c_str());
  }
  return kExitOk;
}

}  // namespace smla::cli
