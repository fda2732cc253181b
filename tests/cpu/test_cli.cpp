// End-to-end tests of the `smla` binary: exit codes, --help, --json, the .npy commands
// against the same library calls made in-process, and that a bad input file fails with
// exit 1 and leaves no output behind. The binary is $SMLA_CLI, else the one this build made.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "npy.hpp"
#include "smla/ops.hpp"

namespace smla::cli {
namespace {

std::string cli_path() {
  if (const char* env = std::getenv("SMLA_CLI")) return env;
#ifdef SMLA_CLI_PATH
  return SMLA_CLI_PATH;
#else
  return "";
#endif
}

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout only; stderr goes to the test log
};

CliResult run_cli(const std::string& arguments) {
  CliResult result;
  FILE* pipe = popen((cli_path() + " " + arguments).c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A JSON syntax check, enough to tell that --json printed exactly one well-formed value.
class JsonSyntax {
 public:
  explicit JsonSyntax(const std::string& text) : s_(text) {}
  bool valid() {
    if (!value()) return false;
    space();
    return pos_ == s_.size();
  }

 private:
  void space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool literal(const char* word) {
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }
  bool string() {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    for (++pos_; pos_ < s_.size(); ++pos_) {
      if (s_[pos_] == '\\') {
        ++pos_;
      } else if (s_[pos_] == '"') {
        ++pos_;
        return true;
      }
    }
    return false;
  }
  bool number() {
    const size_t start = pos_;
    while (pos_ < s_.size() && std::strchr("+-0123456789.eE", s_[pos_]) != nullptr) ++pos_;
    return pos_ > start;
  }
  bool sequence(char close, bool keyed) {
    ++pos_;
    space();
    if (pos_ < s_.size() && s_[pos_] == close) return ++pos_, true;
    while (true) {
      space();
      if (keyed) {
        if (!string()) return false;
        space();
        if (pos_ >= s_.size() || s_[pos_++] != ':') return false;
      }
      if (!value()) return false;
      space();
      if (pos_ >= s_.size()) return false;
      if (s_[pos_] == close) return ++pos_, true;
      if (s_[pos_++] != ',') return false;
    }
  }
  bool value() {
    space();
    if (pos_ >= s_.size()) return false;
    switch (s_[pos_]) {
      case '{':
        return sequence('}', true);
      case '[':
        return sequence(']', false);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }
  const std::string& s_;
  size_t pos_ = 0;
};

uint16_t bf16(float x) {  // the test's own RNE conversion (inputs here are finite)
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float from_bf16(uint16_t x) {
  const uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cli_path().empty()) GTEST_SKIP() << "set SMLA_CLI to the smla binary to run the CLI tests";
    char pattern[] = "/tmp/smla_test_cli_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  bool exists(const std::string& name) const { return std::ifstream(path(name)).good(); }
  void save(const std::string& name, const NpyArray& array) const { write_npy(path(name), array); }
  void save_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  // No file of the directory but the inputs: a failed command must not leave even a temporary.
  size_t file_count() const {
    const CliResult ls = run_cli_shell("ls -A '" + dir_ + "' | wc -l");
    return std::stoul(ls.out);
  }
  // `smla bench --quick --backend cpu OPTIONS --json`, which must exit 0 with every row's
  // check passed.
  static CliResult run_passing_bench(const std::string& options) {
    const CliResult r = run_cli("bench --quick --backend cpu " + options + " --json");
    EXPECT_EQ(r.exit_code, 0) << options << ": " << r.out;
    EXPECT_EQ(r.out.find("\"check_passed\":false"), std::string::npos) << options << ": " << r.out;
    return r;
  }
  // `smla bench --quick --backend portable OPTIONS` on a GPU, which must exit 0: the GPU part of
  // a bench option's test.
  static CliResult run_passing_gpu_bench(const std::string& options) {
    const CliResult r = run_cli("bench --quick --backend portable " + options);
    EXPECT_EQ(r.exit_code, 0) << options << ": " << r.out;
    return r;
  }
  // `smla bench OPTION` with --backend cpu or auto is a usage error (exit 2) that asks for a
  // forced GPU path: options that only mean something on a GPU.
  static void expect_bench_needs_a_gpu_path(const std::string& option) {
    for (const char* backend : {"cpu", "auto"}) {
      const CliResult r =
          run_cli("bench --quick " + option + " --backend " + backend + " 2>&1");
      EXPECT_EQ(r.exit_code, 2) << option << ", " << backend << ": " << r.out;
      EXPECT_NE(r.out.find("--backend hopper or portable"), std::string::npos) << r.out;
    }
  }
  // `smla bench --backend cpu OPTION VALUE` is a usage error (exit 2) for every value.
  static void expect_bench_rejects(const char* option, std::initializer_list<const char*> values) {
    for (const char* value : values) {
      const CliResult bad = run_cli(std::string("bench --backend cpu ") + option + " " + value +
                                    " --json 2>/dev/null");
      EXPECT_EQ(bad.exit_code, 2) << option << " " << value << ": " << bad.out;
    }
  }
  static CliResult run_cli_shell(const std::string& command) {
    CliResult result;
    FILE* pipe = popen(command.c_str(), "r");
    char buf[256];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) result.out.append(buf, n);
    result.exit_code = WEXITSTATUS(pclose(pipe));
    return result;
  }

  std::string dir_;
};

TEST_F(Cli, HelpExitsZeroForTheToolAndEveryCommand) {
  EXPECT_EQ(run_cli("--help").exit_code, 0);
  for (const char* command : {"info", "bench", "run", "quantize", "dequantize"}) {
    const CliResult r = run_cli(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find(std::string("usage: smla ") + command), std::string::npos) << r.out;
  }
}

TEST_F(Cli, BadUsageExitsTwo) {
  for (const char* arguments :
       {"", "frobnicate", "info --bogus", "bench --rows sideways", "bench --reps 3x",
        "quantize --block-size 64 a.npy b.npy", "quantize --format fp9 --block-size 64 a.npy b.npy",
        "quantize --format bf16 --block-size 64 a.npy",
        "dequantize --format bf16 --block-size 64 x y", "run --q q.npy", "info --json=yes",
        "dequantize --format bf16 --block-size 4 --d-qk 100 --count 1 x.npy y.npy",
        "dequantize --format bf16 --block-size 4 --d-qk 5000 --count 1 x.npy y.npy",
        "run --format bf16 --block-size 2 --scale 1 --q q.npy --indices i.npy --cache c.npy "
        "--out ''"}) {
    EXPECT_EQ(run_cli(std::string(arguments) + " 2>/dev/null").exit_code, 2)
        << "smla " << arguments;
  }
}

TEST_F(Cli, UsageErrorsUnderJsonAreJson) {
  const CliResult r = run_cli("bench --rows sideways --json 2>/dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
  EXPECT_NE(r.out.find("\"ok\":false"), std::string::npos) << r.out;
}

// JSON is UTF-8: a file name's bytes that are not become U+FFFD, valid UTF-8 is kept.
TEST_F(Cli, JsonStaysUtf8WhateverTheFileNames) {
  const std::string name = path("\xff\xc3\xa9.npy");
  const CliResult r = run_cli("quantize --format bf16 --block-size 4 '" + name + "' " +
                              path("x.npy") + " --json 2>/dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
  EXPECT_EQ(r.out.find('\xff'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\\ufffd\xc3\xa9.npy"), std::string::npos) << r.out;
}

TEST_F(Cli, InfoJsonParses) {
  const CliResult r = run_cli("info --json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
  EXPECT_NE(r.out.find(std::string("\"version\":\"") + version() + "\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"cuda_devices\":["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"cpu\":{\"compiled\":true,\"usable\":true}"), std::string::npos) << r.out;
}

// The CLI must produce exactly what the library produces in-process for the same rows.
TEST_F(Cli, QuantizeDequantizeRoundTripMatchesTheLibrary) {
  struct Case {
    KvFormat format;
    int d_qk;
    int block_size;
  };
  for (const Case c : {Case{KvFormat::bf16, 576, 16}, Case{KvFormat::fp8_v32, 576, 64},
                       Case{KvFormat::fp8_ds_mla, 512, 64}, Case{KvFormat::int8_ds_mla, 512, 32}}) {
    SCOPED_TRACE(format_name(c.format));
    const int64_t n = 70;  // not a multiple of the block size: the last block is partial
    NpyArray rows = NpyArray::zeros(NpyDType::f32, {n, c.d_qk});
    for (int64_t i = 0; i < n * c.d_qk; ++i)
      rows.data<float>()[i] = std::sin(0.37f * i) * (1 + i % 7);
    save("rows.npy", rows);
    const std::string opts = std::string("--format ") + format_name(c.format) + " --block-size " +
                             std::to_string(c.block_size);
    ASSERT_EQ(
        run_cli("quantize " + opts + " " + path("rows.npy") + " " + path("cache.npy")).exit_code,
        0);

    std::vector<uint16_t> bf16_rows(static_cast<size_t>(n * c.d_qk));
    for (size_t i = 0; i < bf16_rows.size(); ++i) bf16_rows[i] = bf16(rows.data<float>()[i]);
    const int64_t blocks = (n + c.block_size - 1) / c.block_size;
    const int64_t block_bytes =
        KvPool::packed(c.format, nullptr, blocks, c.block_size, c.d_qk).packed_block_bytes(c.d_qk);
    std::vector<unsigned char> expected(static_cast<size_t>(blocks * block_bytes), 0);
    const KvPool pool = KvPool::packed(c.format, expected.data(), blocks, c.block_size, c.d_qk);
    ASSERT_TRUE(
        quantize(TensorView::contiguous(bf16_rows.data(), DType::bf16, {n, c.d_qk}), pool).ok());
    const NpyArray cache = read_npy(path("cache.npy"));
    EXPECT_EQ(cache.dtype, NpyDType::u8);
    EXPECT_EQ(cache.shape, (std::vector<int64_t>{blocks, block_bytes}));
    EXPECT_TRUE(cache.bytes == expected) << "quantize is not byte-exact with the library";

    ASSERT_EQ(run_cli("dequantize " + opts + " --d-qk " + std::to_string(c.d_qk) + " --count " +
                      std::to_string(n) + " " + path("cache.npy") + " " + path("back.npy"))
                  .exit_code,
              0);
    std::vector<uint16_t> values(bf16_rows.size());
    ASSERT_TRUE(
        dequantize(pool, TensorView::contiguous(values.data(), DType::bf16, {n, c.d_qk})).ok());
    const NpyArray back = read_npy(path("back.npy"));
    ASSERT_EQ(back.shape, (std::vector<int64_t>{n, c.d_qk}));
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(back.data<float>()[i], from_bf16(values[i])) << "element " << i;
      // bf16 holds rows exactly; the quantized formats keep every row within a few percent.
      const float x = from_bf16(bf16_rows[i]);
      if (c.format == KvFormat::bf16) ASSERT_EQ(back.data<float>()[i], x);
    }
  }
}

// Attention on .npy files against values worked out by hand: a token whose one valid entry
// is slot 2 gets out = K[2, :512] exactly (softmax of one logit is 1) and lse = max_logits =
// scale * dot(q, K[2]); a token with no valid entry gets out 0, lse +inf, max_logits -inf;
// with a sink the output is scaled by 1 / (1 + exp(sink - lse)).
TEST_F(Cli, RunMatchesHandComputedAttention) {
  const int d_qk = 512, heads = 2, slots = 4;
  NpyArray rows = NpyArray::zeros(NpyDType::f32, {slots, d_qk});
  for (int i = 0; i < slots * d_qk; ++i)
    rows.data<float>()[i] = from_bf16(bf16(0.01f * ((i * 7) % 23 - 11)));
  save("rows.npy", rows);
  ASSERT_EQ(
      run_cli("quantize --format bf16 --block-size 2 " + path("rows.npy") + " " + path("kv.npy"))
          .exit_code,
      0);

  NpyArray q = NpyArray::zeros(NpyDType::f32, {2, heads, d_qk});
  for (int i = 0; i < 2 * heads * d_qk; ++i)
    q.data<float>()[i] = from_bf16(bf16(0.02f * ((i * 5) % 17 - 8)));
  NpyArray indices = NpyArray::zeros(NpyDType::i32, {2, 3});
  const int32_t idx[] = {-1, 2, 9, /* token 1: nothing valid (lengths cut the 0) */ 0, -3, 4};
  std::memcpy(indices.data<int32_t>(), idx, sizeof idx);
  NpyArray lengths = NpyArray::zeros(NpyDType::i32, {2});
  lengths.data<int32_t>()[0] = 3;
  lengths.data<int32_t>()[1] = 0;
  NpyArray sink = NpyArray::zeros(NpyDType::f32, {heads});
  sink.data<float>()[0] = -INFINITY;  // no effect
  sink.data<float>()[1] = 0.5f;
  save("q.npy", q);
  save("idx.npy", indices);
  save("len.npy", lengths);
  save("sink.npy", sink);
  const float scale = 0.125f;
  const CliResult r =
      run_cli("run --json --q " + path("q.npy") + " --indices " + path("idx.npy") + " --lengths " +
              path("len.npy") + " --sink " + path("sink.npy") + " --cache " + path("kv.npy") +
              " --format bf16 --block-size 2 --scale 0.125" + " --out " + path("out.npy") +
              " --lse " + path("lse.npy") + " --max-logits " + path("max.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
  const NpyArray out = read_npy(path("out.npy"));
  const NpyArray lse = read_npy(path("lse.npy"));
  const NpyArray max_logits = read_npy(path("max.npy"));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{2, heads, 512}));
  ASSERT_EQ(lse.shape, (std::vector<int64_t>{2, heads}));
  for (int h = 0; h < heads; ++h) {
    double dot = 0;
    for (int c = 0; c < d_qk; ++c)
      dot += double{q.data<float>()[h * d_qk + c]} * rows.data<float>()[2 * d_qk + c];
    const double logit = scale * dot;
    EXPECT_NEAR(lse.data<float>()[h], logit, 1e-5 + std::fabs(logit) / 16384);
    EXPECT_NEAR(max_logits.data<float>()[h], logit, 1e-5 + std::fabs(logit) / 16384);
    const double f = h == 0 ? 1.0 : 1.0 / (1.0 + std::exp(0.5 - logit));
    for (int c = 0; c < 512; ++c) {
      const double ref = f * rows.data<float>()[2 * d_qk + c];
      EXPECT_NEAR(out.data<float>()[h * 512 + c], ref, 1e-3 + std::fabs(ref) / 64)
          << "head " << h << " c " << c;
    }
    EXPECT_EQ(lse.data<float>()[heads + h], INFINITY);
    EXPECT_EQ(max_logits.data<float>()[heads + h], -INFINITY);
    for (int c = 0; c < 512; ++c) EXPECT_EQ(out.data<float>()[(heads + h) * 512 + c], 0.0f);
  }
}

TEST_F(Cli, MalformedInputsExitOneAndWriteNothing) {
  NpyArray q = NpyArray::zeros(NpyDType::f32, {1, 1, 512});
  NpyArray indices = NpyArray::zeros(NpyDType::i32, {1, 1});
  NpyArray rows = NpyArray::zeros(NpyDType::f32, {2, 512});
  save("q.npy", q);
  save("idx.npy", indices);
  save("rows.npy", rows);
  ASSERT_EQ(
      run_cli("quantize --format bf16 --block-size 2 " + path("rows.npy") + " " + path("kv.npy"))
          .exit_code,
      0);
  const std::string good_q = serialize_npy(q);
  save_raw("truncated_q.npy", good_q.substr(0, good_q.size() - 4));
  std::string fortran = good_q;
  fortran.replace(fortran.find("False"), 5, "True ");
  save_raw("fortran_q.npy", fortran);
  save("int_q.npy", NpyArray::zeros(NpyDType::i32, {1, 1, 512}));
  save("wide_kv.npy", NpyArray::zeros(NpyDType::u8, {1, 100}));
  save_raw("garbage.npy", "this is not an npy file");
  save("short_idx.npy", NpyArray::zeros(NpyDType::i32, {2, 1}));  // T = 2 against q's T = 1
  const size_t inputs = file_count();

  const std::string run = "run --format bf16 --block-size 2 --scale 0.1 --out " + path("out.npy") +
                          " --lse " + path("lse.npy") + " ";
  const std::string good_kv = " --cache " + path("kv.npy");
  for (const std::string& arguments :
       {run + "--q " + path("truncated_q.npy") + " --indices " + path("idx.npy") + good_kv,
        run + "--q " + path("fortran_q.npy") + " --indices " + path("idx.npy") + good_kv,
        run + "--q " + path("int_q.npy") + " --indices " + path("idx.npy") + good_kv,
        run + "--q " + path("garbage.npy") + " --indices " + path("idx.npy") + good_kv,
        run + "--q " + path("missing.npy") + " --indices " + path("idx.npy") + good_kv,
        run + "--q " + path("q.npy") + " --indices " + path("idx.npy") + " --cache " +
            path("wide_kv.npy"),
        run + "--q " + path("q.npy") + " --indices " + path("short_idx.npy") + good_kv,
        "quantize --format bf16 --block-size 2 " + path("int_q.npy") + " " + path("out.npy"),
        "quantize --format fp8_v32 --block-size 2 " + path("rows.npy") + " " + path("out.npy"),
        "dequantize --format bf16 --block-size 2 --d-qk 512 --count 2 " + path("wide_kv.npy") +
            " " + path("out.npy"),
        "dequantize --format bf16 --block-size 2 --d-qk 512 --count 5 " + path("kv.npy") + " " +
            path("out.npy")}) {
    const CliResult r = run_cli(arguments + " --json 2>/dev/null");
    EXPECT_EQ(r.exit_code, 1) << "smla " << arguments;
    EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
    EXPECT_NE(r.out.find("\"ok\":false"), std::string::npos) << r.out;
    EXPECT_EQ(file_count(), inputs) << "smla " << arguments << " left a file behind";
  }
  // The error names the file and the problem.
  const CliResult r = run_cli(run + "--q " + path("fortran_q.npy") + " --indices " +
                              path("idx.npy") + good_kv + " --json 2>/dev/null");
  EXPECT_NE(r.out.find("fortran_q.npy: fortran_order is True"), std::string::npos) << r.out;
}

// Every output needs a file of its own, the scale must be a float32, and when one output
// cannot be put in place none of them stays.
TEST_F(Cli, RunWritesAllOfItsOutputsOrNone) {
  save("q.npy", NpyArray::zeros(NpyDType::f32, {1, 1, 512}));
  save("idx.npy", NpyArray::zeros(NpyDType::i32, {1, 1}));
  save("rows.npy", NpyArray::zeros(NpyDType::f32, {2, 512}));
  ASSERT_EQ(
      run_cli("quantize --format bf16 --block-size 2 " + path("rows.npy") + " " + path("kv.npy"))
          .exit_code,
      0);
  const std::string inputs = "run --format bf16 --block-size 2 --q " + path("q.npy") +
                             " --indices " + path("idx.npy") + " --cache " + path("kv.npy");
  const std::string outputs = " --out " + path("out.npy") + " --lse ";
  for (const std::string& usage :
       {inputs + " --scale 0.1" + outputs + path("out.npy"),
        inputs + " --scale 0.1" + outputs + dir_ + "/./out.npy",
        inputs + " --scale 0.1 --max-logits " + path("m.npy") + outputs + path("m.npy"),
        inputs + " --scale 3.5e38" + outputs + path("lse.npy"),
        inputs + " --scale 1e-50" + outputs + path("lse.npy")}) {
    EXPECT_EQ(run_cli(usage + " 2>/dev/null").exit_code, 2) << "smla " << usage;
  }
  ASSERT_EQ(mkdir(path("lse_dir").c_str(), 0700), 0);
  const size_t files = file_count();
  const CliResult r = run_cli(inputs + " --scale 0.1" + outputs + path("lse_dir") +
                              " --json 2>/dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("lse_dir: is a directory"), std::string::npos) << r.out;
  EXPECT_FALSE(exists("out.npy"));
  EXPECT_EQ(file_count(), files) << "a failed run left a file behind";
  for (const char* scale : {"1e-40", "3.4028235e+38"}) {  // float32's smallest and largest
    EXPECT_EQ(run_cli(inputs + " --scale " + scale + outputs + path("lse.npy")).exit_code, 0)
        << scale;
  }
}

// A forced GPU path that cannot run fails; it does not quietly time the CPU reference.
TEST_F(Cli, BenchWithAForcedGpuPathAndNoGpuFails) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present: the forced path can run";
  for (const char* backend : {"portable", "hopper"}) {
    const CliResult r =
        run_cli(std::string("bench --quick --backend ") + backend + " --json 2>/dev/null");
    EXPECT_EQ(r.exit_code, 1) << backend << ": " << r.out;
    EXPECT_NE(r.out.find(std::string("--backend ") + backend), std::string::npos) << r.out;
  }
}

TEST_F(Cli, QuickCpuBenchPassesItsCheck) {
  const CliResult r = run_passing_bench("");
  EXPECT_TRUE(JsonSyntax(r.out).valid()) << r.out;
  EXPECT_NE(r.out.find("\"ok\":true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"backend\":\"cpu\""), std::string::npos) << r.out;
  for (const char* workload : {"V3.2 prefill", "V3.2 decode", "V4 prefill", "V4 decode"}) {
    EXPECT_NE(r.out.find(std::string("\"workload\":\"") + workload + "\""), std::string::npos)
        << workload;
  }
}

// Each row says how long its data, its check and its timed runs took on the host, and the
// text report sums them: what a device session plans its bench runs by.
TEST_F(Cli, BenchReportsTheHostTimeOfEachPhase) {
  const CliResult r = run_passing_bench("");
  const std::regex phase("\"(setup|check|timing)_s\":([-0-9.e+]+)");
  int phases = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), phase);
       it != std::sregex_iterator(); ++it) {
    ++phases;
    EXPECT_GT(std::stod((*it)[2].str()), 0.0) << (*it)[0].str();
  }
  EXPECT_EQ(phases, 3 * 4) << r.out;  // three phases of each of the four rows

  const CliResult text = run_cli("bench --quick --backend cpu --match d_qk=512");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("host wall time: data and warm-up "), std::string::npos) << text.out;
}

// Each timed row gives its fastest and slowest repetition beside the median, in JSON and in
// the text's `reps` lines: whether a row's median stands for all of its repetitions.
TEST_F(Cli, BenchReportsTheSpreadOfEachRowsRepetitions) {
  const CliResult r = run_passing_bench("--reps 3");
  // Every repetition, in the order it ran, follows as reps_us.
  const std::regex times(
      "\"us\":([-0-9.e+]+),\"us_min\":([-0-9.e+]+),\"us_max\":([-0-9.e+]+),"
      "\"reps_us\":\\[([-0-9.e+]+),([-0-9.e+]+),([-0-9.e+]+)\\]");
  int rows = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), times);
       it != std::sregex_iterator(); ++it) {
    ++rows;
    const double median = std::stod((*it)[1].str());
    const double fastest = std::stod((*it)[2].str());
    const double slowest = std::stod((*it)[3].str());
    EXPECT_GT(fastest, 0.0) << (*it)[0].str();
    EXPECT_LE(fastest, median) << (*it)[0].str();
    EXPECT_LE(median, slowest) << (*it)[0].str();
    std::vector<double> each{std::stod((*it)[4].str()), std::stod((*it)[5].str()),
                             std::stod((*it)[6].str())};
    EXPECT_EQ(*std::min_element(each.begin(), each.end()), fastest) << (*it)[0].str();
    EXPECT_EQ(*std::max_element(each.begin(), each.end()), slowest) << (*it)[0].str();
  }
  EXPECT_EQ(rows, 4) << r.out;

