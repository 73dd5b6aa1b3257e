from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from almanac.api import Embedded, Settings
from almanac.convert import convert
from almanac.types import (
    Excerpt,
    GraphResult,
    LastSeenResult,
    LookupResult,
    OccurrenceResult,
    Record,
    RecordConnection,
    SearchConnection,
    Status,
    TimelineResult,
)
from almanac.vault import InvalidInput

__all__ = ["Almanac", "open"]

_Paged = TypeVar("_Paged", RecordConnection, SearchConnection, TimelineResult, OccurrenceResult)
_T = TypeVar("_T")


def open(
    vault: str | os.PathLike[str],
    *,
    state: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    watch: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Almanac:
    """Open a vault's state file (the one the CLI and the server use) and bring it up to date.

    Args:
        vault: The vault folder.
        state: The state database file; by default the per-vault file the CLI and the server
            use (`<user cache dir>/almanac/<vault>-<hash>.db`).
        config: A TOML configuration file: scopes, type aliases, limits.
        watch: Learn of changes from inotify; otherwise every call scans the vault.
        progress: Called as `progress(done, total)` while the files are read.

    Raises:
        StartupError: the vault is not a folder, the state file lies inside it, or the config
            is unusable.
        IndexUnavailable: the state database cannot be used.
    """
    settings = Settings.build(vault=vault, state=state, config=config, watch=watch)
    return Almanac(Embedded(settings, progress=progress))


class Almanac:
    """An opened vault: GraphQL in process (`query`) and typed helpers over the same resolvers.

    Every call first makes the index reflect every change to the vault that finished before it
    (the watcher says what changed, or a scan finds it), then answers from one snapshot, as a
    request to the server does. Safe to use from several threads. A context manager; `close`
    releases the state file.

    Keyword options are the GraphQL arguments in snake_case (`as_of`, `time_field`,
    `include_partial`, `first`, `after`, ...), checked by the same rules; dates and instants
    may be `date`, aware `datetime` or their ISO text, zones a `ZoneInfo` or its name, enums
    a member or its name.
    """

    def __init__(self, embedded: Embedded) -> None:
        self._api = embedded

    def __enter__(self) -> Almanac:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the watcher and the state file; later calls raise `InvalidInput`."""
        self._api.close()

    def query(
        self,
        document: str,
        variables: Mapping[str, object] | None = None,
        *,
        operation_name: str | None = None,
    ) -> dict[str, Any]:  # Any: the JSON answer
        """Run a GraphQL document: the answer `POST /graphql` gives (`data`, `errors`), under
        the same limits."""
        return self._api.execute(document, variables, operation_name=operation_name)

    def status(self, *, scope: str | None = None) -> Status:
        """Index state, counts and validation issues of every scope, or of one."""
        return self._one(Status, "status", {"scope": scope})

    def excerpt(
        self,
        path: str,
        start_line: int = 1,
        end_line: int | None = None,
        *,
        revision: str | None = None,
        scope: str | None = None,
    ) -> Excerpt:
        """Lines of a note as the file reads now (follow a locator); with `revision`,
        `current` says whether the file still has those bytes. At most 1,000 lines."""
        given = _given(
            path=path, start_line=start_line, end_line=end_line, revision=revision, scope=scope
        )
        return self._one(Excerpt, "excerpt", given)

    def lookup(self, name: str, *, scope: str | None = None) -> LookupResult:
        """What a name designates: exact id, slug, title or alias. Never fuzzy."""
        return self._one(LookupResult, "lookup", {"name": name, "scope": scope})

    def record(self, id: str, *, scope: str | None = None) -> Record | None:
        """One record by exact id, or None if it does not exist or is not eligible."""
        with self._api.request() as context:
            found = self._api.resolve(context, "record", _given(id=id, scope=scope))
            return None if found is None else convert(Record, found)

    def records(self, **filter: object) -> RecordConnection:
        """The exhaustive inventory, filtered (`kind`, `type`, `tag`, `lifecycle`, `scope`,
        `time_field`, `since`, `until`); `first` and `after` page it. Iterate for every record."""
        return self._paged(RecordConnection, "records", {}, filter)

    def search(self, query: str, **options: object) -> SearchConnection:
        """Keyword search (`mode`, `first`, `after`; the filter's fields as in `records`).
        Iterate for every hit."""
        return self._paged(SearchConnection, "search", {"query": query}, options)

    def timeline(self, entity: str | None = None, **options: object) -> TimelineResult:
        """Dated records, of one entity if given (`time_field`, `since`, `until`, `order`,
        `group`, `as_of`, `timezone`, ...). Iterate for every entry."""
        return self._paged(TimelineResult, "timeline", _given(entity=entity), options)

    def chronicle_day(
        self, date: object, *, timezone: object = "UTC", week: bool = False, **options: object
    ) -> TimelineResult:
        """Everything that occurred on one local day, or in its Monday-Sunday week."""
        given = {"date": date, "timezone": timezone, "week": week}
        return self._paged(TimelineResult, "chronicle_day", given, options)

    def chronicle_since(
        self, since: object, until: object = None, **options: object
    ) -> TimelineResult:
        """What occurred since an instant or date (until another), oldest first."""
        given = {"since": since, "until": until}
        return self._paged(TimelineResult, "chronicle_since", given, options)

    def last_seen(self, entity: str, **options: object) -> LastSeenResult:
        """The latest dated record of an entity at or before `occurred_on_or_before` (now)."""
        return self._one(LastSeenResult, "chronicle_last_seen", {"entity": entity, **options})

    def occurrences(
        self, id: str, since: object, until: object, **options: object
    ) -> OccurrenceResult:
        """The occurrences of one recurring record inside a closed range."""
        given = {"id": id, "since": since, "until": until}
        return self._paged(OccurrenceResult, "occurrences", given, options)

    def graph(
        self,
        seed: str | None = None,
        *,
        text: str | None = None,
        hops: int = 2,
        fan_out: int = 25,
        max_paths: int = 50,
        **options: object,
    ) -> GraphResult:
        """A bounded walk from a seed record (its id), or from the names declared in `text`
        (`direction`, `relations`, `history`, `as_of`, `scope`)."""
        given = {
            "seed": _given(id=seed, text=text),
            "hops": hops,
            "fan_out": fan_out,
            "max_paths": max_paths,
        }
        return self._one(GraphResult, "graph", {**given, **options})

    def paths(self, from_id: str, to_id: str, **options: object) -> GraphResult:
        """The simple paths between two records (`max_hops`, `max_paths`, `fan_out`, ...)."""
        return self._one(GraphResult, "paths", {"from_": from_id, "to": to_id, **options})

    def _one(self, cls: type[_T], field: str, arguments: Mapping[str, object]) -> _T:
        with self._api.request() as context:
            return convert(cls, self._api.resolve(context, field, arguments))

    def _paged(
        self,
        cls: type[_Paged],
        field: str,
        given: Mapping[str, object],
        options: Mapping[str, object],
    ) -> _Paged:
        arguments = {**given, **self._filtered(field, options)}

        def page(after: str | None) -> _Paged:
            asked = arguments if after is None else {**arguments, "after": after}
            with self._api.request() as context:
                found = convert(cls, self._api.resolve(context, field, asked))
            return dataclasses.replace(found, _next=page)

        return page(arguments.get("after"))  # type: ignore[arg-type]

    def _filtered(self, field: str, options: Mapping[str, object]) -> dict[str, object]:
        """Options as arguments: those of a field with a `filter` that are not its own
        arguments are the filter's fields."""
        own = self._api.arguments(field)
        if "filter" not in own:
            return dict(options)
        direct = {k: v for k, v in options.items() if k in own}
        rest = {k: v for k, v in options.items() if k not in own}
        if rest and "filter" in direct:
            raise InvalidInput("Give the filter's fields as keywords or as 'filter', not both")
        if rest:
            direct["filter"] = rest
        return direct


def _given(**arguments: object) -> dict[str, object]:
    """The arguments given (not None): the rest take the API's defaults."""
    return {k: v for k, v in arguments.items() if v is not None}
