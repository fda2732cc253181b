// Byte layouts of the KV-cache formats (SPEC §2; tables in docs/formats.md), shared by the
// CPU codecs and the GPU kernels. Each format is a struct of constants plus accessors that
// turn (pool base, block stride, block size, slot) into the byte address of a token's parts.
//
// Accessors are templates over the byte type so one definition serves readers
// (const uint8_t*) and writers (uint8_t*). The slot must be valid (0 <= slot < slots): these
// helpers do pointer arithmetic only; callers skip invalid slot ids (SPEC §1) before calling.
#pragma once

#include <cstdint>

#include "formats/numeric.hpp"
#include "smla/format.hpp"

namespace smla::fmt {

// A slot's block and its offset inside the block (slot = block * block_size + offset).
struct SlotPosition {
  int64_t block;
  int64_t offset;
};

SMLA_HD constexpr SlotPosition slot_position(int64_t slot, int32_t block_size) {
#if defined(__CUDA_ARCH__)
  // On a GPU a 64-bit division is a call that spills its caller's registers; 32 bits always
  // suffice there: every token format takes over 500 bytes, so no device holds 2^31 slots.
  const auto s = static_cast<int32_t>(slot);
  if ((block_size & (block_size - 1)) == 0) {
    // DeepSeek's block sizes (64, 256) are powers of two: two instructions instead of the
    // ~20 of a 32-bit division, which a producer lane pays per row it resolves.
    return {s >> (__ffs(block_size) - 1), s & (block_size - 1)};
  }
  return {s / block_size, s % block_size};
#else
  return {slot / block_size, slot % block_size};
#endif
}

// The first byte of block `block` of a pool whose blocks are `block_stride` bytes apart.
template <typename Byte>
SMLA_HD constexpr Byte* block_base(Byte* base, int64_t block_stride, int64_t block) {
  static_assert(sizeof(Byte) == 1, "layout accessors take byte pointers");
  return base + block * block_stride;
}

inline constexpr int kRopeBytes = kRopeDim * 2;  // the bf16 RoPE tail of a row: 128 B
inline constexpr int kDqkV32 = 576;  // DeepSeek-V3.2 K rows: 512 NoPE + 64 RoPE
inline constexpr int kDqkV4 = 512;   // DeepSeek-V4 K rows: 448 NoPE + 64 RoPE

// ---- bf16: token = d_qk bf16, tokens packed back to back in a block -----------------------
struct Bf16Layout {
  static SMLA_HD constexpr int64_t token_bytes(int d_qk) { return 2 * int64_t{d_qk}; }

  // -> [d_qk] bf16
  template <typename Byte>
  static SMLA_HD constexpr Byte* token(Byte* base, int64_t block_stride, int32_t block_size,
                                       int64_t slot, int d_qk) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(base, block_stride, p.block) + p.offset * token_bytes(d_qk);
  }
};

// ---- fp8_v32 (DeepSeek-V3.2): one 656 B token, interleaved -------------------------------
// Every part starts on a 16 B boundary of the token (656 = 41 * 16), so a 16 B-aligned pool
// allows 16 B vector loads of each part.
struct Fp8V32Layout {
  static constexpr int kDqk = kDqkV32;
  static constexpr int kNopeDim = 512;       // e4m3 NoPE values
  static constexpr int kTileDim = 128;       // NoPE values covered by one scale
  static constexpr int kNumTiles = kNopeDim / kTileDim;  // 4
  static constexpr int kNopeOffset = 0;      // [512] e4m3
  static constexpr int kScaleOffset = 512;   // [4] f32, scale k covers NoPE [128k, 128k+128)
  static constexpr int kRopeOffset = 528;    // [64] bf16
  static constexpr int kTokenBytes = 656;    // the whole token; tokens are back to back

  static_assert(kNopeDim + kRopeDim == kDqk);
  static_assert(kScaleOffset == kNopeOffset + kNopeDim);
  static_assert(kRopeOffset == kScaleOffset + kNumTiles * 4);
  static_assert(kTokenBytes == kRopeOffset + kRopeBytes);

  // -> the token's first byte; its parts sit at the k*Offset constants above.
  template <typename Byte>
  static SMLA_HD constexpr Byte* token(Byte* base, int64_t block_stride, int32_t block_size,
                                       int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(base, block_stride, p.block) + p.offset * kTokenBytes;
  }
};

