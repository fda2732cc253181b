"""A drop-in for FlashMLA's sparse interface (``flash_mla``), backed by smla.

Replace ``from flash_mla import ...`` (or SGLang's ``from sgl_kernel.flash_mla import ...``)
by ``from smla.flash_mla import ...``: the names, argument names, shapes and return values
are FlashMLA's, in its current form and in the older one with metadata arrays
(docs/migrating-from-flashmla.md lists the differences). Arrays of any DLPack framework are
accepted; with torch tensors the calls go through the torch custom ops
``torch.ops.smla.sparse_prefill`` / ``sparse_decode`` (registered on import when torch is
importable), so torch.compile and CUDA graphs see them.

KV caches (``k_cache``, ``extra_k_cache``): [num_blocks, page_block_size, 1, bytes per token],
uint8 or float8_e4m3fn; the format follows from d_qk and the bytes per token (656: fp8_v32,
the DeepSeek-V3.2 layout; 584: fp8_ds_mla, the DeepSeek-V4 layout; 528: int8_ds_mla;
2 * d_qk bf16 elements: bf16), or is named with ``format=`` / ``extra_format=``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Tuple

from . import _sparse
from ._arrays import Array, is_torch, zeros
from ._errors import InvalidArgumentError, NotBuiltError
from ._formats import infer_format, row_width
from .ops import Plan

try:
    from . import _torch_ops
except ImportError:  # torch is not installed: the framework-neutral path serves every call
    _torch_ops = None


def _plan_view(name: str) -> property:
    """A FlashMLASchedMeta attribute `name` that reads its `plan` and sets it from None (a
    fresh schedule) or another object's plan; anything else is a TypeError."""

    def set_plan(meta: Any, value: Any) -> None:
        if value is not None and not isinstance(value, Plan):
            raise TypeError(f"FlashMLASchedMeta.{name}: smla keeps its plan there; expected "
                            f"None (schedule afresh) or another FlashMLASchedMeta's value, "
                            f"got {type(value).__name__}")
        meta.plan = value

    return property(lambda meta: meta.plan, set_plan)


@dataclasses.dataclass
class FlashMLASchedMeta:
    """Scheduling metadata shared by the calls of one decode step (FlashMLA's object).

    Empty until the first :func:`flash_mla_with_kvcache` call that uses it, which records the
    call's configuration and makes smla's plan; later calls must have the same shapes and the
    same ``cache_seqlens``/``topk_length``/``extra_topk_length`` values (FlashMLA's reuse
    rule). A call whose shapes differ raises ValueError; changed length values are not
    detectable and give wrong results, as in FlashMLA. Create a new one per decode step, or
    set ``tile_scheduler_metadata`` and ``num_splits`` to None, as FlashMLA's callers do to
    make its next call schedule afresh (FlashMLA keeps its schedule tensors there; here
    both name smla's ``plan``, and None clears it).
    """

    @dataclasses.dataclass
    class Config:
        b: int
        s_q: int
        h_q: int
        page_block_size: int
        h_k: int
        causal: bool
        is_fp8_kvcache: bool
        topk: Optional[int]
        extra_page_block_size: Optional[int]
        extra_topk: Optional[int]

    have_initialized: bool = False
    config: Optional[Config] = None
    plan: Optional[Plan] = None

    # FlashMLA's two schedule fields, as views of `plan` (not dataclass fields): engines test
    # them for None, reset them to None for a fresh schedule, or move them between objects.
    tile_scheduler_metadata = _plan_view("tile_scheduler_metadata")
    num_splits = _plan_view("num_splits")


# FlashMLA's TileSchedulerMetaDataSize: the columns of its older tile_scheduler_metadata.
_OLDER_METADATA_COLUMNS = 8


