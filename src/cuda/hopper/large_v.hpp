// The "large V" test of the Hopper consumers. P is rounded to bf16 for the P·V wgmma, an error
// of at most 2^-8 * max|V| on out (bf16 keeps 8 significant bits); a step holding a value of
// magnitude >= 0.5 (or an inf or NaN) also adds (P - bf16(P))·V. Known gap: below 0.5 the
// bound is 1.95e-3, above SPEC's 1e-3 absolute term for crafted inputs where the reference
// cancels (docs/perf-notes.md, "the bound behind the large V test"). Host and device code, so
// the CPU tests check it exhaustively.
#pragma once

#include <cstdint>

#include "formats/numeric.hpp"  // SMLA_HD

namespace smla::hopper {

// bf16 0.5: the smallest magnitude that needs the residual product.
inline constexpr uint32_t kLargeVBf16 = 0x3F00u;

// Bit 15 and bit 31: set where that half of two bf16 values has magnitude >= kLargeVBf16
// (infinities and NaNs included), the sign ignored. Adding 0x8000 - kLargeVBf16 to the
// magnitude bits carries into bit 15 exactly from kLargeVBf16 on, and never out of the half
// (0x7FFF + 0x4100 < 0x10000): three instructions for two values.
SMLA_HD constexpr uint32_t large_v_bits(uint32_t bf16x2) {
  constexpr uint32_t bias = 0x8000u - kLargeVBf16;
  return ((bf16x2 & 0x7FFF7FFFu) + (bias | bias << 16)) & 0x80008000u;
}

}  // namespace smla::hopper
