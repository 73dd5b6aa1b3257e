"""A read-only mapping kept in shards, for views that change a few entries at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["Sharded"]

_SHARDS = 256
_MASK = _SHARDS - 1
V = TypeVar("V")


class Sharded(Mapping[str, V]):
    """A read-only mapping kept in shards, so a new version copies only the shards it changes
    (a few hundred entries each) instead of 100,000 entries."""

    __slots__ = ("_len", "_shards")

    def __init__(self, shards: tuple[dict[str, V], ...], length: int) -> None:
        self._shards = shards
        self._len = length

    @classmethod
    def build(cls, items: Iterable[tuple[str, V]]) -> Sharded[V]:
        """A sharded mapping of `items`."""
        shards: tuple[dict[str, V], ...] = tuple({} for _ in range(_SHARDS))
        for key, value in items:
            shards[hash(key) & _MASK][key] = value
        return cls(shards, sum(len(s) for s in shards))

    def updated(self, changes: Mapping[str, V | None]) -> Sharded[V]:
        """A new version with `changes` applied (None removes a key); this one is unchanged."""
        shards = list(self._shards)
        copied: set[int] = set()
        length = self._len
        for key, value in changes.items():
            index = hash(key) & _MASK
            if index not in copied:
                shards[index] = dict(shards[index])
                copied.add(index)
            shard = shards[index]
            if value is None:
                length -= shard.pop(key, None) is not None
            else:
                length += key not in shard
                shard[key] = value
        return Sharded(tuple(shards), length)

    def pick(self, keys: Iterable[str]) -> list[V]:
        """The values of `keys`, in order (each must be present)."""
        shards = self._shards
        return [shards[hash(key) & _MASK][key] for key in keys]

    def __getitem__(self, key: str) -> V:
        return self._shards[hash(key) & _MASK][key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._shards[hash(key) & _MASK].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & _MASK]

    def __iter__(self) -> Iterator[str]:
        for shard in self._shards:
            yield from shard

    def __len__(self) -> int:
        return self._len
