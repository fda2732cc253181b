"""smla.quantize, dequantize and write_cache on the CPU: byte-exact with SPEC §2."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes", reason="NumPy has no bfloat16 without ml_dtypes")

import reference  # noqa: E402
import smla  # noqa: E402
from workloads import FORMATS_BY_D_QK, make_rows, spec_payload  # noqa: E402


@pytest.mark.parametrize("format,d_qk", FORMATS_BY_D_QK)
def test_quantize_is_byte_exact_and_dequantize_inverts_it(rng, format, d_qk):
    block_size = 8
    rows = make_rows(rng, 3 * block_size, d_qk)
    rows[1, :64] = 0                               # an all-zero tile: the 1e-4 scale floor
    rows[2] = reference.bf16(rows[2].astype(np.float32) * 1e4)

    cache = smla.quantize(rows, format, block_size=block_size)

    assert cache.dtype == np.uint8
    assert cache.shape == (3, block_size, reference.FORMAT_TOKEN_BYTES[(format, d_qk)])
    expected = reference.quantize_cache(rows, format, block_size)
    assert np.array_equal(spec_payload(cache, format, block_size),
                          spec_payload(expected, format, block_size))

    back = smla.dequantize(cache, format)
    assert back.shape == (3 * block_size, d_qk) and back.dtype == reference.BF16
    assert np.array_equal(back.astype(np.float32), reference.dequantize_cache(expected, format,
                                                                              d_qk))


def test_int8_ds_mla_in_two_arrays(rng):
    rows = make_rows(rng, 8, 512)
    values = np.zeros((2, 4, 512), np.int8)
    scales = np.zeros((2, 4), np.float32)
    smla.quantize(rows, "int8_ds_mla", cache=values, cache_scales=scales)
    packed = reference.quantize_cache(rows, "int8_ds_mla", 4)
    assert np.array_equal(values.view(np.uint8), packed[..., :512])
    assert np.array_equal(scales, packed[..., 512:516].copy().view(np.float32)[..., 0])
    back = smla.dequantize(values, "int8_ds_mla", cache_scales=scales)
    assert np.array_equal(back.astype(np.float32),
                          reference.dequantize_cache(packed, "int8_ds_mla", 512))


@pytest.mark.parametrize("format,d_qk", [("fp8_v32", 576), ("fp8_ds_mla", 512)])
def test_write_cache_writes_given_slots_and_skips_out_of_range(rng, format, d_qk):
    block_size = 4
    rows = make_rows(rng, 5, d_qk)
    slots = np.array([6, -1, 0, 11, 12], np.int32)   # -1 and 12 (= slots) are skipped
    cache = np.zeros((3, block_size, reference.FORMAT_TOKEN_BYTES[(format, d_qk)]), np.uint8)
    before = cache.copy()

    assert smla.write_cache(rows, slots, cache) is cache     # format inferred from 656/584

    keys = reference.dequantize_cache(cache, format, d_qk)
    written = {6: 0, 0: 2, 11: 3}
    for slot, row in written.items():
        one = reference.quantize_cache(rows[row:row + 1], format, 1)
        assert np.array_equal(keys[slot], reference.dequantize_cache(one, format, d_qk)[0])
    untouched = [s for s in range(12) if s not in written]
    flat_before = reference.dequantize_cache(before, format, d_qk)
    assert np.array_equal(keys[untouched], flat_before[untouched])
