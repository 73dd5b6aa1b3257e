from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Issue"]


@dataclass(frozen=True, slots=True)
class Issue:
    """A validation issue: a problem in the vault, reported as data, never raised.

    Args:
        path: Vault-relative POSIX path of the file.
        line: 1-based line, counting frontmatter, when one line is to blame.
        field: The frontmatter field, when one is to blame.
        code: A stable snake_case code such as `invalid_date`.
        message: What is wrong, naming the value.
        record_id: The id of the record concerned, when it has one.
    """

    path: str
    line: int | None
    field: str | None
    code: str
    message: str
    record_id: str | None = None
