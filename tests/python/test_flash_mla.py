"""smla.flash_mla with NumPy arrays on the CPU: FlashMLA's shapes and returns, against the
NumPy oracle, and FlashMLA's metadata reuse rules."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes", reason="NumPy has no bfloat16 without ml_dtypes")

import reference  # noqa: E402
import smla  # noqa: E402
from workloads import make_indices, make_pool, make_q, make_rows  # noqa: E402
from smla.flash_mla import (  # noqa: E402
    FlashMLASchedMeta, flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata)


@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("optional", [False, True])
def test_sparse_fwd_matches_oracle(rng, d_qk, optional):
    s_q, h_q, s_kv, topk = 4, 8, 40, 16
    q = make_q(rng, s_q, h_q, d_qk)
    kv = make_rows(rng, s_kv, d_qk)[:, None, :]                 # [s_kv, 1, d_qk]
    indices = make_indices(rng, s_q, topk, s_kv)[:, None, :]    # [s_q, 1, topk]
    sink = rng.standard_normal(h_q).astype(np.float32) if optional else None
    topk_length = np.array([16, 5, 0, 9], np.int32) if optional else None

    out, max_logits, lse = flash_mla_sparse_fwd(q, kv, indices, 0.06, attn_sink=sink,
                                                topk_length=topk_length)

    assert out.shape == (s_q, h_q, 512) and max_logits.shape == lse.shape == (s_q, h_q)
    ref = reference.attend(q.astype(np.float32), kv[:, 0].astype(np.float32), indices[:, 0],
                           0.06, topk_length, sink=sink)
    reference.check_out(out, ref[0])
    reference.check_stat(lse, ref[1], "lse")
    reference.check_stat(max_logits, ref[2], "max_logits")


def _decode_workload(rng, d_qk, format, extra_format, b=3, s_q=2, h_q=8):
    main, k_main = make_pool(rng, format, d_qk, num_blocks=4, block_size=16)
    q = reference.bf16(rng.standard_normal((b, s_q, h_q, d_qk)))
    indices = make_indices(rng, b * s_q, 20, k_main.shape[0]).reshape(b, s_q, 20)
    w = dict(q=q, k_cache=main[:, :, None, :], indices=indices, k_main=k_main)
    if extra_format:
        extra, k_extra = make_pool(rng, extra_format, d_qk, num_blocks=2, block_size=8)
        w.update(extra_k_cache=extra[:, :, None, :], k_extra=k_extra,
                 extra_indices=make_indices(rng, b * s_q, 6, 16).reshape(b, s_q, 6))
    return w


def _decode_reference(w, scale, topk_length=None, extra_topk_length=None, sink=None):
    """The oracle on FlashMLA's decode shapes: per-request lengths repeat over s_q."""
    b, s_q, h_q, d_qk = w["q"].shape
    rep = (lambda x: None if x is None else np.repeat(x, s_q))
    extra = "extra_indices" in w
    out, lse, _ = reference.attend(
        w["q"].astype(np.float32).reshape(b * s_q, h_q, d_qk), w["k_main"],
        w["indices"].reshape(b * s_q, -1), scale, rep(topk_length),
        w.get("k_extra"), w["extra_indices"].reshape(b * s_q, -1) if extra else None,
        rep(extra_topk_length), sink)
    return out.reshape(b, s_q, h_q, 512), lse.reshape(b, s_q, h_q).transpose(0, 2, 1)


@pytest.mark.parametrize("d_qk,format,extra_format",
                         [(576, "fp8_v32", None), (576, "fp8_v32", "fp8_v32"),
                          (512, "fp8_ds_mla", "fp8_ds_mla")])
def test_with_kvcache_matches_oracle(rng, d_qk, format, extra_format):
    w = _decode_workload(rng, d_qk, format, extra_format)
    h_q = w["q"].shape[2]
    topk_length = np.array([20, 3, 11], np.int32)
    extra_topk_length = np.array([0, 6, 2], np.int32) if extra_format else None
    sink = rng.standard_normal(h_q).astype(np.float32)
    meta, none = get_mla_metadata()
    assert none is None

    out, lse = flash_mla_with_kvcache(
        w["q"], w["k_cache"], None, None, 512, meta, is_fp8_kvcache=True,
        indices=w["indices"], attn_sink=sink, extra_k_cache=w.get("extra_k_cache"),
        extra_indices_in_kvcache=w.get("extra_indices"), topk_length=topk_length,
        extra_topk_length=extra_topk_length)

    assert out.shape == (3, 2, h_q, 512) and lse.shape == (3, h_q, 2)
    # FlashMLA's lse layout: a transposed view of a contiguous [b, s_q, h_q].
    assert lse.swapaxes(1, 2).flags.c_contiguous
    ref_out, ref_lse = _decode_reference(w, d_qk ** -0.5, topk_length, extra_topk_length, sink)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")
    assert meta.have_initialized and meta.config.topk == 20 and meta.plan is not None


