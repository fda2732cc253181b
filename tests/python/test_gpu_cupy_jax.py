"""The DLPack claim on the GPU for CuPy and JAX: smla's generic ops and smla.flash_mla on
CuPy / JAX device arrays against the NumPy oracle (reference.py), and the streams they run
on.

CuPy has no bfloat16: bf16 travels as uint16 arrays of bf16 bits (outputs come back the
same way). CuPy calls run on CuPy's current stream. JAX arrays are bf16 natively; JAX work
runs on streams smla cannot see, so smla waits for each call on the host before returning
(docs/python.md).

Each framework skips visibly when it is not importable, has no CUDA device, or smla is a
CPU-only build. SMLA_TEST_JAX_PLATFORM=cpu runs the JAX tests on JAX's CPU arrays instead
(the CPU reference backend), for machines without a GPU.
"""

from __future__ import annotations

import os

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes", reason="the NumPy oracle needs ml_dtypes")

import reference  # noqa: E402
import smla  # noqa: E402
from smla.flash_mla import (  # noqa: E402
    flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata)
from workloads import make_indices, make_pool, make_q, make_rows, spec_payload  # noqa: E402

BF16 = reference.BF16
JAX_PLATFORM = os.environ.get("SMLA_TEST_JAX_PLATFORM", "gpu")
# JAX must not take most of the GPU's memory at its first use: CuPy and torch tests share it.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def _bits(a):
    """A NumPy bf16 array as uint16 bf16 bits (CuPy's way of holding bf16)."""
    return np.ascontiguousarray(a).view(np.uint16)


def _bf16_of_bits(a):
    return np.ascontiguousarray(a).view(BF16)


def _check_attention(got, ref, names=("out", "lse", "max_logits")):
    for value, expected, name in zip(got, ref, names):
        if name == "out":
            reference.check_out(value, expected)
        else:
            reference.check_stat(value, expected, name)


# ---------------------------------------------------------------------------------------------
# CuPy
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cp():
    try:
        import cupy
    except Exception as error:  # noqa: BLE001 - any import failure means "no CuPy here"
        pytest.skip(f"cupy is not importable: {error}")
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"cupy has no CUDA device: {error}")
    if devices == 0:
        pytest.skip("cupy has no CUDA device")
    if smla.cuda_device_count() == 0:
        pytest.skip("smla is a CPU-only build (or sees no GPU)")
    return cupy


def _copy_behind_busy_work(cp, stream, src):
    """A copy of ``src`` made on ``stream`` behind some milliseconds of device-to-device
    copies, and zero until then: work after it on the same stream sees ``src``, work on
    another non-blocking stream (most likely) zeros. Plain memcpy/memset only, so no
    CuPy kernel (and no NVRTC) is needed."""
    with stream:
        dst = cp.zeros_like(src)
        a = cp.empty(1 << 29, cp.uint8)
        b = cp.empty(1 << 29, cp.uint8)
        for _ in range(30):
            b.data.copy_from_device_async(a.data, a.nbytes, stream)
            a, b = b, a
        dst.data.copy_from_device_async(src.data, src.nbytes, stream)
    return dst


@pytest.mark.parametrize("format,d_qk", [("bf16", 576), ("fp8_v32", 576), ("fp8_ds_mla", 512),
                                         ("int8_ds_mla", 512)])
def test_cupy_quantize_dequantize_write_cache(cp, rng, format, d_qk):
    block_size = 16
    rows = make_rows(rng, 3 * block_size, d_qk)
    rows_dev = cp.asarray(_bits(rows))

    cache = smla.quantize(rows_dev, format, block_size=block_size)

    assert isinstance(cache, cp.ndarray) and cache.dtype == cp.uint8
    expected = reference.quantize_cache(rows, format, block_size)
    assert np.array_equal(spec_payload(cp.asnumpy(cache), format, block_size),
                          spec_payload(expected, format, block_size))

    back = smla.dequantize(cache, format)
    assert isinstance(back, cp.ndarray) and back.dtype == cp.uint16
    assert back.shape == (3 * block_size, d_qk)
    assert np.array_equal(_bf16_of_bits(cp.asnumpy(back)).astype(np.float32),
                          reference.dequantize_cache(expected, format, d_qk))

    # write_cache: given slots written, -1 and out-of-range (= slots) skipped, rest untouched.
    target = cp.zeros((3, block_size, expected.shape[-1]), cp.uint8)
    slots = cp.asarray(np.array([20, -1, 0, 47, 48], np.int32))
    assert smla.write_cache(rows_dev[:5], slots, target, format) is target
    keys = reference.dequantize_cache(cp.asnumpy(target), format, d_qk)
    written = {20: 0, 0: 2, 47: 3}
    for slot, row in written.items():
        one = reference.quantize_cache(rows[row:row + 1], format, 1)
        assert np.array_equal(keys[slot], reference.dequantize_cache(one, format, d_qk)[0])
    untouched = [s for s in range(3 * block_size) if s not in written]
    assert not keys[untouched].any()


