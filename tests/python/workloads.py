"""Small DeepSeek-shaped workloads for the NumPy tests. Caches are built by the NumPy oracle
(reference.py), not by smla, so attention is tested independently of smla's quantizer."""

from __future__ import annotations

import numpy as np

import reference

FORMATS_BY_D_QK = [("bf16", 576), ("bf16", 512), ("fp8_v32", 576), ("fp8_ds_mla", 512),
                   ("int8_ds_mla", 512)]


def make_rows(rng, n, d_qk):
    return reference.bf16(rng.standard_normal((n, d_qk)))


def make_pool(rng, format, d_qk, num_blocks, block_size):
    """A pool of `format` filled by the oracle: (cache uint8 [nb, bs, token], K float32
    [slots, d_qk] dequantized)."""
    rows = make_rows(rng, num_blocks * block_size, d_qk)
    cache = reference.quantize_cache(rows, format, block_size)
    return cache, reference.dequantize_cache(cache, format, d_qk)


def make_indices(rng, t_count, k, slots):
    """[T, k] int32 slot ids with SPEC §1's adversarial entries: -1, other negatives,
    >= slots, and duplicates."""
    idx = rng.integers(0, slots, size=(t_count, k)).astype(np.int32)
    idx[:, 0] = -1
    idx[0, 1] = slots            # out of range
    idx[-1, 2] = -7              # any negative
    idx[:, 3] = idx[:, 4]        # duplicate of a valid entry (when it is valid)
    return idx


def make_q(rng, t_count, h_q, d_qk):
    return reference.bf16(rng.standard_normal((t_count, h_q, d_qk)))


def spec_payload(cache, format, block_size):
    """The bytes SPEC §2 defines in a [num_blocks, ...] uint8 cache, per block: the pad
    bytes of fp8_ds_mla and int8_ds_mla tokens, which no format fixes, are dropped."""
    flat = np.asarray(cache).reshape(cache.shape[0], -1)
    if format == "fp8_ds_mla":
        data = flat[:, :block_size * 576]
        scales = flat[:, block_size * 576:block_size * 584].reshape(-1, block_size, 8)[..., :7]
        return np.concatenate([data, scales.reshape(cache.shape[0], -1)], axis=1)
    if format == "int8_ds_mla":
        return flat.reshape(cache.shape[0], block_size, 528)[..., :516]
    return flat