@pytest.mark.parametrize("format", ["bf16", "int8_ds_mla"])
def test_with_kvcache_explicit_format_and_scale(rng, format):
    d_qk = 512
    w = _decode_workload(rng, d_qk, format, None, s_q=1)
    out, lse = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, None,
                                      softmax_scale=0.02, indices=w["indices"], format=format)
    ref_out, ref_lse = _decode_reference(w, 0.02)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")


def test_metadata_reuse_and_misuse(rng):
    w = _decode_workload(rng, 576, "fp8_v32", None)
    # FlashMLA's current form with the old keywords (as rtp-llm calls it): cache_seqlens=None.
    meta, _ = get_mla_metadata(cache_seqlens=None, num_q_tokens_per_head_k=16, num_heads_k=1)
    args = dict(is_fp8_kvcache=True, indices=w["indices"])
    first, _ = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta, **args)
    plan = meta.plan
    again, _ = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta, **args)
    assert meta.plan is plan
    assert np.array_equal(first.view(np.uint16), again.view(np.uint16))

    with pytest.raises(ValueError, match="h_q"):
        flash_mla_with_kvcache(w["q"][:, :, :4], w["k_cache"], None, None, 512, meta, **args)
    with pytest.raises(ValueError, match="topk"):
        flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta,
                               is_fp8_kvcache=True, indices=w["indices"][..., :8])
    with pytest.raises(TypeError, match="tile_scheduler_metadata"):
        flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, object(), **args)
    assert isinstance(meta, FlashMLASchedMeta)

    # FlashMLA's schedule fields: callers test them, reset them to None for a fresh schedule
    # (the next call plans again, still held to the recorded shapes) or move them.
    assert meta.tile_scheduler_metadata is plan and meta.num_splits is plan
    meta.tile_scheduler_metadata, meta.num_splits = None, None
    assert meta.plan is None and meta.have_initialized
    flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta, **args)
    assert meta.plan is not None and meta.plan is not plan
    other, _ = get_mla_metadata()
    other.tile_scheduler_metadata = meta.tile_scheduler_metadata
    assert other.plan is meta.plan
    with pytest.raises(TypeError, match="num_splits"):
        meta.num_splits = np.zeros(4, np.int32)


def test_older_metadata_form(rng):
    """FlashMLA's older interface (sgl_kernel.flash_mla, SGLang's NSA backend): metadata
    arrays from cache_seqlens, passed back with num_splits, give the results of a call
    without metadata bit for bit."""
    w = _decode_workload(rng, 576, "fp8_v32", None)
    b, s_q, h_q = w["q"].shape[:3]
    cache_seqlens = np.full(b, 20, np.int32)
    tile_metadata, num_splits = get_mla_metadata(
        cache_seqlens=cache_seqlens, num_q_tokens_per_head_k=s_q * h_q, num_heads_k=1,
        num_heads_q=h_q, is_fp8_kvcache=True, topk=20)
    assert tile_metadata.dtype == num_splits.dtype == np.int32
    assert tile_metadata.shape == (1, 8) and num_splits.shape == (b + 1,)
    assert not tile_metadata.any() and not num_splits.any()
    assert get_mla_metadata(cache_seqlens, s_q * h_q, 1)[1].shape == (b + 1,)   # positional

    args = dict(is_fp8_kvcache=True, indices=w["indices"])
    out, lse = flash_mla_with_kvcache(w["q"], w["k_cache"], None, cache_seqlens, 512,
                                      tile_metadata, num_splits, **args)
    plain_out, plain_lse = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, None,
                                                  **args)
    assert np.array_equal(out.view(np.uint16), plain_out.view(np.uint16))
    assert np.array_equal(lse, plain_lse, equal_nan=True)
    ref_out, ref_lse = _decode_reference(w, 576 ** -0.5)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")

    call = (lambda tile, splits: flash_mla_with_kvcache(
        w["q"], w["k_cache"], None, cache_seqlens, 512, tile, splits, **args))
    # A caller of FlashMLA's current interface that still passes the old arguments gets the
    # arrays and passes num_splits=None beside them: taken, as FlashMLA takes its object.
    tile_only, _ = get_mla_metadata(cache_seqlens, s_q * h_q, 1)
    alone, lse_alone = call(tile_only, None)
    assert np.array_equal(out.view(np.uint16), alone.view(np.uint16))
    assert np.array_equal(lse, lse_alone, equal_nan=True)
    with pytest.raises(ValueError, match=r"num_splits: expected None or the \[batch \+ 1\]"):
        call(tile_metadata, num_splits[:-1])
    with pytest.raises(ValueError, match="num_splits: must be None"):
        call(get_mla_metadata()[0], num_splits)
    with pytest.raises(ValueError, match=r"tile_scheduler_metadata: expected \[num_sm_parts, 8\]"):
        call(tile_metadata[:, :4], num_splits)
    with pytest.raises(ValueError, match="cache_seqlens"):
        get_mla_metadata(np.zeros((b, 1), np.int32))
    with pytest.raises(ValueError, match="cache_seqlens: .* got int"):
        get_mla_metadata(3)


