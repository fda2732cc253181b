"""smla's FlashMLA-shaped operations as torch custom ops, with fake implementations.

``torch.ops.smla.sparse_prefill`` and ``torch.ops.smla.sparse_decode`` are opaque to
torch.compile (the fake implementations give it the output shapes) and allocate their
outputs and workspace with torch's caching allocator on the current stream, so they can be
captured in CUDA graphs. Importing this module needs torch (ImportError otherwise, which
smla.flash_mla takes as "no torch").
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from . import _smla, _sparse
from .ops import D_V, Plan

if not hasattr(torch.library, "custom_op"):
    raise ImportError("smla's torch ops need torch >= 2.4 (torch.library.custom_op)")


def is_compiling() -> bool:
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())


@torch.library.custom_op("smla::sparse_prefill", mutates_args=())
def _sparse_prefill_op(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor,
                       sm_scale: float, attn_sink: Optional[torch.Tensor],
                       topk_length: Optional[torch.Tensor]
                       ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _sparse.sparse_prefill(q, kv, indices, sm_scale, attn_sink, topk_length)


@_sparse_prefill_op.register_fake
def _(q, kv, indices, sm_scale, attn_sink, topk_length):
    s_q, h_q = q.shape[0], q.shape[1]
    return (q.new_empty((s_q, h_q, D_V), dtype=torch.bfloat16),
            q.new_empty((s_q, h_q), dtype=torch.float32),
            q.new_empty((s_q, h_q), dtype=torch.float32))


@torch.library.custom_op("smla::sparse_decode", mutates_args=())
def _sparse_decode_op(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                      softmax_scale: float, kv_format: str, topk_length: Optional[torch.Tensor],
                      attn_sink: Optional[torch.Tensor], extra_k_cache: Optional[torch.Tensor],
                      extra_format: str, extra_indices: Optional[torch.Tensor],
                      extra_topk_length: Optional[torch.Tensor],
                      plan_buffer: Optional[torch.Tensor], plan_key: int, plan_strategy: int
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    # A plan crosses the op boundary as (buffer, key, strategy); key 0 means "no plan".
    plan = None
    if plan_key != 0:
        plan = Plan(_smla.Plan(plan_buffer, plan_key, plan_strategy), plan_buffer)
    return _sparse.sparse_decode(q, k_cache, indices, softmax_scale, kv_format, topk_length,
                                 attn_sink, extra_k_cache, extra_format or None, extra_indices,
                                 extra_topk_length, plan)


@_sparse_decode_op.register_fake
def _(q, k_cache, indices, softmax_scale, kv_format, topk_length, attn_sink, extra_k_cache,
      extra_format, extra_indices, extra_topk_length, plan_buffer, plan_key, plan_strategy):
    b, s_q, h_q = q.shape[0], q.shape[1], q.shape[2]
    return (q.new_empty((b, s_q, h_q, D_V), dtype=torch.bfloat16),
            q.new_empty((b, s_q, h_q), dtype=torch.float32).transpose(1, 2))


def sparse_prefill(q, kv, indices, sm_scale, attn_sink, topk_length):
    return torch.ops.smla.sparse_prefill(q, kv, indices, sm_scale, attn_sink, topk_length)


def sparse_decode(q, k_cache, indices, softmax_scale, kv_format, topk_length, attn_sink,
                  extra_k_cache, extra_format, extra_indices, extra_topk_length,
                  plan: Optional[Plan]):
    plan_buffer = None if plan is None else plan.buffer
    plan_key = 0 if plan is None else plan.core.key
    plan_strategy = 0 if plan is None else plan.core.strategy
    return torch.ops.smla.sparse_decode(
        q, k_cache, indices, softmax_scale, kv_format, topk_length, attn_sink, extra_k_cache,
        extra_format or "", extra_indices, extra_topk_length, plan_buffer, plan_key,
        plan_strategy)