# Pool pairs of the default kernel preset (same format in both pools; mixed pairs need
# -DSMLA_KERNEL_PRESET=all).
ATTEND_CASES = [(576, "fp8_v32", "fp8_v32"), (512, "fp8_ds_mla", "fp8_ds_mla")]


class AttendInputs:
    """Host inputs of one attend with every optional argument (6 tokens, 64 heads, both
    pools, lengths including 0 and past k, a sink) and its float64 reference."""

    def __init__(self, rng, d_qk, main_format, extra_format):
        self.t_count, self.h_q = 6, 64
        self.main, k_main = make_pool(rng, main_format, d_qk, num_blocks=4, block_size=64)
        self.extra, k_extra = make_pool(rng, extra_format, d_qk, num_blocks=2, block_size=64)
        self.q = make_q(rng, self.t_count, self.h_q, d_qk)
        self.idx = make_indices(rng, self.t_count, 96, k_main.shape[0])
        self.idx_x = make_indices(rng, self.t_count, 32, k_extra.shape[0])
        self.lengths = np.array([96, 0, 40, 200, 1, 77], np.int32)
        self.lengths_x = np.array([32, 5, 0, 32, 17, 9], np.int32)
        self.sink = rng.standard_normal(self.h_q).astype(np.float32)
        self.scale = d_qk ** -0.5
        self.ref = reference.attend(self.q.astype(np.float32), k_main, self.idx, self.scale,
                                    self.lengths, k_extra, self.idx_x, self.lengths_x,
                                    self.sink)

    def rest(self):
        """The arrays after q, in smla.attend's order: kv, indices, lengths, extra_kv,
        extra_indices, extra_lengths, sink."""
        return (self.main, self.idx, self.lengths, self.extra, self.idx_x, self.lengths_x,
                self.sink)


@pytest.mark.parametrize("d_qk,main_format,extra_format", ATTEND_CASES)
def test_cupy_attend_on_the_current_stream(cp, rng, d_qk, main_format, extra_format):
    """attend with every optional input, inside ``with stream:``: q is written on that
    stream behind milliseconds of work, so an attend on any other stream would read it
    before it is written."""
    x = AttendInputs(rng, d_qk, main_format, extra_format)
    t_count, h_q, scale = x.t_count, x.h_q, x.scale
    args = [cp.asarray(a) for a in x.rest()]
    q_src = cp.asarray(_bits(x.q))
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    q_dev = _copy_behind_busy_work(cp, stream, q_src)
    with stream:
        out, lse, max_logits = smla.attend(
            q_dev, args[0], args[1], scale, lengths=args[2], extra_kv=args[3],
            extra_indices=args[4], extra_lengths=args[5], sink=args[6])
    stream.synchronize()

    assert isinstance(out, cp.ndarray) and out.dtype == cp.uint16   # bf16 bits, like q
    assert out.shape == (t_count, h_q, 512) and lse.dtype == cp.float32
    _check_attention((_bf16_of_bits(cp.asnumpy(out)), cp.asnumpy(lse),
                      cp.asnumpy(max_logits)), x.ref)

    # A plan made on the same stream and reused gives the same bits.
    with stream:
        plan = smla.plan(q_dev, args[0], args[1], scale, lengths=args[2], extra_kv=args[3],
                         extra_indices=args[4], extra_lengths=args[5], sink=args[6])
        again = smla.attend(q_dev, args[0], args[1], scale, lengths=args[2], extra_kv=args[3],
                            extra_indices=args[4], extra_lengths=args[5], sink=args[6],
                            plan=plan)
    stream.synchronize()
    for a, b in zip((out, lse, max_logits), again):
        assert np.array_equal(cp.asnumpy(a), cp.asnumpy(b))


def test_cupy_explicit_stream_object(cp, rng):
    """stream= takes a CuPy stream: quantize runs behind the work already on it."""
    rows = make_rows(rng, 64, 576)
    rows_src = cp.asarray(_bits(rows))
    cache = cp.zeros((1, 64, 656), cp.uint8)
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    rows_dev = _copy_behind_busy_work(cp, stream, rows_src)
    smla.quantize(rows_dev, "fp8_v32", cache=cache, stream=stream)   # called outside `with`
    stream.synchronize()
    assert np.array_equal(cp.asnumpy(cache), reference.quantize_cache(rows, "fp8_v32", 64))


