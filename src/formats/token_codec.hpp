// One token of a KV pool to and from its d_qk bf16 values, on the host (SPEC §2). The CPU
// reference (attend, quantize, dequantize, write_cache) is written against these two calls,
// so every format's byte rules live in one place: src/formats/token_codec.cpp.
#pragma once

#include <cstdint>

#include "smla/format.hpp"

namespace smla::fmt {

// Reads slot `slot` of a CPU pool into out_bf16 [d_qk] (bf16 bit patterns): quantized parts
// dequantized as bf16(value * scale), RoPE and bf16 pools copied bit-exactly.
// Preconditions (checked by callers): 0 <= slot < pool.slots(), format_supports_d_qk.
void decode_token(const KvPool& pool, int64_t slot, int d_qk, uint16_t* out_bf16);

// Writes in_bf16 [d_qk] (bf16 bit patterns) into slot `slot` of a CPU pool, byte-exact with
// SPEC §2 and the NaN/Inf policy of docs/formats.md. Bytes outside the token (padding between
// tokens or blocks, fp8_ds_mla's pad byte, int8's 12 pad bytes) are left untouched.
// Preconditions as for decode_token.
void encode_token(const KvPool& pool, int64_t slot, int d_qk, const uint16_t* in_bf16);

}  // namespace smla::fmt
