"""A small vault of claims with fact keys and summaries derived from them (shared by the
temporal and API conflict tests)."""

from __future__ import annotations

from pathlib import Path


def _claim(fact_key: str, body: str, *extra: str, subject: str = "people/ada") -> str:
    fields = "\n".join(("type: claim", f"subject: {subject}", f"fact_key: {fact_key}", *extra))
    return f"---\n{fields}\n---\n{body}\n"


def _summary(*sources: str) -> str:
    listed = ", ".join(f'"[[{s}]]"' for s in sources)
    return f"---\ntype: note\nderived_from: [{listed}]\n---\nA summary.\n"


# Ids (paths without .md) to note texts.
CONFLICT_NOTES = {
    "people/ada": "---\ntype: person\naliases: [Ada L]\n---\n# Ada Lopez\n",
    "people/bob": "---\ntype: person\n---\n# Bob\n",
    # Two overlapping role claims (the second inside the first) ...
    "claims/role-2020": _claim(
        "role",
        "Engineer",
        "valid_from: 2020-01-01",
        "valid_until: 2021-01-01",
        "occurred_at: 2020-01-01",
    ),
    "claims/role-2020-lead": _claim(
        "role",
        "Lead",
        "valid_from: 2020-06-01",
        "valid_until: 2020-09-01",
        "occurred_at: 2020-06-01",
    ),
    # ... and two disjoint ones (the second starts where the first ends: half-open).
    "claims/role-2022": _claim(
        "role",
        "Manager",
        "valid_from: 2022-01-01",
        "valid_until: 2023-01-01",
        "occurred_at: 2022-01-01",
    ),
    "claims/role-2023": _claim(
        "role",
        "Director",
        "valid_from: 2023-01-01",
        "valid_until: 2024-01-01",
        "occurred_at: 2023-01-01",
    ),
    # Open ends: always valid, valid from 2024 on, valid until 2019.
    "claims/employer-always": _claim("employer", "Globex", "occurred_at: 2018-01-01"),
    "claims/employer-since-2024": _claim("employer", "Acme", "valid_from: 2024-01-01"),
    "claims/employer-until-2019": _claim("employer", "Initech", "valid_until: 2019-01-01"),
    # The same body (but for surrounding whitespace) twice: no conflict.
    "claims/team-a": _claim("team", "Platform"),
    "claims/team-b": _claim("team", "  Platform\n\n"),
    # Another subject, and a claim that is no longer active: neither conflicts.
    "claims/bob-role": _claim("role", "Intern", subject="'[[Bob]]'"),
    "claims/role-old": _claim(
        "role", "Trainee", "lifecycle: superseded", "superseded_by: claims/role-2022"
    ),
    # Summaries: one, two, three and four derived_from steps from a conflicting claim.
    "notes/sum-1": _summary("claims/role-2020"),
    "notes/sum-2": _summary("notes/sum-1"),
    "notes/sum-3": _summary("notes/sum-2"),
    "notes/sum-4": _summary("notes/sum-3"),
    "notes/sum-clean": _summary("claims/role-2022", "claims/team-a"),
    "notes/sum-dangling": _summary("claims/role-2022", "claims/nothing-here"),
    "claims/bad-key": _claim("Current Role", "Anything", subject="'[[Bob]]'"),
}


def write_notes(root: Path, notes: dict[str, str]) -> None:
    """Write each note as `<id>.md` below `root`."""
    for name, text in notes.items():
        path = root / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