  const CliResult text = run_cli("bench --quick --backend cpu --reps 3 --match d_qk=512");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  const std::regex line(
      R"(\nreps \| V4 (prefill|decode) [^|]+ \| 3 \| [0-9.]+ / [0-9.]+ / [0-9.]+ \| [0-9.]+%)");
  EXPECT_EQ(std::distance(std::sregex_iterator(text.out.begin(), text.out.end(), line),
                          std::sregex_iterator()),
            2)
      << text.out;
}

TEST_F(Cli, BenchMatchRunsOnlyTheRowsThatContainItsText) {
  const CliResult r = run_cli("bench --quick --backend cpu --match h_q=64 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"workload\":\"V4 prefill\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"workload\":\"V4 decode\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"workload\":\"V3.2"), std::string::npos) << r.out;

  const CliResult none = run_cli("bench --quick --backend cpu --match no-such-row --json");
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("no-such-row"), std::string::npos) << none.out;
}

// A row's outputs digest (bench_check.hpp) is what A/B runs of two trees compare: the same
// seeded data gives the same digest on every run, other data another.
TEST_F(Cli, BenchOutputsDigestRepeatsForTheSameDataOnly) {
  const auto digest = [](const CliResult& r) {
    const std::string key = "\"outputs_digest\":\"";
    const size_t at = r.out.find(key);
    return at == std::string::npos ? std::string("none") : r.out.substr(at + key.size(), 8);
  };
  const CliResult first = run_passing_bench("--rows decode --match h_q=64");
  const CliResult again = run_passing_bench("--rows decode --match h_q=64");
  const CliResult other = run_passing_bench("--rows decode --match h_q=64 --sigma 1");
  EXPECT_NE(digest(first), "none") << first.out;
  EXPECT_EQ(digest(first).find_first_not_of("0123456789abcdef"), std::string::npos) << first.out;
  EXPECT_EQ(digest(first), digest(again));
  EXPECT_NE(digest(first), digest(other));

  const CliResult text = run_cli("bench --quick --backend cpu --rows decode --match h_q=64");
  EXPECT_NE(text.out.find(", outputs " + digest(first) + ")"), std::string::npos) << text.out;
}

