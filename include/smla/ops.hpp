// The operations of smla (SPEC §3). Every entry point validates all of its arguments before
// any work or launch, and a failed call writes nothing (SPEC §5).
//
// Placement decides the backend: arguments on the CPU run the reference backend; arguments
// on a CUDA device run a GPU backend on `stream` (SMLA_BACKEND=portable|hopper|cpu forces
// one for A/B runs). No call allocates memory on the hot path: GPU scratch is the caller's
// Workspace, sized by the matching *_workspace_size query.
#pragma once

#include <cstddef>
#include <cstdint>

#include "smla/format.hpp"
#include "smla/status.hpp"
#include "smla/tensor.hpp"

struct CUstream_st;  // cudaStream_t without including the CUDA runtime

namespace smla {

using Stream = CUstream_st*;  // nullptr = the legacy default stream

struct Workspace {
  void* data = nullptr;  // on the device of the call; nullptr when bytes == 0
  size_t bytes = 0;
};

// ---- attend (SPEC §1) -------------------------------------------------------------------

struct AttendArgs {
  TensorView q;                // [T, h_q, d_qk] bf16, unit stride on the last dim
  KvPool kv;                   // main pool
  TensorView indices;          // [T, k] i32 slot ids into kv
  TensorView lengths;          // optional [T] i32: entries of row t past lengths[t] are unused
  KvPool extra_kv;             // optional second pool (absent: !extra_kv.present())
  TensorView extra_indices;    // [T, k_x] i32, present iff extra_kv is
  TensorView extra_lengths;    // optional [T] i32, only with extra_kv
  TensorView sink;             // optional [h_q] f32
  float scale = 0.0f;          // softmax scale; no default inside the core
  TensorView out;              // [T, h_q, 512] bf16, unit stride on the last dim
  TensorView lse;              // optional [T, h_q] f32, any strides
  TensorView max_logits;       // optional [T, h_q] f32, any strides
};

// The split-KV schedule of a GPU attend. `data` is device memory filled on the stream by
// make_plan (no host synchronization; capturable in a CUDA graph); the rest is host-side and
// lets attend reject a plan made for other shapes. A plan stays valid while the shapes, the
// pools' slot counts and the lengths it was made from are unchanged.
struct Plan {
  void* data = nullptr;
  size_t bytes = 0;
  uint64_t key = 0;     // hash of the shapes and device the plan was made for; 0 = empty
  int32_t strategy = 0; // backend-defined (e.g. one pass per token block, or split + combine)
};

// Bytes of the plan buffer make_plan needs for these arguments (0 on the CPU).
Status plan_size(const AttendArgs& args, size_t* bytes);
// Fills `plan` (plan->data/bytes set by the caller) for these arguments on `stream`.
Status make_plan(const AttendArgs& args, Plan* plan, Stream stream = nullptr);

// Bytes of workspace attend needs (sized by the selection, never by the pool).
Status attend_workspace_size(const AttendArgs& args, size_t* bytes);
// Runs attention. `plan` may be nullptr: the schedule is then computed inside the call
// (on the GPU, into the workspace, whose size query already counts it). On sm_90+ the
// attention kernels allow a programmatic dependent launch as they start (the call's own
// combine uses it): a kernel of yours launched that way after attend must, as CUDA requires,
// execute griddepcontrol.wait (cudaGridDependencySynchronize) before it reads attend's results.
Status attend(const AttendArgs& args, Workspace workspace, Stream stream = nullptr,
              const Plan* plan = nullptr);

// ---- combine (SPEC §3.3) -----------------------------------------------------------------
// out[t,h] = f * sum_i exp(lse_i[t,h] - L) * out_i[t,h],  L = ln sum_i exp(lse_i[t,h]),
// f = 1 / (1 + exp(sink[h] - L)). A partial whose lse is +inf (attend's "no valid entry")
// or -inf holds nothing and gets weight 0; when every partial is empty, out = 0 and lse = +inf.
struct CombineArgs {
  TensorView partial_out;  // [S, T, h_q, 512] f32 or bf16, unit stride on the last dim
  TensorView partial_lse;  // [S, T, h_q] f32
  TensorView sink;         // optional [h_q] f32, applied once to the merged result
  TensorView out;          // [T, h_q, 512] bf16, unit stride on the last dim
  TensorView lse;          // optional [T, h_q] f32
};
Status combine(const CombineArgs& args, Stream stream = nullptr);

// ---- formats: quantize, dequantize, write_cache (SPEC §2, §3.4) ---------------------------

// Writes rows [N, d_qk] bf16 into slots 0..N-1 of `pool` (N <= pool.slots()), byte-exact.
Status quantize(const TensorView& rows, const KvPool& pool, Stream stream = nullptr);
// Reads slots 0..N-1 of `pool` into rows [N, d_qk] bf16 (d_qk from rows' last dim).
Status dequantize(const KvPool& pool, const TensorView& rows, Stream stream = nullptr);
// Writes rows [N, d_qk] bf16 at slot ids [N] i32 of `pool`. A slot id outside
// [0, pool.slots()) (vLLM's -1 padding among them) is skipped. Two rows with the same slot
// leave that slot holding one of them, unspecified which.
Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   Stream stream = nullptr);

// ---- information --------------------------------------------------------------------------

const char* version();
// Architectures the CUDA kernels were compiled for ("80;90a"), or "" in a CPU-only build.
const char* compiled_cuda_architectures();
// The GPU paths this build holds, ';'-separated ("portable", or "portable;hopper" when the
// list above holds 90a), or "" in a CPU-only build. The portable path is compiled for every
// architecture of the list, the Hopper path for 90a alone.
const char* compiled_gpu_paths();
// The kernel preset this build holds ("default" or "all"), or "" in a CPU-only build.
const char* kernel_preset();
// Number of CUDA devices usable by smla (0 in a CPU-only build or without a device).
int cuda_device_count();

}  // namespace smla
