"""Bad input (SPEC §5) through the Python package: each failure is the Python exception of
its status code, its message names the argument, and a failed call writes nothing."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="NumPy has no bfloat16 without ml_dtypes")

import smla  # noqa: E402
from workloads import make_indices, make_pool, make_q, make_rows  # noqa: E402
from smla import _errors  # noqa: E402


def test_exception_classes_follow_status_codes():
    assert issubclass(smla.InvalidArgumentError, ValueError)
    assert issubclass(smla.NotBuiltError, NotImplementedError)
    assert issubclass(smla.UnsupportedError, NotImplementedError)
    for cls in (smla.InvalidArgumentError, smla.NotBuiltError, smla.UnsupportedError,
                smla.CudaError, smla.InternalError):
        assert issubclass(cls, smla.SmlaError) and issubclass(cls, RuntimeError)
    assert [_errors.error_class(c) for c in (1, 2, 3, 4, 5)] == [
        smla.InvalidArgumentError, smla.NotBuiltError, smla.UnsupportedError, smla.CudaError,
        smla.InternalError]


@pytest.fixture
def good(rng):
    cache, keys = make_pool(rng, "fp8_v32", 576, num_blocks=2, block_size=8)
    return dict(q=make_q(rng, 3, 4, 576), kv=cache, indices=make_indices(rng, 3, 8, 16))


def _bad_attend_cases(good):
    q, kv, idx = good["q"], good["kv"], good["indices"]
    f32 = np.zeros
    return {
        # name in message: (args, kwargs)
        "q-dtype": ("q", (q.astype(np.float32), kv, idx), {}),
        "q-rank": ("q", (q[0], kv, idx), {}),
        "q-stride": ("q", (np.repeat(q, 2, axis=2)[:, :, ::2], kv, idx), {}),
        "indices-dtype": ("indices: dtype int64", (q, kv, idx.astype(np.int64)), {}),
        "indices-rows": ("indices", (q, kv, idx[:2]), {}),
        "lengths-shape": ("lengths", (q, kv, idx), {"lengths": np.zeros(2, np.int32)}),
        "lengths-dtype": ("lengths", (q, kv, idx), {"lengths": f32(3, np.float32)}),
        "sink-shape": ("sink", (q, kv, idx), {"sink": f32(5, np.float32)}),
        "kv-format-d_qk": ("kv", (q, kv, idx), {"format": "fp8_ds_mla"}),
        "kv-unknown-format": ("kv", (q, kv, idx), {"format": "fp4"}),
        "kv-token-bytes": ("kv", (q, kv[..., :600], idx), {"format": "fp8_v32"}),
        "kv-inferred": ("kv", (q, kv[..., :600], idx), {}),
        "kv-heads": ("kv", (q, np.stack([kv, kv], axis=2), idx), {}),
        "kv-scales": ("kv", (q, kv, idx), {"kv_scales": f32((2, 8), np.float32)}),
        "kv-rank": ("kv", (q, kv.reshape(16, 656), idx), {"format": "fp8_v32"}),
        "kv-last-stride": ("kv", (q, np.repeat(kv, 2, axis=2)[..., ::2], idx), {}),
        "kv-unpacked-tokens": ("kv", (q, np.repeat(kv, 2, axis=1)[:, ::2], idx), {}),
        "extra_indices-alone": ("extra_indices", (q, kv, idx),
                                {"extra_kv": kv, "extra_indices": None}),
        "extra_format-alone": ("extra_format", (q, kv, idx), {"extra_format": "bf16"}),
        "extra_kv_scales-alone": ("extra_kv_scales", (q, kv, idx),
                                  {"extra_kv_scales": f32((2, 8), np.float32)}),
        "out-shape": ("out", (q, kv, idx), {"out": f32((3, 4, 256), np.uint16)}),
        "lse-dtype": ("lse", (q, kv, idx), {"lse": f32((3, 4), np.int32)}),
        "max_logits-shape": ("max_logits", (q, kv, idx), {"max_logits": f32((4, 3), np.float32)}),
        # a wrong q width is q's error, not the cache's whose format it would be inferred from
        "q-width": ("q", (q[..., :128], kv, idx), {}),
        "q-0d": ("q", (np.zeros((), np.uint16), kv, idx), {}),
        # an 8-bit float other than e4m3fn (vLLM has e5m2 caches) and bool are not cache bytes
        "kv-e5m2": ("kv", (q, kv.view(ml_dtypes.float8_e5m2), idx), {}),
        "kv-bool": ("kv", (q, kv.view(np.bool_), idx), {"format": "fp8_v32"}),
    }


@pytest.mark.parametrize("case", list(_bad_attend_cases({"q": np.zeros((3, 4, 576), np.uint16),
                                                          "kv": np.zeros((2, 8, 656), np.uint8),
                                                          "indices": np.zeros((3, 8), np.int32)})))
def test_attend_rejects_bad_argument_by_name(good, case):
    name, args, kwargs = _bad_attend_cases(good)[case]
    with pytest.raises(ValueError, match=rf"\b{name}\b") as info:
        smla.attend(*args, 0.1, **kwargs)
    assert isinstance(info.value, smla.InvalidArgumentError)


def test_failed_call_writes_nothing(good):
    out = np.full((3, 4, 512), 0x7777, np.uint16)
    lse = np.full((3, 4), 42.0, np.float32)
    with pytest.raises(ValueError):
        smla.attend(good["q"], good["kv"], good["indices"], 0.1, out=out, lse=lse,
                    sink=np.zeros(7, np.float32))
    assert np.all(out == 0x7777) and np.all(lse == 42.0)

    cache = np.full((1, 4, 656), 9, np.uint8)
    with pytest.raises(ValueError, match="slots"):
        smla.write_cache(make_rows(np.random.default_rng(0), 2, 576),
                         np.zeros(3, np.int32), cache)
    assert np.all(cache == 9)


def test_read_only_outputs_and_foreign_byte_order_are_named(good):
    out = np.zeros((3, 4, 512), np.uint16)
    lse = np.zeros((3, 4), np.float32)
    for array in (out, lse):
        array.flags.writeable = False
    with pytest.raises(ValueError, match=r"\bout\b.*read-only"):
        smla.attend(good["q"], good["kv"], good["indices"], 0.1, out=out)
    with pytest.raises(ValueError, match=r"\blse\b.*read-only"):
        smla.attend(good["q"], good["kv"], good["indices"], 0.1, lse=lse)
    big_endian = good["indices"].astype(">i4")
    with pytest.raises(ValueError, match=r"\bindices\b.*byte order"):
        smla.attend(good["q"], good["kv"], big_endian, 0.1)
    cache = good["kv"].copy()
    cache.flags.writeable = False
    with pytest.raises(ValueError, match=r"\bcache\b.*read-only"):
        smla.write_cache(make_rows(np.random.default_rng(0), 1, 576), np.zeros(1, np.int32),
                         cache)


def test_format_op_errors(rng):
    rows = make_rows(rng, 4, 576)
    with pytest.raises(ValueError, match="format"):
        smla.quantize(rows, "fp8_ds_mla")                   # holds d_qk 512 only
    with pytest.raises(ValueError, match="rows"):
        smla.quantize(rows.astype(np.float32), "fp8_v32")
    with pytest.raises(ValueError, match="rows"):
        smla.quantize(rows, "fp8_v32", cache=np.zeros((1, 2, 656), np.uint8))   # 4 > 2 slots
    with pytest.raises(ValueError, match="cache_scales"):
        smla.quantize(make_rows(rng, 2, 512), "int8_ds_mla", cache=np.zeros((1, 2, 512), np.int8),
                      cache_scales=np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match="cache"):
        smla.dequantize(np.zeros((1, 2, 100), np.uint8), "fp8_v32")
    with pytest.raises(ValueError, match="slots"):
        smla.write_cache(rows, np.zeros(4, np.int64), np.zeros((1, 4, 656), np.uint8))
    with pytest.raises(ValueError, match="partial_lse"):
        smla.combine(np.zeros((2, 3, 4, 512), np.float32), np.zeros((2, 3, 5), np.float32))
    with pytest.raises(ValueError, match="^partial_out"):       # not blamed on lse
        smla.combine(np.zeros(512, np.float32), np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="block_size"):
        smla.quantize(rows, "fp8_v32", block_size=0)
    with pytest.raises(ValueError, match="block_size"):
        smla.quantize(rows, "fp8_v32", block_size=2.5)
    with pytest.raises(ValueError, match="block_size"):
        smla.quantize(rows, "fp8_v32", block_size=True)
    with pytest.raises(ValueError, match="num_rows"):
        smla.dequantize(np.zeros((1, 2, 656), np.uint8), "fp8_v32", num_rows=-1)
    with pytest.raises(ValueError, match=r"\brows\b"):
        smla.write_cache(rows[:, :128], np.zeros(4, np.int32), np.zeros((1, 4, 656), np.uint8))
    with pytest.raises(TypeError, match="stream"):
        smla.attend(make_q(rng, 1, 1, 576), np.zeros((1, 1, 656), np.uint8),
                    np.zeros((1, 1), np.int32), 1.0, stream="default")


def test_build_information():
    import importlib.metadata
    assert smla.__version__ == importlib.metadata.version("smla")
    if smla.compiled_cuda_architectures() == "":
        assert smla.cuda_device_count() == 0


def test_empty_calls_take_numpy_2_empty_arrays(rng):
    # NumPy 2 gives every stride of a fresh empty array the value 0 (an empty array has no
    # element to load, so no stride rule applies); smla's own outputs are such arrays.
    zero_strides = (lambda shape, dtype: np.lib.stride_tricks.as_strided(
        np.zeros(1, dtype), shape, (0,) * len(shape)))
    rows = zero_strides((0, 576), ml_dtypes.bfloat16)
    cache = np.full((1, 4, 656), 9, np.uint8)
    smla.write_cache(rows, zero_strides((0,), np.int32), cache)
    assert np.all(cache == 9)
    assert smla.quantize(rows, "fp8_v32").shape == (0, 64, 656)
    assert smla.dequantize(cache, "fp8_v32", num_rows=0).shape == (0, 576)
    good, _ = make_pool(rng, "fp8_v32", 576, num_blocks=2, block_size=8)
    out, lse, _ = smla.attend(zero_strides((0, 4, 576), ml_dtypes.bfloat16), good,
                              zero_strides((0, 8), np.int32), 0.1)
    assert out.shape == (0, 4, 512) and lse.shape == (0, 4)
