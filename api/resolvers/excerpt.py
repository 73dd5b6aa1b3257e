from __future__ import annotations

from almanac import vault
from almanac.api.args import cited_revision, line_range
from almanac.api.context import Info
from almanac.api.types.common import RecordRef
from almanac.api.types.excerpt import Excerpt

__all__ = ["excerpt"]


def excerpt(
    info: Info,
    path: str,
    start_line: int | None = 1,
    end_line: int | None = None,
    revision: str | None = None,
    scope: str | None = None,
) -> Excerpt:
    """Lines of a note as the file reads now (follow a locator)."""
    context = info.context
    start, end = line_range(start_line, end_line)
    cited = cited_revision(revision)
    scopes = context.readable(scope)
    reader = context.reader()
    # The index vouches for the path before the file system is asked anything about it.
    config = context.services.settings.config
    if not reader.knows_note_file(path) or config.scope_of(path) not in scopes:
        raise vault.NotFound(f"No note file {path!r} in the readable scopes")
    text = vault.read_note_text(context.services.settings.vault, path)
    if isinstance(text, vault.Issue):
        raise vault.NotFound(f"Note file {path!r} cannot be read now: {text.message}")
    found = reader.record_at(path, scopes)
    return Excerpt.from_domain(
        text,
        start=start,
        end=end,
        cited=cited,
        record=RecordRef.from_domain(found) if found is not None else None,
        meta=context.meta(scopes),
    )
