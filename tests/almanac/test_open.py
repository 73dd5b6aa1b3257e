"""Opening a vault from Python, and what every call promises: freshness, threads, snapshots,
typed errors, the same answer as the server."""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import almanac
from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.almanac.shapes import timeless
from tests.api.helpers import LocalClient

NEW_NOTE = "---\ntype: person\ntitle: Zora Quill\n---\nNew here.\n"


def test_opening_a_vault_never_reconciled_reads_it_with_progress(
    demo_vault: Path, tmp_path: Path
) -> None:
    calls: list[tuple[int, int]] = []
    state = tmp_path / "fresh" / "state.db"
    with almanac.open(demo_vault, state=state, progress=lambda d, n: calls.append((d, n))) as kb:
        assert kb.status().record_count == 88
    assert state.exists()
    assert calls and calls[-1] == (89, 89)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    # Opened again: the state file is there, nothing is read again.
    again: list[tuple[int, int]] = []
    with almanac.open(demo_vault, state=state, progress=lambda d, n: again.append((d, n))) as kb:
        assert kb.status().record_count == 88
    assert all(d == 0 for d, _ in again)


@pytest.mark.parametrize("watch", [False, True], ids=["scan", "watcher"])
def test_a_call_sees_an_edit_finished_before_it(
    demo_vault: Path, tmp_path: Path, watch: bool
) -> None:
    with almanac.open(demo_vault, state=tmp_path / "state.db", watch=watch) as kb:
        assert kb.status().watch_mode == ("inotify" if watch else "scan")
        assert kb.lookup("Zora Quill").status.name == "MISSING"
        (demo_vault / "people" / "zora-quill.md").write_text(NEW_NOTE)
        assert kb.lookup("Zora Quill").status.name == "FOUND"
        assert kb.query('{ record(id: "people/zora-quill") { title } }') == {
            "data": {"record": {"title": "Zora Quill"}}
        }
        (demo_vault / "people" / "zora-quill.md").unlink()
        assert kb.record("people/zora-quill") is None


def test_two_threads_query_while_a_third_edits(demo_vault: Path, tmp_path: Path) -> None:
    edits = 15
    errors: list[BaseException] = []
    seen: dict[str, list[int]] = {"helpers": [], "query": []}
    done = threading.Event()
    with almanac.open(demo_vault, state=tmp_path / "state.db") as kb:

        def edit() -> None:
            for i in range(edits):
                (demo_vault / "people" / f"visitor-{i}.md").write_text(
                    f"---\ntype: person\ntitle: Visitor {i}\n---\n[[Ada Lopez]]\n"
                )

        def helpers() -> None:
            while not done.is_set():
                seen["helpers"].append(kb.status().record_count)
                kb.graph("people/ada-lopez", hops=1)
                kb.timeline("people/ada-lopez", first=3)

        def query() -> None:
            while not done.is_set():
                answer = kb.query('{ status { recordCount } lookup(name: "Sam") { status } }')
                seen["query"].append(answer["data"]["status"]["recordCount"])

        def guarded(work: Any) -> Any:
            def run() -> None:
                try:
                    work()
                except BaseException as exc:
                    errors.append(exc)
                    done.set()

            return run

        readers = [threading.Thread(target=guarded(f)) for f in (helpers, query)]
        for reader in readers:
            reader.start()
        editor = threading.Thread(target=guarded(edit))
        editor.start()
        editor.join()
        after = kb.status().record_count  # every edit finished before this call
        done.set()
        for reader in readers:
            reader.join()
    assert errors == []
    assert after == 88 + edits
    for counts in seen.values():
        assert counts and counts == sorted(counts)  # each thread's view only moves forward
        assert counts[0] >= 88 and counts[-1] <= 88 + edits


def test_a_change_under_an_iteration_raises_snapshot_changed(
    demo_vault: Path, tmp_path: Path
) -> None:
    with almanac.open(demo_vault, state=tmp_path / "state.db") as kb:
        people = iter(kb.records(type="person", first=2))
        assert next(people) and next(people)
        (demo_vault / "people" / "zora-quill.md").write_text(NEW_NOTE)
        with pytest.raises(almanac.SnapshotChanged) as raised:
            next(people)
        assert raised.value.code == "SNAPSHOT_CHANGED"
        assert len(list(kb.records(type="person", first=2))) == 13  # a new walk reads it all


def test_an_unchanged_vault_iterates_to_the_end(demo_kb: almanac.Almanac) -> None:
    every = demo_kb.records(first=7, lifecycle="ALL")
    assert len({r.id for r in every}) == every.total == 88


NAIVE = datetime(2026, 3, 1, 9, 0)