def get_mla_metadata(*args: Any, **kwargs: Any) -> Tuple[Any, Any]:
    """FlashMLA's scheduling metadata, in the form the caller's FlashMLA version returns.

    FlashMLA's current form, where ``cache_seqlens`` (the first argument) is None or not
    given, returns ``(FlashMLASchedMeta(), None)``; the schedule is made on first use and the
    other arguments are ignored.

    FlashMLA's older form (``sgl_kernel.flash_mla``, SGLang's NSA backend), where
    ``cache_seqlens`` is an int32 array of [batch], returns two int32 arrays of its framework
    and device: ``tile_scheduler_metadata`` [1, 8] and ``num_splits`` [batch + 1]. They are
    zero-filled placeholders with FlashMLA's shapes, so that engines can slice them and copy
    them into their CUDA-graph buffers as they did; smla never reads them, and a call given
    them makes its own plan (as a call without metadata does). The other arguments are
    ignored. (FlashMLA's current version returns a FlashMLASchedMeta whatever the arguments;
    code that wants one, to reuse its plan, passes no cache_seqlens.)
    """
    cache_seqlens = args[0] if args else kwargs.get("cache_seqlens")
    if cache_seqlens is None:
        return FlashMLASchedMeta(), None
    if not _is_array(cache_seqlens) or len(cache_seqlens.shape) != 1:
        raise InvalidArgumentError(
            f"cache_seqlens: expected None (FlashMLA's current interface) or an array "
            f"of [batch] (its older one), got {_describe(cache_seqlens)}")
    batch = int(cache_seqlens.shape[0])
    return (zeros(cache_seqlens, (1, _OLDER_METADATA_COLUMNS), "i32"),
            zeros(cache_seqlens, (batch + 1,), "i32"))


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "__dlpack__")


def _describe(value: Any) -> str:
    if _is_array(value):
        return f"an array of shape {tuple(value.shape)}"
    return type(value).__name__


def _schedule_metadata(tile_scheduler_metadata: Any, num_splits: Any,
                       batch: int) -> Optional[FlashMLASchedMeta]:
    """The FlashMLASchedMeta a call plans with, or None for a plan of its own: no metadata,
    or the placeholder arrays of the older form (checked for FlashMLA's shapes, never read).
    The older form's tile_scheduler_metadata is also taken with num_splits=None: callers of
    FlashMLA's current interface that still pass the old arguments to get_mla_metadata get
    the arrays and pass None beside them."""
    if tile_scheduler_metadata is None or isinstance(tile_scheduler_metadata,
                                                     FlashMLASchedMeta):
        if num_splits is not None:
            raise InvalidArgumentError(
                "num_splits: must be None, unless tile_scheduler_metadata is the array that "
                "get_mla_metadata(cache_seqlens, ...) returned with it (FlashMLA's older "
                "interface)")
        return tile_scheduler_metadata
    if not _is_array(tile_scheduler_metadata):
        raise TypeError(
            "tile_scheduler_metadata: expected the FlashMLASchedMeta of get_mla_metadata(), "
            f"or the array of its older form, got {type(tile_scheduler_metadata).__name__}")
    shape = tuple(tile_scheduler_metadata.shape)
    if len(shape) != 2 or shape[1] != _OLDER_METADATA_COLUMNS:
        raise InvalidArgumentError(
            f"tile_scheduler_metadata: expected [num_sm_parts, {_OLDER_METADATA_COLUMNS}] "
            f"(FlashMLA's older interface), got shape {shape}")
    if num_splits is not None and (not _is_array(num_splits) or
                                   tuple(num_splits.shape) != (batch + 1,)):
        raise InvalidArgumentError(
            f"num_splits: expected None or the [batch + 1] = [{batch + 1}] array that "
            f"get_mla_metadata(cache_seqlens, ...) returned beside tile_scheduler_metadata, "
            f"got {_describe(num_splits)}")
    return None


def flash_mla_sparse_fwd(q: Array, kv: Array, indices: Array, sm_scale: float, d_v: int = 512,
                         attn_sink: Optional[Array] = None, topk_length: Optional[Array] = None,
                         indexer_topk: int = 0, *,
                         stream: Any = None) -> Tuple[Array, Array, Array]:
    """Sparse attention prefill (FlashMLA's ``flash_mla_sparse_fwd``).

    Args:
        q: [s_q, h_q, d_qk] bfloat16, d_qk 576 or 512.
        kv: [s_kv, h_kv=1, d_qk] bfloat16.
        indices: [s_q, h_kv=1, topk] int32; -1 or >= s_kv entries are skipped.
        sm_scale: softmax scale.
        d_v: must be 512.
        attn_sink: optional [h_q] float32; scales out by exp(lse) / (exp(lse) + exp(sink)).
        topk_length: optional [s_q] int32; token i uses indices[i, 0, :topk_length[i]].
        indexer_topk: must be 0. FlashMLA's positive values (a fourth output, the lse over
            the first indexer_topk entries, for training an indexer) are not implemented:
            NotBuiltError (a NotImplementedError).
        stream: (smla) CUDA stream for non-torch arrays; default the current stream.

    Returns:
        (out [s_q, h_q, 512] bfloat16, max_logits [s_q, h_q] float32,
         lse [s_q, h_q] float32, natural log, +inf for a token with no valid index).
    """
    _sparse.check_d_v(d_v, "d_v")
    if indexer_topk != 0:
        raise NotBuiltError(
            f"indexer_topk: {indexer_topk} asks for FlashMLA's lse_indexer output (the lse over "
            f"the first indexer_topk entries), which smla does not compute; only 0 is accepted")
    if is_torch(q) and _torch_ops is not None:
        return _torch_ops.sparse_prefill(q, kv, indices, float(sm_scale), attn_sink,
                                         topk_length)
    return _sparse.sparse_prefill(q, kv, indices, sm_scale, attn_sink, topk_length,
                                  stream=stream)


