"""The malformed-input corpus (RELIABILITY.md section 5) against a whole-vault reconcile.

Every case puts one bad file (or a few, or a filesystem oddity) into a vault
next to three good notes, reconciles into a fresh state database and checks
invariant I4: the bad input yields its issue(s), nothing raises, and the good
records are exactly what a reconcile of the good notes alone produces. Cases
that could kill the interpreter run in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from almanac import temporal
from almanac.temporal import LifecycleFilter, RecordFilter
from almanac.vault import MAX_NOTE_BYTES

NOW_US = 1_800_000_000_000_000
ROOT = Path(__file__).resolve().parents[2]
ANY = "*"  # an expected code that stands for "at least one issue, whatever its code"

GOOD: Mapping[str, bytes] = {
    "people/ada.md": b"""---
id: ada
type: person
title: Ada Lovelace
aliases: [Countess of Lovelace]
tags: [math, people]
recorded_at: 2024-01-05T09:30:00Z
---
# Ada Lovelace

Wrote the notes on the engine for [[Analytical Engines Ltd]].
""",
    "orgs/acme.md": b"""---
id: acme
type: organization
title: Analytical Engines Ltd
valid_from: 1834
---
A company that builds [[ada|engines]], see [Ada](../people/ada.md).
""",
    "rel/ada-acme.md": b"""---
