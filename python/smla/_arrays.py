"""Arrays of any framework in, arrays of the same framework out.

The extension reads arrays through DLPack and never allocates; this module does what is
framework-specific around it: views that DLPack can carry (NumPy has no bfloat16 or float8
export), new outputs on the caller's framework and device, and the caller's CUDA stream.
Frameworks are looked up in ``sys.modules`` only, so importing smla imports none of them.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any, Callable, Iterator, Optional, Sequence

from . import _smla
from ._errors import InvalidArgumentError

# Any array that speaks DLPack: numpy.ndarray, torch.Tensor, cupy.ndarray, jax.Array ...
# (an alias for documentation: the extension checks what it gets).
Array = Any

# DLPack device types (dlpack.h): what ``__dlpack_device__()[0]`` answers.
_DL_CUDA = 2
_DL_CUDA_MANAGED = 13

# The dtypes smla reads and writes, by the names this package uses.
_TORCH_DTYPES = {"bf16": "bfloat16", "f32": "float32", "i32": "int32", "u8": "uint8"}
_NUMPY_DTYPES = {"f32": "float32", "i32": "int32", "u8": "uint8"}


def _torch():
    return sys.modules.get("torch")


def is_torch(a: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(a, torch.Tensor)


def _is_numpy(a: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(a, np.ndarray)


def _is_cupy(a: Any) -> bool:
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(a, cupy.ndarray)


def reshape(a: Any, shape: Sequence[int]) -> Any:
    """``a`` in a new shape: a view where its strides allow one, a copy otherwise (every
    framework's reshape)."""
    if is_torch(a) or _is_numpy(a) or _is_cupy(a):
        return a.reshape(tuple(shape))
    return a.__array_namespace__().reshape(a, tuple(shape))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``a`` with two axes exchanged (a view in torch, NumPy and CuPy)."""
    if is_torch(a) or _is_numpy(a) or _is_cupy(a):
        return a.swapaxes(axis1, axis2)
    axes = list(range(len(a.shape)))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return a.__array_namespace__().permute_dims(a, tuple(axes))


def repeat_each(a: Any, count: int) -> Any:
    """The 1-D ``a`` with each element repeated ``count`` times, in ``a``'s framework and on
    its device, without a host synchronization (torch's repeat_interleave may need one)."""
    if count == 1:
        return a
    if is_torch(a):   # torch's repeat tiles the whole tensor
        return a.unsqueeze(1).expand(a.shape[0], count).reshape(-1)
    if _is_numpy(a) or _is_cupy(a):
        return a.repeat(count)
    return a.__array_namespace__().repeat(a, count)


def _is_numpy_bf16(dtype: Any) -> bool:
    # ml_dtypes.bfloat16 (also JAX's numpy dtype); compared by name so ml_dtypes is optional.
    return getattr(dtype, "name", None) == "bfloat16"


def itemsize(a: Any) -> int:
    if is_torch(a):
        return a.element_size()
    return a.dtype.itemsize


def is_cuda(a: Any) -> bool:
    if is_torch(a):
        return a.is_cuda
    return a.__dlpack_device__()[0] in (_DL_CUDA, _DL_CUDA_MANAGED)


def _check_8bit_float(dtype_name: str, name: str) -> None:
    # The one 8-bit float a cache holds is FlashMLA's float8_e4m3fn view of its bytes; the
    # bytes of any other (e5m2, the fnuz variants, e8m0) would be read as something else.
    if dtype_name != "float8_e4m3fn":
        raise InvalidArgumentError(
            f"{name}: dtype {dtype_name} is not one smla reads; caches are uint8, int8 or "
            f"float8_e4m3fn bytes")


def as_core(a: Optional[Any], name: str, written: bool = False) -> Optional[Any]:
    """``a`` as the extension reads it: the same memory, viewed with a DLPack-exportable dtype.

    NumPy exports neither ml_dtypes.bfloat16 nor 8-bit float dtypes through DLPack, so they
    travel as uint16 (bf16 bits, which the extension reads as bf16) and uint8; torch float8
    caches travel as uint8 (older torch cannot export float8 either). What the binding would
    refuse without naming the argument raises InvalidArgumentError naming ``name``: an 8-bit
    float other than float8_e4m3fn, a NumPy array of the other byte order, and a read-only
    NumPy array smla writes (``written``).
    """
    if a is None:
        return None
    if is_torch(a):
        a = a.detach()   # DLPack refuses tensors that require grad; smla has no backward
        if a.element_size() == 1 and a.dtype.is_floating_point:
            _check_8bit_float(str(a.dtype).removeprefix("torch."), name)
            return a.view(_torch().uint8)
        return a
    if _is_numpy(a) or _is_cupy(a):   # CuPy arrays have NumPy dtypes (and the same limits)
        np = sys.modules["numpy"]
        if not a.dtype.isnative:
            raise InvalidArgumentError(
                f"{name}: dtype {a.dtype} in byte order '{a.dtype.byteorder}' is not this "
                f"machine's; pass a.astype(a.dtype.newbyteorder('='))")
        if written and _is_numpy(a) and not a.flags.writeable:
            raise InvalidArgumentError(f"{name}: a read-only array, which smla would write")
        if _is_numpy_bf16(a.dtype):
            return a.view(np.uint16)
        if a.dtype.itemsize == 1 and a.dtype.kind not in "iub":
            _check_8bit_float(a.dtype.name, name)
            return a.view(np.uint8)
    return a


def bf16_dtype_of(like: Any) -> Any:
    """The dtype bf16 outputs take next to ``like``: its own if it is a bf16 array.

    A NumPy caller that passes ml_dtypes.bfloat16 gets ml_dtypes.bfloat16 back, one that
    passes uint16 bf16 bits gets uint16 bits back; other NumPy inputs get ml_dtypes.bfloat16
    when ml_dtypes is installed and uint16 bits otherwise.
    """
    if is_torch(like):
        return _torch().bfloat16
    if _is_numpy(like):
        np = sys.modules["numpy"]
        if _is_numpy_bf16(like.dtype) or like.dtype == np.uint16:
            return like.dtype
        try:
            import ml_dtypes
        except ImportError:
            return np.dtype(np.uint16)
        return np.dtype(ml_dtypes.bfloat16)
    if _is_cupy(like):
        # CuPy has no bfloat16 of its own: bf16 bits in uint16, as for NumPy, unless the
        # caller's array already holds an ml_dtypes.bfloat16 dtype CuPy accepts.
        np = sys.modules["numpy"]
        return like.dtype if _is_numpy_bf16(like.dtype) else np.dtype(np.uint16)
    xp = like.__array_namespace__()
    return getattr(xp, "bfloat16", xp.uint16)


def empty(like: Any, shape: Sequence[int], dtype: str) -> Any:
    """An uninitialized array of ``like``'s framework and device.

    ``dtype`` is one of "bf16", "f32", "i32", "u8".
    """
    return _new_array("empty", like, shape, dtype)


def zeros(like: Any, shape: Sequence[int], dtype: str) -> Any:
    """A zero-filled array of ``like``'s framework and device (dtypes as :func:`empty`)."""
    return _new_array("zeros", like, shape, dtype)


def _new_array(constructor: str, like: Any, shape: Sequence[int], dtype: str) -> Any:
    # `constructor` ("empty" or "zeros") has the same signature in torch, NumPy, CuPy and
    # the Array API.
    shape = tuple(int(s) for s in shape)
    if is_torch(like):
        torch = _torch()
        return getattr(torch, constructor)(shape, dtype=getattr(torch, _TORCH_DTYPES[dtype]),
                                           device=like.device)
    if dtype == "bf16":
        resolved = bf16_dtype_of(like)
    elif _is_numpy(like) or _is_cupy(like):   # CuPy's dtypes are NumPy's
        resolved = sys.modules["numpy"].dtype(_NUMPY_DTYPES[dtype])
    else:
        resolved = getattr(like.__array_namespace__(), _NUMPY_DTYPES[dtype])
    if _is_numpy(like):
        return getattr(sys.modules["numpy"], constructor)(shape, dtype=resolved)
    if _is_cupy(like):
        with like.device:
            return getattr(sys.modules["cupy"], constructor)(shape, dtype=resolved)
    # Any other Array-API framework (JAX ...): same device as `like`.
    xp = like.__array_namespace__()
    return getattr(xp, constructor)(shape, dtype=resolved, device=like.device)


def stream_handle(like: Any, stream: Any = None) -> int:
    """The cudaStream_t (as an int) a call on ``like`` runs on; 0 is the legacy default stream.

    An explicit ``stream`` wins: an int handle, a ``torch.cuda.Stream`` (``.cuda_stream``), a
    CuPy stream (``.ptr``) or any object with the ``__cuda_stream__`` protocol. Otherwise a
    torch tensor runs on torch's current stream of its device and a CuPy array on CuPy's
    current stream, so smla orders with the caller's own work as a native op would.
    """
    if stream is not None:
        if isinstance(stream, int):
            return stream
        if hasattr(stream, "__cuda_stream__"):
            return int(stream.__cuda_stream__()[1])
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        raise TypeError(f"stream: expected an int handle or a CUDA stream object, got {stream!r}")
    if not is_cuda(like):
        return 0
    if is_torch(like):
        return _torch().cuda.current_stream(like.device).cuda_stream
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(like, cupy.ndarray):
        return cupy.cuda.get_current_stream().ptr
    return 0


def finish_launch(like: Any, stream: Any = None) -> None:
    """Called after each launch: waits for it on the host when ``like`` is a CUDA array of a
    framework smla cannot order with (JAX ...).

    torch and CuPy allocate on the stream smla runs on, so their allocators and later work
    are ordered after the kernels. JAX runs its work on streams of its own that smla cannot
    see: without this wait, JAX would hand a freed workspace to other work while the kernel
    still uses it, and could read outputs before the kernel has written them.
    """
    if is_torch(like) or _is_cupy(like) or not is_cuda(like):
        return
    _smla.synchronize_stream(stream_handle(like, stream), int(like.__dlpack_device__()[1]))


@contextlib.contextmanager
def call_scope(like: Any, stream: Any = None) -> Iterator[None]:
    """Runs a call with ``like``'s CUDA device current and, for torch and CuPy given an
    explicit ``stream``, that stream as the framework's current one.

    The library launches on the current device, and torch's caching allocator reuses freed
    memory in the order of the stream it was allocated on: outputs and workspaces must be
    allocated on the stream that writes them, or a freed workspace could be handed to other
    work while the kernel still runs.
    """
    if is_torch(like) and like.is_cuda:
        torch = _torch()
        with torch.cuda.device(like.device):
            if stream is None:
                yield
                return
            if not isinstance(stream, torch.cuda.Stream):
                stream = torch.cuda.ExternalStream(stream_handle(like, stream),
                                                   device=like.device)
            with torch.cuda.stream(stream):
                yield
        return
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(like, cupy.ndarray):
        # CuPy's memory pool, like torch's allocator, orders by the current stream, and the
        # call's own CuPy work (a copy of an input) must run on the stream smla runs on.
        with like.device:
            if stream is None:
                yield
                return
            with cupy.cuda.ExternalStream(stream_handle(like, stream)):
                yield
        return
    yield


def on_callers_device(fn: Callable) -> Callable:
    """Decorates an op whose first argument is the array that places it (q, rows, cache ...)
    and whose ``stream`` is a keyword: the op runs inside :func:`call_scope`."""

    @functools.wraps(fn)
    def scoped(like, *args, stream=None, **kwargs):
        with call_scope(like, stream):
            return fn(like, *args, stream=stream, **kwargs)

    return scoped