// ---- fp8_ds_mla (DeepSeek-V4): per block, block_size x 576 B data, then block_size x 8 B ---
// Keeping the scales apart keeps every token's data 16 B-aligned (576 = 36 * 16), which the
// kernels' vector loads of the NoPE and RoPE parts rely on.
struct Fp8DsMlaLayout {
  static constexpr int kDqk = kDqkV4;
  static constexpr int kNopeDim = 448;       // e4m3 NoPE values
  static constexpr int kTileDim = 64;        // NoPE values covered by one scale
  static constexpr int kNumTiles = kNopeDim / kTileDim;  // 7
  static constexpr int kNopeOffset = 0;      // in the data part: [448] e4m3
  static constexpr int kRopeOffset = 448;    // in the data part: [64] bf16
  static constexpr int kDataBytes = 576;     // data part of one token
  static constexpr int kScaleBytes = 8;      // scale part of one token: [7] UE8M0 + 1 pad byte
  static constexpr int kTokenBytes = kDataBytes + kScaleBytes;  // 584

  static_assert(kNopeDim + kRopeDim == kDqk);
  static_assert(kRopeOffset == kNopeOffset + kNopeDim);
  static_assert(kDataBytes == kRopeOffset + kRopeBytes);
  static_assert(kNumTiles + 1 == kScaleBytes);

  // -> [576] B: [448] e4m3 NoPE, [64] bf16 RoPE
  template <typename Byte>
  static SMLA_HD constexpr Byte* token_data(Byte* base, int64_t block_stride, int32_t block_size,
                                            int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(base, block_stride, p.block) + p.offset * kDataBytes;
  }

  // -> [8] B: [7] UE8M0 (scale k covers NoPE [64k, 64k+64)), 1 pad byte
  template <typename Byte>
  static SMLA_HD constexpr Byte* token_scales(Byte* base, int64_t block_stride,
                                              int32_t block_size, int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(base, block_stride, p.block) + int64_t{block_size} * kDataBytes +
           p.offset * kScaleBytes;
  }
};

// ---- int8_ds_mla: 512 int8 values (NoPE and RoPE alike) x one f32 row scale ---------------
// Interleaved: token = [512 int8][f32 scale][12 B pad]; 528 = 33 * 16 keeps tokens 16 B-aligned.
// Split: values [num_blocks, block_size, 512] int8 and scales [num_blocks, block_size] f32,
// each with its own block stride in bytes.
struct Int8DsMlaLayout {
  static constexpr int kDqk = kDqkV4;
  static constexpr int kValues = 512;                  // int8 values per token
  static constexpr int kInterleavedScaleOffset = 512;  // f32 scale inside an interleaved token
  static constexpr int kInterleavedTokenBytes = 528;   // values + scale + 12 B pad
  static constexpr int kSplitValueBytes = 512;         // per token in the value tensor
  static constexpr int kSplitScaleBytes = 4;           // per token in the scale tensor

  static_assert(kValues == kDqk);
  static_assert(kInterleavedTokenBytes == kInterleavedScaleOffset + 4 + 12);

  // -> [512] int8
  template <typename Byte>
  static SMLA_HD constexpr Byte* interleaved_values(Byte* base, int64_t block_stride,
                                                    int32_t block_size, int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(base, block_stride, p.block) + p.offset * kInterleavedTokenBytes;
  }

  // -> [1] f32
  template <typename Byte>
  static SMLA_HD constexpr Byte* interleaved_scale(Byte* base, int64_t block_stride,
                                                   int32_t block_size, int64_t slot) {
    return interleaved_values(base, block_stride, block_size, slot) + kInterleavedScaleOffset;
  }

  // -> [512] int8, inside the value tensor at `values`
  template <typename Byte>
  static SMLA_HD constexpr Byte* split_values(Byte* values, int64_t block_stride,
                                              int32_t block_size, int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(values, block_stride, p.block) + p.offset * kSplitValueBytes;
  }

  // -> [1] f32, inside the scale tensor at `scales`
  template <typename Byte>
  static SMLA_HD constexpr Byte* split_scale(Byte* scales, int64_t scale_block_stride,
                                             int32_t block_size, int64_t slot) {
    const SlotPosition p = slot_position(slot, block_size);
    return block_base(scales, scale_block_stride, p.block) + p.offset * kSplitScaleBytes;
  }
};

}  // namespace smla::fmt
