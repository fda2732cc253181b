"""smla.attend and smla.combine on the CPU backend against the NumPy oracle (SPEC §1, §3.3)."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes", reason="NumPy has no bfloat16 without ml_dtypes")

import reference  # noqa: E402
import smla  # noqa: E402
from workloads import FORMATS_BY_D_QK, make_indices, make_pool, make_q  # noqa: E402


@pytest.mark.parametrize("format,d_qk", FORMATS_BY_D_QK)
@pytest.mark.parametrize("with_lengths", [False, True])
def test_attend_matches_oracle(rng, format, d_qk, with_lengths):
    t_count, h_q, k = 5, 8, 24
    cache, keys = make_pool(rng, format, d_qk, num_blocks=6, block_size=16)
    q = make_q(rng, t_count, h_q, d_qk)
    idx = make_indices(rng, t_count, k, keys.shape[0])
    lengths = np.array([24, 0, 7, 30, 13], np.int32) if with_lengths else None
    scale = d_qk ** -0.5

    out, lse, max_logits = smla.attend(q, cache, idx, scale, lengths=lengths)

    assert out.shape == (t_count, h_q, 512) and out.dtype == reference.BF16
    assert lse.shape == max_logits.shape == (t_count, h_q) and lse.dtype == np.float32
    ref_out, ref_lse, ref_max = reference.attend(q.astype(np.float32), keys, idx, scale,
                                                 lengths)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")
    reference.check_stat(max_logits, ref_max, "max_logits")


@pytest.mark.parametrize("d_qk,main_format,extra_format",
                         [(576, "fp8_v32", "bf16"), (512, "fp8_ds_mla", "int8_ds_mla")])
def test_attend_extra_pool_sink_and_lengths(rng, d_qk, main_format, extra_format):
    t_count, h_q = 4, 16
    main, k_main = make_pool(rng, main_format, d_qk, num_blocks=4, block_size=8)
    extra, k_extra = make_pool(rng, extra_format, d_qk, num_blocks=3, block_size=4)
    q = make_q(rng, t_count, h_q, d_qk)
    idx = make_indices(rng, t_count, 16, k_main.shape[0])
    idx_x = make_indices(rng, t_count, 8, k_extra.shape[0])
    lengths = np.array([16, 3, 0, 9], np.int32)
    lengths_x = np.array([0, 8, 5, 100], np.int32)
    sink = rng.standard_normal(h_q).astype(np.float32)
    sink[0] = np.inf
    scale = 0.1

    out, lse, max_logits = smla.attend(q, main, idx, scale, lengths=lengths, extra_kv=extra,
                                       extra_indices=idx_x, extra_lengths=lengths_x, sink=sink)

    ref = reference.attend(q.astype(np.float32), k_main, idx, scale, lengths, k_extra, idx_x,
                           lengths_x, sink)
    reference.check_out(out, ref[0])
    reference.check_stat(lse, ref[1], "lse")
    reference.check_stat(max_logits, ref[2], "max_logits")
    assert not np.asarray(out, np.float32)[:, 0].any(), "sink = +inf must zero the head"


def test_token_without_valid_entry(rng):
    cache, _ = make_pool(rng, "bf16", 576, num_blocks=2, block_size=4)
    q = make_q(rng, 2, 4, 576)
    idx = np.array([[-1, 8, 99], [-3, -1, 1000]], np.int32)
    out, lse, max_logits = smla.attend(q, cache, idx, 1.0)
    assert not np.asarray(out, np.float32).any()
    assert np.all(lse == np.inf) and np.all(max_logits == -np.inf)


def test_uint16_bf16_bits_and_given_strided_outputs(rng):
    """NumPy callers without ml_dtypes pass bf16 bits as uint16; outputs may be strided
    views, e.g. lse written through a transposed buffer."""
    cache, keys = make_pool(rng, "fp8_v32", 576, num_blocks=2, block_size=8)
    q = make_q(rng, 3, 4, 576)
    idx = make_indices(rng, 3, 8, keys.shape[0])
    out = np.zeros((3, 4, 512), np.uint16)
    lse_t = np.zeros((4, 3), np.float32)          # [h_q, T]; lse is its transpose

    got, lse, _ = smla.attend(q.view(np.uint16), cache, idx, 0.05, out=out, lse=lse_t.T)

    assert got is out and lse.base is lse_t
    ref = reference.attend(q.astype(np.float32), keys, idx, 0.05)
    reference.check_out(out.view(reference.BF16), ref[0])
    reference.check_stat(lse_t.T, ref[1], "lse")


def test_strided_q_and_padded_blocks(rng):
    """q with a head stride wider than d_qk, and a cache whose blocks are padded (a view into
    a larger buffer), run without copies."""
    d_qk = 512
    cache, keys = make_pool(rng, "fp8_ds_mla", d_qk, num_blocks=3, block_size=8)
    padded = np.zeros((3, 8 * 584 + 64), np.uint8)
    padded[:, :8 * 584] = cache.reshape(3, -1)
    view = padded[:, :8 * 584].reshape(3, 8, 584)     # block stride 8*584 + 64 bytes
    wide = make_q(rng, 2, 4, d_qk + 64)
    q = wide[:, :, :d_qk]
    idx = make_indices(rng, 2, 12, keys.shape[0])

    out, lse, _ = smla.attend(q, view, idx, 0.07)

    ref = reference.attend(q.astype(np.float32), keys, idx, 0.07)
    reference.check_out(out, ref[0])
    reference.check_stat(lse, ref[1], "lse")


def test_same_inputs_give_bitwise_same_outputs(rng):
    cache, keys = make_pool(rng, "fp8_v32", 576, num_blocks=4, block_size=8)
    q = make_q(rng, 3, 8, 576)
    idx = make_indices(rng, 3, 20, keys.shape[0])
    first = smla.attend(q, cache, idx, 0.04)
    second = smla.attend(q, cache, idx, 0.04)
    for a, b in zip(first, second):
        assert np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


def test_plan_on_cpu_is_accepted(rng):
    cache, keys = make_pool(rng, "bf16", 512, num_blocks=2, block_size=8)
    q = make_q(rng, 2, 4, 512)
    idx = make_indices(rng, 2, 8, keys.shape[0])
    plan = smla.plan(q, cache, idx, 0.1)
    assert plan.buffer is None and plan.core.bytes == 0
    out, lse, _ = smla.attend(q, cache, idx, 0.1, plan=plan)
    ref = reference.attend(q.astype(np.float32), keys, idx, 0.1)
    reference.check_out(out, ref[0])


@pytest.mark.parametrize("partial_dtype", [np.float32, reference.BF16])
def test_combine_matches_oracle(rng, partial_dtype):
    s, t_count, h_q = 3, 4, 8
    partial_out = rng.standard_normal((s, t_count, h_q, 512)).astype(partial_dtype)
    partial_lse = rng.standard_normal((s, t_count, h_q)).astype(np.float32) * 3
    partial_lse[0, 0] = np.inf                 # attend's "no valid entry": weight 0
    partial_lse[1, 1] = -np.inf
    partial_lse[:, 2, 0] = np.inf              # every partial empty: out 0, lse +inf
    sink = rng.standard_normal(h_q).astype(np.float32)

    out, lse = smla.combine(partial_out, partial_lse, sink=sink)

    ref_out, ref_lse = reference.combine(partial_out.astype(np.float32), partial_lse, sink)
    reference.check_out(out, ref_out)
    reference.check_stat(lse, ref_lse, "lse")
