from __future__ import annotations

from typing import Self

import strawberry

from almanac import vault
from almanac.api.types.common import RecordRef, ResultMeta

__all__ = ["Excerpt", "ExcerptLine"]


@strawberry.type
class ExcerptLine:
    number: int = strawberry.field(description="1-based, counting frontmatter lines.")
    text: str = strawberry.field(description="The line as written, without its line ending.")


@strawberry.type
class Excerpt:
    path: str
    revision: str = strawberry.field(description="SHA-256 hex of the file bytes now.")
    current: bool = strawberry.field(
        description="False when a revision was given and the file no longer has those bytes."
    )
    line_count: int
    lines: list[ExcerptLine]
    record: RecordRef | None = strawberry.field(
        description="The record this file makes, if it is eligible."
    )
    meta: ResultMeta

    @classmethod
    def from_domain(
        cls,
        text: vault.NoteText,
        *,
        start: int,
        end: int,
        cited: str | None,
        record: RecordRef | None,
        meta: ResultMeta,
    ) -> Self:
        """Lines `start` to `end` (1-based, inclusive) of `text`, those that exist."""
        shown = text.lines[start - 1 : end]
        return cls(
            path=text.path,
            revision=text.revision,
            current=cited is None or cited == text.revision,
            line_count=len(text.lines),
            lines=[ExcerptLine(number=start + i, text=line) for i, line in enumerate(shown)],
            record=record,
            meta=meta,
        )
