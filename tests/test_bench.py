"""The benchmarks under bench/ still run against today's code (they are run by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import almanac

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in ("floors.py", "generate.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_benchmark_imports_and_parses_its_options(script: str) -> None:
    result = subprocess.run(
        [sys.executable, script, "--help"], cwd=BENCH, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_search_benchmark_measures_a_small_vault(tmp_path: Path) -> None:
    command = [sys.executable, "search.py", "--vault", str(tmp_path / "vault")]
    command += ["--state", str(tmp_path / "state.db"), "--notes", "200", "--runs", "1"]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert '"fts_rebuild_s"' in result.stdout


# Two legislators, one president, one committee with a subcommittee: the shapes of
# github.com/unitedstates/congress-legislators (public domain), with odd values on purpose.
LEGISLATORS = {
    "legislators-current.yaml": """
- id: {bioguide: V000001, govtrack: 1, wikipedia: Jeff Van Drew}
  name: {first: Jeff, last: Van Drew, official_full: Jeff Van Drew, nickname: Jeff}
  bio: {birthday: '1953-02-23', gender: M}
  terms:
  - {type: rep, start: '2017-01-03', end: '2019-01-03', state: NJ, district: 2, party: Democrat}
  - type: rep
    start: '2019-01-03'
    end: '2021-01-03'
    state: NJ
    district: 2
    party: Republican
    party_affiliations:
    - {start: '2019-01-03', end: '2019-12-18', party: Democrat}
    - {start: '2019-12-19', end: '2021-01-03', party: Republican}
  - {type: sen, end: '2027-01-03', state: NJ, party: Republican}
- id: {bioguide: O000001}
  name: {first: Ann, last: Odd}
  bio: {birthday: '1950-02-30'}
  terms:
  - {type: sen, start: '2021-01-03', end: '2020-01-03', state: zz, party: Independent}
""",
    "executive.yaml": """
- id: {govtrack: 9}
  name: {first: Grover, last: Cleveland}
  terms:
  - {type: prez, start: '1885-03-04', end: '1889-03-04', party: Democrat, how: election}
""",
    "committees-current.yaml": """
- type: house
  name: House Committee on Agriculture
  thomas_id: HSAG
  subcommittees:
  - {name: Forestry, thomas_id: '15'}
""",
    "committee-membership-current.yaml": """
HSAG: [{name: Jeff Van Drew, party: majority, title: Chair, bioguide: V000001}]
HSAG15: [{name: Nobody, party: minority, bioguide: X999999}]
""",
}


def test_the_legislators_vault_reconciles_without_an_issue(tmp_path: Path) -> None:
    """Each term a dated relationship, a party change within a term two memberships, odd
    values skipped and counted, and the vault valid for the real reconciler."""
    source = tmp_path / "data"
    source.mkdir()
    for name, text in LEGISLATORS.items():
        (source / name).write_text(text, encoding="utf-8")
    command = [sys.executable, "legislators.py", "--source", str(source)]
    command += ["--vault", str(tmp_path / "vault")]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert "notes: 22" in printed, result.stdout
    assert "skipped: term without a valid start: 1" in printed
    assert "skipped: invalid birthday: 1" in printed
    assert "skipped: term end not after its start (end dropped): 1" in printed
    assert "skipped: committee member not a known person: 1" in printed
    with almanac.open(tmp_path / "vault", state=tmp_path / "state.db") as kb:
        status = kb.status()
        assert status.coverage.issue_count == 0, status.coverage.issues
        assert status.record_count == 22
        found = kb.query(
            '{ timeline(entity: "people/v000001", first: 20) { entries { record { id } } } }'
        )
        rows = [e["record"]["id"] for e in found["data"]["timeline"]["entries"]]
        assert rows == [  # by (start, id)
            "parties/memberships/v000001-0",
            "terms/v000001-0",
            "terms/v000001-1",
            "parties/memberships/v000001-1",  # from 2019-12-19, inside the second term
        ]
        member = kb.record("parties/memberships/v000001-0")
        assert member is not None
        assert member.to is not None and member.to.id == "parties/democrat"
        dates = (member.occurred_at, member.valid_from, member.valid_until)
        assert [d.text if d else None for d in dates] == ["2017-01-03", "2017-01-03", "2019-12-18"]
        odd = kb.record("terms/o000001-0")
        assert odd is not None and odd.valid_from is not None and odd.valid_until is None
        assert kb.record("states/zz") is not None  # an unknown code, titled by itself
        assert kb.record("terms/9-0") is not None  # Cleveland's presidency (no bioguide id)


def test_the_legislators_vault_reads_a_git_directory_and_the_csv_of_former_members(
    tmp_path: Path,
) -> None:
    """From a git directory: the YAML of `HEAD`, and with no `legislators-historical.yaml`, the
    CSV of the `gh-pages` branch (each former member's last term, undated)."""
    work = tmp_path / "repo"
    work.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "bench@example.com")
    git("config", "user.name", "bench")
    (work / "executive.yaml").write_text(LEGISLATORS["executive.yaml"], encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", "data")
    git("checkout", "-q", "-b", "gh-pages")
    (work / "legislators-historical.csv").write_text(
        "last_name,first_name,middle_name,suffix,nickname,full_name,birthday,gender,type,state,"
        "district,party,bioguide_id,govtrack_id,wikipedia_id\n"
        "Bassett,Richard,,,,,1745-04-02,M,sen,DE,,Anti-Administration,B000226,401222,\n"
        ",Nameless,,,,,,,rep,DE,1,,N000001,,\n",
        encoding="utf-8",
    )
    git("add", "-A")
    git("commit", "-q", "-m", "csv")
    git("checkout", "-q", "main")
    command = [sys.executable, "legislators.py", "--source", str(work / ".git")]
    command += ["--vault", str(tmp_path / "vault")]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert printed[0] == "former members from: legislators-historical.csv (last term only, undated)"
    assert "people: 2" in printed, result.stdout  # Bassett and Cleveland
    assert "skipped: person without an id or a last name: 1" in printed
    bassett = (tmp_path / "vault" / "people" / "b000226.md").read_text(encoding="utf-8")
    assert "occurred_at: 1745-04-02" in bassett
    assert "[[states/de|Delaware]]" in bassett
    assert "[[parties/anti-administration|Anti-Administration]]" in bassett
    with almanac.open(tmp_path / "vault", state=tmp_path / "state.db") as kb:
        assert kb.status().coverage.issue_count == 0


def test_the_load_benchmark_drives_a_small_vault(tmp_path: Path) -> None:
    """What it asks about comes from the state database: every kind is asked, none fails."""
    command = [sys.executable, "load.py", "--notes", "200", "--clients", "2", "--seconds", "3"]
    command += ["--warmup", "1", "--state", str(tmp_path / "state.db")]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["failures"] == 0, report["failure_examples"]
    assert set(report["ms"]) == {"timeline", "chronicle_day", "graph", "lookup"}
    assert all(report["picks"][k] > 0 for k in ("entities", "names", "days", "hubs"))