def _check_config(meta: FlashMLASchedMeta, config: FlashMLASchedMeta.Config) -> None:
    if not meta.have_initialized:
        meta.config = config
        meta.have_initialized = True
        return
    for field in dataclasses.fields(config):
        recorded, given = getattr(meta.config, field.name), getattr(config, field.name)
        if recorded != given:
            raise InvalidArgumentError(
                f"tile_scheduler_metadata: made for {field.name}={recorded}, this call has "
                f"{field.name}={given}; a FlashMLASchedMeta is reused only by calls of the "
                f"same shapes (make a new one with get_mla_metadata())")


def _decode_format(k_cache, format, is_fp8_kvcache, d_qk, name):
    inferred = format is None
    if inferred:
        format = infer_format(k_cache, d_qk, None, name)
    if inferred and format == "int8_ds_mla" and is_fp8_kvcache:
        # 528 bytes is also FlashMLA's DeepSeek-V4.1 fp8 layout (512 e4m3 + 16 UE8M0 scales),
        # which a caller passing is_fp8_kvcache=True most likely holds.
        raise NotBuiltError(
            f"{name}: 528 bytes per token with is_fp8_kvcache=True is FlashMLA's DeepSeek-V4.1 "
            f"fp8 layout, which smla does not read yet (SPEC §2 lists it as planned); an "
            f"int8_ds_mla cache has 528 bytes too and takes is_fp8_kvcache=False")
    if format.startswith("fp8") != bool(is_fp8_kvcache):
        raise InvalidArgumentError(
            f"is_fp8_kvcache: {name} holds {format}, so is_fp8_kvcache must be "
            f"{format.startswith('fp8')}, got {is_fp8_kvcache}")
    return format