BAD = [
    ("hops", lambda kb: kb.graph("people/ada-lopez", hops=9), "'hops'"),
    ("hops-text", lambda kb: kb.graph("people/ada-lopez", hops="2"), "'hops'"),
    ("seed", lambda kb: kb.graph(), "'seed'"),
    ("seed-both", lambda kb: kb.graph("people/ada-lopez", text="Ada"), "'seed'"),
    ("max-paths", lambda kb: kb.paths("people/ada-lopez", "orgs/atlas", max_paths=0), "'maxPaths'"),
    ("direction", lambda kb: kb.paths("a", "b", direction="sideways"), "'direction'"),
    ("since-text", lambda kb: kb.timeline(since="yesterday"), "'since'"),
    (
        "since-after-until",
        lambda kb: kb.timeline(since="2026-05-01", until="2026-04-01"),
        "'since'",
    ),
    ("naive-datetime", lambda kb: kb.records(since=NAIVE), "'filter.since'"),
    ("timezone", lambda kb: kb.chronicle_day("2026-03-02", timezone="Mars/Base"), "'timezone'"),
    ("date", lambda kb: kb.chronicle_day("2026-02-30"), "'date'"),
    ("first", lambda kb: kb.occurrences("x", "2026-01-01", "2026-02-01", first=True), "'first'"),
    ("mode", lambda kb: kb.search("atlas", mode="fuzzy"), "'mode'"),
    ("filter-field", lambda kb: kb.search("atlas", colour="red"), "'colour'"),
    ("unknown", lambda kb: kb.timeline(entity_id="people/ada-lopez"), "'entity_id'"),
    ("relations", lambda kb: kb.graph("people/ada-lopez", relations="works_at"), "'relations'"),
    ("cursor", lambda kb: kb.records(after="nonsense"), "Cursor"),
]


@pytest.mark.parametrize(("call", "named"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_argument_raises_invalid_input_naming_it(
    demo_kb: almanac.Almanac, call: Any, named: str
) -> None:
    with pytest.raises(almanac.InvalidInput) as raised:
        call(demo_kb)
    assert named in str(raised.value)
    assert raised.value.code == "BAD_USER_INPUT"


DOCUMENTS = [
    ("lookup", '{ lookup(name: "Sam") { status candidates { id } meta { snapshot } } }'),
    ("bad-argument", '{ graph(seed: {id: "people/ada-lopez"}, hops: 9) { status } }'),
    ("not-a-field", "{ nothing }"),
    ("syntax", "{ status { "),
    ("too-deep", "{ status { coverage { issues { code } } } }" + "#" * 10),
    ("aliases", "{ " + " ".join(f"a{i}: status {{ recordCount }}" for i in range(31)) + " }"),
    ("too-large", "{ status { recordCount } }" + " " * 70_000),
]


@pytest.mark.parametrize("text", [d[1] for d in DOCUMENTS], ids=[d[0] for d in DOCUMENTS])
def test_query_answers_what_post_graphql_answers(
    demo_vault: Path, tmp_path: Path, text: str
) -> None:
    state = tmp_path / "state.db"
    settings = Settings.build(vault=demo_vault, state=state, watch=False)
    with LocalClient(create_app(settings)) as client:
        served = client.post("/graphql", json={"query": text, "variables": {}}).json()
    with almanac.open(demo_vault, state=state) as kb:
        assert timeless(kb.query(text, {})) == timeless(served)


def test_query_takes_variables_as_json_does(demo_kb: almanac.Almanac) -> None:
    text = (
        'query($names: [String!]) { graph(seed: {id: "people/ada-lopez"}, hops: 1,'
        " relations: $names) { status } }"
    )
    assert demo_kb.query(text, {"names": ("works_at",)}) == {"data": {"graph": {"status": "FOUND"}}}
    with pytest.raises(almanac.InvalidInput):
        demo_kb.query(text, {"names": {1, 2}})


def test_a_closed_almanac_refuses_calls(demo_vault: Path, tmp_path: Path) -> None:
    kb = almanac.open(demo_vault, state=tmp_path / "state.db")
    kb.close()
    kb.close()
    with pytest.raises(almanac.InvalidInput):
        kb.status()


def test_opening_a_missing_vault_is_a_startup_error(tmp_path: Path) -> None:
    with pytest.raises(almanac.StartupError):
        almanac.open(tmp_path / "nowhere")


def test_results_are_frozen_values(demo_kb: almanac.Almanac) -> None:
    found = demo_kb.paths("people/samuel-okafor", "orgs/kestrel-cloud", max_hops=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.status = found.status  # type: ignore[misc]
    assert isinstance(found.paths, tuple) and isinstance(found.paths[0].edges, tuple)
    hash(found.paths)  # tuples of frozen values all the way down
    record = demo_kb.record("people/ada-lopez")
    assert record is not None and isinstance(record.aliases, tuple)
    hash(record)
