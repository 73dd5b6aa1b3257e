"""The one error hierarchy of Almanac.

Every deliberate error derives from `AlmanacError`; `code` is the GraphQL
`extensions.code` it is rendered with, and `http_status` the status of a response that
refuses a whole HTTP request with it (a GraphQL error inside a result is answered with 200).
Problems in the vault are never exceptions: they are `Issue` values. The tree::

    AlmanacError (code None)
    ├── InvalidInput       BAD_USER_INPUT     InvalidDate (AmbiguousTime), UnknownTimezone,
    │                                         InvalidCursor, InvalidRecurrence
    ├── NotFound           NOT_FOUND
    ├── Unauthenticated    UNAUTHENTICATED
    ├── Forbidden          FORBIDDEN
    ├── SnapshotChanged    SNAPSHOT_CHANGED
    ├── IndexUnavailable   INDEX_UNAVAILABLE  GraphWarming (extensions.reason "graph_warming")
    ├── QueryTooComplex    QUERY_TOO_COMPLEX
    └── StartupError       None: bad settings, never reaches a client
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AlmanacError",
    "AmbiguousTime",
    "Forbidden",
    "GraphWarming",
    "IndexUnavailable",
    "InvalidCursor",
    "InvalidDate",
    "InvalidInput",
    "InvalidRecurrence",
    "NotFound",
    "QueryTooComplex",
    "SnapshotChanged",
    "StartupError",
    "Unauthenticated",
    "UnknownTimezone",
]


class AlmanacError(Exception):
    """Base of every deliberate error; `code` is its GraphQL extensions code."""

    code: ClassVar[str | None] = None
    http_status: ClassVar[int] = 400
    reason: ClassVar[str | None] = None  # rendered as `extensions.reason` when set


class InvalidInput(AlmanacError):
    """A request argument is malformed or out of range."""

    code = "BAD_USER_INPUT"


class InvalidDate(InvalidInput):
    """A date or instant text that is not one of the accepted forms."""


class AmbiguousTime(InvalidDate):
    """A local time without zone where no timezone says which instant it is."""


class UnknownTimezone(InvalidInput):
    """A time zone name that is not a known IANA zone."""


class InvalidCursor(InvalidInput):
    """A pagination cursor that cannot be decoded."""


class InvalidRecurrence(InvalidInput):
    """A recurrence (rule, anchor, exdates or rdates) that cannot be expanded.

    `issue` is the vault issue code it stands for (`invalid_recurrence` or
    `recurrence_needs_timezone`) and `field` the frontmatter field to blame, so
    reconcile reports exactly what the expansion refuses.
    """

    def __init__(
        self, message: str, *, field: str = "recurrence", issue: str = "invalid_recurrence"
    ) -> None:
        super().__init__(message)
        self.field = field
        self.issue = issue

    def __reduce__(self) -> tuple[object, ...]:
        return (_invalid_recurrence, (str(self), self.field, self.issue))


def _invalid_recurrence(message: str, field: str, issue: str) -> InvalidRecurrence:
    return InvalidRecurrence(message, field=field, issue=issue)


class NotFound(AlmanacError):
    """The requested object does not exist in the readable scopes."""

    code = "NOT_FOUND"
    http_status = 404


class Unauthenticated(AlmanacError):
    """The request carries no valid credentials."""

    code = "UNAUTHENTICATED"
    http_status = 401


class Forbidden(AlmanacError):
    """The credentials do not allow reading the requested scope."""

    code = "FORBIDDEN"
    http_status = 403


class SnapshotChanged(AlmanacError):
    """A cursor was issued for another snapshot than the one being read."""

    code = "SNAPSHOT_CHANGED"


class IndexUnavailable(AlmanacError):
    """The state database cannot be read or written right now."""

    code = "INDEX_UNAVAILABLE"
    http_status = 503


class GraphWarming(IndexUnavailable):
    """The graph projection is still loading after a start; other queries are answered."""

    reason = "graph_warming"


class QueryTooComplex(AlmanacError):
    """The request exceeds a complexity, size or time limit."""

    code = "QUERY_TOO_COMPLEX"


class StartupError(AlmanacError):
    """Bad settings or an unusable vault/state path; never reaches a client."""
