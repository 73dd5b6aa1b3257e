"""The examples of docs/python.md, run as written (on a copy of the demo vault)."""

from __future__ import annotations

import contextlib
import csv
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def _examples() -> list[str]:
    """The Python blocks of the page, in order."""
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


PATHS, TIMELINE_CSV = _examples()


def _run(example: str, vault: Path, state: Path) -> str:
    opened = f"almanac.open({str(vault)!r}, state={str(state)!r})"
    code = example.replace('almanac.open("api/demo_vault")', opened)
    assert code != example
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/python.md", "exec"), {"__name__": "__readme__"})
    return out.getvalue()


def test_the_paths_example_walks_and_checks_every_edge(demo_vault: Path, tmp_path: Path) -> None:
    printed = _run(PATHS, demo_vault, tmp_path / "state.db").splitlines()
    walks = [line for line in printed if " -> " in line]
    assert walks[0] == "people/samuel-okafor -> orgs/kestrel-cloud"
    assert len(walks) == 4
    assert "  involves IN emails/2026-05-02-kestrel-renewal-terms.md:7" in printed
    assert printed[-1].startswith("left out: fan_out_limit")


def test_the_csv_example_writes_every_entry_of_the_timeline(
    demo_vault: Path, tmp_path: Path
) -> None:
    rows = list(csv.reader(io.StringIO(_run(TIMELINE_CSV, demo_vault, tmp_path / "state.db"))))
    assert rows[0] == ["date", "clock", "id", "title"]
    assert len(rows) == 1 + 21  # every page: the API pages by 20
    assert rows[1] == [
        "2026-03-02T09:30:00+01:00",
        "PAST",
        "meetings/2026-03-02-platform-standup",
        "Platform stand-up",
    ]