TEST_F(Cli, BenchHeadsRunsEveryRowWithThatHeadCount) {
  const CliResult r = run_passing_bench("--heads 16");
  EXPECT_NE(r.out.find("\"h_q\":16"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"h_q\":128"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"h_q\":64"), std::string::npos) << r.out;

  expect_bench_rejects("--heads", {"0", "129", "x"});
}

// --tokens sets T of the prefill rows only: decode rows keep their batch and tokens per
// request (the CPU's quick decode rows have 2).
TEST_F(Cli, BenchTokensRunsEveryPrefillRowWithThatTokenCount) {
  const CliResult r = run_passing_bench("--tokens 3");
  EXPECT_NE(r.out.find("\"shape\":\"T=3 h_q=128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"shape\":\"T=3 h_q=64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"shape\":\"b=2 s_q=1 h_q=128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"shape\":\"b=2 s_q=1 h_q=64"), std::string::npos) << r.out;

  expect_bench_rejects("--tokens", {"0", "65537", "x"});
}

TEST_F(Cli, BenchSigmaSetsTheSpreadOfEveryRowsData) {
  const CliResult plain = run_passing_bench("");
  EXPECT_NE(plain.out.find("\"sigma\":0.1"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("sigma="), std::string::npos) << plain.out;

  // N(0,1) data: every row says so in its shape (so --match and bench tables keep rows of
  // different spreads apart) and still passes its float64 check.
  const CliResult r = run_passing_bench("--sigma 1");
  EXPECT_NE(r.out.find("\"sigma\":1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"sigma\":0.1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" sigma=1\""), std::string::npos) << r.out;
  // The label keeps the digits that tell a spread from the default's.
  const CliResult near = run_passing_bench("--sigma 0.1000000001 --match sigma=0.1000000001");
  EXPECT_NE(near.out.find(" sigma=0.1000000001\""), std::string::npos) << near.out;

  expect_bench_rejects("--sigma", {"0", "-1", "9", "nan", "1x"});
}

// --placements times GPU rows on more uploads of their data: a usage error without a forced
// GPU path or outside 1..8; on a GPU each row gives one median per upload, the first being
// the row's own time.
TEST_F(Cli, BenchPlacementsTimesEachGpuRowOnMoreUploadsOfItsData) {
  expect_bench_rejects("--placements", {"0", "9", "x"});
  expect_bench_needs_a_gpu_path("--placements 2");
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU rows' part needs one";
  const CliResult r = run_passing_gpu_bench("--rows decode --placements 3 --json");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex("\"us\":([0-9.e+]+),.*\"placements_us\":\\[([0-9.e+]+),([0-9.e+]+),"
                 "([0-9.e+]+)\\]")))
      << r.out;
  EXPECT_EQ(m[1].str(), m[2].str()) << "the first upload's median is the row's time";
  EXPECT_GT(std::stod(m[3].str()), 0.0);
  EXPECT_GT(std::stod(m[4].str()), 0.0);

  const CliResult text = run_passing_gpu_bench("--rows decode --placements 2");
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"(\nplacements \| [^|]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+%)")))
      << text.out;
}

