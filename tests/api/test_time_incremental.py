"""Time queries against SPEC: after each incremental edit, the live state database answers
what a fresh one answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from tests.api.helpers import codes, gql
from tests.api.time_vaults import (
    AS_OF,
    DAY,
    LAST,
    OCC,
    SINCE,
    TL,
    app_over,
    strip_meta,
    touch,
    write_vault,
)

# -- incremental edits answer what a fresh state database answers ---------------------------

EDIT_NOTES = {
    "ada": "type: person\ntitle: Ada",
    "people/bo": "type: person\ntitle: Bo",
    "standup": (
        "type: meeting\nentities: [ada, bo]\ntimezone: Europe/Berlin\n"
        "occurred_at: 2026-03-02T09:30\nends_at: 2026-03-02T09:45\n"
        "recurrence: FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10"
    ),
    "m1": "type: meeting\noccurred_at: 2026-03-10T14:00:00Z\nentities: [bo]",
    "c1": "type: claim\nsubject: ada\nsource: m1\nsource_event: true",
    "d1": "type: decision\nentities: [ada]\noccurred_at: 2026-03-04",
    "t1": "type: task\nowner: bo\ndue_at: 2026-03-05\nstate: open",
}


def _edit_rule(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("BYDAY=MO,WE;COUNT=10", "BYDAY=TU;COUNT=6"))


def _edit_exdates(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("COUNT=6\n", "COUNT=6\nexdates: [2026-03-10]\n"))


def _edit_zone(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("Europe/Berlin", "America/New_York"))


def _withdraw_claim(vault: Path) -> None:
    text = (vault / "c1.md").read_text()
    touch(
        vault / "c1.md",
        text.replace("source_event: true", "source_event: true\nlifecycle: withdrawn"),
    )


def _supersede(vault: Path) -> None:
    touch(vault / "d2.md", "---\ntype: decision\noccurred_at: 2026-03-20\n---\n# d2\n")
    text = (vault / "d1.md").read_text()
    touch(
        vault / "d1.md",
        text.replace("2026-03-04", "2026-03-04\nlifecycle: superseded\nsuperseded_by: d2"),
    )


def _rename_entity(vault: Path) -> None:
    (vault / "archive").mkdir()
    (vault / "people" / "bo.md").rename(vault / "archive" / "bo.md")


def _close_task(vault: Path) -> None:
    text = (vault / "t1.md").read_text()
    touch(vault / "t1.md", text.replace("state: open", "state: done"))


def _delete_standup(vault: Path) -> None:
    (vault / "standup.md").unlink()


EDITS = [
    _edit_rule, _edit_exdates, _edit_zone, _withdraw_claim, _supersede, _rename_entity,
    _close_task, _delete_standup,
]  # fmt: skip
EDIT_QUERIES: list[tuple[str, dict[str, Any]]] = [
    (TL, {"entity": "ada", "since": "2026-03-01", "until": "2026-04-30", "asOf": AS_OF}),
    (TL, {"entity": "ada", "asOf": AS_OF, "eligibility": "INCLUDE_INACTIVE"}),
    (TL, {"field": "DUE_AT", "asOf": AS_OF}),
    (SINCE, {"since": "2026-03-01", "until": "2026-03-31", "tz": "Europe/Berlin"}),
    (DAY, {"date": "2026-03-10", "week": True, "tz": "America/New_York"}),
    (OCC, {"id": "standup", "since": "2026-03-01", "until": "2026-04-30"}),
    (LAST, {"entity": "ada", "bound": "2026-03-31"}),
]


def _answers(client: TestClient, entity_bo: str) -> list[Any]:
    out = []
    for query, args in EDIT_QUERIES:
        if query is not LAST and query is not OCC:
            args = {"first": 100, **args}
        out.append(strip_meta(gql(client, query, **args)))
    out.append(strip_meta(gql(client, TL, entity=entity_bo, first=100, asOf=AS_OF)))
    out.append(strip_meta(gql(client, LAST, entity=entity_bo)))
    return out


def test_incremental_edits_answer_like_a_fresh_state(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, EDIT_NOTES)
    with app_over(vault, tmp_path / "live.db") as live:
        before = _answers(live, "people/bo")  # the first reconcile
        for n, edit in enumerate(EDITS):
            edit(vault)
            bo = "archive/bo" if (vault / "archive").exists() else "people/bo"
            incremental = _answers(live, bo)
            with app_over(vault, tmp_path / f"fresh-{n}.db") as fresh:
                assert incremental == _answers(fresh, bo), edit.__name__
            if edit is _rename_entity:
                # The renamed entity keeps its timeline (`entities: [bo]` resolves by file name).
                assert incremental[-2]["data"]["timeline"]["total"] == 2
                assert codes(gql(live, TL, entity="people/bo")) == ["NOT_FOUND"]
            else:
                assert incremental != before, f"{edit.__name__} changed nothing visible"
            before = incremental
