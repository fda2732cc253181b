"""The exceptions smla raises: one class per StatusCode of the C++ library (SPEC §5).

Every class derives from :class:`SmlaError` (a ``RuntimeError``) and, where Python has a
conventional exception for the cause, from that too, so ``except ValueError`` catches a bad
argument whether or not the caller knows smla. The message is the library's and names the
argument, what was expected and what was given.
"""

from __future__ import annotations

import contextlib
import re
from typing import Dict, Iterator


class SmlaError(RuntimeError):
    """Base class of every error reported by the smla library."""


class InvalidArgumentError(SmlaError, ValueError):
    """A dtype, shape, stride, alignment, placement, format or option is wrong."""


class NotBuiltError(SmlaError, NotImplementedError):
    """The call needs a backend or kernel variant this build does not hold."""


class UnsupportedError(SmlaError, NotImplementedError):
    """The device cannot run the call (no CUDA device, too old an architecture)."""


class CudaError(SmlaError):
    """The CUDA runtime reported an error."""


class InternalError(SmlaError):
    """A bug in smla."""


# Indexed by smla::StatusCode (include/smla/status.hpp); 0 (ok) is never raised.
_BY_CODE = {
    1: InvalidArgumentError,
    2: NotBuiltError,
    3: UnsupportedError,
    4: CudaError,
    5: InternalError,
}


def error_class(code: int) -> type:
    """The exception class of a StatusCode (called by the extension's error translator)."""
    return _BY_CODE.get(code, InternalError)


@contextlib.contextmanager
def argument_names(names: Dict[str, str]) -> Iterator[None]:
    """Re-raises smla errors with the library's argument names replaced by the caller's.

    The library names its own parameters (``lengths``, ``sink`` ...); a front such as
    smla.flash_mla exposes them under other names (``topk_length``, ``attn_sink``), and its
    caller must read the name it passed.
    """
    try:
        yield
    except SmlaError as error:
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        message = pattern.sub(lambda m: names[m.group(1)], str(error))
        raise type(error)(message) from None
