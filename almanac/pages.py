"""What a paged result does: iterating it yields the items of every page, each page fetched with
the previous page's cursor (so a change to the vault during the walk raises `SnapshotChanged`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

__all__ = ["Pages"]

_T = TypeVar("_T")


class _PageInfo(Protocol):
    @property
    def has_next_page(self) -> bool: ...
    @property
    def end_cursor(self) -> str | None: ...


class Pages(Generic[_T]):
    """A result read a page at a time: iterating it yields the items of every page."""

    __slots__ = ()
    page_info: _PageInfo
    _next: Callable[[str], Pages[_T]] | None

    def _items(self) -> tuple[_T, ...]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[_T]:
        page: Pages[_T] = self
        while True:
            yield from page._items()
            cursor = page.page_info.end_cursor
            if not page.page_info.has_next_page or cursor is None or page._next is None:
                return
            page = page._next(cursor)
