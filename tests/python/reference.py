"""NumPy oracles for the Python tests: SPEC §1 attention in float64 and SPEC §2's byte layouts.

Written from the SPEC alone (no code shared with src/ or the package), so a test compares
the library with an independent reading of the contract.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn
D_V = 512

# format -> (d_qk it holds, bytes per token)
FORMAT_TOKEN_BYTES = {
    ("bf16", 576): 1152, ("bf16", 512): 1024, ("fp8_v32", 576): 656,
    ("fp8_ds_mla", 512): 584, ("int8_ds_mla", 512): 528,
}


def bf16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(BF16)


def _fp8_tile_scale(tile: np.ndarray) -> np.ndarray:
    """s = 2^ceil(log2(max(amax / 448, 1e-4))) per row of ``tile``, as float32."""
    amax = np.abs(tile).max(axis=-1).astype(np.float32)
    ratio = np.maximum(amax / np.float32(448.0), np.float32(1e-4)).astype(np.float32)
    return np.exp2(np.ceil(np.log2(ratio))).astype(np.float32)


def quantize_token(row: np.ndarray, format: str) -> np.ndarray:
    """One bf16 row [d_qk] as the bytes SPEC §2 stores for it (fp8_ds_mla: data, then the
    8 scale bytes, as the two parts the block layout separates)."""
    x = row.astype(np.float32)
    if format == "bf16":
        return row.astype(BF16).view(np.uint8)
    if format == "fp8_v32":
        tiles = x[:512].reshape(4, 128)
        s = _fp8_tile_scale(tiles)
        nope = (tiles / s[:, None]).astype(E4M3).reshape(-1).view(np.uint8)
        rope = row[512:].astype(BF16).view(np.uint8)
        return np.concatenate([nope, s.view(np.uint8), rope])
    if format == "fp8_ds_mla":
        tiles = x[:448].reshape(7, 64)
        s = _fp8_tile_scale(tiles)
        nope = (tiles / s[:, None]).astype(E4M3).reshape(-1).view(np.uint8)
        rope = row[448:].astype(BF16).view(np.uint8)
        ue8m0 = (127 + np.log2(s)).astype(np.uint8)
        return np.concatenate([nope, rope, ue8m0, np.zeros(1, np.uint8)])
    if format == "int8_ds_mla":
        s = np.float32(max(np.abs(x).max(), np.float32(1e-12)) / np.float32(127.0))
        v = np.clip(np.rint((x / s).astype(np.float32)), -127, 127).astype(np.int8)
        return np.concatenate([v.view(np.uint8), np.array([s], np.float32).view(np.uint8),
                               np.zeros(12, np.uint8)])
    raise ValueError(format)


def quantize_cache(rows: np.ndarray, format: str, block_size: int) -> np.ndarray:
    """rows [N, d_qk] bf16 -> packed cache [num_blocks, block_size, token bytes] uint8, with
    the unused slots of the last block zero."""
    n, d_qk = rows.shape
    tb = FORMAT_TOKEN_BYTES[(format, d_qk)]
    num_blocks = -(-n // block_size)
    cache = np.zeros((num_blocks, block_size * tb), np.uint8)
    for i in range(n):
        b, o = divmod(i, block_size)
        token = quantize_token(rows[i], format)
        if format == "fp8_ds_mla":
            cache[b, o * 576:(o + 1) * 576] = token[:576]
            base = block_size * 576 + o * 8
            cache[b, base:base + 8] = token[576:]
        else:
            cache[b, o * tb:(o + 1) * tb] = token
    return cache.reshape(num_blocks, block_size, tb)


def dequantize_cache(cache: np.ndarray, format: str, d_qk: int) -> np.ndarray:
    """cache [num_blocks, block_size, token bytes] uint8 -> rows [slots, d_qk] bf16 as
    float32: bf16(value * scale) per element."""
    num_blocks, block_size, tb = cache.shape
    flat = cache.reshape(num_blocks, block_size * tb)
    rows = np.zeros((num_blocks * block_size, d_qk), np.float32)
    for b in range(num_blocks):
        for o in range(block_size):
            r = rows[b * block_size + o]
            if format == "bf16":
                r[:] = flat[b, o * tb:(o + 1) * tb].view(BF16).astype(np.float32)
            elif format == "fp8_v32":
                t = flat[b, o * tb:(o + 1) * tb]
                s = t[512:528].view(np.float32)
                nope = t[:512].view(E4M3).astype(np.float32).reshape(4, 128) * s[:, None]
                r[:512] = bf16(nope.reshape(-1)).astype(np.float32)
                r[512:] = t[528:656].view(BF16).astype(np.float32)
            elif format == "fp8_ds_mla":
                t = flat[b, o * 576:(o + 1) * 576]
                base = block_size * 576 + o * 8
                s = np.exp2(flat[b, base:base + 7].astype(np.float32) - 127)
                nope = t[:448].view(E4M3).astype(np.float32).reshape(7, 64) * s[:, None]
                r[:448] = bf16(nope.reshape(-1)).astype(np.float32)
                r[448:] = t[448:576].view(BF16).astype(np.float32)
            elif format == "int8_ds_mla":
                t = flat[b, o * tb:(o + 1) * tb]
                s = t[512:516].view(np.float32)[0]
                r[:] = bf16(t[:512].view(np.int8).astype(np.float32) * s).astype(np.float32)
    return rows


def attend(q, k_main, idx, scale, lengths=None, k_extra=None, idx_x=None, lengths_x=None,
           sink=None):
    """SPEC §1 in float64. q [T, h, d] float32 (bf16 values); k_* [slots, d] float32.

    Returns (out [T, h, 512], lse [T, h], max_logits [T, h]) as float64.
    """
    q = q.astype(np.float64)
    t_count, h, _ = q.shape
    out = np.zeros((t_count, h, D_V))
    lse = np.full((t_count, h), np.inf)
    max_logits = np.full((t_count, h), -np.inf)
    pools = [(k_main, idx, lengths)]
    if k_extra is not None:
        pools.append((k_extra, idx_x, lengths_x))
    for t in range(t_count):
        keys = []
        for k, ids, lens in pools:
            row = ids[t] if lens is None else ids[t, :max(0, int(lens[t]))]
            keys += [k[j] for j in row if 0 <= j < k.shape[0]]
        if not keys:
            continue
        kk = np.stack(keys).astype(np.float64)          # [n, d]
        s = scale * (q[t] @ kk.T)                       # [h, n]
        m = s.max(axis=1)
        lse[t] = m + np.log(np.exp(s - m[:, None]).sum(axis=1))
        max_logits[t] = m
        p = np.exp(s - lse[t][:, None])
        f = (np.ones(h) if sink is None
             else 1.0 / (1.0 + np.exp(sink.astype(np.float64) - lse[t])))
        out[t] = f[:, None] * (p @ kk[:, :D_V])
    return out, lse, max_logits


def combine(partial_out, partial_lse, sink=None):
    """SPEC §3.3 in float64: partial_out [S, T, h, 512], partial_lse [S, T, h]."""
    po = partial_out.astype(np.float64)
    pl = partial_lse.astype(np.float64)
    finite = np.isfinite(pl)
    m = np.where(finite, pl, -np.inf).max(axis=0)
    any_finite = finite.any(axis=0)
    safe_m = np.where(any_finite, m, 0.0)
    w = np.where(finite, np.exp(np.where(finite, pl, 0.0) - safe_m), 0.0)
    total = w.sum(axis=0)
    lse = np.where(any_finite, safe_m + np.log(np.where(any_finite, total, 1.0)), np.inf)
    out = (w[..., None] * po).sum(axis=0) / np.where(any_finite, total, 1.0)[..., None]
    if sink is not None:
        f = 1.0 / (1.0 + np.exp(sink.astype(np.float64) - lse))
        out = out * np.where(any_finite, f, 0.0)[..., None]
    return out, lse


def check_out(out, ref):
    """SPEC §1: per element |err| <= 1e-3 + |ref|/64 and 1 - cos <= 1e-5; no NaN."""
    got = np.asarray(out).astype(np.float32).astype(np.float64)
    assert not np.isnan(got).any(), "out has NaN"
    err = np.abs(got - ref)
    bound = 1e-3 + np.abs(ref) / 64
    excess = err - bound
    assert (excess <= 0).all(), f"out: max excess {excess.max()} at flat {excess.argmax()}"
    norm = np.linalg.norm(got) * np.linalg.norm(ref)
    if norm > 0:
        cos = float((got * ref).sum() / norm)
        assert 1 - cos <= 1e-5, f"out: 1 - cos = {1 - cos}"
    else:
        assert np.linalg.norm(got) == np.linalg.norm(ref) == 0


def check_stat(value, ref, name):
    """SPEC §1 for lse / max_logits: |err| <= 1e-5 + |ref|/16384, infinities exact."""
    got = np.asarray(value, dtype=np.float64)
    assert not np.isnan(got).any(), f"{name} has NaN"
    inf = np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf]), f"{name}: infinities differ"
    err = np.abs(got[~inf] - ref[~inf])
    assert (err <= 1e-5 + np.abs(ref[~inf]) / 16384).all(), f"{name}: max err {err.max()}"
