// `smla quantize`: float32 rows -> a KV cache pool in one of SPEC §2's formats, byte-exact.
#include <cstdio>

#include "args.hpp"
#include "cli.hpp"
#include "json.hpp"
#include "smla/ops.hpp"
#include "tensor_io.hpp"

namespace smla::cli {

namespace {

const CommandSpec kSpec{
    "quantize",
    "smla quantize --format F --block-size B rows.npy cache.npy",
    "Reads float32 rows [N, d_qk] (converted to bf16, round to nearest even), writes them into\n"
    "slots 0..N-1 of a packed pool of ceil(N / B) blocks in format F, and saves the pool as\n"
    "uint8 [num_blocks, block_bytes]. Slots past N stay zero. int8_ds_mla is written in its\n"
    "interleaved 528-byte form.",
    {{"--format", "F", "bf16 | fp8_v32 (d_qk 576) | fp8_ds_mla | int8_ds_mla (d_qk 512)"},
     {"--block-size", "B", "slots per block (page size), e.g. 64"}},
    2,
    2};

}  // namespace

int quantize_command(const std::vector<std::string>& argv) {
  const Args args(kSpec, argv);
  if (args.print_help_if_asked()) return kExitOk;
  const KvFormat format = format_option(args, "--format");
  const int32_t block_size = block_size_option(args);
  const std::string& rows_path = args.positional()[0];
  const std::string& cache_path = args.positional()[1];

  NpyInput rows = read_input(rows_path, NpyDType::f32, 2, "rows");
  const int64_t count = rows.array.shape[0];
  const int d_qk = d_qk_of(rows, 1);
  std::vector<uint16_t> bf16_rows = bf16_from_f32(rows.array);
  const int64_t num_blocks = (count + block_size - 1) / block_size;
  const int64_t block_bytes =
      KvPool::packed(format, nullptr, num_blocks, block_size, d_qk).packed_block_bytes(d_qk);
  NpyInput cache{cache_path, NpyArray::zeros(NpyDType::u8, {num_blocks, block_bytes})};
  const KvPool pool = cache_pool(cache, format, block_size, d_qk);
  check_status(quantize(TensorView::contiguous(bf16_rows.data(), DType::bf16, {count, d_qk}), pool),
               "quantize");
  write_npy(cache_path, cache.array);

  if (args.json()) {
    JsonObject out;
    out.add("command", "quantize").add("ok", true).add("format", format_name(format));
    out.add("block_size", int64_t{block_size}).add("rows", count).add("d_qk", d_qk);
    out.add("output", cache_path).add("shape", cache.array.shape);
    std::printf("%s\n", out.str().c_str());
  } else {
    std::printf("quantized %lld rows of d_qk %d into %s: %s uint8 (%s, block size %d)\n",
                static_cast<long long>(count), d_qk, cache_path.c_str(),
                cache.array.shape_string().c_str(), format_name(format), block_size);
  }
  return kExitOk;
}

}  // namespace smla::cli
