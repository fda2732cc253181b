"""smla: sparse MLA attention for DeepSeek-V3.2 and V4 over arrays of any framework.

``smla.attend``, ``smla.plan``, ``smla.combine``, ``smla.quantize``, ``smla.dequantize`` and
``smla.write_cache`` take NumPy, torch, CuPy or JAX arrays through DLPack (CPU arrays run
the reference backend, CUDA arrays a GPU backend on the caller's current stream).
``smla.flash_mla`` is a drop-in for FlashMLA's sparse interface. When torch is importable,
the FlashMLA functions are also torch custom ops (``torch.ops.smla.*``, registered by
``import smla.flash_mla``, or by ``import smla`` once torch is imported) usable under
torch.compile and in CUDA graphs. See docs/python.md.
"""

from __future__ import annotations

import sys

from . import _smla
from ._errors import (CudaError, InternalError, InvalidArgumentError, NotBuiltError, SmlaError,
                      UnsupportedError)
from .ops import Plan, attend, combine, dequantize, plan, quantize, write_cache

__version__ = _smla.version()

# The torch ops register when smla.flash_mla is imported (if torch is importable). A process
# that already uses torch gets them from `import smla` too; others do not pay torch's import.
if "torch" in sys.modules:
    from . import flash_mla  # noqa: F401


def compiled_cuda_architectures() -> str:
    """The CUDA architectures this build holds kernels for ("80;90a"), "" if CPU-only."""
    return _smla.compiled_cuda_architectures()


def cuda_device_count() -> int:
    """CUDA devices smla can use (0 in a CPU-only build or without a GPU)."""
    return _smla.cuda_device_count()


__all__ = [
    "attend", "plan", "Plan", "combine", "quantize", "dequantize", "write_cache",
    "SmlaError", "InvalidArgumentError", "NotBuiltError", "UnsupportedError", "CudaError",
    "InternalError", "compiled_cuda_architectures", "cuda_device_count",
]
