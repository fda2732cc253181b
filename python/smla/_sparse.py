"""FlashMLA's two sparse operations in FlashMLA's shapes, over smla's attend.

Framework-neutral: smla.flash_mla calls these directly for NumPy/CuPy arrays, and the torch
custom ops (smla._torch_ops) call them from their real implementations.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

from ._arrays import Array, empty, on_callers_device, repeat_each, reshape, swapaxes
from ._errors import InvalidArgumentError, argument_names
from .ops import D_V, Plan, plan as make_plan, run_attend

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
    """The ranks of FlashMLA's decode shapes, which the merge of batch and position relies on."""
    if len(q.shape) != 4:
        raise InvalidArgumentError(
            f"q: expected [batch, s_q, h_q, d_qk], got shape {tuple(q.shape)}")
    for name, array in (("indices", indices), ("extra_indices_in_kvcache", extra_indices)):
        if array is not None and (len(array.shape) != 3 or
                                  tuple(array.shape[:2]) != tuple(q.shape[:2])):
            raise InvalidArgumentError(
                f"{name}: expected [batch, s_q, topk] = [{q.shape[0]}, {q.shape[1]}, topk], "
                f"got shape {tuple(array.shape)}")


class DecodeTokens(NamedTuple):
    """FlashMLA's decode arguments as the tokens of one attend: request i's query position j
    is token i * s_q + j, so the b requests' s_q positions (MTP) run in one launch."""
    q: Array                        # [b * s_q, h_q, d_qk]
    indices: Array                  # [b * s_q, topk]
    extra_indices: Optional[Array]  # [b * s_q, extra_topk]
    lengths: Optional[Array]        # [b * s_q]: each request's length once per position
    extra_lengths: Optional[Array]


def decode_tokens(q: Array, indices: Array, extra_indices: Optional[Array],
                  topk_length: Optional[Array],
                  extra_topk_length: Optional[Array]) -> DecodeTokens:
    """Merges batch and position (reshape: a view where the strides allow one, a copy
    otherwise, in every framework); per-request lengths repeat over the positions."""
    check_decode_shapes(q, indices, extra_indices)
    b, s_q = int(q.shape[0]), int(q.shape[1])
    for name, lengths in (("topk_length", topk_length),
                          ("extra_topk_length", extra_topk_length)):
        if lengths is not None and tuple(lengths.shape) != (b,):
            raise InvalidArgumentError(
                f"{name}: expected [batch] = [{b}], got shape {tuple(lengths.shape)}")

    def tokens(a: Optional[Array]) -> Optional[Array]:
        return None if a is None else reshape(a, (b * s_q,) + tuple(a.shape[2:]))

    def per_token(lengths: Optional[Array]) -> Optional[Array]:
        return None if lengths is None else repeat_each(lengths, s_q)

    return DecodeTokens(tokens(q), tokens(indices), tokens(extra_indices),
                        per_token(topk_length), per_token(extra_topk_length))


@on_callers_device
def plan_decode(q: Array, k_cache: Array, indices: Array, softmax_scale: float, format: str,
                topk_length: Optional[Array] = None, attn_sink: Optional[Array] = None,
                extra_k_cache: Optional[Array] = None, extra_format: Optional[str] = None,
                extra_indices: Optional[Array] = None,
                extra_topk_length: Optional[Array] = None, *, stream: Any = None) -> Plan:
    """The plan :func:`sparse_decode` takes for these arguments: its b * s_q tokens' schedule,
    made on the call's stream (the tokens' lengths are repeated there too)."""
    t = decode_tokens(q, indices, extra_indices, topk_length, extra_topk_length)
    with argument_names(DECODE_NAMES):
        return make_plan(t.q, k_cache, t.indices, softmax_scale, format=format,
                         lengths=t.lengths, extra_kv=extra_k_cache, extra_format=extra_format,
                         extra_indices=t.extra_indices, extra_lengths=t.extra_lengths,
                         sink=attn_sink, stream=stream)


@on_callers_device
def sparse_decode(q: Array, k_cache: Array, indices: Array, softmax_scale: float, format: str,
                  topk_length: Optional[Array] = None, attn_sink: Optional[Array] = None,
                  extra_k_cache: Optional[Array] = None, extra_format: Optional[str] = None,
                  extra_indices: Optional[Array] = None,
                  extra_topk_length: Optional[Array] = None, plan: Optional[Plan] = None, *,
                  stream: Any = None) -> Tuple[Array, Array]:
    """q [b, s_q, h_q, d_qk] bf16, caches [num_blocks, block, 1, bytes], indices [b, s_q, k].

    Returns (out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] f32: with NumPy, torch and CuPy
    a transposed view of a contiguous [b, s_q, h_q], as FlashMLA returns it). All b * s_q
    query tokens run as one attend (`plan`, if given, was made for those tokens).
    """
    t = decode_tokens(q, indices, extra_indices, topk_length, extra_topk_length)
    b, s_q, h_q = (int(s) for s in q.shape[:3])
    out = empty(q, (b * s_q, h_q, D_V), "bf16")
    lse = empty(q, (b * s_q, h_q), "f32")
    with argument_names(DECODE_NAMES):
        run_attend(t.q, k_cache, t.indices, softmax_scale, out, lse, None, plan=plan,
                   stream=stream, format=format, lengths=t.lengths, extra_kv=extra_k_cache,
                   extra_format=extra_format, extra_indices=t.extra_indices,
                   extra_lengths=t.extra_lengths, sink=attn_sink)
    # FlashMLA's lse is a [b, h_q, s_q] view of a contiguous [b, s_q, h_q] tensor (so
    # lse.transpose(1, 2) is contiguous, as callers of FlashMLA may assume); frameworks
    # without views (JAX) get copies of the same values.
    return reshape(out, (b, s_q, h_q, D_V)), swapaxes(reshape(lse, (b, s_q, h_q)), 1, 2)