// --rep-gap leaves a GPU idle before each repetition: a usage error without a forced GPU path or
// outside 0..1000 ms; on a GPU the report says so and the timed runs take at least the gaps.
TEST_F(Cli, BenchRepGapIdlesTheGpuBeforeEachRepetition) {
  expect_bench_rejects("--rep-gap", {"-1", "1001", "x"});
  expect_bench_needs_a_gpu_path("--rep-gap 5");
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU rows' part needs one";
  const CliResult r = run_passing_gpu_bench("--rows decode --reps 4 --rep-gap 50 --json");
  EXPECT_NE(r.out.find("\"rep_gap_ms\":50"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\"timing_s\":([0-9.e+-]+)"))) << r.out;
  EXPECT_GE(std::stod(m[1].str()), 4 * 0.050) << "four repetitions, each after 50 ms idle";

  const CliResult text = run_passing_gpu_bench("--rows decode --rep-gap 1");
  EXPECT_NE(text.out.find("each repetition after 1 ms of the device idle"), std::string::npos)
      << text.out;
}

// On a GPU that NVML reads, each timed row's clock comes with the GPU's energy over its timed
// runs (NVML's counter, on every GPU since Volta): millijoules per repetition and mean watts,
// in JSON and as the text's `energy` lines; and, where the driver gives it, the mean of its
// instant power field (the `power` lines).
TEST_F(Cli, BenchGivesEachGpuRowsEnergyWhereNvmlReadsTheDevice) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU rows' part needs one";
  // The first prefill row on the portable path: ~25 ms a repetition on an H100, so 40 of them
  // (~1 s) hold several of the counter's updates (every ~100 ms there, perf-log s72) and
  // resolve its mean power.
  const CliResult r = run_passing_gpu_bench("--rows prefill --reps 40 --json");
  if (r.out.find("\"sm_clock_unavailable\"") != std::string::npos) {
    GTEST_SKIP() << "NVML does not read this device: " << r.out;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex("\"energy_updates\":([0-9]+),\"energy_mj_per_rep\":([0-9.e+-]+),"
                 "\"mean_w\":([0-9.e+-]+)")))
      << r.out;
  EXPECT_GE(std::stoi(m[1].str()), 2) << "the mean power is taken between two updates or more";
  EXPECT_GT(std::stod(m[2].str()), 0.0);
  EXPECT_GT(std::stod(m[3].str()), 10.0) << "a busy GPU draws more than 10 W";
  // NVML's instant power field, where the driver gives it (not every driver does): polled with
  // the clock, so one reading a sample, and a busy GPU's power too.
  const bool power = std::regex_search(
      r.out, m,
      std::regex("\"samples\":([0-9]+),.*?\"power_readings\":([0-9]+),\"power_changes\":"
                 "([0-9]+),\"power_mean_w\":([0-9.e+-]+)"));
  if (power) {
    EXPECT_GE(std::stoi(m[2].str()), 1);
    EXPECT_LE(std::stoi(m[2].str()), std::stoi(m[1].str())) << "at most one reading a sample";
    EXPECT_LT(std::stoi(m[3].str()), std::stoi(m[2].str()));
    EXPECT_GT(std::stod(m[4].str()), 10.0) << "a busy GPU draws more than 10 W";
  }

  const CliResult text = run_passing_gpu_bench("--rows prefill --reps 40");
  EXPECT_TRUE(std::regex_search(
      text.out,
      std::regex(R"(\nenergy \| prefill [^|]+ \| [0-9.]+ mJ \| [0-9]+ W \| [0-9]+ updates in )")))
      << text.out;
  const std::regex power_line(
      R"(\npower \| prefill [^|]+ \| [0-9]+ W \| [0-9]+ readings, [0-9]+ changes\n)");
  EXPECT_EQ(power, std::regex_search(text.out, power_line))
      << "the text's power lines where the JSON has the field:\n"
      << text.out;
}

