"""FlashMLA's two sparse operations in FlashMLA's shapes, over smla's attend.

Framework-neutral: smla.flash_mla calls these directly for NumPy/CuPy arrays, and the torch
custom ops (smla._torch_ops) call them from their real implementations.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ._arrays import Array, empty, has_views, on_callers_device
from ._errors import InvalidArgumentError, argument_names
from .ops import D_V, Plan, run_attend

# smla's argument names -> FlashMLA's, for error messages.
_PREFILL_NAMES = {"lengths": "topk_length", "sink": "attn_sink", "scale": "sm_scale"}
DECODE_NAMES = {"lengths": "topk_length", "extra_lengths": "extra_topk_length",
                "kv": "k_cache", "extra_kv": "extra_k_cache",
                "extra_indices": "extra_indices_in_kvcache", "sink": "attn_sink",
                "scale": "softmax_scale"}


def check_d_v(d_v: int, name: str) -> None:
    if d_v != D_V:
        raise InvalidArgumentError(f"{name}: d_v must be {D_V} (DeepSeek sparse MLA), got {d_v}")


@on_callers_device
def sparse_prefill(q: Array, kv: Array, indices: Array, sm_scale: float,
                   attn_sink: Optional[Array] = None, topk_length: Optional[Array] = None, *,
                   stream: Any = None) -> Tuple[Array, Array, Array]:
    """q [s_q, h_q, d_qk] bf16, kv [s_kv, 1, d_qk] bf16, indices [s_q, 1, topk] int32.

    Returns (out [s_q, h_q, 512] bf16, max_logits [s_q, h_q] f32, lse [s_q, h_q] f32).
    """
    if len(kv.shape) != 3 or kv.shape[1] != 1:
        raise InvalidArgumentError(
            f"kv: expected [s_kv, h_kv=1, d_qk], got shape {tuple(kv.shape)}")
    if len(indices.shape) != 3 or indices.shape[1] != 1:
        raise InvalidArgumentError(
            f"indices: expected [s_q, h_kv=1, topk], got shape {tuple(indices.shape)}")
    s_q, h_q = int(q.shape[0]), int(q.shape[1])
    out = empty(q, (s_q, h_q, D_V), "bf16")
    max_logits = empty(q, (s_q, h_q), "f32")
    lse = empty(q, (s_q, h_q), "f32")
    # kv [s_kv, 1, d_qk] is a bf16 pool of s_kv blocks of one slot: slot id = token index,
    # and any token stride of kv is the block stride.
    with argument_names(_PREFILL_NAMES):
        run_attend(q, kv, indices[:, 0, :], sm_scale, out, lse, max_logits, plan=None,
                   stream=stream, format="bf16", lengths=topk_length, sink=attn_sink)
    return out, max_logits, lse


def check_decode_shapes(q: Array, indices: Array, extra_indices: Optional[Array]) -> None:
    """The ranks of FlashMLA's decode shapes, which the per-position slicing relies on."""
    if len(q.shape) != 4:
        raise InvalidArgumentError(
            f"q: expected [batch, s_q, h_q, d_qk], got shape {tuple(q.shape)}")
    for name, array in (("indices", indices), ("extra_indices_in_kvcache", extra_indices)):
        if array is not None and (len(array.shape) != 3 or
                                  tuple(array.shape[:2]) != tuple(q.shape[:2])):
            raise InvalidArgumentError(
                f"{name}: expected [batch, s_q, topk] = [{q.shape[0]}, {q.shape[1]}, topk], "
                f"got shape {tuple(array.shape)}")


@on_callers_device
def sparse_decode(q: Array, k_cache: Array, indices: Array, softmax_scale: float, format: str,
                  topk_length: Optional[Array] = None, attn_sink: Optional[Array] = None,
                  extra_k_cache: Optional[Array] = None, extra_format: Optional[str] = None,
                  extra_indices: Optional[Array] = None,
                  extra_topk_length: Optional[Array] = None, plan: Optional[Plan] = None, *,
                  stream: Any = None) -> Tuple[Array, Array]:
    """q [b, s_q, h_q, d_qk] bf16, caches [num_blocks, block, 1, bytes], indices [b, s_q, k].

    Returns (out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] f32: with NumPy, torch and CuPy
    a transposed view of a contiguous [b, s_q, h_q], as FlashMLA returns it).
    """
    check_decode_shapes(q, indices, extra_indices)
    b, s_q, h_q = (int(s) for s in q.shape[:3])
    # One attend per query position: its b tokens are one per request, so the per-request
    # lengths [b] are the per-token lengths as they are. s_q is the MTP depth (1-4), and
    # every position shares one plan. lse is FlashMLA's: a [b, h_q, s_q] view of a
    # contiguous [b, s_q, h_q] tensor (so lse.transpose(1, 2) is contiguous, as callers of
    # FlashMLA may assume), and position i writes its [b, h_q] slice (rows of h_q
    # contiguous). Frameworks whose slices are copies (JAX) get one output per position,
    # stacked at the end.
    views = has_views(q)
    if views:
        out = empty(q, (b, s_q, h_q, D_V), "bf16")
        lse = empty(q, (b, s_q, h_q), "f32").swapaxes(1, 2)
    outs, lses = [], []
    for i in range(s_q):
        out_i = out[:, i] if views else empty(q, (b, h_q, D_V), "bf16")
        lse_i = lse[:, :, i] if views else empty(q, (b, h_q), "f32")
        with argument_names(DECODE_NAMES):
            run_attend(q[:, i], k_cache, indices[:, i], softmax_scale, out_i, lse_i, None,
                       plan=plan, stream=stream, format=format, lengths=topk_length,
                       extra_kv=extra_k_cache, extra_format=extra_format,
                       extra_indices=None if extra_indices is None else extra_indices[:, i],
                       extra_lengths=extra_topk_length, sink=attn_sink)
        outs.append(out_i)
        lses.append(lse_i)
    if not views:
        xp = q.__array_namespace__()
        out, lse = xp.stack(outs, axis=1), xp.stack(lses, axis=2)
    return out, lse