def test_mtp_positions_run_as_one_attend(rng, monkeypatch):
    """s_q > 1 (MTP): the b * s_q query tokens are one attend, request i's position j its
    token i * s_q + j, each request's lengths repeated over its positions; q and indices
    whose batch and position axes do not merge into a view are copied, with the same
    results."""
    w = _decode_workload(rng, 512, "fp8_ds_mla", "fp8_ds_mla", b=3, s_q=3)
    b, s_q, h_q = w["q"].shape[:3]
    topk_length = np.array([20, 1, 9], np.int32)
    extra_topk_length = np.array([4, 0, 6], np.int32)
    calls = []
    run_attend = smla._sparse.run_attend
    monkeypatch.setattr(smla._sparse, "run_attend",
                        lambda q, *a, **kw: calls.append(q.shape) or run_attend(q, *a, **kw))

    def decode(q, indices, extra_indices):
        return flash_mla_with_kvcache(
            q, w["k_cache"], None, None, 512, None, is_fp8_kvcache=True, indices=indices,
            extra_k_cache=w["extra_k_cache"], extra_indices_in_kvcache=extra_indices,
            topk_length=topk_length, extra_topk_length=extra_topk_length)

    out, lse = decode(w["q"], w["indices"], w["extra_indices"])
    assert calls == [(b * s_q, h_q, 512)]
    ref_out, ref_lse = _decode_reference(w, 512 ** -0.5, topk_length, extra_topk_length)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")

    # Position-major storage: [b, s_q] views whose axes merge only by a copy.
    swapped = [np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
               for a in (w["q"], w["indices"], w["extra_indices"])]
    assert not swapped[0].flags.c_contiguous
    again, lse_again = decode(*swapped)
    assert np.array_equal(out.view(np.uint16), again.view(np.uint16))
    assert np.array_equal(lse, lse_again)

    with pytest.raises(ValueError, match=r"topk_length: expected \[batch\] = \[3\]"):
        flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, None,
                               is_fp8_kvcache=True, indices=w["indices"],
                               topk_length=np.repeat(topk_length, s_q))


def test_failed_first_call_leaves_the_metadata_empty(rng):
    w = _decode_workload(rng, 576, "fp8_v32", None)
    meta, _ = get_mla_metadata()
    with pytest.raises(ValueError, match="indices"):
        flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta, is_fp8_kvcache=True,
                               indices=w["indices"].astype(np.int64))
    assert not meta.have_initialized and meta.config is None and meta.plan is None
    out, _ = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, meta,
                                    is_fp8_kvcache=True, indices=w["indices"][..., :8])
    assert meta.config.topk == 8 and out.shape == (3, 2, 8, 512)


