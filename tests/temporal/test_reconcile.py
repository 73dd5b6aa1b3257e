from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal.store import PROJECTION_TABLES
from tests import vaults
from tests.temporal.helpers import check_search

NOW = 1_800_000_000_000_000
# Every projection a clean rebuild must reproduce: not `files` (stats) nor `meta`; the view too.
TABLES = (*(t for t in PROJECTION_TABLES if t not in ("files", "meta")), "edges")

NOTES = vaults.files("reconcile")


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def dump(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        # A bulk write drops the indexes and builds them again: none may be missing after. It
        # fills the full-text indexes and their narrow copy of the notes apart from the notes,
        # too: each scope's index, triggers and rows, nothing of a scope without notes.
        check_search(conn)
        out = {t: sorted(conn.execute(f"SELECT * FROM {t}"), key=repr) for t in TABLES}
        out["digests"] = list(conn.execute("SELECT value FROM meta WHERE key = 'digests'"))
        return out
    finally:
        conn.close()


def reconcile(root: Path, db: Path) -> temporal.ReconcileResult:
    store = temporal.Store.open(db)
    try:
        return temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
    finally:
        store.close()


def clean_rebuild(root: Path, tmp_path: Path, state: Path) -> dict[str, list[tuple[object, ...]]]:
    """Projections rebuilt from the vault alone, keeping the safeguards (not rebuildable)."""
    db = tmp_path / f"clean-{random.random()}.db"
    temporal.Store.open(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("ATTACH DATABASE ? AS old", (str(state),))
        conn.execute("INSERT INTO guards SELECT * FROM old.guards")
        conn.execute("INSERT INTO seen SELECT * FROM old.seen")
    reconcile(root, db)
    return dump(db)


MUTATIONS = [
    (
        "retitle",
        lambda r: (r / "people/ada.md").write_text(
            NOTES["people/ada.md"].replace("Ada Lopez", "Ada X")
        ),
    ),
    ("delete-target", lambda r: (r / "people/bob.md").unlink()),
    (
        "withdraw-endpoint",
        lambda r: (r / "orgs/acme.md").write_text(
            "---\ntype: organization\nlifecycle: withdrawn\n---\n# Acme\n"
        ),
    ),
    (
        "move-claim-source",
        lambda r: (r / "claims/c0.md").write_text(
            NOTES["claims/c0.md"].replace("meetings/m0", "meetings/m3")
        ),
    ),
    (
        "withdraw-claim-subject",
        lambda r: (r / "people/bob.md").write_text(
            NOTES["people/bob.md"].replace("title: Bob", "title: Bob\nlifecycle: withdrawn")
        ),
    ),
    ("rename", lambda r: os.rename(r / "people/bob.md", r / "people/robert.md")),
    ("add-duplicate", lambda r: (r / "bob2.md").write_text("---\nid: people/bob\n---\nCopy\n")),
    ("add-alias-clash", lambda r: (r / "x.md").write_text("---\naliases: [Bob]\n---\n")),
    ("break-frontmatter", lambda r: (r / "meetings/m1.md").write_text("---\ntype: [\n---\n")),
    (
        "cycle",
        lambda r: write(
            r,
            {
                "d/a.md": "---\nlifecycle: superseded\nsuperseded_by: d/b\n---\n",
                "d/b.md": "---\nlifecycle: superseded\nsuperseded_by: d/a\n---\n",
            },
        ),
    ),
]


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_incremental_reconcile_equals_clean_rebuild(
    name: str, mutate: Callable[[Path], object], tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    first = reconcile(root, db)
    mutate(root)
    second = reconcile(root, db)
    assert second.snapshot != first.snapshot or name == "break-frontmatter-noop"
    assert dump(db) == clean_rebuild(root, tmp_path, db)


def test_unchanged_vault_keeps_snapshot_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    first = reconcile(root, db)
    os.utime(root / "people/ada.md", ns=(1, 1))
    second = reconcile(root, db)
    third = reconcile(root, db)
    assert first.snapshot == second.snapshot == third.snapshot
    assert second.parsed == 0 and not third.changed


def test_random_edit_sequences_match_clean_rebuild(tmp_path: Path) -> None:
    rng = random.Random(5)
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    store = temporal.Store.open(db)
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    rec.reconcile(now_us=NOW)
    names = [
        "people/ada",
        "people/bob",
        "orgs/acme",
        "meetings/m1",
        "Bob",
        "Ada L",
        "Acme",
        "z/new",
    ]
    for step in range(40):
        path = rng.choice([*NOTES, "z/new.md", "z/other.md"])
        target = root / path
        if rng.random() < 0.25 and target.exists():
            target.unlink()
        else:
            kind = rng.choice(["person", "claim", "relationship", "note"])
            fields = [f"type: {kind}", f"title: {rng.choice(names)}"]
            if kind == "claim":
                fields.append(f"subject: {rng.choice(names)}")
            if kind in ("claim", "relationship") and rng.random() < 0.6:
                fields.append(f"source: {rng.choice(names)}")
            if rng.random() < 0.5:
                fields.append(f"occurred_at: 2024-03-{rng.randint(1, 28):02d}")
            if rng.random() < 0.3:
                fields.append(f"entities: [{rng.choice(names)}, {rng.choice(names)}]")
            if kind == "relationship":
                fields += [
                    f"from: {rng.choice(names)}",
                    f"to: {rng.choice(names)}",
                    "relation: knows",
                ]
            if rng.random() < 0.2:
                fields.append(f"lifecycle: {rng.choice(['withdrawn', 'superseded'])}")
            body = " ".join(f"[[{rng.choice(names)}]]" for _ in range(rng.randint(0, 3)))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("---\n" + "\n".join(fields) + f"\n---\n{body} {step}\n")
        rec.reconcile(now_us=NOW + step)
    store.close()
    state = dump(db)
    clean = clean_rebuild(root, tmp_path, db)
    # Guards may differ (they remember history); projections must not.
    assert state == clean


CHILD = """
import os, signal, sys
from almanac import temporal
store = temporal.Store.open(sys.argv[2])
rec = temporal.Reconciler(store, sys.argv[1], temporal.VaultConfig())
if len(sys.argv) > 3:
    rec.on_step = lambda step: os.kill(os.getpid(), signal.SIGKILL) if step == sys.argv[3] else None
rec.reconcile(now_us=1)
"""


@pytest.mark.parametrize(
    "hook", ["before-write", "before-commit", "random-1", "random-2", "random-3"]
)
def test_kill_during_reconcile_leaves_a_consistent_database(hook: str, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    reconcile(root, db)
    write(
        root,
        {
            f"bulk/n{i}.md": f"---\ntitle: N{i}\nlifecycle: withdrawn\n---\n[[Bob]]\n"
            for i in range(300)
        },
    )
    with sqlite3.connect(db) as conn:
        guards_before = set(conn.execute("SELECT id FROM guards"))
    env = {**os.environ}
    if hook.startswith("random"):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(db)], env=env)
        try:
            proc.wait(timeout=0.05 * int(hook[-1]))
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.wait()
    else:
        result = subprocess.run([sys.executable, "-c", CHILD, str(root), str(db), hook], env=env)
        assert result.returncode == -9
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert guards_before <= set(conn.execute("SELECT id FROM guards"))
    reconcile(root, db)
    assert dump(db) == clean_rebuild(root, tmp_path, db)
    with sqlite3.connect(db) as conn:
        assert len(set(conn.execute("SELECT id FROM guards"))) == 300


def test_a_large_reconcile_parses_in_a_second_process_with_the_same_result(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    write(
        root, {f"bulk/n{i}.md": f"---\ntitle: N{i}\n---\n[[Bob]] [[N{i + 1}]]\n" for i in range(60)}
    )
    serial, parallel = tmp_path / "serial.db", tmp_path / "parallel.db"
    reconcile(root, serial)
    store = temporal.Store.open(parallel)
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    rec.parallel_from = 10
    result = rec.reconcile(now_us=NOW)
    store.close()
    assert result.parsed == len(NOTES) + 60
    assert dump(parallel) == dump(serial)


def test_a_file_name_shared_by_several_notes_resolves_to_the_one_in_the_linking_folder(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(
        root,
        {
            "a/standup.md": "---\ntitle: A standup\n---\n",
            "b/standup.md": "---\ntitle: B standup\n---\n",
            "a/x.md": "See [[standup]].\n",
            "b/y.md": "See [[standup]].\n",
            "c/z.md": "See [[standup]].\n",
            "c/w.md": "---\ntype: claim\nsubject: standup\n---\n",
        },
    )
    db = tmp_path / "s.db"
    reconcile(root, db)
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT path, resolved_path, status FROM targets WHERE target = 'standup' ORDER BY path"
    ).fetchall()
    issues = conn.execute("SELECT path, code FROM issues ORDER BY path, code").fetchall()
    conn.close()
    assert rows == [
        ("a/x.md", "a/standup.md", "resolved"),
        ("b/y.md", "b/standup.md", "resolved"),
        ("c/w.md", None, "ambiguous"),
        ("c/z.md", None, "ambiguous"),
    ]
    assert ("c/w.md", "ambiguous_link") in issues and ("c/z.md", "ambiguous_link") in issues


def test_a_bulk_write_over_committed_notes_equals_a_clean_rebuild(tmp_path: Path) -> None:
    # Committed claims about a subject that does not exist yet: not eligible. A bulk write
    # (more new notes than committed ones) adds the subject, so those claims, unchanged
    # themselves, become eligible while the notes' indexes and full-text index are rebuilt.
    root = tmp_path / "vault"
    write(root, NOTES)
    write(root, {f"c/{i}.md": f"---\ntype: claim\nsubject: Zed\n---\nZed {i}.\n" for i in range(5)})
    db = tmp_path / "state.db"
    assert reconcile(root, db).parsed == len(NOTES) + 5
    write(
        root,
        {f"bulk/n{i}.md": f"---\ntitle: N{i}\n---\n[[Zed]] [[N{i + 1}]]\n" for i in range(2100)},
    )
    write(root, {"people/zed.md": "---\ntype: person\n---\n# Zed\n"})
    reconcile(root, db)
    assert dump(db) == clean_rebuild(root, tmp_path, db)
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT count(*) FROM notes WHERE path LIKE 'c/%' AND eligible"
        ).fetchone() == (5,)
        check_search(conn)


def test_a_bulk_write_copies_its_log_into_the_database_file_in_the_background(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(
        root,
        {f"n/{i}.md": f"---\ntitle: N{i}\n---\n[[N{i + 1}]] {'text ' * 40}\n" for i in range(2100)},
    )
    db = tmp_path / "state.db"
    store = temporal.Store.open(db)
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    rec.reconcile(now_us=NOW)
    store.settle()
    # The commit left the log alone; the background checkpoint filled the database file.
    assert db.stat().st_size > 2_000_000
    assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    assert not rec._other_writer()  # a checkpoint is no other writer: nothing reloads
    write(root, {"n/0.md": "---\ntitle: Zero\n---\n"})
    assert rec.reconcile(now_us=NOW + 1).changed_paths == ("n/0.md",)
    store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT title FROM notes WHERE path = 'n/0.md'").fetchone() == ("Zero",)


@pytest.mark.parametrize("delay", [0.8, 1.2, 1.35, 1.5, 1.7])
def test_ctrl_c_during_a_bulk_load_leaves_a_consistent_database(
    delay: float, tmp_path: Path
) -> None:
    # Wherever the interrupt lands (parsing, the background index build, the commit), nothing
    # runs outside the transaction: the state is the old one or the new one, and whole.
    root = tmp_path / "vault"
    write(root, NOTES)
    write(
        root,
        {f"n/{i}.md": f"---\ntitle: N{i}\n---\n[[N{i + 1}]] {'word ' * 30}\n" for i in range(2500)},
    )
    db = tmp_path / "state.db"
    temporal.Store.open(db).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(db)], stderr=subprocess.DEVNULL
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        proc.wait()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        check_search(conn)
    reconcile(root, db)
    assert dump(db) == clean_rebuild(root, tmp_path, db)


def test_a_reconcile_failing_while_it_reads_leaves_memory_as_committed(tmp_path: Path) -> None:
    # Files go into the plan as they are parsed, and the plan updates the name index as it
    # goes: a failure half way (here the progress callback, as a Ctrl-C in the CLI's bar)
    # must not leave the next reconcile with names nobody committed. The unchanged notes
    # linking to the old titles are found through those names.
    root = tmp_path / "vault"
    count = 1200
    write(root, {f"n/{i:04d}.md": f"# T{i}\n" for i in range(count)})
    write(root, {f"ref/{i:04d}.md": f"See [[T{i}]].\n" for i in range(0, count, 10)})
    db = tmp_path / "state.db"
    store = temporal.Store.open(db)
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    rec.parallel_from = 10
    rec.reconcile(now_us=NOW)
    write(root, {f"n/{i:04d}.md": f"# U{i}\n" for i in range(count)})
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 2:  # a first chunk is in the plan already
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rec.reconcile(now_us=NOW + 1, progress=progress)
    rec.reconcile(now_us=NOW + 2)
    store.close()
    assert dump(db) == clean_rebuild(root, tmp_path, db)


def test_a_bulk_write_over_committed_notes_reads_them_before_dropping_indexes(
    tmp_path: Path,
) -> None:
    # Working out what new names affect reads committed targets by key and by path. A bulk
    # write drops the indexes: a read after that is a scan, once per affected note.
    root = tmp_path / "vault"
    write(
        root, {f"c/{i}.md": f"---\ntype: claim\nsubject: X{i}\n---\n[[X{i}]]\n" for i in range(50)}
    )
    store = temporal.Store.open(tmp_path / "state.db")
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    rec.reconcile(now_us=NOW)
    write(root, {f"x/{i}.md": f"# X{i}\n" for i in range(2100)})
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    rec.reconcile(now_us=NOW + 1)
    store.conn.set_trace_callback(None)
    store.close()
    dropped = min(i for i, s in enumerate(statements) if s.startswith("DROP INDEX"))
    reads = [i for i, s in enumerate(statements) if s.startswith("SELECT") and " targets " in s]
    assert reads and max(reads) < dropped


def test_an_interrupt_as_a_bulk_write_ends_stops_its_index_builds(tmp_path: Path) -> None:
    # Ctrl-C while the last indexes build: a real SIGINT, sent to the main thread as the
    # background thread starts the indexes of `targets` (the last step; 20 links a note make
    # them take a while). None of the index statements may run on once the bulk block is left:
    # the transaction is rolled back next, and statements run on would run outside it. When the
    # interrupt lands inside an index build, SQLite rolls the transaction back itself and the
    # main thread runs no ROLLBACK: then the check is made as the interrupt comes out.
    root = tmp_path / "vault"
    links = " ".join(f"[[N{j}]]" for j in range(20))
    write(root, {f"n/{i}.md": f"---\ntitle: N{i}\n---\n{links}\n" for i in range(2100)})
    store = temporal.Store.open(tmp_path / "state.db")
    rec = temporal.Reconciler(store, root, temporal.VaultConfig())
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    signalled: list[str] = []
    running_when_left: list[list[str]] = []  # index builds alive at the main thread's next SQL
    outside: list[str] = []  # index statements begun with no transaction open

    def builds_alive() -> list[str]:
        # A build thread with a statement still to run cannot end now; one done with its
        # statements ends at once (it may only just have said so, gh-90882).
        builds = [t for t in threading.enumerate() if t.name == "almanac-bulk"]
        for build in builds:
            build.join(1.0)
        return [t.name for t in builds if t.is_alive()]

    def ctrl_c_at_the_last_step(sql: str) -> None:
        thread = threading.current_thread().name
        if thread == "almanac-bulk" and signalled and not store.conn.in_transaction:
            outside.append(sql)
        elif thread == "almanac-bulk" and " ON targets " in sql and not signalled:
            signalled.append(sql)
            signal.pthread_kill(main, signal.SIGINT)
        elif thread == "MainThread" and signalled and not running_when_left:
            # This runs inside the main thread's statement, holding the connection.
            running_when_left.append(builds_alive())

    store.conn.set_trace_callback(ctrl_c_at_the_last_step)
    with pytest.raises(KeyboardInterrupt):
        rec.reconcile(now_us=NOW)
    if not running_when_left:  # rolled back by SQLite as the interrupt hit
        assert not store.conn.in_transaction
        running_when_left.append(builds_alive())
    store.conn.set_trace_callback(None)
    assert signalled, "the last step never started"
    assert running_when_left == [[]]
    assert outside == []
    assert not [t for t in threading.enumerate() if t.name == "almanac-bulk"]
    store.close()
    reconcile(root, tmp_path / "state.db")
    assert dump(tmp_path / "state.db") == clean_rebuild(root, tmp_path, tmp_path / "state.db")


def test_stopping_background_statements_waits_for_all_when_one_failed_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = sqlite3.connect(tmp_path / "db", check_same_thread=False, isolation_level=None)
    background = temporal.store.Background(conn)
    long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    background.start([long])

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with pytest.raises(RuntimeError):
        background.start(["SELECT 1"])
    monkeypatch.undo()
    background.stop()  # interrupts the first statement, and waits for it
    assert not [t for t in threading.enumerate() if t.name == "almanac-bulk"]
    conn.close()


def test_a_ctrl_c_while_waiting_for_background_statements_stops_them(tmp_path: Path) -> None:
    # A real SIGINT lands while the main thread waits for a statement that never ends. CPython
    # before 3.13 marks a thread whose join a Ctrl-C interrupted as stopped while it still runs
    # (gh-90882): the statement must be interrupted and its thread ended all the same.
    conn = sqlite3.connect(tmp_path / "db", check_same_thread=False, isolation_level=None)
    background = temporal.store.Background(conn)
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    waiting = temporal.store.Background.wait.__code__
    signalled: list[bool] = []

    def ctrl_c_once_the_main_thread_waits() -> int:
        frame = sys._current_frames().get(main)
        while frame is not None and not signalled:
            if frame.f_code is waiting:
                signalled.append(True)
                signal.pthread_kill(main, signal.SIGINT)
            frame = frame.f_back
        return 0

    conn.set_progress_handler(ctrl_c_once_the_main_thread_waits, 10_000)
    try:
        background.start([endless])
        with pytest.raises(KeyboardInterrupt):
            background.wait()
        assert signalled
        assert not [t for t in threading.enumerate() if t.name == "almanac-bulk"]
    finally:
        # Whatever still runs (a thread marked stopped returns from join at once): interrupt it
        # until it is gone, so that the connection can close.
        while [t for t in threading.enumerate() if t.name == "almanac-bulk"]:
            conn.interrupt()
            time.sleep(0.01)
        conn.close()


def test_another_writer_during_a_reconcile_is_followed_and_planned_again(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    config = temporal.VaultConfig()
    mine_store, theirs_store = temporal.Store.open(db), temporal.Store.open(db)
    mine = temporal.Reconciler(mine_store, root, config)
    theirs = temporal.Reconciler(theirs_store, root, config)
    # A writer that does not take the writer lock (an older Almanac): SQLite alone orders it.
    theirs.lock.held = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    mine.reconcile(now_us=NOW)
    assert mine.loads == 1
    (root / "people/cy.md").write_text("---\ntype: person\n---\n# Cy\n")
    wrote: list[temporal.ReconcileResult] = []

    def other_process_writes(done: int, total: int) -> None:
        # After this reconcile looked for other writers, before it writes: the other one commits.
        if not wrote:
            wrote.append(theirs.reconcile(now_us=NOW))

    result = mine.reconcile(now_us=NOW, progress=other_process_writes)
    assert wrote and wrote[0].changed
    assert mine.loads == 1 and mine.follows == 1  # followed the other writer, planned again
    assert not result.reloaded and "people/cy.md" in result.followed.changed_paths
    assert result.snapshot == theirs.snapshot()
    assert "people/cy.md" in mine.memory.entries
    assert _same_memory(mine, mine_store)
    mine_store.close()
    theirs_store.close()


def _same_memory(rec: temporal.Reconciler, store: temporal.Store) -> bool:
    from almanac.temporal.reconcile.memory import Memory
    from tests.temporal.test_follow import _memory

    return _memory(rec.memory) == _memory(Memory.load(store.conn))


def _demo(tmp_path: Path) -> tuple[Path, temporal.Store, temporal.Reconciler]:
    """NOTES in a vault, a state file and its reconciler (not yet reconciled)."""
    root = tmp_path / "vault"
    write(root, NOTES)
    store = temporal.Store.open(tmp_path / "state.db")
    return root, store, temporal.Reconciler(store, root, temporal.VaultConfig())


def test_a_failed_reconcile_reloads_memory_and_keeps_its_settings(tmp_path: Path) -> None:
    root, store, rec = _demo(tmp_path)
    rec.reconcile(now_us=NOW)
    rec.parallel_from = 7
    (root / "people/cy.md").write_text("---\ntype: person\n---\n# Cy\n")

    def interrupted(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rec.reconcile(now_us=NOW, progress=interrupted)
    assert rec.loads == 2
    assert rec.parallel_from == 7  # a reload forgets memory, not how the reconciler was set up
    assert "people/cy.md" not in rec.memory.entries
    assert rec.reconcile(now_us=NOW).changed
    store.close()


def _us(text: str) -> int:
    return temporal.calendar.parse_date_value(text).start_us


WITHDRAWN_AT = _us("2027-01-15T10:00:00Z")  # the reconcile that sees the withdrawal: the guard's


def _claim(lifecycle: str, reinstated: str | None = None, body: str = "Said.") -> str:
    lines = ["type: claim", "subject: people/bob", f"lifecycle: {lifecycle}"]
    if reinstated is not None:
        lines.append(f"reinstated_at: {reinstated}")
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def _state(store: temporal.Store, path: str) -> tuple[bool, list[str]]:
    """Whether the note is eligible, and the codes of its derived issues."""
    eligible = store.conn.execute("SELECT eligible FROM notes WHERE path = ?", (path,)).fetchone()
    codes = [r[0] for r in store.conn.execute("SELECT code FROM issues WHERE path = ?", (path,))]
    return bool(eligible[0]), codes


@pytest.mark.parametrize(
    ("reinstated", "active"),
    [
        ("2027-01-15T10:00:01Z", True),  # after the guard: lifted
        ("2027-02-01", True),
        ("2027-01-15T10:00:00Z", False),  # equal: not later than the guard
        ("2027-01-15T09:59:59Z", False),  # before it
        ("2026-12-31", False),
        (None, False),  # no reinstatement at all
    ],
)
def test_reinstated_at_lifts_a_guard_only_when_later_than_it(
    tmp_path: Path, reinstated: str | None, active: bool
) -> None:
    root, store, rec = _demo(tmp_path)
    path = "claims/x.md"
    write(root, {path: _claim("active")})
    rec.reconcile(now_us=NOW)
    write(root, {path: _claim("withdrawn")})
    rec.reconcile(now_us=WITHDRAWN_AT)
    # The same id active again, with new content (content the guard saw stays blocked anyway).
    write(root, {path: _claim("active", reinstated, body="Said again, checked.")})
    rec.reconcile(now_us=WITHDRAWN_AT + 3_600_000_000)
    assert _state(store, path) == ((True, []) if active else (False, ["resurrection_blocked"]))
    store.close()


def test_a_withdrawal_after_a_reinstatement_is_a_new_guard(tmp_path: Path) -> None:
    root, store, rec = _demo(tmp_path)
    path = "claims/x.md"
    write(root, {path: _claim("active")})
    rec.reconcile(now_us=NOW)
    write(root, {path: _claim("withdrawn")})
    rec.reconcile(now_us=WITHDRAWN_AT)
    write(root, {path: _claim("active", "2027-02-01", body="Back.")})
    rec.reconcile(now_us=_us("2027-02-02"))
    assert _state(store, path) == (True, [])
    # Withdrawn again on 2027-03-01: a new guard, from then on.
    write(root, {path: _claim("withdrawn", "2027-02-01", body="Back.")})
    rec.reconcile(now_us=_us("2027-03-01"))
    guard = store.conn.execute("SELECT lifecycle, seen_at FROM guards WHERE id = 'claims/x'")
    assert guard.fetchone() == ("withdrawn", _us("2027-03-01"))
    # The first reinstatement does not lift the new guard; a later one does.
    write(root, {path: _claim("active", "2027-02-01", body="Back, once more.")})
    rec.reconcile(now_us=_us("2027-03-02"))
    assert _state(store, path) == (False, ["resurrection_blocked"])
    write(root, {path: _claim("active", "2027-03-01T00:00:01Z", body="Back, once more.")})
    rec.reconcile(now_us=_us("2027-03-03"))
    assert _state(store, path) == (True, [])
    store.close()


def test_a_vault_that_cannot_be_listed_fails_without_reloading_memory(tmp_path: Path) -> None:
    root, store, rec = _demo(tmp_path)
    rec.reconcile(now_us=NOW)
    root.rename(tmp_path / "away")  # an unmounted share, say
    with pytest.raises(Exception):  # noqa: B017 (whatever the scan raises, it is not a plan's)
        rec.reconcile(now_us=NOW)
    assert rec.loads == 1  # nothing was planned: nothing to roll back
    (tmp_path / "away").rename(root)
    assert not rec.reconcile(now_us=NOW).changed
    store.close()


def test_editing_a_note_under_its_names_leaves_its_referrers_resolved_as_they_were(
    tmp_path: Path,
) -> None:
    """Only names that appear or vanish make targets resolve again: a hub's body edited, its
    referrers are not; retitled, the ones naming its old title are (and now dangle)."""
    root = tmp_path / "vault"
    referrers = {f"r/{n}.md": f"See [[Hub House]] and [[orgs/hub]] ({n}).\n" for n in range(5)}
    write(root, {"orgs/hub.md": "---\ntitle: Hub House\n---\nA hub.\n", **referrers})
    db = tmp_path / "state.db"
    reconcile(root, db)
    (root / "orgs/hub.md").write_text("---\ntitle: Hub House\n---\nA hub, edited.\n")
    edited = reconcile(root, db)
    assert edited.resolved_paths == ("orgs/hub.md",)
    (root / "orgs/hub.md").write_text("---\ntitle: Hub Home\n---\nA hub, retitled.\n")
    retitled = reconcile(root, db)
    assert retitled.resolved_paths == ("orgs/hub.md", *sorted(referrers))
    assert dump(db) == clean_rebuild(root, tmp_path, db)
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT text, count(*) FROM targets WHERE status = 'resolved' AND path LIKE 'r/%'"
            " GROUP BY text"
        ).fetchall()
    assert found == [("[[orgs/hub]]", 5)]  # [[Hub House]] names nothing any more


def test_a_note_given_its_own_file_name_as_id_resolves_its_referrers_again(
    tmp_path: Path,
) -> None:
    """Its keys are the same (the id lower-cased was a slug suffix), but a target that matched
    the file name among several now matches the exact id."""
    root = tmp_path / "vault"
    write(
        root,
        {
            "a/hub.md": "---\ntitle: One\n---\n",
            "b/hub.md": "---\ntitle: Two\n---\n",
            "c/x.md": "See [[hub]].\n",
        },
    )
    db = tmp_path / "state.db"
    reconcile(root, db)
    (root / "a/hub.md").write_text("---\nid: hub\ntitle: One\n---\n")
    reconcile(root, db)
    assert dump(db) == clean_rebuild(root, tmp_path, db)
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT resolved_path, status FROM targets WHERE path = 'c/x.md'")
        assert row.fetchall() == [("a/hub.md", "resolved")]