id: ada-works-at-acme
type: relationship
from: ada
to: "[[acme]]"
relation: works_at
weight: 0.8
timezone: Europe/London
occurred_at: 1834-06-05T10:00
valid_from: 1834-06
valid_until: 1843-09-01
---
Ada corresponds with [[acme]].
""",
}
GOOD_IDS = frozenset({"ada", "acme", "ada-works-at-acme"})


def _outside_secret(outside: Path) -> Path:
    secret = outside / "secret.md"
    secret.write_bytes(b"---\nid: secret\ntitle: Secret\n---\nnot part of the vault\n")
    return secret


def _symlink_file_out(vault_dir: Path, outside: Path) -> None:
    os.symlink(_outside_secret(outside), vault_dir / "escape.md")


def _symlink_dir_out(vault_dir: Path, outside: Path) -> None:
    _outside_secret(outside)
    os.symlink(outside, vault_dir / "elsewhere")


def _symlink_dir_loop(vault_dir: Path, outside: Path) -> None:
    (vault_dir / "deep").mkdir()
    os.symlink("..", vault_dir / "deep" / "up")


def _symlink_file_loop(vault_dir: Path, outside: Path) -> None:
    os.symlink("b.md", vault_dir / "a.md")
    os.symlink("a.md", vault_dir / "b.md")


def _fifo(vault_dir: Path, outside: Path) -> None:
    os.mkfifo(vault_dir / "x.md")


def _directory_named_md(vault_dir: Path, outside: Path) -> None:
    (vault_dir / "x.md").mkdir()
    (vault_dir / "x.md" / "inner.md").write_bytes(b"# Inner\n")


def _undecodable_name(vault_dir: Path, outside: Path) -> None:
    fd = os.open(os.fsencode(vault_dir) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"---\nid: undecodable\n---\n")
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Case:
    """One corpus entry.

    Args:
        id: The pytest id.
        files: Vault-relative path to the bytes written there.
        build: Makes what bytes cannot say (symlinks, FIFOs), given the vault and a folder
            outside it.
        issues: Every (path, code) the reconcile must report; `ANY` as code means at least one.
        eligible: Ids of the case's own notes that must stay eligible (the good ones always do).
        fields: Record id to expected values of its summary (see `_summary`).
        child: Run in a subprocess (may crash the interpreter).
        xfail: Reason, when the case shows a known product bug.
        raises: The exception the product bug shows up as (an assertion or a crash).
    """

    id: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    build: Callable[[Path, Path], None] | None = None
    issues: tuple[tuple[str, str], ...] = ()
    eligible: frozenset[str] = frozenset()
    fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    child: bool = False
    xfail: str | None = None
    raises: type[BaseException] = AssertionError


def _fm(*lines: str, body: str = "Body.\n") -> bytes:
    return ("---\n" + "".join(line + "\n" for line in lines) + "---\n" + body).encode()


_BIG = b"---\ntitle: Big\n---\n" + b"x" * MAX_NOTE_BYTES  # 1 MiB + 19 bytes
_BLOCK_NESTING = "---\n" + "".join("  " * i + f"k{i}:\n" for i in range(200)) + "---\n"
_LAUGHS = (
    "---\n"
    'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "---\n"
)

CASES: tuple[Case, ...] = (
    # -- structure of the file ------------------------------------------------------------
    Case(
        "empty-file", {"bad.md": b""}, eligible=frozenset({"bad"}), fields={"bad": {"title": "bad"}}
    ),
    Case(
        "no-frontmatter",
        {"bad.md": b"# Plain page\n\nSee [[ada]].\n"},
        eligible=frozenset({"bad"}),
        fields={"bad": {"title": "Plain page", "type": "note"}},
    ),
    Case(
        "unclosed-frontmatter",
        {"bad.md": b"---\ntitle: Open\n\nbody\n"},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "frontmatter-is-a-list",
        {"bad.md": _fm("- a", "- b")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "frontmatter-is-a-scalar",
        {"bad.md": _fm("just text")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "yaml-syntax-error",
        {"bad.md": _fm("title: [unclosed", "id: x")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "duplicate-key",
        {"bad.md": _fm("id: dup-key", "title: First", "title: Second")},
        issues=(("bad.md", "duplicate_key"),),
        eligible=frozenset({"dup-key"}),
        fields={"dup-key": {"title": "Second"}},
    ),
    # -- ids ------------------------------------------------------------------------------
    Case("id-is-a-list", {"bad.md": _fm("id: [a, b]")}, issues=(("bad.md", "invalid_id"),)),
    Case("id-is-a-mapping", {"bad.md": _fm("id: {a: 1}")}, issues=(("bad.md", "invalid_id"),)),
    Case("id-is-null", {"bad.md": _fm("id: ~")}, issues=(("bad.md", "invalid_id"),)),
    Case("id-is-blank", {"bad.md": _fm("id: '   '")}, issues=(("bad.md", "invalid_id"),)),
    Case("id-is-path-like", {"bad.md": _fm("id: ../etc")}, issues=(("bad.md", "invalid_id"),)),
    Case(
        "id-is-fullwidth-path", {"bad.md": _fm("id: ．．／etc")}, issues=(("bad.md", "invalid_id"),)
    ),
    Case(
        "id-has-zero-width-space",
        {"bad.md": _fm("id: a\u200bb")},
        issues=(("bad.md", "invalid_id"),),
    ),
    Case(
        "id-has-bidi-override", {"bad.md": _fm("id: a\u202eb")}, issues=(("bad.md", "invalid_id"),)
    ),
    Case(
        "slug-has-zero-width-space",
        {"a\u200bb.md": b"# Zero width\n"},
        issues=(("a\u200bb.md", "invalid_id"),),
    ),
    Case(
        "duplicate-ids",
        {
            "dup/one.md": _fm("id: twin-id", "title: One"),
            "dup/two.md": _fm("id: twin-id", "title: Two"),
        },
        issues=(("dup/one.md", "duplicate_id"), ("dup/two.md", "duplicate_id")),
    ),
    Case(
        "case-colliding-ids",
        {"others/countess.md": _fm("id: Ada", "title: Another Ada")},
        issues=(("others/countess.md", ANY), ("people/ada.md", ANY)),
        eligible=frozenset({"Ada"}),
    ),
    Case(
        "syncthing-conflict-copy",
        {
            "notes/x.md": b"# X\n",
            "notes/x.sync-conflict-20240101-120000-ABCDEFG.md": b"# X, edited elsewhere\n",
        },
        issues=(
            ("notes/x.md", "duplicate_id"),
            ("notes/x.sync-conflict-20240101-120000-ABCDEFG.md", "duplicate_id"),
        ),
    ),
    Case(
        "syncthing-temp-files",
        {".syncthing.x.md.tmp": _fm("id: temp-1"), "~syncthing~x.md.tmp": _fm("id: temp-2")},
    ),
    Case(
        "dot-folders",
        {
            ".git/x.md": _fm("id: in-git"),
            ".obsidian/x.md": _fm("id: in-obsidian"),
            ".trash/x.md": _fm("id: in-trash"),
            ".stversions/x.md": _fm("id: in-stversions"),
        },
    ),
    # -- encodings and line endings -------------------------------------------------------
    Case(
        "invalid-utf8", {"bad.md": b"---\ntitle: caf\xe9\n---\n"}, issues=(("bad.md", "not_utf8"),)
    ),
    Case(
        "utf16-with-bom",
        {"bad.md": "---\ntitle: UTF-16\n---\n".encode("utf-16")},
        issues=(("bad.md", "not_utf8"),),
    ),
    Case(
        "utf8-bom",
        {"bad.md": b"\xef\xbb\xbf" + _fm("id: bom", "title: With BOM")},
        eligible=frozenset({"bom"}),
        fields={"bom": {"title": "With BOM", "body": "Body.\n"}},
    ),
    Case(
        "crlf",
        {
            "bad.md": _fm("id: crlf", "title: Windows", body="See [[ada]].\n").replace(
                b"\n", b"\r\n"
            )
        },
        eligible=frozenset({"crlf"}),
        fields={"crlf": {"title": "Windows", "links": [["[[ada]]", 5, "ada"]]}},
    ),
    Case(
        "lone-cr",
        {
            "bad.md": _fm("id: cr", "title: Classic Mac", body="See [[ada]].\n").replace(
                b"\n", b"\r"
            )
        },
        eligible=frozenset({"cr"}),
        fields={"cr": {"title": "Classic Mac", "links": [["[[ada]]", 5, "ada"]]}},
    ),
    Case("nul-bytes", {"bad.md": b"---\ntitle: a\x00b\n---\n"}, issues=(("bad.md", "not_utf8"),)),
    # -- size -----------------------------------------------------------------------------
    Case("file-over-1-mib", {"bad.md": _BIG}, issues=(("bad.md", "file_too_large"),)),
    Case(
        "frontmatter-over-64-kib",
        {"bad.md": b"---\ntitle: " + b"x" * (65 * 1024) + b"\n---\n"},
        issues=(("bad.md", "file_too_large"),),
    ),
    # -- hostile YAML ---------------------------------------------------------------------
    Case(
        "deep-flow-nesting-100k",
        {"bad.md": b"---\nx: " + b"[" * 100_000 + b"\n---\n"},
        issues=(("bad.md", "file_too_large"),),  # 100 KB of brackets is over the 64 KiB cap
        child=True,
    ),
    Case(
        "deep-flow-nesting-60k",  # under the size cap, beyond where CSafeLoader segfaults
        {"bad.md": b"---\nx: " + b"[" * 60_000 + b"\n---\n"},
        issues=(("bad.md", "invalid_frontmatter"),),
        child=True,
    ),
    Case(
        "deep-flow-nesting-mappings",
        {"bad.md": b"---\nx: " + b"{a: " * 15_000 + b"\n---\n"},
        issues=(("bad.md", "invalid_frontmatter"),),
        child=True,
    ),
    Case(
        "deep-block-nesting",
        {"bad.md": _BLOCK_NESTING.encode()},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "deep-block-sequence-nesting",
        {"bad.md": b"---\nx:\n" + b"".join(b"  " * i + b"-\n" for i in range(1, 200)) + b"---\n"},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "billion-laughs", {"bad.md": _LAUGHS.encode()}, issues=(("bad.md", "invalid_frontmatter"),)
    ),
    Case(
        "recursive-alias",
        {"bad.md": _fm("a: &a [*a]")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "plain-anchor-and-alias",
        {"bad.md": _fm("title: &t Shared", "aliases: [*t]")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "python-object-apply",
        {"bad.md": _fm('title: !!python/object/apply:os.system ["echo hi"]')},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "binary-tag",
        {"bad.md": _fm("title: !!binary aGVsbG8=")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    Case(
        "local-tag",
        {"bad.md": _fm("title: !shout hello")},
        issues=(("bad.md", "invalid_frontmatter"),),
    ),
    # -- dates ----------------------------------------------------------------------------
    Case(
        "impossible-date",
        {"bad.md": _fm("id: leap", "occurred_at: 2024-02-30", "recorded_at: 2024-03-01")},
        issues=(("bad.md", "invalid_date"),),
        eligible=frozenset({"leap"}),
        fields={
            "leap": {
                "dates": {"recorded_at": ["2024-03-01", "day", 1709251200000000, 1709337600000000]}
            }
        },
    ),
    Case(
        "instant-out-of-range",
        {"bad.md": _fm("id: far", "occurred_at: 0001-01-01T00:00:00+01:00")},
        issues=(("bad.md", "invalid_date"),),
        eligible=frozenset({"far"}),
    ),
    Case(
        "local-time-without-timezone",
        {"bad.md": _fm("id: local", "occurred_at: 2024-03-01T10:00")},
        issues=(("bad.md", "ambiguous_time"),),
        eligible=frozenset({"local"}),
        fields={"local": {"dates": {}}},
    ),
    Case(
        "unknown-timezone",
        {"bad.md": _fm("id: mars", "timezone: Mars/Olympus_Mons", "occurred_at: 2024-03-01")},
        issues=(("bad.md", "unknown_timezone"),),
        eligible=frozenset({"mars"}),
        fields={"mars": {"timezone": None}},
    ),
    Case(
        "bad-recurrence",
        {
            "bad.md": _fm(
                "id: rrule", "occurred_at: 2024-03-01", "recurrence: FREQ=SOMETIMES;COUNT=3"
            )
        },
        issues=(("bad.md", "invalid_recurrence"),),
        eligible=frozenset({"rrule"}),
    ),
    Case(
        "recurrence-not-an-rrule",
        {"bad.md": _fm("id: rrule2", "occurred_at: 2024-03-01", "recurrence: every tuesday")},
        issues=(("bad.md", "invalid_recurrence"),),
        eligible=frozenset({"rrule2"}),
    ),
    Case(
        "recurrence-with-offset-anchor",
        {
            "bad.md": _fm(
                "id: weekly",
                "occurred_at: 2024-03-01T10:00:00+02:00",
                "recurrence: FREQ=WEEKLY;COUNT=3",
            )
        },
        issues=(("bad.md", "recurrence_needs_timezone"),),
        eligible=frozenset({"weekly"}),
    ),
    Case(
        "yaml-1.1-coercions",
        {"bad.md": _fm("id: 012", "title: yes", "tags: [on, 012, 1:20]", "aliases: no")},
        eligible=frozenset({"012"}),
        fields={"012": {"title": "yes", "tags": ["on", "012", "1:20"], "aliases": ["no"]}},
    ),
    # -- references -----------------------------------------------------------------------
    Case(
        "dangling-claim-subject",
        {"claims/orphan.md": _fm("id: orphan-claim", "type: claim", "subject: nobody")},
        issues=(("claims/orphan.md", "dangling_reference"),),
    ),
    Case(
        "claim-missing-subject",
        {"claims/bare.md": _fm("id: bare-claim", "type: claim")},
        issues=(("claims/bare.md", "missing_field"),),
    ),
    Case(
        "ambiguous-link",
        {
            "twins/one.md": _fm("title: Twin"),
            "twins/two.md": _fm("title: Twin"),
            "linker.md": b"# Linker\n\nWhich one: [[Twin]]?\n",
        },
        issues=(("linker.md", "ambiguous_link"),),
        eligible=frozenset({"twins/one", "twins/two", "linker"}),
        fields={"linker": {"links": [["[[Twin]]", 3, None]]}},
    ),
    Case(
        "supersession-cycle",
        {
            "cycle/a.md": _fm("id: cyc-a", "lifecycle: superseded", "superseded_by: cyc-b"),
            "cycle/b.md": _fm("id: cyc-b", "lifecycle: superseded", "superseded_by: cyc-a"),
        },
        issues=(("cycle/a.md", "supersession_cycle"), ("cycle/b.md", "supersession_cycle")),
        eligible=frozenset({"cyc-a", "cyc-b"}),
    ),
    # -- the filesystem -------------------------------------------------------------------
    Case(
        "symlink-file-out-of-vault", build=_symlink_file_out, issues=(("escape.md", "unsafe_path"),)
    ),
    Case(
        "symlink-dir-out-of-vault", build=_symlink_dir_out, issues=(("elsewhere", "unsafe_path"),)
    ),
    Case("symlink-dir-loop", build=_symlink_dir_loop, issues=(("deep/up", "unsafe_path"),)),
    Case(
        "symlink-file-loop",
        build=_symlink_file_loop,
        issues=(("a.md", "unsafe_path"), ("b.md", "unsafe_path")),
    ),
    Case("fifo-named-x-md", build=_fifo, issues=(("x.md", "not_regular_file"),)),
    Case(
        "directory-named-x-md",
        build=_directory_named_md,
        eligible=frozenset({"x.md/inner"}),
        fields={"x.md/inner": {"title": "Inner"}},
    ),
    Case("undecodable-file-name", build=_undecodable_name, issues=(("bad\\xff.md", "not_utf8"),)),
)


def _summary(record: temporal.Record) -> dict[str, Any]:
    """Everything a query can see of a record, as JSON values."""
    return {
        "path": record.locator.path,
        "revision": record.locator.revision,
        "end_line": record.locator.end_line,
        "kind": record.kind.value,
        "type": record.type,
        "title": record.title,
        "aliases": list(record.aliases),
        "tags": list(record.tags),
        "lifecycle": record.lifecycle.value,
        "superseded_by": record.superseded_by,
        "body": record.body,
        "relation": record.relation,
        "weight": record.weight,
        "timezone": record.timezone,
        "recurrence": record.recurrence,
        "dates": {
            name: [v.text, v.precision.value, v.start_us, v.end_us]
            for name, v in record.dates.items()
        },
        "refs": {name: ref.id for name, ref in record.refs.items()},
        "entities": [ref.id for ref in record.entities],
        "links": [
            [link.text, link.line, link.target.id if link.target else None] for link in record.links
        ],
        "extra": dict(record.extra),
    }


def run_case(base: Path, case: Case) -> dict[str, Any]:
    """Write the good notes and the case into `base`/vault, reconcile, read everything back."""
    vault_dir, outside = base / "vault", base / "outside"
    vault_dir.mkdir()
    outside.mkdir()
    for path, data in {**GOOD, **case.files}.items():
        target = vault_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if case.build is not None:
        case.build(vault_dir, outside)
    store = temporal.Store.open(base / "state.db")
    try:
        config = temporal.VaultConfig()
        temporal.Reconciler(store, vault_dir, config).reconcile(now_us=NOW_US)
        with store.read() as reader:
            records, total = reader.records(
                RecordFilter(lifecycle=LifecycleFilter.ALL), ["default"], first=1000, after=None
            )
            result = {
                "count": reader.counts(["default"]).records,
                "total": total,
                "records": {r.id: _summary(r) for r in records},
                "issues": [[i.path, i.code] for i in reader.issues(["default"])],
            }
    finally:
        store.close()
    plain: dict[str, Any] = json.loads(json.dumps(result))
    return plain


_CHILD = """
import json, sys
from pathlib import Path
from tests.temporal.test_corpus import CASES, run_case
case = next(c for c in CASES if c.id == sys.argv[1])
print(json.dumps(run_case(Path(sys.argv[2]), case)))
"""


def _run_in_child(base: Path, case: Case) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, case.id, str(base)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"child died with {done.returncode}: {done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A reconcile of the three good notes alone."""
    result = run_case(tmp_path_factory.mktemp("baseline"), Case("baseline"))
    assert result["issues"] == []
    assert set(result["records"]) == GOOD_IDS
    return result


