"""Every query sees every vault change that finished before it, with and without the watcher."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import DEMO_RECORDS, LocalClient, data

STATUS = """{
  status {
    snapshot recordCount
    coverage { complete issueCount issues(first: 100) { code path recordId } }
  }
}"""
RECORD = "query($id: ID!) { record(id: $id) { id title lifecycle locator { path revision } } }"
SNAPSHOT = "{ records(first: 1) { meta { snapshot } } }"

ACTIVE_CLAIM = (
    "---\ntype: claim\ntitle: X launches in May\nsubject: projects/atlas\n---\nX launches in May.\n"
)
WATCH = pytest.mark.parametrize("watch", [False, True], ids=["scan", "inotify"])


@pytest.fixture
def open_client(demo_vault: Path, tmp_path: Path) -> Iterator[Any]:
    """`open_client(watch)`: an app over the demo copy, closed at teardown."""
    clients: list[TestClient] = []

    def open_(watch: bool) -> TestClient:
        settings = Settings.build(
            vault=demo_vault, state=tmp_path / "state.db", config=None, watch=watch
        )
        app = create_app(settings)
        if watch:
            assert app.state.services.watcher is not None, "inotify watcher did not start"
        client = LocalClient(app)
        client.__enter__()
        clients.append(client)
        return client

    yield open_
    for client in clients:
        client.__exit__(None, None, None)


def status(client: TestClient) -> dict[str, Any]:
    result: dict[str, Any] = data(client, STATUS)["status"]
    return result


def record(client: TestClient, record_id: str) -> dict[str, Any] | None:
    result: dict[str, Any] | None = data(client, RECORD, id=record_id)["record"]
    return result


def snapshot(client: TestClient) -> str:
    value: str = data(client, SNAPSHOT)["records"]["meta"]["snapshot"]
    return value


@WATCH
def test_edited_title_shows_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    before = status(client)["snapshot"]
    note = demo_vault / "people/ada-lopez.md"
    for title in ["Ada Lopez-Garcia", "Ada L.", "Ada Lopez"]:  # the last one restores the original
        text = note.read_text()
        current = record(client, "people/ada-lopez")
        assert current is not None
        note.write_text(text.replace(f"title: {current['title']}", f"title: {title}"))
        found = record(client, "people/ada-lopez")
        assert found is not None and found["title"] == title
    assert status(client)["snapshot"] == before  # same content, same snapshot


@WATCH
def test_same_size_edit_shows_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    note = demo_vault / "people/ada-lopez.md"
    for title in ["Ada Lopez", "Ada Lopes", "Ada Lopex", "Ada Lopez"]:
        text = note.read_text()
        note.write_text(text.replace(text.split("title: ")[1].split("\n")[0], title, 1))
        found = record(client, "people/ada-lopez")
        assert found is not None and found["title"] == title


@WATCH
def test_atomic_replace_shows_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    note = demo_vault / "people/ada-lopez.md"
    temp = demo_vault / "people/.ada-lopez.md.tmp"
    temp.write_text(note.read_text().replace("title: Ada Lopez", "title: Ada Replaced"))
    os.replace(temp, note)
    found = record(client, "people/ada-lopez")
    assert found is not None and found["title"] == "Ada Replaced"


@WATCH
def test_added_note_shows_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    assert record(client, "people/zoe-new") is None
    (demo_vault / "people/zoe-new.md").write_text("---\ntype: person\ntitle: Zoe New\n---\nHi.\n")
    found = record(client, "people/zoe-new")
    assert found is not None and found["title"] == "Zoe New"
    assert status(client)["recordCount"] == DEMO_RECORDS + 1


@WATCH
def test_note_in_a_new_folder_shows_at_once(
    open_client: Any, demo_vault: Path, watch: bool
) -> None:
    client = open_client(watch)
    status(client)
    (demo_vault / "inbox/2030").mkdir(parents=True)
    (demo_vault / "inbox/2030/idea.md").write_text("# An idea\n")
    found = record(client, "inbox/2030/idea")
    assert found is not None and found["title"] == "An idea"
    (demo_vault / "inbox/2030/second.md").write_text("# Second idea\n")  # inside the new folder
    assert record(client, "inbox/2030/second") is not None
    assert status(client)["recordCount"] == DEMO_RECORDS + 2


@WATCH
def test_deleted_note_vanishes_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    assert record(client, "topics/on-call") is not None
    (demo_vault / "topics/on-call.md").unlink()
    assert record(client, "topics/on-call") is None
    assert status(client)["recordCount"] == DEMO_RECORDS - 1


@WATCH
def test_deleted_folder_vanishes_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    assert record(client, "places/berlin-office") is not None
    shutil.rmtree(demo_vault / "places")
    assert record(client, "places/berlin-office") is None
    assert record(client, "places/lisbon-office") is None


@WATCH
def test_renamed_note_moves_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    before = record(client, "topics/on-call")
    assert before is not None
    os.rename(demo_vault / "topics/on-call.md", demo_vault / "topics/oncall-rotation.md")
    assert record(client, "topics/on-call") is None
    after = record(client, "topics/oncall-rotation")
    assert after is not None
    assert after["title"] == before["title"]
    assert after["locator"] == {
        "path": "topics/oncall-rotation.md",
        "revision": before["locator"]["revision"],
    }
    assert status(client)["recordCount"] == DEMO_RECORDS


@WATCH
def test_renamed_folder_moves_at_once(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    assert record(client, "topics/on-call") is not None
    os.rename(demo_vault / "topics", demo_vault / "subjects")
    assert record(client, "topics/on-call") is None
    assert record(client, "subjects/on-call") is not None


@WATCH
def test_snapshot_is_stable_without_content_change(
    open_client: Any, demo_vault: Path, watch: bool
) -> None:
    client = open_client(watch)
    first = snapshot(client)
    assert snapshot(client) == first
    assert status(client)["snapshot"] == first
    note = demo_vault / "people/ada-lopez.md"
    stat = note.stat()
    os.utime(note, ns=(stat.st_atime_ns + 10**9, stat.st_mtime_ns + 10**9))  # touch
    assert snapshot(client) == first
    note.write_bytes(note.read_bytes())  # rewrite the same bytes
    assert snapshot(client) == first
    (demo_vault / "people/.ada-lopez.md.swp").write_bytes(b"\0editor state")  # ignored names
    (demo_vault / "notes.txt").write_text("not a note")
    assert snapshot(client) == first


@WATCH
def test_snapshot_changes_with_content(open_client: Any, demo_vault: Path, watch: bool) -> None:
    client = open_client(watch)
    original = snapshot(client)
    note = demo_vault / "people/ada-lopez.md"
    text = note.read_text()
    note.write_text(text + "\nOne more line.\n")
    edited = snapshot(client)
    (demo_vault / "new.md").write_text("# New\n")
    added = snapshot(client)
    assert len({original, edited, added}) == 3
    (demo_vault / "new.md").unlink()
    assert snapshot(client) == edited  # the snapshot is a function of the content
    note.write_text(text)
    assert snapshot(client) == original


@WATCH
def test_withdrawn_record_restored_from_an_old_copy_stays_out(
    open_client: Any, demo_vault: Path, tmp_path: Path, watch: bool
) -> None:
    client = open_client(watch)
    note = demo_vault / "claims/x-launch-date.md"
    active = ACTIVE_CLAIM
    note.write_text(active)
    backup = tmp_path / "x-launch-date.md"
    shutil.copy2(note, backup)  # what a sync tool or a backup keeps
    found = record(client, "claims/x-launch-date")
    assert found is not None and found["lifecycle"] == "ACTIVE"

    note.write_text(active.replace("---\nX", "lifecycle: withdrawn\n---\nX"))
    assert record(client, "claims/x-launch-date") is None
    assert status(client)["recordCount"] == DEMO_RECORDS

    shutil.copy2(backup, note)  # the stale active copy comes back, old mtime included
    assert note.read_text() == active
    assert record(client, "claims/x-launch-date") is None
    result = status(client)
    assert result["recordCount"] == DEMO_RECORDS
    blocked = [i for i in result["coverage"]["issues"] if i["code"] == "resurrection_blocked"]
    assert [(i["path"], i["recordId"]) for i in blocked] == [
        ("claims/x-launch-date.md", "claims/x-launch-date")
    ]
    assert result["coverage"]["complete"] is False
    everything = data(client, "{ records(filter: {lifecycle: ALL}, first: 100) { nodes { id } } }")
    assert "claims/x-launch-date" not in [n["id"] for n in everything["records"]["nodes"]]
    lookup = data(client, '{ lookup(name: "X launches in May") { status } }')
    assert lookup["lookup"]["status"] == "MISSING"


@WATCH
def test_withdrawn_record_stays_out_after_a_restart(
    demo_vault: Path, tmp_path: Path, watch: bool
) -> None:
    note = demo_vault / "claims/x-launch-date.md"
    active = ACTIVE_CLAIM
    note.write_text(active)
    settings = Settings.build(
        vault=demo_vault, state=tmp_path / "state.db", config=None, watch=watch
    )
    with LocalClient(create_app(settings)) as client:
        assert record(client, "claims/x-launch-date") is not None
        note.write_text(active.replace("---\nX", "lifecycle: withdrawn\n---\nX"))
        assert record(client, "claims/x-launch-date") is None
    note.write_text(active)  # restored while the server was down
    with LocalClient(create_app(settings)) as client:
        assert record(client, "claims/x-launch-date") is None
        codes = {i["code"] for i in status(client)["coverage"]["issues"]}
        assert "resurrection_blocked" in codes
