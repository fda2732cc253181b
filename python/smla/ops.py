"""smla's operations over arrays of any DLPack framework (SPEC §3).

Inputs come from NumPy, torch, CuPy, JAX ... without copies; outputs are new arrays of the
same framework on the same device as ``q`` (or ``rows``, ``partial_out``), unless the caller
passes its own through ``out=`` and friends. CPU arrays run the CPU reference backend, CUDA
arrays a GPU backend on the caller's current stream (see ``smla._arrays.stream_handle``);
calls on JAX CUDA arrays wait for their kernels before returning (``finish_launch``).

Shapes and dtypes (T tokens, h_q heads, d_qk 576 or 512, d_v 512):
  q        [T, h_q, d_qk] bf16        indices / extra_indices [T, k] int32 slot ids
  kv       [num_blocks, block_size(, 1), token bytes] cache of a SPEC §2 format
  lengths  [T] int32 (optional)       sink [h_q] float32 (optional)
  out      [T, h_q, 512] bf16         lse, max_logits [T, h_q] float32
bf16 on NumPy is ml_dtypes.bfloat16, or uint16 holding bf16 bits (outputs follow q's choice).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional, Tuple

from . import _smla
from ._arrays import Array, as_core, empty, finish_launch, on_callers_device, stream_handle
from ._errors import InvalidArgumentError
from ._formats import d_qk_of, infer_format, row_width, token_bytes

D_V = 512


def _integer(value: Any, name: str, minimum: int) -> int:
    """``value`` as an int (any integer type, NumPy's included, not bool) of at least
    ``minimum``."""
    try:
        n = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        n = None
    if n is None or n < minimum:
        raise InvalidArgumentError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return n


@dataclasses.dataclass(frozen=True)
class Plan:
    """A split-KV schedule for :func:`attend` (SPEC §3.2), made by :func:`plan`.

    Valid while the shapes, the pools' slot counts and the lengths it was made from are
    unchanged. ``buffer`` is the device memory holding it (None on the CPU).
    """

    core: Any
    buffer: Any


def _attend_call(q, kv, indices, scale, out, lse, max_logits, *, format=None, lengths=None,
                 kv_scales=None, extra_kv=None, extra_indices=None, extra_lengths=None,
                 extra_format=None, extra_kv_scales=None, sink=None):
    d_qk = row_width(q, "q")
    if extra_kv is None:
        # The library checks extra_indices and extra_lengths; these two only say how to read
        # an extra pool, and without one they would be ignored silently.
        for name, value in (("extra_format", extra_format), ("extra_kv_scales", extra_kv_scales)):
            if value is not None:
                raise InvalidArgumentError(f"{name}: given without extra_kv")
    if format is None:
        format = infer_format(kv, d_qk, kv_scales, "kv")
    if extra_kv is not None and extra_format is None:
        extra_format = infer_format(extra_kv, d_qk, extra_kv_scales, "extra_kv")
    return _smla.AttendCall(
        as_core(q, "q"), as_core(kv, "kv"), format, as_core(indices, "indices"), float(scale),
        as_core(out, "out", written=True), lse=as_core(lse, "lse", written=True),
        max_logits=as_core(max_logits, "max_logits", written=True),
        lengths=as_core(lengths, "lengths"), kv_scales=as_core(kv_scales, "kv_scales"),
        extra_kv=as_core(extra_kv, "extra_kv"), extra_format=extra_format,
        extra_kv_scales=as_core(extra_kv_scales, "extra_kv_scales"),
        extra_indices=as_core(extra_indices, "extra_indices"),
        extra_lengths=as_core(extra_lengths, "extra_lengths"), sink=as_core(sink, "sink"))


def _outputs(q, out, lse, max_logits):
    rows = tuple(q.shape[:-1])
    if out is None:
        out = empty(q, rows + (D_V,), "bf16")
    if lse is None:
        lse = empty(q, rows, "f32")
    if max_logits is None:
        max_logits = empty(q, rows, "f32")
    return out, lse, max_logits


def run_attend(q, kv, indices, scale, out, lse, max_logits, *, plan, stream, **pool_args):
    """:func:`attend` into given outputs (lse and max_logits may be None: not computed).

    ``pool_args`` are attend's keyword arguments that describe the pools, lengths and sink.
    The workspace is allocated here, with q's framework, sized by the library's query.
    """
    call = _attend_call(q, kv, indices, scale, out, lse, max_logits, **pool_args)
    size = call.workspace_size()
    workspace = empty(q, (size,), "u8") if size else None
    call.run(as_core(workspace, "workspace", written=True), plan.core if plan is not None else None,
             stream_handle(q, stream))
    finish_launch(q, stream)


@on_callers_device
def plan(q: Array, kv: Array, indices: Array, scale: float, *, format: Optional[str] = None,
         lengths: Optional[Array] = None, kv_scales: Optional[Array] = None,
         extra_kv: Optional[Array] = None, extra_indices: Optional[Array] = None,
         extra_lengths: Optional[Array] = None, extra_format: Optional[str] = None,
         extra_kv_scales: Optional[Array] = None, sink: Optional[Array] = None,
         stream: Any = None) -> Plan:
    """Makes the schedule :func:`attend` would make for these arguments, for reuse.

    Takes :func:`attend`'s arguments. On a GPU the plan is computed on the stream without a
    host synchronization (so it can be captured in a CUDA graph); on the CPU it is empty.
    """
    # The library validates a plan's call like the attend it is for, outputs included;
    # throwaway outputs of the right shapes stand in for the ones attend will get.
    out, lse, max_logits = _outputs(q, None, None, None)
    call = _attend_call(q, kv, indices, scale, out, lse, max_logits, format=format,
                        lengths=lengths, kv_scales=kv_scales, extra_kv=extra_kv,
                        extra_indices=extra_indices, extra_lengths=extra_lengths,
                        extra_format=extra_format, extra_kv_scales=extra_kv_scales, sink=sink)
    size = call.plan_size()
    buffer = empty(q, (size,), "u8") if size else None
    core = call.make_plan(as_core(buffer, "plan buffer", written=True), stream_handle(q, stream))
    finish_launch(q, stream)
    return Plan(core, buffer)


@on_callers_device
def attend(q: Array, kv: Array, indices: Array, scale: float, *, format: Optional[str] = None,
           lengths: Optional[Array] = None, kv_scales: Optional[Array] = None,
           extra_kv: Optional[Array] = None, extra_indices: Optional[Array] = None,
           extra_lengths: Optional[Array] = None, extra_format: Optional[str] = None,
           extra_kv_scales: Optional[Array] = None, sink: Optional[Array] = None,
           plan: Optional[Plan] = None, out: Optional[Array] = None,
           lse: Optional[Array] = None, max_logits: Optional[Array] = None,
           stream: Any = None) -> Tuple[Array, Array, Array]:
    """Sparse MLA attention (SPEC §1): each query token attends to the slots it lists.

    Args:
        q: [T, h_q, d_qk] bf16, unit stride on the last dim.
        kv: main pool, [num_blocks, block_size, token] or [num_blocks, block_size, 1, token].
        indices: [T, k] int32 slot ids (block * block_size + offset); -1 and out-of-range
            entries are skipped.
        scale: softmax scale (no default: pass the model's).
        format: the pool's format; inferred from the token bytes when None.
        lengths: [T] int32; only the first lengths[t] entries of row t are used.
        kv_scales: [num_blocks, block_size] float32 row scales of an int8_ds_mla pool held
            as two arrays.
        extra_kv, extra_indices [T, k_x], extra_lengths [T], extra_format, extra_kv_scales:
            an optional second pool (e.g. DeepSeek-V4's sliding window).
        sink: [h_q] float32 attention sink.
        plan: a :class:`Plan` from :func:`plan` with the same arguments, or None.
        out, lse, max_logits: outputs to write instead of new arrays ([T, h_q, 512] bf16,
            [T, h_q] float32 each, any strides for lse and max_logits).
        stream: CUDA stream; default the caller's current stream.

    Returns:
        (out [T, h_q, 512] bf16, lse [T, h_q] float32, max_logits [T, h_q] float32).
        lse is +inf and out 0 for a token with no valid entry; lse ignores the sink.
    """
    out, lse, max_logits = _outputs(q, out, lse, max_logits)
    run_attend(q, kv, indices, scale, out, lse, max_logits, plan=plan, stream=stream,
               format=format, lengths=lengths, kv_scales=kv_scales, extra_kv=extra_kv,
               extra_indices=extra_indices, extra_lengths=extra_lengths,
               extra_format=extra_format, extra_kv_scales=extra_kv_scales, sink=sink)
    return out, lse, max_logits


@on_callers_device
def combine(partial_out: Array, partial_lse: Array, *, sink: Optional[Array] = None,
            out: Optional[Array] = None, lse: Optional[Array] = None,
            stream: Any = None) -> Tuple[Array, Array]:
    """Merges S partial attentions by log-sum-exp (SPEC §3.3), e.g. across GPUs.

    Args:
        partial_out: [S, T, h_q, 512] float32 or bf16.
        partial_lse: [S, T, h_q] float32; a partial with lse +-inf holds nothing.
        sink: [h_q] float32, applied once to the merged result.
    Returns:
        (out [T, h_q, 512] bf16, lse [T, h_q] float32).
    """
    if len(partial_out.shape) != 4:   # the outputs' shapes come from it: check it first
        raise InvalidArgumentError(
            f"partial_out: expected [S, T, h_q, 512], got shape {tuple(partial_out.shape)}")
    rows = tuple(partial_out.shape[1:-1])
    if out is None:
        out = empty(partial_out, rows + (D_V,), "bf16")
    if lse is None:
        lse = empty(partial_lse, rows, "f32")
    _smla.combine(as_core(partial_out, "partial_out"), as_core(partial_lse, "partial_lse"),
                  as_core(out, "out", written=True), lse=as_core(lse, "lse", written=True),
                  sink=as_core(sink, "sink"), stream=stream_handle(partial_out, stream))
    finish_launch(partial_out, stream)
    return out, lse


@on_callers_device
def quantize(rows: Array, format: str, *, block_size: int = 64, cache: Optional[Array] = None,
             cache_scales: Optional[Array] = None, stream: Any = None) -> Array:
    """Writes rows [N, d_qk] bf16 into slots 0..N-1 of a cache of ``format``, byte-exact.

    Without ``cache``, returns a new uint8 cache [ceil(N / block_size), block_size, token
    bytes] (its slots past N are unspecified). With ``cache``, writes into it and returns it;
    ``cache_scales`` [num_blocks, block_size] float32 selects int8_ds_mla in two arrays.
    """
    d_qk = row_width(rows, "rows")
    block_size = _integer(block_size, "block_size", 1)
    if cache is None:
        size = token_bytes(format, d_qk)
        if size is None:
            raise InvalidArgumentError(
                f"format: {format!r} is not a format that holds rows of d_qk {d_qk}")
        num_blocks = -(-int(rows.shape[0]) // block_size)
        cache = empty(rows, (num_blocks, block_size, size), "u8")
    _smla.quantize(as_core(rows, "rows"), as_core(cache, "cache", written=True), format,
                   cache_scales=as_core(cache_scales, "cache_scales", written=True),
                   stream=stream_handle(rows, stream))
    finish_launch(rows, stream)
    return cache


@on_callers_device
def dequantize(cache: Array, format: str, *, num_rows: Optional[int] = None,
               rows: Optional[Array] = None, cache_scales: Optional[Array] = None,
               stream: Any = None) -> Array:
    """Reads slots 0..N-1 of a cache into rows [N, d_qk] bf16 (SPEC §2's dequantization).

    N is ``num_rows`` (default: every slot of the cache) or ``rows``' first dim; d_qk
    follows from the format and the cache's bytes per token.
    """
    if num_rows is not None:
        num_rows = _integer(num_rows, "num_rows", 0)
    if rows is None:
        d_qk = d_qk_of(format, cache, cache_scales is not None)
        n = int(cache.shape[0]) * int(cache.shape[1]) if num_rows is None else num_rows
        rows = empty(cache, (n, d_qk), "bf16")
    _smla.dequantize(as_core(cache, "cache"), format, as_core(rows, "rows", written=True),
                     cache_scales=as_core(cache_scales, "cache_scales"),
                     stream=stream_handle(cache, stream))
    finish_launch(cache, stream)
    return rows


@on_callers_device
def write_cache(rows: Array, slots: Array, cache: Array, format: Optional[str] = None, *,
                cache_scales: Optional[Array] = None, stream: Any = None) -> Array:
    """Writes rows [N, d_qk] bf16 at slot ids [N] int32 of ``cache``, in place; returns it.

    Slot ids outside the cache (vLLM's -1 padding among them) are skipped. ``format`` is
    inferred from the cache's bytes per token when None.
    """
    if format is None:
        format = infer_format(cache, row_width(rows, "rows"), cache_scales, "cache")
    _smla.write_cache(as_core(rows, "rows"), as_core(slots, "slots"),
                      as_core(cache, "cache", written=True), format,
                      cache_scales=as_core(cache_scales, "cache_scales", written=True),
                      stream=stream_handle(rows, stream))
    finish_launch(rows, stream)
    return cache


__all__ = ["Plan", "plan", "attend", "combine", "quantize", "dequantize", "write_cache"]
