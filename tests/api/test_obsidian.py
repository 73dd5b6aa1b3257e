"""An Obsidian vault as it is: `date:`/`created:` read through `[fields]`, daily notes dated by
their names (`[daily_notes]`), and embeds of attachments that exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.api import Settings, create_app
from almanac.api.cli import main
from tests import vaults
from tests.api.helpers import LocalClient, data

CONFIG = """
[fields]
occurred_at = ["date"]
recorded_at = ["created"]

[daily_notes]
folder = "Daily"
"""
NOTES = vaults.files("obsidian")


def _vault(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "vault"
    for path, text in NOTES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    config = tmp_path / "almanac.toml"
    config.write_text(CONFIG)
    return root, config


def test_obsidian_dates_and_daily_notes_answer_time_queries(tmp_path: Path) -> None:
    root, config = _vault(tmp_path)
    settings = Settings.build(vault=root, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        day = data(
            client,
            '{ chronicleDay(date: "2024-03-05")'
            " { entries { record { id } date { text precision } } }"
            " recorded: timeline(timeField: RECORDED_AT) { entries { record { id } } }"
            ' all: chronicleSince(since: "2000-01-01")'
            " { entries { record { id } date { text } } } }",
        )
    # The Almanac name wins over a mapped one, and a note's own date over its daily name.
    assert [(e["record"]["id"], e["date"]["text"]) for e in day["all"]["entries"]] == [
        ("Daily/2024-03-06", "2024-03-01"),
        ("Daily/2024-03-05", "2024-03-05"),
        ("Meetings/Kickoff", "2024-03-05"),
        ("Meetings/Retro", "2024-03-08"),
    ]
    assert day["chronicleDay"]["entries"] == [
        {"record": {"id": "Daily/2024-03-05"}, "date": {"text": "2024-03-05", "precision": "DAY"}},
        {"record": {"id": "Meetings/Kickoff"}, "date": {"text": "2024-03-05", "precision": "DAY"}},
    ]
    assert day["recorded"]["entries"] == [{"record": {"id": "Meetings/Kickoff"}}]


def test_without_the_config_only_almanac_names_date_a_note(tmp_path: Path) -> None:
    root, _ = _vault(tmp_path)
    settings = Settings.build(vault=root, state=tmp_path / "s.db", watch=False)
    with LocalClient(create_app(settings)) as client:
        day = data(client, '{ chronicleSince(since: "2000-01-01") { entries { record { id } } } }')
    assert day["chronicleSince"]["entries"] == [{"record": {"id": "Meetings/Retro"}}]


def test_check_names_the_field_written_and_the_field_it_is_read_as(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, config = _vault(tmp_path)
    state = str(tmp_path / "s.db")
    code = main(
        ["check", "--vault", str(root), "--state", state, "--config", str(config), "--json"]
    )
    issues = json.loads(capsys.readouterr().out)["issues"]
    assert code == 1
    assert [(i["path"], i["line"], i["field"], i["code"]) for i in issues] == [
        ("Bad.md", 3, "date", "invalid_date"),
        ("Bad.md", 4, "created", "invalid_date"),
        ("Daily/2024-02-30.md", None, "occurred_at", "invalid_date"),
    ]
    assert issues[0]["message"].startswith("date (read as occurred_at): ")
    assert issues[1]["message"].startswith("created (read as recorded_at): ")
    assert "'2024-02-30' is not a date" in issues[2]["message"]


LINKS = "query($id: ID!) { record(id: $id) { links { text line resolved target { id } file } } }"


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "scan"])
def test_embeds_of_attachments_resolve_to_their_files(tmp_path: Path, watch: bool) -> None:
    root = tmp_path / "vault"
    (root / "Attachments").mkdir(parents=True)
    (root / "Attachments" / "lucide-send.svg").write_text("<svg/>")
    (root / "Attachments" / "Engelbart.jpg").write_bytes(b"\xff\xd8\xff")
    (root / "Doug.md").write_text("# Doug\n")
    (root / "Page.md").write_text(
        "# Page\n![[lucide-send.svg#icon]] [[Doug]]\n![[Engelbart.jpg\\|200]]\n![[later.pdf]]\n"
    )
    settings = Settings.build(vault=root, state=tmp_path / "s.db", watch=watch)
    with LocalClient(create_app(settings)) as client:
        first = data(client, LINKS, id="Page")["record"]["links"]
        (root / "later.pdf").write_bytes(b"%PDF")
        added = data(client, LINKS, id="Page")["record"]["links"][-1]
        (root / "later.pdf").unlink()
        removed = data(client, LINKS, id="Page")["record"]["links"][-1]
    assert first == [
        {
            "text": "![[lucide-send.svg#icon]]",
            "line": 2,
            "resolved": True,
            "target": None,
            "file": "Attachments/lucide-send.svg",
        },
        {"text": "[[Doug]]", "line": 2, "resolved": True, "target": {"id": "Doug"}, "file": None},
        {
            "text": "![[Engelbart.jpg\\|200]]",
            "line": 3,
            "resolved": True,
            "target": None,
            "file": "Attachments/Engelbart.jpg",
        },
        {"text": "![[later.pdf]]", "line": 4, "resolved": False, "target": None, "file": None},
    ]
    assert (added["resolved"], added["file"]) == (True, "later.pdf")
    assert (removed["resolved"], removed["file"]) == (False, None)