def test_with_kvcache_argument_errors(rng):
    w = _decode_workload(rng, 576, "fp8_v32", None)
    q, cache, idx = w["q"], w["k_cache"], w["indices"]
    call = (lambda **kw: flash_mla_with_kvcache(q, kw.pop("k_cache", cache), None, None,
                                                kw.pop("head_dim_v", 512), None, **kw))
    with pytest.raises(NotImplementedError, match="indices"):
        call(is_fp8_kvcache=True)                                   # dense mode
    with pytest.raises(smla.SmlaError):
        call(is_fp8_kvcache=True)
    with pytest.raises(ValueError, match="num_splits"):
        call(is_fp8_kvcache=True, indices=idx, num_splits=4)
    with pytest.raises(ValueError, match="causal"):
        call(is_fp8_kvcache=True, indices=idx, causal=True)
    with pytest.raises(ValueError, match="head_dim_v"):
        call(is_fp8_kvcache=True, indices=idx, head_dim_v=256)
    with pytest.raises(ValueError, match="is_fp8_kvcache"):
        call(is_fp8_kvcache=False, indices=idx)
    with pytest.raises(ValueError, match=r"^q: expected d_qk"):   # not blamed on k_cache
        flash_mla_with_kvcache(q[..., :128], cache, None, None, 512, None, is_fp8_kvcache=True,
                               indices=idx)
    with pytest.raises(ValueError, match="k_cache.*format="):
        call(is_fp8_kvcache=True, indices=idx, k_cache=cache[..., :600])
    with pytest.raises(ValueError, match="extra_indices_in_kvcache: given without"):
        call(is_fp8_kvcache=True, indices=idx, extra_indices_in_kvcache=idx)
    with pytest.raises(ValueError, match="extra_topk_length: given without"):
        call(is_fp8_kvcache=True, indices=idx, extra_topk_length=np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="extra_indices_in_kvcache"):
        call(is_fp8_kvcache=True, indices=idx, extra_k_cache=cache)
    with pytest.raises(ValueError, match="indices"):
        call(is_fp8_kvcache=True, indices=idx[:, :1])
    with pytest.raises(ValueError, match="q"):
        flash_mla_with_kvcache(q[0], cache, None, None, 512, None, is_fp8_kvcache=True,
                               indices=idx)


def test_with_kvcache_names_the_v41_layout(rng):
    # 528 bytes per token is int8_ds_mla and FlashMLA's DeepSeek-V4.1 fp8 layout alike: with
    # is_fp8_kvcache=True the caller holds the latter, which smla does not read yet.
    w = _decode_workload(rng, 512, "int8_ds_mla", None)
    with pytest.raises(NotImplementedError, match="V4.1"):
        flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, None,
                               is_fp8_kvcache=True, indices=w["indices"])
    out, _ = flash_mla_with_kvcache(w["q"], w["k_cache"], None, None, 512, None,
                                    is_fp8_kvcache=False, indices=w["indices"])
    assert out.shape == (3, 2, 8, 512)


def test_sparse_fwd_argument_errors(rng):
    q = make_q(rng, 2, 4, 576)
    kv = make_rows(rng, 8, 576)[:, None, :]
    idx = make_indices(rng, 2, 6, 8)[:, None, :]
    with pytest.raises(ValueError, match="d_v"):
        flash_mla_sparse_fwd(q, kv, idx, 0.1, d_v=256)
    with pytest.raises(ValueError, match="kv"):
        flash_mla_sparse_fwd(q, np.repeat(kv, 2, axis=1), idx, 0.1)
    with pytest.raises(ValueError, match="indices"):
        flash_mla_sparse_fwd(q, kv, idx[:, 0], 0.1)
    with pytest.raises(ValueError, match="topk_length"):
        flash_mla_sparse_fwd(q, kv, idx, 0.1, topk_length=np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="sink"):
        flash_mla_sparse_fwd(q, kv, idx, 0.1, attn_sink=np.zeros(4, np.float64))


def test_sparse_fwd_indexer_topk(rng):
    """FlashMLA's eighth parameter: 0, by position or keyword, is the plain call; a positive
    value (FlashMLA's lse_indexer output) is refused before anything runs."""
    q = make_q(rng, 2, 4, 576)
    kv = make_rows(rng, 8, 576)[:, None, :]
    idx = make_indices(rng, 2, 6, 8)[:, None, :]
    plain = flash_mla_sparse_fwd(q, kv, idx, 0.1)
    for given in (flash_mla_sparse_fwd(q, kv, idx, 0.1, 512, None, None, 0),
                  flash_mla_sparse_fwd(q, kv, idx, 0.1, indexer_topk=0)):
        assert len(given) == 3
        for a, b in zip(given, plain):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(NotImplementedError, match="indexer_topk: 512"):
        flash_mla_sparse_fwd(q, kv, idx, 0.1, indexer_topk=512)


def test_package_works_without_torch():
    """With torch unimportable, smla and smla.flash_mla import and run on NumPy arrays."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['torch'] = None\n"
            "import numpy as np, smla, smla.flash_mla as fm\n"
            "assert fm._torch_ops is None\n"
            "q = np.zeros((1, 1, 2, 576), np.uint16)\n"
            "cache = np.zeros((1, 4, 1, 656), np.uint8)\n"
            "idx = np.array([[[0, -1]]], np.int32)\n"
            "out, lse = fm.flash_mla_with_kvcache(q, cache, None, None, 512, None,\n"
            "                                    is_fp8_kvcache=True, indices=idx)\n"
            "assert out.shape == (1, 1, 2, 512) and lse.shape == (1, 2, 1)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