// --timeline needs a timeline build and the Hopper path: without either it is a usage error
// that names what is missing (a build without the timeline says how to configure one).
TEST_F(Cli, BenchTimelineNeedsATimelineBuildAndTheHopperPath) {
  for (const char* backend : {"cpu", "auto"}) {
    const CliResult r =
        run_cli(std::string("bench --quick --timeline --backend ") + backend + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(r.out.find("-DSMLA_KERNEL_TIMELINE=ON") != std::string::npos ||
                r.out.find("--backend hopper") != std::string::npos)
        << r.out;
  }
}

TEST_F(Cli, BenchFormatRunsTheRowsItCanHoldInThatFormat) {
  // int8_ds_mla holds d_qk 512 only: the V4 rows run, every pool (extra too) in int8_ds_mla;
  // the V3.2 rows (d_qk 576) are left out.
  const CliResult r = run_passing_bench("--format int8_ds_mla");
  EXPECT_NE(r.out.find("\"workload\":\"V4 prefill\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"workload\":\"V4 decode\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("int8_ds_mla/256+int8_ds_mla/64"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"workload\":\"V3.2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fp8_"), std::string::npos) << r.out;

  const CliResult bad = run_cli("bench --backend cpu --format fp4 --json 2>/dev/null");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  // fp8_v32 holds d_qk 576 only, and --match asks for a V4 row: nothing left to run.
  const CliResult none =
      run_cli("bench --quick --backend cpu --format fp8_v32 --match d_qk=512 --json 2>/dev/null");
  EXPECT_EQ(none.exit_code, 2) << none.out;
}

}  // namespace
}  // namespace smla::cli
