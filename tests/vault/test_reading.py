"""Existing vaults as they are: the user's names for date fields, daily notes by file name."""

from __future__ import annotations

import pytest

from almanac.vault import DailyNotes, ReadOptions, StartupError, parse_note

OBSIDIAN = ReadOptions(fields={"occurred_at": ("date", "day"), "recorded_at": ("created",)})


@pytest.mark.parametrize(
    ("frontmatter", "options", "dates", "written"),
    [
        pytest.param(
            "date: 2024-01-02",
            OBSIDIAN,
            {"occurred_at": "2024-01-02"},
            {"occurred_at": "date"},
            id="obsidian-date",
        ),
        pytest.param(
            "created: 2023-05-01T10:32:00Z",
            OBSIDIAN,
            {"recorded_at": "2023-05-01T10:32:00Z"},
            {"recorded_at": "created"},
            id="obsidian-created",
        ),
        pytest.param(
            "date: 2024-01-02\ncreated: 2023-05-01",
            OBSIDIAN,
            {"occurred_at": "2024-01-02", "recorded_at": "2023-05-01"},
            {"occurred_at": "date", "recorded_at": "created"},
            id="both-mapped",
        ),
        pytest.param(
            "date: 2024-01-02\noccurred_at: 2020-07-07",
            OBSIDIAN,
            {"occurred_at": "2020-07-07"},
            {},
            id="almanac-name-wins",
        ),
        pytest.param(
            "day: 2022-02-02\ndate: 2024-01-02",
            OBSIDIAN,
            {"occurred_at": "2024-01-02"},
            {"occurred_at": "date"},
            id="first-in-config-order-wins",
        ),
        pytest.param(
            "day: 2022-02-02",
            OBSIDIAN,
            {"occurred_at": "2022-02-02"},
            {"occurred_at": "day"},
            id="second-name-alone",
        ),
        pytest.param(
            "date:\nday: 2022-02-02",
            OBSIDIAN,
            {"occurred_at": "2022-02-02"},
            {"occurred_at": "day"},
            id="an-empty-value-is-not-present",
        ),
        pytest.param(
            "occurred_at: ~\ndate: 2024-01-02",
            OBSIDIAN,
            {"occurred_at": "2024-01-02"},
            {"occurred_at": "date"},
            id="an-empty-almanac-name-is-not-present",
        ),
        pytest.param(
            "date: 2024-01-02\ncreated: 2023-05-01",
            ReadOptions(),
            {},
            {},
            id="not-read-without-config",
        ),
    ],
)
def test_mapped_field_names_are_read_as_almanac_date_fields(
    frontmatter: str, options: ReadOptions, dates: dict[str, str], written: dict[str, str]
) -> None:
    parsed = parse_note("n.md", f"---\n{frontmatter}\n---\n".encode(), options=options)

    assert parsed.issues == ()
    assert parsed.note is not None
    assert (dict(parsed.note.dates), dict(parsed.note.written)) == (dates, written)


def test_a_mapped_field_is_located_at_the_line_written() -> None:
    text = b"---\ntitle: t\ncreated: 2023-05-01\n---\n"
    note = parse_note("n.md", text, options=OBSIDIAN).note

    assert note is not None
    assert (note.lines["recorded_at"], note.lines["created"]) == (3, 3)


def test_a_mapped_field_of_the_wrong_shape_names_both_fields() -> None:
    parsed = parse_note("n.md", b"---\ndate: [2024]\n---\n", options=OBSIDIAN)

    assert [(i.line, i.field, i.code) for i in parsed.issues] == [(2, "date", "invalid_field")]
    assert "'date' (read as occurred_at)" in parsed.issues[0].message


DAILY = ReadOptions(daily_notes=DailyNotes.of("Daily"))


@pytest.mark.parametrize(
    ("path", "text", "options", "occurred", "issue"),
    [
        pytest.param("Daily/2024-03-05.md", "Notes", DAILY, "2024-03-05", None, id="daily"),
        pytest.param(
            "Daily/2024/2024-03-05.md", "Notes", DAILY, "2024-03-05", None, id="archived-below"
        ),
        pytest.param(
            "Daily/2024-03-05.md",
            "---\noccurred_at: 2024-03-04T22:00:00Z\n---\n",
            DAILY,
            "2024-03-04T22:00:00Z",
            None,
            id="own-date-wins",
        ),
        pytest.param(
            "Daily/2024-03-05.md",
            "---\ndate: 2024-01-01\n---\n",
            ReadOptions(fields=OBSIDIAN.fields, daily_notes=DailyNotes.of("Daily")),
            "2024-01-01",
            None,
            id="mapped-date-wins",
        ),
        pytest.param(
            "Daily/2024-02-30.md",
            "Notes",
            DAILY,
            None,
            "'2024-02-30' is not a date",
            id="no-such-day",
        ),
        pytest.param("Daily/Groceries.md", "Notes", DAILY, None, None, id="another-note"),
        pytest.param("Daily/2024-03-05 copy.md", "x", DAILY, None, None, id="more-than-a-date"),
        pytest.param("Notes/2024-03-05.md", "Notes", DAILY, None, None, id="outside-the-folder"),
        pytest.param("Dailyx/2024-03-05.md", "x", DAILY, None, None, id="folder-name-prefix"),
        pytest.param("Daily/2024-03-05.md", "Notes", ReadOptions(), None, None, id="no-config"),
        pytest.param(
            "Journal/2024/03-March/2024-03-05.md",
            "x",
            ReadOptions(daily_notes=DailyNotes.of("Journal/", "YYYY/MM-MMMM/YYYY-MM-DD")),
            "2024-03-05",
            None,
            id="nested-format",
        ),
        pytest.param(
            "05.03.2024.md",
            "x",
            ReadOptions(daily_notes=DailyNotes.of("", "DD.MM.YYYY")),
            "2024-03-05",
            None,
            id="vault-root-day-first",
        ),
        pytest.param(
            "D/Tuesday, March 5th 2024.md",
            "x",
            ReadOptions(daily_notes=DailyNotes.of("D", "dddd, MMMM Do YYYY")),
            "2024-03-05",
            None,
            id="obsidian-long-format",
        ),
        pytest.param(
            "D/[2024] 3-5.md",
            "x",
            ReadOptions(daily_notes=DailyNotes.of("D", "[[]YYYY[]] M-D")),
            "2024-03-05",
            None,
            id="bracketed-literals",
        ),
    ],
)
def test_a_daily_note_occurs_on_the_day_its_file_name_says(
    path: str, text: str, options: ReadOptions, occurred: str | None, issue: str | None
) -> None:
    parsed = parse_note(path, text.encode(), options=options)

    assert parsed.note is not None
    assert parsed.note.dates.get("occurred_at") == occurred
    if issue is None:
        assert parsed.issues == ()
    else:
        assert [(i.line, i.field, i.code) for i in parsed.issues] == [
            (None, "occurred_at", "invalid_date")
        ]
        assert issue in parsed.issues[0].message


@pytest.mark.parametrize(
    ("format", "words"),
    [
        pytest.param("yyyy-MM-dd", "'yyyy' is not a supported token", id="lower-case-year"),
        pytest.param("YYYY-MM", "needs a year, month and day", id="no-day"),
        pytest.param("YYYY-[W]ww-DD", "'ww' is not a supported token", id="week"),
        pytest.param("YYYY-MM-DD HH:mm", "'HH' is not a supported token", id="a-time"),
    ],
)
def test_a_daily_note_format_is_checked_when_configured(format: str, words: str) -> None:
    with pytest.raises(StartupError, match=words):
        DailyNotes.of("Daily", format)