def test_cupy_combine(cp, rng):
    s, t_count, h_q = 3, 5, 16
    partial_out = rng.standard_normal((s, t_count, h_q, 512)).astype(np.float32)
    partial_lse = (rng.standard_normal((s, t_count, h_q)) * 3).astype(np.float32)
    partial_lse[0, 0] = -np.inf            # an empty partial
    partial_lse[:, 1] = -np.inf            # a token with nothing at all
    partial_lse[2, 2] = np.inf             # +inf also holds nothing (SPEC §3.3)
    sink = rng.standard_normal(h_q).astype(np.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        out, lse = smla.combine(cp.asarray(partial_out), cp.asarray(partial_lse),
                                sink=cp.asarray(sink))
    stream.synchronize()
    assert out.dtype == cp.uint16 and out.shape == (t_count, h_q, 512)
    ref_out, ref_lse = reference.combine(partial_out, partial_lse, sink)
    reference.check_out(_bf16_of_bits(cp.asnumpy(out)), ref_out)
    reference.check_stat(cp.asnumpy(lse), ref_lse, "lse")


def test_cupy_flash_mla_with_kvcache(cp, rng):
    """MTP decode (s_q = 2) on stream= given outside `with`, its lengths written on that
    stream behind busy work: the lengths' repetition per position (a CuPy op of the call)
    runs on that stream too, or it would read zeros."""
    b, s_q, h_q, d_qk = 3, 2, 64, 512
    cache, keys = make_pool(rng, "fp8_ds_mla", d_qk, num_blocks=4, block_size=64)
    q = make_q(rng, b * s_q, h_q, d_qk)
    idx = make_indices(rng, b * s_q, 128, keys.shape[0])
    lengths = np.array([128, 3, 60], np.int32)
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    lengths_dev = _copy_behind_busy_work(cp, stream, cp.asarray(lengths))
    out, lse = flash_mla_with_kvcache(
        cp.asarray(_bits(q)).reshape(b, s_q, h_q, d_qk), cp.asarray(cache)[:, :, None], None,
        None, 512, get_mla_metadata()[0], is_fp8_kvcache=True,
        indices=cp.asarray(idx).reshape(b, s_q, -1), topk_length=lengths_dev, stream=stream)
    stream.synchronize()
    assert out.shape == (b, s_q, h_q, 512) and lse.shape == (b, h_q, s_q)
    ref = reference.attend(q.astype(np.float32), keys, idx, d_qk ** -0.5,
                           np.repeat(lengths, s_q))
    reference.check_out(_bf16_of_bits(cp.asnumpy(out)).reshape(b * s_q, h_q, 512), ref[0])
    reference.check_stat(cp.asnumpy(lse).transpose(0, 2, 1).reshape(b * s_q, h_q), ref[1],
                         "lse")


# ---------------------------------------------------------------------------------------------
# JAX
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jx():
    """(jax, jax.numpy, the device the test arrays live on)."""
    try:
        import jax
        import jax.numpy as jnp
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"jax is not importable: {error}")
    try:
        devices = jax.devices(JAX_PLATFORM)
    except RuntimeError as error:
        pytest.skip(f"jax has no {JAX_PLATFORM} backend: {error}")
    if JAX_PLATFORM != "cpu" and smla.cuda_device_count() == 0:
        pytest.skip("smla is a CPU-only build (or sees no GPU)")
    return jax, jnp, devices[0]


def _put(jx, a):
    jax, _, device = jx
    return jax.device_put(np.asarray(a), device)


def _host(a):
    return np.asarray(a)