def _codes_by_path(pairs: list[list[str]] | tuple[tuple[str, str], ...]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, code in pairs:
        found.setdefault(path, set()).add(code)
    return found


def _marks(case: Case) -> list[pytest.MarkDecorator]:
    if case.xfail is None:
        return []
    return [pytest.mark.xfail(strict=True, reason=case.xfail, raises=case.raises)]


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=_marks(c)) for c in CASES],
)
def test_corpus_case_reports_its_issue_and_leaves_good_records_alone(
    case: Case, baseline: dict[str, Any], tmp_path: Path
) -> None:
    result = _run_in_child(tmp_path, case) if case.child else run_case(tmp_path, case)

    records = result["records"]
    for good_id in sorted(GOOD_IDS):
        assert records.get(good_id) == baseline["records"][good_id], good_id
    assert set(records) == GOOD_IDS | case.eligible
    assert result["count"] == result["total"] == len(records)
    for record_id, expected in case.fields.items():
        actual = {name: records[record_id][name] for name in expected}
        assert actual == expected, record_id

    reported = _codes_by_path(result["issues"])
    expected_issues = _codes_by_path(case.issues)
    for path, codes in expected_issues.items():
        if codes == {ANY} and reported.get(path):
            expected_issues[path] = reported[path]
    assert reported == expected_issues


def test_corpus_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
