"""The allocator's free pages, handed back to the system."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

__all__ = ["release_free_memory"]

_MALLOC_TRIM: Callable[[int], int] | None
try:  # glibc: hand back the free pages of its heaps (other C libraries have no such call)
    _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
except (OSError, AttributeError):
    _MALLOC_TRIM = None


def release_free_memory() -> None:
    """After a reconcile: return the heaps' free pages to the system. A reconcile and every
    answer since free what they allocated, but from several threads' heaps, and glibc keeps
    what it freed (measured: 3.5 MB of a 100 MB server under load came back at one call)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
