// What only a machine with a device can check about bad input (SPEC §5): memory placed on
// the wrong side, a device that does not exist, a too-small workspace, a forced path that
// cannot run the call. Each call must fail with a message naming the argument (or the
// path), and write nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/scoped_env.hpp"
#include "common/workload.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

// 64 heads: a shape both GPU paths run, so the hopper.* run checks these refusals too.
ProblemSpec small_spec() {
  ProblemSpec s;
  s.T = 3;
  s.h_q = 64;
  s.d_qk = 576;
  s.k = 64;
  s.kv.format = KvFormat::fp8_v32;
  return s;
}

// Fails unless `status` has `code` and its message mentions each of `words`.
::testing::AssertionResult fails_with(const Status& status, StatusCode code,
                                      const std::vector<std::string>& words) {
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "expected " << status_code_name(code) << ", got " << status_code_name(status.code())
           << ": " << status.message();
  }
  for (const std::string& w : words) {
    if (status.message().find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << w << "': " << status.message();
    }
  }
  return ::testing::AssertionSuccess();
}

// Every output buffer of `p` (host copy) still holds only kPoisonByte.
::testing::AssertionResult outputs_untouched(const Problem& p) {
  for (int id : {kOut, kLse, kMaxLogits}) {
    for (uint8_t b : p.buffer(id).bytes) {
      if (b != kPoisonByte) return ::testing::AssertionFailure() << p.buffer(id).name << " written";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(GpuBadInput, HostPointersPassedAsCudaTensorsAreRejected) {
  SMLA_REQUIRE_GPU();
  Problem p(small_spec());
  // Views that claim cuda:0 but point into the host buffers.
  const AttendArgs a = p.args(Device::cuda(0), [&p](int id) { return p.buffer(id).bytes.data(); });
  std::vector<uint8_t> ws_host(1 << 20);
  EXPECT_TRUE(fails_with(attend(a, {ws_host.data(), ws_host.size()}), StatusCode::invalid_argument,
                         {"'q'", "cuda:0"}));
  EXPECT_TRUE(outputs_untouched(p));
}

TEST(GpuBadInput, DevicePointersPassedAsCpuTensorsAreRejected) {
  SMLA_REQUIRE_GPU();
  Problem p(small_spec());
  DeviceProblem d(p);
  AttendArgs a = d.args();
  auto to_cpu = [](TensorView& v) { v.device = Device::cpu(); };
  for (TensorView* v : {&a.q, &a.indices, &a.out, &a.lse, &a.max_logits}) to_cpu(*v);
  a.kv.device = Device::cpu();
  EXPECT_TRUE(fails_with(attend(a, {}), StatusCode::invalid_argument, {"'q'", "CUDA device"}));
}

TEST(GpuBadInput, OneHostOutputAmongDeviceTensorsIsRejected) {
  SMLA_REQUIRE_GPU();
  Problem p(small_spec());
  DeviceProblem d(p);
  AttendScratch scratch;
  SMLA_ASSERT_OK(scratch.allocate(d.args()));
  AttendArgs a = d.args();
  a.out.data = p.buffer(kOut).bytes.data();  // still marked cuda:0
  EXPECT_TRUE(fails_with(attend(a, scratch.ws()), StatusCode::invalid_argument, {"'out'"}));
  EXPECT_TRUE(outputs_untouched(p));
}

TEST(GpuBadInput, AMissingDeviceIsUnsupported) {
  SMLA_REQUIRE_GPU();
  Problem p(small_spec());
  DeviceProblem d(p);
  AttendArgs a = d.args();
  const Device missing = Device::cuda(cuda_device_count());
  for (TensorView* v : {&a.q, &a.indices, &a.out, &a.lse, &a.max_logits}) v->device = missing;
  a.kv.device = missing;
  EXPECT_TRUE(fails_with(attend(a, {}), StatusCode::unsupported,
                         {"cuda:" + std::to_string(missing.index)}));
}

TEST(GpuBadInput, ATooSmallWorkspaceFailsAndWritesNothing) {
  SMLA_REQUIRE_GPU();
  ProblemSpec s = small_spec();
  s.T = 1;
  s.h_q = 128;
  s.k = 2048;  // decode-shaped: the split strategy needs a workspace
  s.kv.min_slots = 4096;
  Problem p(s);
  DeviceProblem d(p);
  AttendScratch scratch;
  SMLA_ASSERT_OK(scratch.allocate(d.args()));
  if (scratch.workspace.bytes() == 0) GTEST_SKIP() << "this shape needs no workspace";
  const Workspace short_ws{scratch.workspace.get(), scratch.workspace.bytes() - 1};
  EXPECT_TRUE(
      fails_with(attend(d.args(), short_ws), StatusCode::invalid_argument, {"'workspace'"}));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  d.download_outputs(p);
  EXPECT_TRUE(outputs_untouched(p));
}

// A forced path runs the call or fails saying why; it never hands the call to the other path.
TEST(GpuBadInput, ForcingTheHopperPathNeverFallsBack) {
  SMLA_REQUIRE_GPU();
  // 8 heads: too few to fill a 64-row wgmma tile, the kind of call the Hopper path leaves
  // to the portable path's small head tiles.
  ProblemSpec s = small_spec();
  s.h_q = 8;
  Problem p(s);
  DeviceProblem d(p);
  const ScopedEnv forced("SMLA_BACKEND", "hopper");
  size_t bytes = 0;
  const Status sized = attend_workspace_size(d.args(), &bytes);
  if (!hopper_compiled()) {
    EXPECT_TRUE(fails_with(sized, StatusCode::not_built,
                           {"SMLA_BACKEND=hopper", "-DSMLA_CUDA_ARCHITECTURES", "90a"}));
  } else if (sized.ok()) {
    // Covered here: nothing is refused, and the hopper.* run checks what the path computes.
    return;
  } else {
    EXPECT_TRUE(fails_with(sized, StatusCode::unsupported,
                           {"SMLA_BACKEND=hopper", "does not cover this call",
                            "unset SMLA_BACKEND"}));
  }
  EXPECT_EQ(attend(d.args(), Workspace{}).code(), sized.code());
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  d.download_outputs(p);
  EXPECT_TRUE(outputs_untouched(p));
}

TEST(GpuBadInput, FormatOpsRejectHostRowsMarkedCuda) {
  SMLA_REQUIRE_GPU();
  std::vector<uint8_t> rows_host(4 * 576 * 2, 0);
  DeviceBuffer pool_mem(16 * 656);
  const KvPool pool =
      KvPool::packed(KvFormat::fp8_v32, pool_mem.get(), 1, 16, 576, Device::cuda(0));
  const TensorView rows =
      TensorView::contiguous(rows_host.data(), DType::bf16, {4, 576}, Device::cuda(0));
  EXPECT_TRUE(fails_with(quantize(rows, pool), StatusCode::invalid_argument, {"'rows'"}));
  EXPECT_TRUE(fails_with(dequantize(pool, rows), StatusCode::invalid_argument, {"'rows'"}));
}

}  // namespace
}  // namespace smla::test::gpu
