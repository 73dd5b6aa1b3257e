"""timeline and chronicleLastSeen: association, time fields, eligibility, grouping, clocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import REPLACEMENT, SUPERSEDED, LocalClient, codes, data, gql

NOTES = {
    "ada": "type: person\ntitle: Ada",
    "bo": "type: person\ntitle: Bo",
    "kickoff": "type: meeting\noccurred_at: 2026-01-14T10:00:00+01:00\nentities: [ada]",
    "review": "type: meeting\noccurred_at: 2026-02-03T14:00:00Z",
    "retro": "type: meeting\noccurred_at: 2026-03-10T09:00:00Z",
    "gossip": "type: meeting\noccurred_at: 2026-01-20T09:00:00Z",  # mentions Ada in its body only
    # Claims about Ada: sourced (folded into the source's row when grouped), unsourced, undated.
    "c-review": "type: claim\nsubject: ada\nsource: review\noccurred_at: 2026-02-03",
    "c-review-2": "type: claim\nsubject: ada\nsource: review",
    "c-late": "type: claim\nsubject: ada\nsource: review\noccurred_at: 2026-02-20",
    "c-free": "type: claim\nsubject: ada\noccurred_at: 2026-02-10T08:00:00Z",
    "c-undated": "type: claim\nsubject: ada",
    # A source_event claim stands for the retro on occurrence timelines.
    "c-retro": (
        "type: claim\nsubject: ada\nsource: retro\nsource_event: true\nrecorded_at: 2026-03-11"
    ),
    # A relationship sourced by the review: its body is the review row's summary.
    "r-ada-bo": (
        "type: relationship\nfrom: ada\nto: bo\nrelation: mentors\nsource: review\n"
        "valid_from: 2026-01-01\nvalid_until: 2026-06-01"
    ),
    # Superseded: an ACTIVE timeline returns the replacement after the direct matches.
    "plan-v1": (
        "type: decision\noccurred_at: 2026-01-05\nentities: [ada]\nlifecycle: superseded\n"
        "superseded_by: plan-v2"
    ),
    "plan-v2": "type: decision\noccurred_at: 2026-04-01",
    "task-late": "type: task\nowner: ada\ndue_at: 2026-03-01\nstate: open",
    "task-done": "type: task\nowner: ada\ndue_at: 2026-03-01\nstate: done",
    "task-today": "type: task\nowner: ada\ndue_at: 2026-03-15",
    "state": "type: note\nentities: [ada]\noccurred_at: 2026-01-01\nvalid_from: 2026-01-01\n"
    "valid_until: 2026-03-01",
    "conf": "type: event\nentities: [ada]\noccurred_at: 2026-03-14\nends_at: 2026-03-16",
    "summit": "type: event\nentities: [ada]\noccurred_at: 2026-03",
    "withdrawn": "type: meeting\nentities: [ada]\noccurred_at: 2026-02-01\nlifecycle: withdrawn",
}
BODIES = {
    "gossip": "Talked about [[ada]].",
    "r-ada-bo": "Ada mentors [[bo]] on [[kickoff]] follow-ups and [[nowhere]].",
    "c-retro": "The retro found the root cause.",
}
AS_OF = "2026-03-15T12:00:00Z"


@pytest.fixture(scope="module")
def tl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("timeline")
    vault = folder / "vault"
    vault.mkdir()
    for name, fields in NOTES.items():
        (vault / f"{name}.md").write_text(f"---\n{fields}\n---\n{BODIES.get(name, '')}\n")
    settings = Settings.build(vault=vault, state=folder / "state.db", config=None, watch=False)
    with LocalClient(create_app(settings)) as client:
        yield client


Q = """query($entity: ID, $field: TimeField, $since: String, $until: String, $order: Order,
  $eligibility: Eligibility, $group: TimelineGroup, $sources: Boolean, $asOf: String,
  $kind: String, $tz: String, $first: Int) {
  timeline(entity: $entity, timeField: $field, since: $since, until: $until, order: $order,
    eligibility: $eligibility, group: $group, includeSources: $sources, asOf: $asOf, kind: $kind,
    timezone: $tz, first: $first) {
    total asOf timezone localDate clockCounts { clock count }
    entries { record { id } date { text } clock via { id } source { id } note { id } claims
              links { id } summary sources { id } locator { path } }
    meta { degraded }
  }
}"""


def timeline(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("asOf", AS_OF)
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, Q, **args)["timeline"]
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [e["record"]["id"] for e in result["entries"]]


def test_entity_association_never_counts_co_mentions(tl: TestClient) -> None:
    result = timeline(tl, entity="ada", asOf=None)
    # Direct fields (entities, owner, subject, endpoints) and the sources of claims and
    # relationships; the gossip meeting only links to Ada, the withdrawn one is out.
    assert ids(result) == [
        "state", "kickoff", "c-review", "review", "c-free", "c-late", "summit", "c-retro",
        "conf", "plan-v2",
    ]  # fmt: skip
    assert result["entries"][-1]["via"] == {"id": "plan-v1"}


def test_a_source_event_claim_stands_for_its_meeting(tl: TestClient) -> None:
    entry = next(e for e in timeline(tl, entity="ada")["entries"] if e["record"]["id"] == "c-retro")
    assert entry["date"] == {"text": "2026-03-10T09:00:00Z"}
    assert entry["source"] == {"id": "retro"}
    assert entry["summary"] == "The retro found the root cause."
    assert entry["locator"] == {"path": "c-retro.md"}
    # A kind: "meeting" query still returns the meeting itself.
    assert ids(timeline(tl, entity="ada", kind="meeting")) == ["kickoff", "review", "retro"]


def test_order_desc_reverses_both_keys(tl: TestClient) -> None:
    asc = ids(timeline(tl, entity="ada", eligibility="INCLUDE_INACTIVE"))
    desc = ids(timeline(tl, entity="ada", eligibility="INCLUDE_INACTIVE", order="DESC"))
    assert desc == asc[::-1]


def test_include_inactive_adds_superseded_records_never_withdrawn(tl: TestClient) -> None:
    result = ids(timeline(tl, entity="ada", eligibility="INCLUDE_INACTIVE"))
    assert "plan-v1" in result and "plan-v2" not in result and "withdrawn" not in result


def test_as_of_is_a_validity_filter_only_when_given(tl: TestClient) -> None:
    assert "state" in ids(timeline(tl, entity="ada", asOf=None))
    assert "state" not in ids(timeline(tl, entity="ada", asOf="2026-03-01T00:00:00Z"))
    assert "state" in ids(timeline(tl, entity="ada", asOf="2026-02-28T23:59:59Z"))
    # INCLUDE_INACTIVE drops the validity filter.
    late = timeline(tl, entity="ada", asOf="2026-03-01T00:00:00Z", eligibility="INCLUDE_INACTIVE")
    assert "state" in ids(late)


def test_other_time_fields(tl: TestClient) -> None:
    due = timeline(tl, entity="ada", field="DUE_AT")
    assert ids(due) == ["task-done", "task-late", "task-today"]
    assert [e["clock"] for e in due["entries"]] == ["PAST", "OVERDUE", "TODAY"]
    assert ids(timeline(tl, entity="ada", field="RECORDED_AT")) == ["c-retro"]


def test_clocks_and_their_counts_are_echoed_with_as_of(tl: TestClient) -> None:
    result = timeline(tl, entity="ada", tz="Europe/Berlin", eligibility="INCLUDE_INACTIVE")
    clocks = {e["record"]["id"]: e["clock"] for e in result["entries"]}
    assert clocks["conf"] == "ONGOING"  # 14th to 16th, asOf the 15th: not TODAY, it began earlier
    assert clocks["summit"] == "CURRENT_PERIOD"
    assert clocks["state"] == "PAST"  # valid until 1 March
    assert clocks["plan-v1"] == "PAST"
    counts = {c["clock"]: c["count"] for c in result["clockCounts"]}
    assert sum(counts.values()) == result["total"] == len(result["entries"])
    assert (result["asOf"], result["timezone"], result["localDate"]) == (
        AS_OF,
        "Europe/Berlin",
        "2026-03-15",
    )
    tokyo = timeline(tl, entity="ada", tz="Pacific/Kiritimati", asOf="2026-03-15T11:00:00Z")
    assert tokyo["localDate"] == "2026-03-16"


def test_since_until_with_inclusive_bounds(tl: TestClient) -> None:
    result = timeline(tl, entity="ada", since="2026-02-03T14:00:00Z", until="2026-02-10")
    assert ids(result) == ["c-review", "review", "c-free"]


def test_group_by_source(tl: TestClient) -> None:
    result = timeline(tl, entity="ada", group="SOURCE", sources=True, asOf=None)
    rows = {e["record"]["id"]: e for e in result["entries"]}
    assert ids(result) == [
        "state", "kickoff", "review", "c-free", "c-late", "summit", "retro", "conf",
        "c-undated",
    ]  # fmt: skip
    review = rows["review"]
    assert review["claims"] == 2  # c-review and c-review-2; c-late is dated another day
    assert review["note"] == {"id": "r-ada-bo"}
    assert review["summary"].startswith("Ada mentors")
    assert review["links"] == [{"id": "bo"}, {"id": "kickoff"}]  # [[nowhere]] resolves to nothing
    assert review["sources"] == [{"id": "review"}]
    retro = rows["retro"]
    assert (retro["claims"], retro["summary"]) == (1, "The retro found the root cause.")
    assert rows["c-undated"]["clock"] == "UNDATED"
    assert rows["c-free"]["claims"] is None


def test_include_sources(tl: TestClient) -> None:
    rows = {e["record"]["id"]: e for e in timeline(tl, entity="ada", sources=True)["entries"]}
    assert rows["c-review"]["sources"] == [{"id": "review"}]
    assert rows["kickoff"]["sources"] == []
    plain = {e["record"]["id"]: e for e in timeline(tl, entity="ada")["entries"]}
    assert plain["c-review"]["sources"] == []


def test_timeline_without_entity_lists_every_dated_record(tl: TestClient) -> None:
    result = timeline(tl, since="2026-01-20", until="2026-01-20")
    assert ids(result) == ["gossip"]


LAST = """query($entity: ID!, $bound: String) {
  chronicleLastSeen(entity: $entity, occurredOnOrBefore: $bound) {
    entry { record { id } date { text } source { id } sources { id } } reason meta { degraded }
  }
}"""


@pytest.mark.parametrize(
    ("entity", "bound", "record", "reason"),
    [
        ("ada", "2026-02-03T13:59:59Z", "c-review", None),  # a day value starts at 00:00Z
        ("ada", "2026-02-03T14:00:00Z", "review", None),  # the bound is inclusive
        ("ada", "2026-03-10", "c-retro", None),  # the retro, told by its source_event claim
        ("ada", "2025-12-31", None, "no_dated_association"),
        ("nobody", None, None, "entity_missing"),
        ("withdrawn", None, None, "entity_missing"),
    ],
)
def test_last_seen(
    tl: TestClient, entity: str, bound: str | None, record: str | None, reason: str | None
) -> None:
    result = data(tl, LAST, entity=entity, bound=bound)["chronicleLastSeen"]
    assert result["reason"] == reason
    assert (result["entry"] or {}).get("record", {}).get("id") == record


def test_demo_overdue_commitment_and_month_event(demo_client: TestClient) -> None:
    due = data(
        demo_client,
        Q,
        entity="projects/atlas",
        field="DUE_AT",
        asOf="2026-11-29T12:00:00Z",
        first=20,
    )["timeline"]
    assert [(e["record"]["id"], e["clock"]) for e in due["entries"]] == [
        ("tasks/atlas-benchmark-report", "OVERDUE")
    ]
    summit = data(
        demo_client,
        Q,
        entity="orgs/open-geo-foundation",
        asOf="2026-09-15T12:00:00Z",
        first=50,
    )["timeline"]
    clocks = {e["record"]["id"]: e["clock"] for e in summit["entries"]}
    assert clocks["events/open-geo-summit-2026"] == "CURRENT_PERIOD"


def test_demo_superseded_decision_is_replaced(demo_client: TestClient) -> None:
    result = data(
        demo_client, Q, kind="decision", since="2026-01-01", until="2026-12-31", first=50
    )["timeline"]
    assert SUPERSEDED not in ids(result)
    assert REPLACEMENT in ids(result)
    inactive = data(demo_client, Q, kind="decision", eligibility="INCLUDE_INACTIVE", first=50)[
        "timeline"
    ]
    assert SUPERSEDED in ids(inactive)


def test_group_source_needs_an_entity(tl: TestClient) -> None:
    body = gql(tl, "{ timeline(group: SOURCE) { total } }")
    assert codes(body) == ["BAD_USER_INPUT"]


def test_a_type_alias_asked_for_is_expanded_like_the_notes_types(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "m.md").write_text("---\ntype: meetings\noccurred_at: 2026-01-05\n---\n")
    (vault / "n.md").write_text("---\ntype: meeting\noccurred_at: 2026-01-06\n---\n")
    config = tmp_path / "almanac.toml"
    config.write_text('[type_aliases]\nmeetings = "meeting"\n')
    settings = Settings.build(vault=vault, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        for kind in ("meeting", "meetings"):
            result = data(client, Q, kind=kind, first=10)["timeline"]
            assert ids(result) == ["m", "n"], kind
        records = data(client, '{ records(filter: {type: "meetings"}) { total } }')
        assert records["records"]["total"] == 2


ENDPOINTS = {
    "ada": ("type: person\ntitle: Ada", ""),
    "bo": ("type: person\ntitle: Bo", ""),
    "standup": ("type: meeting\noccurred_at: 2026-04-02T09:00:00Z", ""),
    "workshop": ("type: meeting\noccurred_at: 2026-04-05T13:00:00Z", ""),
    # The relationship between Ada and the standup: no `source:` field.
    "r-ada-standup": (
        "type: relationship\nfrom: ada\nto: standup\nrelation: presented_at",
        "Ada presented [[bo]]'s plan at the standup.",
    ),
    # Sourced by the workshop, and a relationship between Ada and the workshop: the latter wins.
    "r-ada-bo": (
        "type: relationship\nfrom: ada\nto: bo\nrelation: pairs_with\nsource: workshop",
        "Ada pairs with Bo.",
    ),
    "r-workshop-ada": (
        "type: relationship\nfrom: workshop\nto: ada\nrelation: hosted",
        "The workshop was hosted by [[ada]] and [[nowhere]].",
    ),
}


def test_group_by_source_reads_a_relationship_to_a_dated_record_as_its_note(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, (fields, body) in ENDPOINTS.items():
        (vault / f"{name}.md").write_text(f"---\n{fields}\n---\n{body}\n")
    settings = Settings.build(vault=vault, state=tmp_path / "state.db", config=None, watch=False)
    with LocalClient(create_app(settings)) as client:
        result = timeline(client, entity="ada", group="SOURCE", asOf=None)
    assert ids(result) == ["standup", "workshop"]
    standup, workshop = result["entries"]
    assert standup["note"] == {"id": "r-ada-standup"}
    assert standup["summary"] == "Ada presented [[bo]]'s plan at the standup."
    assert standup["links"] == [{"id": "bo"}]
    assert standup["date"]["text"] == "2026-04-02T09:00:00Z"
    assert workshop["note"] == {"id": "r-workshop-ada"}
    assert workshop["summary"].startswith("The workshop was hosted")
    assert workshop["links"] == [{"id": "ada"}]