def flash_mla_with_kvcache(
    q: Array,
    k_cache: Array,
    block_table: Optional[Array] = None,
    cache_seqlens: Optional[Array] = None,
    head_dim_v: int = 512,
    tile_scheduler_metadata: Any = None,
    num_splits: Any = None,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    is_fp8_kvcache: bool = False,
    indices: Optional[Array] = None,
    attn_sink: Optional[Array] = None,
    extra_k_cache: Optional[Array] = None,
    extra_indices_in_kvcache: Optional[Array] = None,
    topk_length: Optional[Array] = None,
    extra_topk_length: Optional[Array] = None,
    *,
    format: Optional[str] = None,
    extra_format: Optional[str] = None,
    stream: Any = None,
) -> Tuple[Array, Array]:
    """Sparse MLA decode over paged KV caches (FlashMLA's ``flash_mla_with_kvcache``).

    Args:
        q: [b, s_q, h_q, d_qk] bfloat16 (d_qk 576 for V3.2, 512 for V4; s_q > 1 for MTP).
        k_cache: [num_blocks, page_block_size, 1, bytes per token] (module docstring).
        block_table, cache_seqlens: unused in sparse mode (FlashMLA's dense mode is not
            implemented yet: calling without ``indices`` raises NotImplementedError).
        head_dim_v: must be 512.
        tile_scheduler_metadata: the FlashMLASchedMeta of :func:`get_mla_metadata`; None
            makes no reuse. The array of its older form (with ``num_splits``) is accepted
            and not read: the call makes its own plan, as with None.
        num_splits: None, or the older form's [batch + 1] array beside its
            tile_scheduler_metadata.
        softmax_scale: default d_qk ** -0.5.
        causal: must be False in sparse mode.
        is_fp8_kvcache: True for the fp8 formats, False for bf16 and int8_ds_mla caches.
        indices: [b, s_q, topk] int32 slot ids, block * page_block_size + offset; -1 skips.
        attn_sink: optional [h_q] float32 (+inf zeroes the output; lse is unaffected).
        extra_k_cache, extra_indices_in_kvcache [b, s_q, extra_topk]: an optional second
            pool attended together with the first (DeepSeek-V4's sliding window).
        topk_length, extra_topk_length: optional [b] int32; request i uses only the first
            topk_length[i] entries of its rows.
        format, extra_format: (smla) the caches' formats when not inferable from shape.
        stream: (smla) CUDA stream for non-torch arrays; default the current stream.

    Returns:
        (out [b, s_q, h_q, 512] bfloat16, lse [b, h_q, s_q] float32; lse is, as in FlashMLA,
        a transposed view of a contiguous [b, s_q, h_q] where the framework has views). The
        b * s_q query tokens (s_q > 1: MTP) run as one attend.
    """
    if indices is None:
        raise NotBuiltError(
            "indices: smla implements FlashMLA's sparse mode only; dense paged decode "
            "(block_table + cache_seqlens) is planned (SPEC §3.5)")
    if causal:
        raise InvalidArgumentError("causal: must be False when indices are given (sparse mode)")
    for name, value in (("extra_indices_in_kvcache", extra_indices_in_kvcache),
                        ("extra_topk_length", extra_topk_length)):
        if extra_k_cache is None and value is not None:
            raise InvalidArgumentError(f"{name}: given without extra_k_cache")
    if extra_k_cache is not None and extra_indices_in_kvcache is None:
        raise InvalidArgumentError("extra_indices_in_kvcache: required with extra_k_cache")
    _sparse.check_d_v(head_dim_v, "head_dim_v")
    _sparse.check_decode_shapes(q, indices, extra_indices_in_kvcache)
    meta = _schedule_metadata(tile_scheduler_metadata, num_splits, int(q.shape[0]))
    d_qk = row_width(q, "q")
    if softmax_scale is None:
        softmax_scale = d_qk ** -0.5
    format = _decode_format(k_cache, format, is_fp8_kvcache, d_qk, "k_cache")
    if extra_k_cache is not None:
        extra_format = _decode_format(extra_k_cache, extra_format, is_fp8_kvcache, d_qk,
                                      "extra_k_cache")

    first_use = meta is not None and not meta.have_initialized
    try:
        if meta is not None:
            _check_config(meta, FlashMLASchedMeta.Config(
                b=int(q.shape[0]), s_q=int(q.shape[1]), h_q=int(q.shape[2]),
                page_block_size=int(k_cache.shape[1]),
                h_k=int(k_cache.shape[2]) if len(k_cache.shape) == 4 else 1, causal=causal,
                is_fp8_kvcache=bool(is_fp8_kvcache), topk=int(indices.shape[-1]),
                extra_page_block_size=None if extra_k_cache is None
                else int(extra_k_cache.shape[1]),
                extra_topk=None if extra_indices_in_kvcache is None
                else int(extra_indices_in_kvcache.shape[-1])))

        use_torch = is_torch(q) and _torch_ops is not None
        compiling = use_torch and _torch_ops.is_compiling()
        if meta is not None and meta.plan is None and not compiling:
            # Under torch.compile the plan is made inside each call instead: a plan made while
            # tracing would be a fake tensor.
            meta.plan = _sparse.plan_decode(
                q, k_cache, indices, softmax_scale, format, topk_length, attn_sink,
                extra_k_cache, extra_format, extra_indices_in_kvcache, extra_topk_length,
                stream=stream)
        # Not while compiling either: a plan made eagerly before is an extension object, which
        # dynamo cannot trace into (so fullgraph=True would fail on it).
        plan = meta.plan if meta is not None and not compiling else None

        if use_torch:
            return _torch_ops.sparse_decode(
                q, k_cache, indices, float(softmax_scale), format, topk_length, attn_sink,
                extra_k_cache, extra_format, extra_indices_in_kvcache, extra_topk_length, plan)
        return _sparse.sparse_decode(
            q, k_cache, indices, softmax_scale, format, topk_length, attn_sink, extra_k_cache,
            extra_format, extra_indices_in_kvcache, extra_topk_length, plan, stream=stream)
    except BaseException:
        if first_use:
            # A failed first call leaves the metadata as it found it, so that the next call is
            # not held to the failed call's shapes.
            meta.have_initialized, meta.config, meta.plan = False, None, None
        raise


__all__ = ["FlashMLASchedMeta", "get_mla_metadata", "flash_mla_sparse_fwd",
           "flash_mla_with_kvcache"]
