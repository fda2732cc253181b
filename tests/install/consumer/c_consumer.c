/* Consumer of an installed smla in C (docs/c-api.md): only smla.h, on the CPU. Two tokens each
 * select one valid slot beside entries attention skips (-1, past the pool, past its length),
 * so each token's softmax has a single weight of 1 and its output must be the first 512
 * values of its slot's row, bit for bit, and its lse the slot's scaled score. A call with a
 * wrong dtype must fail with a message and leave the output alone. Exit status 0 only if
 * every step did what it should. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "smla/smla.h"

enum { kTokens = 2, kHeads = 1, kDqk = 576, kDv = 512, kSlots = 4, kTopk = 3 };

/* A contiguous view of `rank` dimensions on the CPU. */
static smla_tensor cpu_tensor(void* data, smla_dtype dtype, int32_t rank, const int64_t* shape) {
  smla_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.rank = rank;
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.stride[d] = stride;
    stride *= shape[d];
  }
  t.device_kind = SMLA_CPU;
  return t;
}

static float bf16_to_float(uint16_t bits) {
  const uint32_t word = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &word, sizeof f);
  return f;
}

int main(void) {
  static uint16_t q[kTokens * kHeads * kDqk];
  static uint16_t kv[kSlots * kDqk]; /* a bf16 pool of one block of kSlots slots */
  static uint16_t out[kTokens * kHeads * kDv];
  float lse[kTokens * kHeads];
  /* Token 0 selects slot 2; token 1 selects slot 1, and its length (2) excludes entry 2. */
  int32_t indices[kTokens * kTopk] = {-1, 2, kSlots, 7, 1, 3};
  int32_t lengths[kTokens] = {kTopk, 2};
  const int32_t chosen[kTokens] = {2, 1};
  const float scale = 0.04f;

  for (int i = 0; i < kTokens * kHeads * kDqk; ++i) q[i] = (uint16_t)(0x3c00 + i % 61);
  for (int i = 0; i < kSlots * kDqk; ++i) kv[i] = (uint16_t)(0x3d00 + (i * 7) % 89);
  memset(out, 0xff, sizeof out);

  const int64_t q_shape[3] = {kTokens, kHeads, kDqk};
  const int64_t idx_shape[2] = {kTokens, kTopk};
  const int64_t len_shape[1] = {kTokens};
  const int64_t out_shape[3] = {kTokens, kHeads, kDv};
  const int64_t lse_shape[2] = {kTokens, kHeads};
  smla_attend_args args;
  memset(&args, 0, sizeof args); /* rank 0 and a NULL pool: the optional arguments are absent */
  args.q = cpu_tensor(q, SMLA_BF16, 3, q_shape);
  args.kv.format = SMLA_FORMAT_BF16;
  args.kv.data = kv;
  args.kv.num_blocks = 1;
  args.kv.block_size = kSlots;
  args.kv.block_stride = (int64_t)kSlots * kDqk * 2; /* bytes */
  args.kv.device_kind = SMLA_CPU;
  args.indices = cpu_tensor(indices, SMLA_I32, 2, idx_shape);
  args.lengths = cpu_tensor(lengths, SMLA_I32, 1, len_shape);
  args.scale = scale;
  args.out = cpu_tensor(out, SMLA_BF16, 3, out_shape);
  args.lse = cpu_tensor(lse, SMLA_F32, 2, lse_shape);

  size_t workspace_bytes = 1;
  if (smla_attend_workspace_size(&args, &workspace_bytes) != SMLA_OK ||
      smla_attend(&args, NULL, workspace_bytes, NULL, NULL) != SMLA_OK) {
    fprintf(stderr, "smla_attend: %s\n", smla_last_error());
    return 1;
  }
  for (int t = 0; t < kTokens; ++t) {
    const uint16_t* row = kv + chosen[t] * kDqk;
    if (memcmp(out + t * kDv, row, kDv * sizeof *out) != 0) {
      fprintf(stderr, "token %d: out is not slot %d's values\n", t, (int)chosen[t]);
      return 1;
    }
    double score = 0.0;
    for (int d = 0; d < kDqk; ++d) {
      score += (double)bf16_to_float(q[t * kDqk + d]) * bf16_to_float(row[d]);
    }
    score *= scale;
    if (fabs(lse[t] - score) > 1e-4 * fabs(score) + 1e-5) {
      fprintf(stderr, "token %d: lse %g, expected %g\n", t, lse[t], score);
      return 1;
    }
  }

  uint16_t before[kDv];
  memcpy(before, out, sizeof before);
  args.indices.dtype = SMLA_F32;
  if (smla_attend(&args, NULL, 0, NULL, NULL) != SMLA_INVALID_ARGUMENT ||
      strlen(smla_last_error()) == 0 || memcmp(before, out, sizeof before) != 0) {
    fprintf(stderr, "a call with float32 indices did not fail cleanly\n");
    return 1;
  }
  printf("smla %s from C: attend ok, bad call refused (%s)\n", smla_version(), smla_last_error());
  return 0;
}
