// `smla run`: SPEC §1's attention on .npy files, on the CPU reference backend, so that any
// tool (NumPy, a test of another implementation) can drive smla without bindings.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "cli.hpp"
#include "json.hpp"
#include "npy.hpp"
#include "smla/ops.hpp"
#include "tensor_io.hpp"

namespace smla::cli {

namespace {

const CommandSpec kSpec{
    "run",
    "smla run --q q.npy --indices idx.npy --cache kv.npy --format F --block-size B --scale S\n"
    "                --out out.npy [--lse lse.npy] [--max-logits m.npy] [more inputs]",
    "Computes sparse MLA attention (SPEC section 1) on the CPU reference backend. q is float32\n"
    "[T, h_q, d_qk] (rounded to bf16), indices int32 [T, k], the cache uint8\n"
    "[num_blocks, block_bytes] (as written by `smla quantize`). Writes out as float32\n"
    "[T, h_q, 512] (its bf16 values), lse and max_logits as float32 [T, h_q]. Output files\n"
    "appear only when the whole call succeeded.",
    {{"--q", "FILE", "queries, float32 [T, h_q, d_qk]"},
     {"--indices", "FILE", "slot ids into the cache, int32 [T, k]"},
     {"--lengths", "FILE", "optional int32 [T]: entries of row t past lengths[t] are unused"},
     {"--cache", "FILE", "the main pool, uint8 [num_blocks, block_bytes]"},
     {"--format", "F", "format of the main pool: bf16 | fp8_v32 | fp8_ds_mla | int8_ds_mla"},
     {"--block-size", "B", "slots per block of the main pool"},
     {"--extra-cache", "FILE", "optional second pool, uint8 [num_blocks, block_bytes]"},
     {"--extra-format", "F", "format of the extra pool (default: --format)"},
     {"--extra-block-size", "B", "slots per block of the extra pool (default: --block-size)"},
     {"--extra-indices", "FILE", "int32 [T, k_x] slot ids into the extra pool"},
     {"--extra-lengths", "FILE", "optional int32 [T] lengths of the extra rows"},
     {"--sink", "FILE", "optional float32 [h_q] attention sink"},
     {"--scale", "S", "softmax scale (required: no default, e.g. 1/sqrt(d_qk))"},
     {"--out", "FILE", "output float32 [T, h_q, 512]"},
     {"--lse", "FILE", "optional output float32 [T, h_q] (natural log)"},
     {"--max-logits", "FILE", "optional output float32 [T, h_q]"}},
    0,
    0};

std::optional<NpyInput> optional_input(const Args& args, const char* option, NpyDType dtype,
                                       size_t rank, const char* role) {
  std::optional<std::string> path = args.value(option);
  if (!path) return std::nullopt;
  return read_input(*path, dtype, rank, role);
}

TensorView optional_view(std::optional<NpyInput>& input) {
  return input ? view_of(input->array) : TensorView{};
}

// --out, then --lse and --max-logits where given: each output needs a file of its own (two
// outputs written to one file would overwrite each other), however the paths are spelled.
std::vector<std::string> distinct_outputs(const Args& args, const std::string& out_path) {
  if (out_path.empty()) throw usage_error("--out needs a file name");
  std::vector<std::string> paths{out_path};
  for (const char* option : {"--lse", "--max-logits"}) {
    std::optional<std::string> path = args.value(option);
    if (!path) continue;
    if (path->empty()) throw usage_error(std::string(option) + " needs a file name");
    for (const std::string& earlier : paths) {
      if (same_file_key(*path) == same_file_key(earlier)) {
        throw usage_error(std::string(option) + " names the same file as " + earlier + ": " +
                          *path);
      }
    }
    paths.push_back(*path);
  }
  return paths;
}

}  // namespace

int run_command(const std::vector<std::string>& argv) {
  const Args args(kSpec, argv);
  if (args.print_help_if_asked()) return kExitOk;
  // Parse every option before reading any file: a usage error must not depend on file contents.
  const KvFormat format = format_option(args, "--format");
  const int32_t block_size = block_size_option(args);
  const float scale = args.real_f32("--scale");
  const std::string out_path = args.required("--out");
  const std::vector<std::string> output_paths = distinct_outputs(args, out_path);
  const bool has_extra = args.flag("--extra-cache");
  if (has_extra != args.flag("--extra-indices")) {
    throw usage_error("--extra-cache and --extra-indices go together");
  }
  if (!has_extra && (args.flag("--extra-format") || args.flag("--extra-block-size") ||
                     args.flag("--extra-lengths"))) {
    throw usage_error("--extra-format, --extra-block-size and --extra-lengths need --extra-cache");
  }
  const KvFormat extra_format =
      args.flag("--extra-format") ? format_option(args, "--extra-format") : format;
  const int32_t extra_block_size =
      static_cast<int32_t>(args.integer("--extra-block-size", block_size, 1, 1 << 20));

  NpyInput q = read_input(args.required("--q"), NpyDType::f32, 3, "q");
  NpyInput indices = read_input(args.required("--indices"), NpyDType::i32, 2, "indices");
  NpyInput cache = read_input(args.required("--cache"), NpyDType::u8, 2, "cache");
  std::optional<NpyInput> lengths = optional_input(args, "--lengths", NpyDType::i32, 1, "lengths");
  std::optional<NpyInput> extra_cache =
      optional_input(args, "--extra-cache", NpyDType::u8, 2, "extra cache");
  std::optional<NpyInput> extra_indices =
      optional_input(args, "--extra-indices", NpyDType::i32, 2, "extra indices");
  std::optional<NpyInput> extra_lengths =
      optional_input(args, "--extra-lengths", NpyDType::i32, 1, "extra lengths");
  std::optional<NpyInput> sink = optional_input(args, "--sink", NpyDType::f32, 1, "sink");

  // Checked before the outputs are sized by them; the library checks the rest.
  const int64_t tokens = q.array.shape[0];
  const int64_t heads = q.array.shape[1];
  const int d_qk = d_qk_of(q, 2);
  if (heads < 1 || heads > 128) {
    throw failure(q.path + ": dim 1 is h_q, which must be 1..128; the file's shape is " +
                  q.array.shape_string());
  }
  std::vector<uint16_t> q_bf16 = bf16_from_f32(q.array);
  std::vector<uint16_t> out_bf16(static_cast<size_t>(tokens * heads * kDv));
  NpyArray lse = NpyArray::zeros(NpyDType::f32, {tokens, heads});
  NpyArray max_logits = NpyArray::zeros(NpyDType::f32, {tokens, heads});

  AttendArgs attend_args;
  attend_args.q = TensorView::contiguous(q_bf16.data(), DType::bf16, {tokens, heads, d_qk});
  attend_args.kv = cache_pool(cache, format, block_size, d_qk);
  attend_args.indices = view_of(indices.array);
  attend_args.lengths = optional_view(lengths);
  if (has_extra) {
    attend_args.extra_kv = cache_pool(*extra_cache, extra_format, extra_block_size, d_qk);
    attend_args.extra_indices = view_of(extra_indices->array);
    attend_args.extra_lengths = optional_view(extra_lengths);
  }
  attend_args.sink = optional_view(sink);
  attend_args.scale = scale;
  attend_args.out = TensorView::contiguous(out_bf16.data(), DType::bf16, {tokens, heads, kDv});
  attend_args.lse = view_of(lse);
  attend_args.max_logits = view_of(max_logits);
  size_t workspace_bytes = 0;
  check_status(attend_workspace_size(attend_args, &workspace_bytes), "run");
  std::vector<unsigned char> workspace(workspace_bytes);
  check_status(attend(attend_args, {workspace_bytes ? workspace.data() : nullptr, workspace_bytes}),
               "run");

  NpyWriteBatch batch;
  batch.stage(out_path, f32_from_bf16(out_bf16, {tokens, heads, kDv}));
  if (std::optional<std::string> path = args.value("--lse")) batch.stage(*path, lse);
  if (std::optional<std::string> path = args.value("--max-logits")) batch.stage(*path, max_logits);
  batch.commit();

  if (args.json()) {
    JsonObject json;
    json.add("command", "run").add("ok", true).add("backend", "cpu").add("tokens", tokens);
    json.add("h_q", heads).add("d_qk", d_qk).add("format", format_name(format));
    json.add("outputs", output_paths);
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("attended %lld tokens x %lld heads (d_qk %d, %s cache) on the CPU reference; wrote",
                static_cast<long long>(tokens), static_cast<long long>(heads), d_qk,
                format_name(format));
    for (const std::string& path : output_paths) std::printf(" %s", path.c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace smla::cli
