"""smla.flash_mla on a CUDA GPU with torch: parity with the plain torch oracle for both
FlashMLA functions and every optional argument, a decode step captured in a CUDA graph and
replayed with new rows, slots, indices and lengths, torch.compile, and two torch streams.

Skips (visibly) without torch, without CUDA, or with a CPU-only smla build.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import smla  # noqa: E402
import torch_reference as ref  # noqa: E402
from smla.flash_mla import (  # noqa: E402
    flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata)

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or smla.cuda_device_count() == 0,
    reason="needs a CUDA GPU, torch with CUDA and smla built with CUDA")

DEV = "cuda"
DECODE_CASES = [("fp8_v32", 576), ("fp8_ds_mla", 512)]


def _gen(seed):
    return torch.Generator(device=DEV).manual_seed(seed)


def _indices(gen, shape, slots, invalid=True):
    """int32 slot ids with -1 and out-of-range entries mixed in."""
    idx = torch.randint(0, slots, shape, generator=gen, device=DEV, dtype=torch.int32)
    if invalid:
        idx[..., 0] = -1
        idx[..., -1] = slots
    return idx


def _pool(gen, format, d_qk, num_blocks, block_size, fp8_dtype=False):
    """A cache filled by smla.quantize on the GPU, checked byte-exact against the torch
    quantizer; returned in FlashMLA's [num_blocks, block, 1, bytes] shape."""
    rows = torch.randn(num_blocks * block_size, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    cache = smla.quantize(rows, format, block_size=block_size)
    expected = ref.quantize(rows, format, block_size)
    if format == "fp8_ds_mla":   # mask the one unspecified pad byte per token
        pad = torch.zeros(block_size * 584, dtype=torch.bool, device=DEV)
        pad[block_size * 576 + 7::8] = True
        assert torch.equal(cache.view(num_blocks, -1)[:, ~pad],
                           expected.view(num_blocks, -1)[:, ~pad])
    else:
        assert torch.equal(cache, expected)
    cache = cache[:, :, None, :]
    return cache.view(torch.float8_e4m3fn) if fp8_dtype else cache


@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("h_q", [16, 64, 128])
@pytest.mark.parametrize("optional", [False, True])
def test_sparse_fwd_parity(d_qk, h_q, optional):
    gen = _gen(h_q + d_qk)
    s_q, s_kv, topk = 70, 300, 128
    q = torch.randn(s_q, h_q, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    kv = torch.randn(s_kv, 1, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    idx = _indices(gen, (s_q, 1, topk), s_kv)
    sink = torch.randn(h_q, generator=gen, device=DEV) if optional else None
    topk_length = (torch.randint(0, topk + 1, (s_q,), generator=gen, device=DEV,
                                 dtype=torch.int32) if optional else None)

    out, max_logits, lse = flash_mla_sparse_fwd(q, kv, idx, d_qk ** -0.5, 512, sink,
                                                topk_length)

    assert out.dtype == torch.bfloat16 and out.shape == (s_q, h_q, 512)
    r_out, r_lse, r_max = ref.attend(q, kv[:, 0].float(), idx[:, 0], d_qk ** -0.5, topk_length,
                                     sink=sink)
    ref.check_out(out, r_out)
    ref.check_stat(lse, r_lse, "lse")
    ref.check_stat(max_logits, r_max, "max_logits")


@pytest.mark.parametrize("format,d_qk", DECODE_CASES)
@pytest.mark.parametrize("h_q", [16, 64, 128])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("optional", ["none", "lengths+sink", "extra", "all"])
def test_with_kvcache_parity(format, d_qk, h_q, s_q, optional):
    gen = _gen(h_q * s_q + d_qk)
    b, topk, extra_topk = 5, 256, 64
    cache = _pool(gen, format, d_qk, num_blocks=40, block_size=64, fp8_dtype=True)
    q = torch.randn(b, s_q, h_q, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    indices = _indices(gen, (b, s_q, topk), 40 * 64)
    kw = {}
    if optional in ("lengths+sink", "all"):
        kw.update(topk_length=torch.tensor([topk, 0, 17, 200, 1], dtype=torch.int32,
                                           device=DEV),
                  attn_sink=torch.randn(h_q, generator=gen, device=DEV))
    if optional in ("extra", "all"):
        kw.update(extra_k_cache=_pool(gen, format, d_qk, num_blocks=8, block_size=64),
                  extra_indices_in_kvcache=_indices(gen, (b, s_q, extra_topk), 8 * 64))
    if optional == "all":
        kw.update(extra_topk_length=torch.tensor([64, 3, 0, 64, 9], dtype=torch.int32,
                                                 device=DEV))

    meta, _ = get_mla_metadata()
    out, lse = flash_mla_with_kvcache(q, cache, None, None, 512, meta, is_fp8_kvcache=True,
                                      indices=indices, **kw)

    assert out.shape == (b, s_q, h_q, 512) and lse.shape == (b, h_q, s_q)
    r_out, r_lse = ref.decode_attend(
        q, cache, indices, format, d_qk ** -0.5, kw.get("topk_length"), kw.get("attn_sink"),
        kw.get("extra_k_cache"), kw.get("extra_indices_in_kvcache"),
        kw.get("extra_topk_length"))
    ref.check_out(out, r_out)
    ref.check_stat(lse, r_lse, "lse")
    again, lse_again = flash_mla_with_kvcache(q, cache, None, None, 512, meta,
                                              is_fp8_kvcache=True, indices=indices, **kw)
    assert torch.equal(out, again) and torch.equal(lse, lse_again)   # deterministic


def test_schedule_reset_follows_new_lengths():
    """A FlashMLASchedMeta reused over calls whose lengths change, its schedule fields reset
    to None in between (as FlashMLA's callers do): each call matches the oracle for its own
    lengths, so the reset really replaced the plan made for the old ones."""
    gen = _gen(11)
    format, d_qk, b, h_q, topk = "fp8_ds_mla", 512, 5, 64, 512
    cache = _pool(gen, format, d_qk, num_blocks=40, block_size=64)
    q = torch.randn(b, 2, h_q, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    indices = _indices(gen, (b, 2, topk), 40 * 64)
    meta, _ = get_mla_metadata()
    for lengths in ([512, 0, 17, 300, 1], [3, 512, 100, 0, 512]):
        topk_length = torch.tensor(lengths, dtype=torch.int32, device=DEV)
        meta.tile_scheduler_metadata, meta.num_splits = None, None
        out, lse = flash_mla_with_kvcache(q, cache, None, None, 512, meta, is_fp8_kvcache=True,
                                          indices=indices, topk_length=topk_length)
        r_out, r_lse = ref.decode_attend(q, cache, indices, format, d_qk ** -0.5, topk_length)
        ref.check_out(out, r_out)
        ref.check_stat(lse, r_lse, "lse")


@pytest.mark.parametrize("metadata_form", ["current", "older"])
@pytest.mark.parametrize("format,d_qk", DECODE_CASES)
def test_decode_loop_in_cuda_graph(format, d_qk, metadata_form):
    """A decode step captured once, as an engine captures it: the step's new KV rows written
    into the cache (smla.write_cache), then the attention run for two query positions (MTP,
    whose lengths are repeated per position inside the capture); replayed with new rows,
    slots, indices and lengths copied into its static inputs. Every request attends to the
    row it has just written, so a write ordered after the attention would fail the check.
    The metadata is made in the step (vLLM, FlashMLA's current form) or, in FlashMLA's older
    form, made per step outside the graph and copied into the graph's arrays (SGLang)."""
    gen = _gen(7)
    b, s_q, h_q, topk, slots = 4, 2, 64, 128, 32 * 64
    cache = _pool(gen, format, d_qk, num_blocks=32, block_size=64)
    sink = torch.randn(h_q, generator=gen, device=DEV)
    q = torch.zeros(b, s_q, h_q, d_qk, dtype=torch.bfloat16, device=DEV)
    indices = torch.zeros(b, s_q, topk, dtype=torch.int32, device=DEV)
    lengths = torch.zeros(b, dtype=torch.int32, device=DEV)
    new_rows = torch.zeros(b, d_qk, dtype=torch.bfloat16, device=DEV)
    new_slots = torch.full((b,), -1, dtype=torch.int32, device=DEV)   # warm-up writes nothing

    def older_metadata():
        return get_mla_metadata(lengths, s_q * h_q, 1, h_q, True, topk)

    graph_metadata = older_metadata()

    def step():
        smla.write_cache(new_rows, new_slots, cache)
        metadata = (get_mla_metadata()[0], None) if metadata_form == "current" else graph_metadata
        return flash_mla_with_kvcache(q, cache, None, lengths, 512, *metadata,
                                      is_fp8_kvcache=True, indices=indices, attn_sink=sink,
                                      topk_length=lengths)

    lengths.fill_(topk)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()                                        # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = step()

    for replay in range(4):
        q.copy_(torch.randn(q.shape, generator=gen, device=DEV).to(torch.bfloat16))
        rows = torch.randn(b, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
        written = torch.randperm(slots, generator=gen, device=DEV)[:b].to(torch.int32)
        new_rows.copy_(rows)
        new_slots.copy_(written)
        chosen = _indices(gen, indices.shape, slots)
        chosen[:, :, 1] = written[:, None]            # each request reads its new row
        indices.copy_(chosen)
        lengths.copy_(torch.randint(2, topk + 1, (b,), generator=gen, device=DEV,
                                    dtype=torch.int32))
        if metadata_form == "older":
            for static, fresh in zip(graph_metadata, older_metadata()):
                static.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        keys = ref.dequantize(cache[:, :, 0], format)
        for i in range(b):
            one = ref.dequantize(ref.quantize(rows[i:i + 1], format, 1), format)
            assert torch.equal(keys[int(written[i])], one[0])
        r_out, r_lse = ref.decode_attend(q, cache, indices, format, d_qk ** -0.5, lengths, sink)
        ref.check_out(out, r_out)
        ref.check_stat(lse, r_lse, "lse")


def test_torch_compile_of_a_function_calling_the_ops():
    gen = _gen(11)
    b, h_q, d_qk = 3, 64, 576
    cache = _pool(gen, "fp8_v32", d_qk, num_blocks=16, block_size=64)
    q = torch.randn(b, 1, h_q, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    indices = _indices(gen, (b, 1, 128), 16 * 64)
    kv = torch.randn(500, 1, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
    prefill_idx = _indices(gen, (b, 1, 64), 500)

    def layer(q, indices):
        out, lse = flash_mla_with_kvcache(q, cache, None, None, 512, None, is_fp8_kvcache=True,
                                          indices=indices)
        p_out, p_max, p_lse = flash_mla_sparse_fwd(q[:, 0], kv, prefill_idx, 0.05)
        return out.float() * 2, lse + p_lse.T[None], p_out, p_max

    compiled = torch.compile(layer)
    got = compiled(q, indices)
    expected = layer(q, indices)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_two_streams_each_use_their_own():
    """Two decode calls enqueued on two torch streams with different inputs: each result
    matches its own reference (a call on the wrong stream would race with the copies)."""
    gen = _gen(13)
    d_qk, h_q = 512, 64
    cache = _pool(gen, "fp8_ds_mla", d_qk, num_blocks=32, block_size=64)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    inputs, results = [], []
    for stream in streams:
        with torch.cuda.stream(stream):
            q = torch.randn(8, 1, h_q, d_qk, generator=gen, device=DEV).to(torch.bfloat16)
            idx = _indices(gen, (8, 1, 512), 32 * 64)
            torch.cuda._sleep(2_000_000)       # keep the stream busy so ordering matters
            inputs.append((q, idx))
            results.append(flash_mla_with_kvcache(q, cache, None, None, 512, None,
                                                  is_fp8_kvcache=True, indices=idx))
    torch.cuda.synchronize()
    for (q, idx), (out, lse) in zip(inputs, results):
        r_out, r_lse = ref.decode_attend(q, cache, idx, "fp8_ds_mla", d_qk ** -0.5)
        ref.check_out(out, r_out)
        ref.check_stat(lse, r_lse, "lse")


def test_explicit_stream_for_the_generic_api():
    gen = _gen(17)
    rows = torch.randn(128, 576, generator=gen, device=DEV).to(torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())       # rows are written on the default
    cache = smla.quantize(rows, "fp8_v32", block_size=64, stream=stream)
    stream.synchronize()
    assert torch.equal(cache, ref.quantize(rows, "fp8_v32", 64))


def test_gpu_write_cache_and_errors_name_arguments():
    gen = _gen(19)
    rows = torch.randn(6, 512, generator=gen, device=DEV).to(torch.bfloat16)
    cache = torch.zeros(2, 4, 584, dtype=torch.uint8, device=DEV)
    slots = torch.tensor([5, -1, 0, 7, 8, 2], dtype=torch.int32, device=DEV)
    smla.write_cache(rows, slots, cache)
    keys = ref.dequantize(cache, "fp8_ds_mla")
    for slot, row in {5: 0, 0: 2, 7: 3, 2: 5}.items():
        one = ref.dequantize(ref.quantize(rows[row:row + 1], "fp8_ds_mla", 1), "fp8_ds_mla")
        assert torch.equal(keys[slot], one[0])
    with pytest.raises(ValueError, match="slots"):
        smla.write_cache(rows, slots.cpu(), cache)            # placement mismatch
    q = torch.randn(2, 1, 16, 512, device=DEV).to(torch.bfloat16)
    with pytest.raises(ValueError, match="topk_length"):
        flash_mla_with_kvcache(q, cache[:, :, None], None, None, 512, None,
                               is_fp8_kvcache=True, indices=torch.zeros(2, 1, 8, dtype=torch.int32,
                                                                        device=DEV),
                               topk_length=torch.zeros(3, dtype=torch.int32, device=DEV))


def test_opcheck_on_cuda_tensors():
    gen = _gen(23)
    q = torch.randn(2, 1, 64, 512, generator=gen, device=DEV).to(torch.bfloat16)
    cache = _pool(gen, "fp8_ds_mla", 512, num_blocks=4, block_size=64)
    idx = _indices(gen, (2, 1, 64), 4 * 64)
    torch.library.opcheck(torch.ops.smla.sparse_decode.default,
                          (q, cache, idx, 0.05, "fp8_ds_mla", None, None, None, "", None, None,
                           None, 0, 0))
    kv = torch.randn(100, 1, 512, generator=gen, device=DEV).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.smla.sparse_prefill.default,
                          (q[:, 0], kv, _indices(gen, (2, 1, 32), 100), 0.05, None, None))