@pytest.mark.parametrize("d_qk,main_format,extra_format", ATTEND_CASES)
def test_jax_attend(jx, rng, d_qk, main_format, extra_format):
    jax, jnp, device = jx
    x = AttendInputs(rng, d_qk, main_format, extra_format)

    # q comes out of a JAX computation still in flight when smla reads it.
    q_dev = jnp.asarray(_put(jx, x.q.astype(np.float32)), jnp.float32).astype(jnp.bfloat16)
    kv, idx, lengths, extra, idx_x, lengths_x, sink = (_put(jx, a) for a in x.rest())
    out, lse, max_logits = smla.attend(
        q_dev, kv, idx, x.scale, lengths=lengths, extra_kv=extra, extra_indices=idx_x,
        extra_lengths=lengths_x, sink=sink)

    assert isinstance(out, jax.Array) and out.dtype == jnp.bfloat16
    assert out.devices() == {device} and lse.devices() == {device}
    assert out.shape == (x.t_count, x.h_q, 512) and lse.dtype == jnp.float32
    # JAX work right after the call sees the results smla wrote.
    doubled = jax.jit(lambda o, s: (o.astype(jnp.float32) * 2, s + 1))(out, lse)
    _check_attention((_host(out), _host(lse), _host(max_logits)), x.ref)
    assert np.array_equal(_host(doubled[0]), _host(out).astype(np.float32) * 2)
    assert np.array_equal(_host(doubled[1]), _host(lse) + 1)


def test_jax_formats(jx, rng):
    _, jnp, _ = jx
    rows = make_rows(rng, 64, 512)
    cache = smla.quantize(_put(jx, rows), "fp8_ds_mla", block_size=32)
    assert cache.dtype == jnp.uint8 and cache.shape == (2, 32, 584)
    expected = reference.quantize_cache(rows, "fp8_ds_mla", 32)
    assert np.array_equal(spec_payload(_host(cache), "fp8_ds_mla", 32),
                          spec_payload(expected, "fp8_ds_mla", 32))
    back = smla.dequantize(cache, "fp8_ds_mla")
    assert back.dtype == jnp.bfloat16
    assert np.array_equal(_host(back).astype(np.float32),
                          reference.dequantize_cache(expected, "fp8_ds_mla", 512))


@pytest.mark.parametrize("d_qk", [576, 512])
def test_jax_flash_mla_sparse_fwd(jx, rng, d_qk):
    s_q, s_kv, h_q, topk = 7, 300, 64, 64
    q = make_q(rng, s_q, h_q, d_qk)
    kv = make_rows(rng, s_kv, d_qk)
    idx = make_indices(rng, s_q, topk, s_kv)
    sink = rng.standard_normal(h_q).astype(np.float32)
    topk_length = np.array([64, 0, 5, 64, 33, 1, 100], np.int32)

    out, max_logits, lse = flash_mla_sparse_fwd(
        _put(jx, q), _put(jx, kv[:, None]), _put(jx, idx[:, None]), d_qk ** -0.5, 512,
        _put(jx, sink), _put(jx, topk_length))

    ref = reference.attend(q.astype(np.float32), kv.astype(np.float32), idx, d_qk ** -0.5,
                           topk_length, sink=sink)
    _check_attention((_host(out), _host(lse), _host(max_logits)), ref)


def test_jax_flash_mla_with_kvcache(jx, rng):
    """Decode with MTP (s_q = 2) and an extra pool: the b * s_q tokens' outputs, written as
    one attend's, come back in FlashMLA's shapes (lse a transposed copy: JAX has no views)."""
    b, s_q, h_q, d_qk = 3, 2, 64, 512
    cache, keys = make_pool(rng, "fp8_ds_mla", d_qk, num_blocks=4, block_size=64)
    extra, k_extra = make_pool(rng, "fp8_ds_mla", d_qk, num_blocks=1, block_size=64)
    q = make_q(rng, b * s_q, h_q, d_qk)
    idx = make_indices(rng, b * s_q, 128, keys.shape[0])
    idx_x = make_indices(rng, b * s_q, 16, k_extra.shape[0])
    lengths = np.array([128, 3, 60], np.int32)
    sink = rng.standard_normal(h_q).astype(np.float32)

    out, lse = flash_mla_with_kvcache(
        _put(jx, q.reshape(b, s_q, h_q, d_qk)), _put(jx, cache[:, :, None]), None, None, 512,
        get_mla_metadata()[0], is_fp8_kvcache=True, indices=_put(jx, idx.reshape(b, s_q, -1)),
        attn_sink=_put(jx, sink), extra_k_cache=_put(jx, extra[:, :, None]),
        extra_indices_in_kvcache=_put(jx, idx_x.reshape(b, s_q, -1)),
        topk_length=_put(jx, lengths))

    assert out.shape == (b, s_q, h_q, 512) and lse.shape == (b, h_q, s_q)
    ref = reference.attend(q.astype(np.float32), keys, idx, d_qk ** -0.5,
                           np.repeat(lengths, s_q), k_extra, idx_x, None, sink)
    reference.check_out(_host(out).reshape(b * s_q, h_q, 512), ref[0])
    reference.check_stat(_host(lse).transpose(0, 2, 1).reshape(b * s_q, h_q), ref[1], "lse")
