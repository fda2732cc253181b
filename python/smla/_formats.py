"""Naming a KV cache's format from its shape (SPEC §2), for callers that do not say it."""

from __future__ import annotations

from typing import Any, Optional

from . import _smla
from ._arrays import itemsize
from ._errors import InvalidArgumentError

FORMATS = ("bf16", "fp8_v32", "fp8_ds_mla", "int8_ds_mla")
D_QKS = (576, 512)


def _library_token_bytes(format: str, d_qk: int, split_scales: bool) -> Optional[int]:
    try:
        return _smla.format_token_bytes(format, d_qk, split_scales)
    except InvalidArgumentError:
        return None


# The library's sizes, read once: a lookup in a dict, unlike a call into the extension, is
# traceable by torch.compile, so the FlashMLA-shaped calls compile without a graph break.
_TOKEN_BYTES = {(format, d_qk, split): _library_token_bytes(format, d_qk, split)
                for format in FORMATS for d_qk in D_QKS for split in (False, True)}


def token_bytes(format: str, d_qk: int, split_scales: bool = False) -> Optional[int]:
    """Bytes per token of ``format`` for rows of ``d_qk``; None when it cannot hold them."""
    return _TOKEN_BYTES.get((format, d_qk, bool(split_scales)))


def cache_token_bytes(cache: Any) -> int:
    """Bytes in the last dim of a cache [num_blocks, block_size(, 1), token]."""
    return int(cache.shape[-1]) * itemsize(cache)


def row_width(rows: Any, name: str) -> int:
    """d_qk of q or of rows [..., d_qk]: the last dim, 576 or 512, checked before a cache's
    format is inferred from it (a wrong width would otherwise be blamed on the cache)."""
    shape = tuple(rows.shape)
    if len(shape) == 0 or int(shape[-1]) not in D_QKS:
        raise InvalidArgumentError(
            f"{name}: expected d_qk 576 (DeepSeek-V3.2) or 512 (DeepSeek-V4) in the last dim, "
            f"got shape {shape}")
    return int(shape[-1])


def infer_format(cache: Any, d_qk: int, scales: Any = None, name: str = "kv") -> str:
    """The one format whose token of ``d_qk`` fills the cache's last dim.

    656 B is fp8_v32 (d_qk 576), 584 B fp8_ds_mla, 528 B int8_ds_mla (512), 2 * d_qk B bf16;
    int8 values with separate ``scales`` are int8_ds_mla. The sizes never collide, so the
    answer is unambiguous or an error that asks for ``format=``.
    """
    if scales is not None:
        return "int8_ds_mla"
    got = cache_token_bytes(cache)
    for format in FORMATS:
        if token_bytes(format, d_qk) == got:
            return format
    raise InvalidArgumentError(
        f"{name}: no KV format has {got} bytes per token for d_qk {d_qk} (bf16: {2 * d_qk}, "
        f"fp8_v32: 656 for d_qk 576, fp8_ds_mla: 584 and int8_ds_mla: 528 for d_qk 512); "
        f"pass format= explicitly")


def d_qk_of(format: str, cache: Any, split_scales: bool = False, name: str = "cache") -> int:
    """The row width a cache of ``format`` holds, read from its bytes per token."""
    got = cache_token_bytes(cache)
    for d_qk in D_QKS:
        if token_bytes(format, d_qk, split_scales) == got:
            return d_qk
    raise InvalidArgumentError(
        f"{name}: a {format} cache with {got} bytes per token matches neither d_qk 576 nor 512")
