"""smla.flash_mla with torch CPU tensors: the torch custom ops (schema, fake implementations,
torch.compile) and parity with the plain torch oracle. Runs wherever torch is installed."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smla  # noqa: E402
import torch_reference as ref  # noqa: E402
from smla.flash_mla import (  # noqa: E402
    flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata)


def _indices(gen, t_count, k, slots):
    idx = torch.randint(0, slots, (t_count, k), generator=gen, dtype=torch.int32)
    idx[:, 0] = -1
    idx[0, 1] = slots
    return idx


def _decode_case(gen, format, d_qk, b=2, s_q=2, h_q=8, topk=16, extra=False):
    rows = torch.randn(64, d_qk, generator=gen).to(torch.bfloat16)
    case = dict(q=torch.randn(b, s_q, h_q, d_qk, generator=gen).to(torch.bfloat16),
                cache=ref.quantize(rows, format, 16)[:, :, None, :],
                indices=_indices(gen, b * s_q, topk, 64).view(b, s_q, topk),
                topk_length=torch.tensor([topk, 5], dtype=torch.int32)[:b],
                sink=torch.randn(h_q, generator=gen))
    if extra:
        x_rows = torch.randn(32, d_qk, generator=gen).to(torch.bfloat16)
        case.update(extra_cache=ref.quantize(x_rows, format, 8)[:, :, None, :],
                    extra_indices=_indices(gen, b * s_q, 8, 32).view(b, s_q, 8),
                    extra_topk_length=torch.tensor([0, 8], dtype=torch.int32)[:b])
    return case


def _run_decode(case, meta=None, fp8_dtype=None):
    cache = case["cache"] if fp8_dtype is None else case["cache"].view(fp8_dtype)
    return flash_mla_with_kvcache(
        case["q"], cache, None, None, 512, meta, is_fp8_kvcache=True,
        indices=case["indices"], attn_sink=case["sink"],
        extra_k_cache=case.get("extra_cache"),
        extra_indices_in_kvcache=case.get("extra_indices"), topk_length=case["topk_length"],
        extra_topk_length=case.get("extra_topk_length"))


def test_ops_are_registered():
    assert hasattr(torch.ops.smla, "sparse_prefill") and hasattr(torch.ops.smla, "sparse_decode")


@pytest.mark.parametrize("format,d_qk", [("fp8_v32", 576), ("fp8_ds_mla", 512)])
def test_smla_quantize_matches_torch_oracle_bytes(format, d_qk):
    rows = torch.randn(32, d_qk, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    expected = ref.quantize(rows, format, 16)
    got = smla.quantize(rows, format, block_size=16)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.uint8
    if format == "fp8_ds_mla":   # the pad byte after the 7 scale bytes is unspecified
        pad = torch.zeros(16 * 584, dtype=torch.bool)
        pad[16 * 576 + 7::8] = True
        got, expected = got.view(2, -1)[:, ~pad], expected.view(2, -1)[:, ~pad]
    assert torch.equal(got, expected)


@pytest.mark.parametrize("d_qk", [576, 512])
def test_sparse_fwd_matches_torch_oracle(d_qk):
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(3, 8, d_qk, generator=gen).to(torch.bfloat16)
    kv = torch.randn(40, 1, d_qk, generator=gen).to(torch.bfloat16)
    idx = _indices(gen, 3, 12, 40)[:, None, :]
    sink = torch.randn(8, generator=gen)
    topk_length = torch.tensor([12, 0, 7], dtype=torch.int32)

    out, max_logits, lse = flash_mla_sparse_fwd(q, kv, idx, 0.05, attn_sink=sink,
                                                topk_length=topk_length)

    r_out, r_lse, r_max = ref.attend(q, kv[:, 0].float(), idx[:, 0], 0.05, topk_length,
                                     sink=sink)
    ref.check_out(out, r_out)
    ref.check_stat(lse, r_lse, "lse")
    ref.check_stat(max_logits, r_max, "max_logits")


@pytest.mark.parametrize("format,d_qk", [("fp8_v32", 576), ("fp8_ds_mla", 512)])
def test_with_kvcache_matches_torch_oracle(format, d_qk):
    case = _decode_case(torch.Generator().manual_seed(2), format, d_qk, extra=True)
    meta, _ = get_mla_metadata()
    out, lse = _run_decode(case, meta, fp8_dtype=torch.float8_e4m3fn)
    assert out.shape == (2, 2, 8, 512) and lse.shape == (2, 8, 2)
    # FlashMLA's lse layout, which callers may rely on (lse.transpose(1, 2).view(...)).
    assert lse.stride() == (2 * 8, 1, 8) and lse.transpose(1, 2).is_contiguous()
    r_out, r_lse = ref.decode_attend(case["q"], case["cache"], case["indices"], format,
                                     d_qk ** -0.5, case["topk_length"], case["sink"],
                                     case["extra_cache"], case["extra_indices"],
                                     case["extra_topk_length"])
    ref.check_out(out, r_out)
    ref.check_stat(lse, r_lse, "lse")
    again, _ = _run_decode(case, meta)      # the metadata's plan, reused
    assert torch.equal(out, again)


def test_opcheck_of_both_ops():
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, 576, generator=gen).to(torch.bfloat16)
    kv = torch.randn(16, 1, 576, generator=gen).to(torch.bfloat16)
    idx = _indices(gen, 2, 8, 16)[:, None, :]
    torch.library.opcheck(torch.ops.smla.sparse_prefill.default,
                          (q, kv, idx, 0.1, None, torch.tensor([8, 3], dtype=torch.int32)))
    case = _decode_case(gen, "fp8_v32", 576)
    torch.library.opcheck(torch.ops.smla.sparse_decode.default,
                          (case["q"], case["cache"], case["indices"], 0.04, "fp8_v32",
                           case["topk_length"], case["sink"], None, "", None, None, None, 0, 0))


# fullgraph=True: nothing on the way to the ops breaks the graph (no call into the extension
# module, which dynamo cannot trace), without a FlashMLASchedMeta, with a fresh one, with one
# whose plan an eager call has made, and with the metadata arrays of FlashMLA's older form.
@pytest.mark.parametrize("fullgraph,meta_kind", [(False, None), (True, None), (True, "fresh"),
                                                 (True, "planned"), (True, "older")])
def test_compiled_function_calls_the_ops(fullgraph, meta_kind):
    case = _decode_case(torch.Generator().manual_seed(4), "fp8_v32", 576)
    kv = torch.randn(64, 1, 576, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)
    if meta_kind == "older":
        metadata = get_mla_metadata(case["topk_length"], 16, 1)
    else:
        metadata = (get_mla_metadata()[0] if meta_kind else None, None)
    if meta_kind == "planned":
        flash_mla_with_kvcache(case["q"], case["cache"], None, None, 512, *metadata,
                               is_fp8_kvcache=True, indices=case["indices"],
                               attn_sink=case["sink"], topk_length=case["topk_length"])
        assert metadata[0].plan is not None

    def step(q, cache, indices, lengths, sink):
        out, lse = flash_mla_with_kvcache(q, cache, None, None, 512, *metadata,
                                          is_fp8_kvcache=True, indices=indices, attn_sink=sink,
                                          topk_length=lengths)
        prefill, _, _ = flash_mla_sparse_fwd(q[0], kv, indices[0][:, None, :], 0.1)
        # view() needs FlashMLA's lse strides, in the traced graph (the fake) and eagerly.
        return out.float().sum(-1) + 1, lse.transpose(1, 2).view(-1) * 2, prefill

    args = (case["q"], case["cache"], case["indices"], case["topk_length"], case["sink"])
    torch._dynamo.reset()  # each case traces afresh (dynamo caches by the code object)
    compiled = torch.compile(step, backend="aot_eager", fullgraph=fullgraph)
    for got, expected in zip(compiled(*args), step(*args)):
        assert torch.equal(got, expected)


def test_older_metadata_in_sglangs_graph_buffers():
    """SGLang's NSA backend keeps the older form's arrays of its largest batch as CUDA-graph
    inputs, copies each step's arrays into them and passes num_splits sliced to the batch:
    accepted, and the results are bitwise those of a call without metadata (whose parity
    with the oracle the other tests check)."""
    case = _decode_case(torch.Generator().manual_seed(7), "fp8_v32", 576)
    b, s_q, h_q = case["q"].shape[:3]
    seqlens = torch.full((b,), 16, dtype=torch.int32)
    kw = dict(num_q_tokens_per_head_k=s_q * h_q, num_heads_k=1, num_heads_q=h_q,
              is_fp8_kvcache=True, topk=16)
    tile_buffer, splits_buffer = get_mla_metadata(torch.full((8,), 16, dtype=torch.int32), **kw)
    tile_metadata, num_splits = get_mla_metadata(seqlens, **kw)
    assert tile_metadata.shape == tile_buffer.shape and num_splits.shape == (b + 1,)
    tile_buffer.copy_(tile_metadata)
    splits_buffer[:b + 1].copy_(num_splits)

    out, lse = flash_mla_with_kvcache(
        case["q"], case["cache"], None, seqlens, 512, tile_buffer, splits_buffer[:b + 1],
        is_fp8_kvcache=True, indices=case["indices"], attn_sink=case["sink"],
        topk_length=case["topk_length"])
    plain_out, plain_lse = _run_decode(case)
    assert torch.equal(out, plain_out) and torch.equal(lse, plain_lse)


def test_errors_cross_the_op_boundary_with_their_class_and_names():
    case = _decode_case(torch.Generator().manual_seed(6), "fp8_v32", 576)
    with pytest.raises(ValueError, match="topk_length") as info:
        flash_mla_with_kvcache(case["q"], case["cache"], None, None, 512, None,
                               is_fp8_kvcache=True, indices=case["indices"],
                               topk_length=torch.zeros(5, dtype=torch.int32))
    assert isinstance(info.value, smla.InvalidArgumentError)


def test_import_smla_after_torch_registers_the_ops():
    import subprocess
    import sys
    code = ("import torch, smla\n"
            "assert 'smla.flash_mla' in sys.modules\n"
            "torch.ops.smla.sparse_decode\n")
    subprocess.run([sys.executable, "-c", "import sys\n" + code], check=True)
