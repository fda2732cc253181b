"""A plain torch oracle for the torch and GPU tests: SPEC §2 quantization and dequantization
written with torch ops, and SPEC §1 attention as gather + matmul + logsumexp in float64.
Independent of smla (and of ml_dtypes, which the GPU machine may lack)."""

from __future__ import annotations

import torch

D_V = 512
# (d_qk, NoPE width, tile width, bytes per token) of the fp8 formats.
FP8 = {"fp8_v32": (576, 512, 128, 656), "fp8_ds_mla": (512, 448, 64, 584)}


def _tile_scales(nope: torch.Tensor, tile: int) -> torch.Tensor:
    """[N, nope] -> [N, nope / tile] f32, s = 2^ceil(log2(max(amax / 448, 1e-4)))."""
    amax = nope.float().abs().unflatten(-1, (-1, tile)).amax(-1)
    return torch.exp2(torch.ceil(torch.log2(torch.clamp_min(amax / 448.0, 1e-4))))


def quantize(rows: torch.Tensor, format: str, block_size: int) -> torch.Tensor:
    """rows [N, d_qk] bf16 (N a multiple of block_size) -> [N / bs, bs, token bytes] uint8."""
    n, d_qk = rows.shape
    if format == "bf16":
        return rows.contiguous().view(torch.uint8).view(n // block_size, block_size, 2 * d_qk)
    _, d_nope, tile, token = FP8[format]
    s = _tile_scales(rows[:, :d_nope], tile)                                      # [N, tiles]
    q8 = (rows[:, :d_nope].float().unflatten(-1, (-1, tile)) / s[..., None]).flatten(-2)
    nope = q8.to(torch.float8_e4m3fn).view(torch.uint8)                           # [N, d_nope]
    rope = rows[:, d_nope:].contiguous().view(torch.uint8)                        # [N, 128]
    if format == "fp8_v32":
        packed = torch.cat([nope, s.contiguous().view(torch.uint8), rope], dim=1)
        return packed.view(n // block_size, block_size, token)
    ue8m0 = (torch.log2(s) + 127).to(torch.uint8)                                 # [N, 7]
    scales = torch.cat([ue8m0, torch.zeros_like(ue8m0[:, :1])], dim=1)           # [N, 8]
    blocks = n // block_size
    data = torch.cat([nope, rope], dim=1).view(blocks, block_size * 576)
    return torch.cat([data, scales.view(blocks, block_size * 8)], dim=1).view(
        blocks, block_size, token)


def dequantize(cache: torch.Tensor, format: str) -> torch.Tensor:
    """[num_blocks, bs, (1,) token bytes] uint8 -> [slots, d_qk] float32 (bf16 values)."""
    blocks, bs, token = cache.shape[0], cache.shape[1], cache.shape[-1]
    flat = cache.reshape(blocks, bs * token)
    if format == "bf16":
        return flat.view(torch.bfloat16).reshape(blocks * bs, token // 2).float()
    d_qk, d_nope, tile, _ = FP8[format]
    if format == "fp8_v32":
        t = flat.view(blocks * bs, token)
        nope, s, rope = t[:, :512], t[:, 512:528].contiguous().view(torch.float32), t[:, 528:]
    else:
        data = flat[:, :bs * 576].reshape(blocks * bs, 576)
        nope, rope = data[:, :448], data[:, 448:]
        ue8m0 = flat[:, bs * 576:].reshape(blocks * bs, 8)[:, :7]
        s = torch.exp2(ue8m0.float() - 127)
    values = nope.contiguous().view(torch.float8_e4m3fn).float().unflatten(-1, (-1, tile))
    nope_rows = (values * s[..., None]).flatten(-2).to(torch.bfloat16).float()
    return torch.cat([nope_rows, rope.contiguous().view(torch.bfloat16).float()], dim=1)


def _gather(keys, idx, lengths):
    """keys [slots, d], idx [T, k] -> ([T, k, d] gathered rows, [T, k] validity)."""
    pos = torch.arange(idx.shape[1], device=idx.device)
    valid = (idx >= 0) & (idx < keys.shape[0])
    if lengths is not None:
        valid &= pos[None, :] < lengths[:, None]
    return keys[idx.clamp(0, keys.shape[0] - 1).long()], valid


def attend(q, keys, idx, scale, lengths=None, extra_keys=None, extra_idx=None,
           extra_lengths=None, sink=None):
    """SPEC §1 in float64. q [T, h, d]; keys [slots, d] float32. Returns
    (out [T, h, 512], lse [T, h], max_logits [T, h]) float64."""
    kk, valid = _gather(keys.double(), idx, lengths)
    if extra_keys is not None:
        kx, vx = _gather(extra_keys.double(), extra_idx, extra_lengths)
        kk, valid = torch.cat([kk, kx], dim=1), torch.cat([valid, vx], dim=1)
    s = scale * torch.einsum("thd,tkd->thk", q.double(), kk)
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    any_valid = valid.any(dim=1)[:, None]                                          # [T, 1]
    max_logits = s.amax(dim=-1)
    lse = torch.where(any_valid, torch.logsumexp(s, dim=-1), float("inf"))
    p = torch.where(valid[:, None, :], torch.exp(s - lse[..., None]), 0.0)
    out = torch.einsum("thk,tkd->thd", p, kk[..., :D_V])
    if sink is not None:
        out = out / (1 + torch.exp(sink.double()[None, :] - lse))[..., None]
    return out, lse, max_logits


def decode_attend(q, cache, indices, format, scale, topk_length=None, sink=None,
                  extra_cache=None, extra_indices=None, extra_topk_length=None):
    """:func:`attend` on FlashMLA's decode shapes: q [b, s_q, h, d], caches [nb, bs, 1,
    bytes] (uint8 or float8), indices [b, s_q, k], per-request lengths [b] repeated over s_q.
    Returns (out [b, s_q, h, 512], lse [b, h, s_q])."""
    b, s_q, h_q, d_qk = q.shape
    rep = (lambda x: None if x is None else x.repeat_interleave(s_q))
    keys = (lambda c: None if c is None else dequantize(c.view(torch.uint8), format))
    out, lse, _ = attend(
        q.reshape(b * s_q, h_q, d_qk), keys(cache), indices.reshape(b * s_q, -1), scale,
        rep(topk_length), keys(extra_cache),
        None if extra_indices is None else extra_indices.reshape(b * s_q, -1),
        rep(extra_topk_length), sink)
    return out.view(b, s_q, h_q, 512), lse.view(b, s_q, h_q).transpose(1, 2)


def check_out(out, ref):
    """SPEC §1 tolerances for out."""
    got = out.double()
    assert not got.isnan().any(), "out has NaN"
    excess = (got - ref).abs() - (1e-3 + ref.abs() / 64)
    assert (excess <= 0).all(), f"out: max excess {excess.max().item()}"
    norm = got.norm() * ref.norm()
    if norm > 0:
        assert 1 - (got * ref).sum() / norm <= 1e-5
    else:
        assert got.norm() == 0 and ref.norm() == 0


def check_stat(value, ref, name):
    """SPEC §1 tolerances for lse / max_logits; infinities exact."""
    got = value.double()
    assert not got.isnan().any(), f"{name} has NaN"
    inf = ref.isinf()
    assert torch.equal(got[inf], ref[inf]), f"{name}: infinities differ"
    err = (got[~inf] - ref[~inf]).abs()
    assert (err <= 1e-5 + ref[~inf].abs() / 16384).all(), f"{name}: max err {err.max()}"
