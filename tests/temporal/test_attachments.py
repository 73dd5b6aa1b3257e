"""Links to attachments: a wiki link or embed that no note answers resolves to an existing file
that is not a note (`targets.status` 'file'), makes no edge, and follows the file's coming and
going incrementally exactly as a clean rebuild would."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

import pytest

from almanac import temporal
from tests import vaults
from tests.temporal.test_reconcile import NOW, dump, write

CONFIG = temporal.VaultConfig(scopes=MappingProxyType({"private": "private/"}))
FILES = vaults.files("attachments")


def _links(conn: sqlite3.Connection, path: str) -> list[tuple[object, ...]]:
    return list(
        conn.execute(
            "SELECT text, status, resolved, resolved_path FROM targets"
            " WHERE path = ? AND field = 'link' ORDER BY ord",
            [path],
        )
    )


@pytest.mark.parametrize(
    ("link", "status", "file"),
    [
        pytest.param("![[lucide-send.svg#icon]]", "file", "Attachments/lucide-send.svg", id="icon"),
        pytest.param("![[LUCIDE-SEND.SVG]]", "file", "Attachments/lucide-send.svg", id="case"),
        pytest.param(
            "[[Attachments/lucide-send.svg|send]]",
            "file",
            "Attachments/lucide-send.svg",
            id="by-path",
        ),
        pytest.param(
            "![[Engelbart.jpg\\|200]]", "file", "Help/Engelbart.jpg", id="escaped-size-same-folder"
        ),
        pytest.param(
            "![[Attachments/Engelbart.jpg|200]]",
            "file",
            "Attachments/Engelbart.jpg",
            id="size-by-path",
        ),
        pytest.param("![[missing.png]]", "missing", None, id="missing-stays-unresolved"),
        pytest.param("![[logo.png]]", "ambiguous", None, id="tie-is-ambiguous"),
        pytest.param("![[deep/logo.png]]", "ambiguous", None, id="tie-by-tail"),
        pytest.param("![[Help/deep/logo.png]]", "file", "Help/deep/logo.png", id="tie-by-path"),
        pytest.param("[[Guide.pdf]]", "resolved", None, id="a-note-wins"),
        pytest.param("![[secret.png]]", "missing", None, id="another-scope"),
        pytest.param("![[hidden.png]]", "missing", None, id="hidden-folder"),
        pytest.param("![[lucide-send]]", "missing", None, id="no-extension"),
    ],
)
def test_a_link_to_an_existing_file_resolves_to_it(
    tmp_path: Path, link: str, status: str, file: str | None
) -> None:
    root = tmp_path / "vault"
    write(root, {**FILES, "Help/Page.md": f"# Page\n\nSee {link}\n"})
    store = temporal.Store.open(tmp_path / "s.db")
    try:
        temporal.Reconciler(store, root, CONFIG).reconcile(now_us=NOW)
        ((text, found, resolved, path),) = _links(store.conn, "Help/Page.md")
        edges = store.conn.execute("SELECT count(*) FROM edges WHERE path = 'Help/Page.md'")
        issues = store.conn.execute("SELECT code FROM issues WHERE path = 'Help/Page.md'")
        assert (text, found) == (link, status)
        if status == "file":
            assert (resolved, path) == (None, file)
        if status != "resolved":
            assert edges.fetchone() == (0,)  # a file is no record: no edge
        assert [c for (c,) in issues] == (["ambiguous_link"] if status == "ambiguous" else [])
    finally:
        store.close()


def _unlink(path: str) -> Callable[[Path], None]:
    return lambda root: (root / path).unlink()


def _add(path: str, text: str = "bytes") -> Callable[[Path], None]:
    return lambda root: write(root, {path: text})


def _rename(old: str, new: str) -> Callable[[Path], None]:
    def rename(root: Path) -> None:
        (root / old).rename(root / new)

    return rename


STEPS = [
    ("add-the-embedded-file-later", _add("img/later.png"), ["img/later.png"]),
    ("a-second-of-its-name-elsewhere", _add("b/later.png"), ["b/later.png"]),
    ("one-beside-the-note", _add("notes/later.png"), ["notes/later.png"]),
    ("remove-the-one-beside", _unlink("notes/later.png"), ["notes/later.png"]),
    ("remove-one-of-the-tie", _unlink("b/later.png"), ["b/later.png"]),
    ("a-note-takes-the-name", _add("later.png.md", "# Later\n"), ["later.png.md"]),
    ("the-note-goes", _unlink("later.png.md"), ["later.png.md"]),
    (
        "rename-the-file",
        _rename("img/later.png", "img/renamed.png"),
        ["img/later.png", "img/renamed.png"],
    ),
    ("remove-the-file", _unlink("img/renamed.png"), ["img/renamed.png"]),
    ("a-file-into-another-scope", _add("private/later.png"), ["private/later.png"]),
    ("add-it-back", _add("img/later.png"), ["img/later.png"]),
    ("a-note-links-to-it", _add("notes/two.md", "![[img/later.png]]\n"), ["notes/two.md"]),
    ("and-unlinks", _add("notes/two.md", "No links.\n"), ["notes/two.md"]),
]


@pytest.mark.parametrize(
    ("named", "reload"),
    [(False, False), (True, False), (False, True)],
    ids=["full-scan", "watcher-paths", "memory-loaded-each-time"],
)
def test_attachments_coming_and_going_match_a_clean_rebuild(
    tmp_path: Path, named: bool, reload: bool
) -> None:
    root = tmp_path / "vault"
    notes = {
        "notes/one.md": "# One\n\n![[later.png|300]] and ![[renamed.png]]\n",
        "notes/three.md": "# Three\n\n[[later.png#part]]\n",
        "private/p.md": "![[later.png]]\n",
        "img/.keep": "",
    }
    write(root, notes)
    state = tmp_path / "state.db"
    store = temporal.Store.open(state)
    rec = temporal.Reconciler(store, root, CONFIG)
    try:
        rec.reconcile(now_us=NOW)
        seen: list[tuple[object, ...]] = []
        for name, change, paths in STEPS:
            change(root)
            if reload:  # what memory loads of links to files must match what a plan keeps
                rec = temporal.Reconciler(store, root, CONFIG)
            result = rec.reconcile(now_us=NOW, paths=paths if named else None)
            assert result.changed, name
            assert dump(state) == _rebuilt(root, tmp_path, state), name
            seen.append((name, *_links(store.conn, "notes/one.md")[0][1:]))
    finally:
        store.close()
    assert seen == [
        ("add-the-embedded-file-later", "file", None, "img/later.png"),
        ("a-second-of-its-name-elsewhere", "ambiguous", None, None),  # as deep: a tie
        ("one-beside-the-note", "file", None, "notes/later.png"),
        ("remove-the-one-beside", "ambiguous", None, None),
        ("remove-one-of-the-tie", "file", None, "img/later.png"),
        ("a-note-takes-the-name", "resolved", "later.png", "later.png.md"),
        ("the-note-goes", "file", None, "img/later.png"),
        ("rename-the-file", "missing", None, None),
        ("remove-the-file", "missing", None, None),
        ("a-file-into-another-scope", "missing", None, None),
        ("add-it-back", "file", None, "img/later.png"),
        ("a-note-links-to-it", "file", None, "img/later.png"),
        ("and-unlinks", "file", None, "img/later.png"),
    ]


def _rebuilt(root: Path, tmp_path: Path, state: Path) -> dict[str, list[tuple[object, ...]]]:
    db = tmp_path / "clean.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    store = temporal.Store.open(db)
    try:
        temporal.Reconciler(store, root, CONFIG).reconcile(now_us=NOW)
    finally:
        store.close()
    return dump(db)


def test_an_attachment_change_changes_the_snapshot_only_through_a_link(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(root, {"a.md": "![[x.png]]\n", "b.md": "![[y.png]]\n"})
    store = temporal.Store.open(tmp_path / "s.db")
    try:
        rec = temporal.Reconciler(store, root, CONFIG)
        rec.reconcile(now_us=NOW)
        before = rec.snapshot()
        write(root, {"x.png": "png"})
        added = rec.reconcile(now_us=NOW)
        after = rec.snapshot()
        write(root, {"unlinked.txt": "text"})
        unlinked = rec.reconcile(now_us=NOW)
        (root / "x.png").unlink()
        removed = rec.reconcile(now_us=NOW)
        unchanged = rec.reconcile(now_us=NOW)
    finally:
        store.close()
    assert (added.affected_ids, removed.affected_ids) == (("a",), ("a",))
    assert (added.changed_paths, removed.changed_paths) == (("x.png",), ("x.png",))
    assert before != after and rec.snapshot() == before
    # A file nothing links to is listed, but no record says otherwise: the snapshot stays.
    assert (unlinked.changed_paths, unlinked.affected_ids, unlinked.snapshot) == (
        ("unlinked.txt",),
        (),
        after,
    )
    assert not unchanged.changed


def test_a_reference_field_never_resolves_to_an_attachment(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, {"a.md": "---\nentities: ['[[x.png]]']\nowner: x.png\n---\n", "x.png": "png"})
    store = temporal.Store.open(tmp_path / "s.db")
    try:
        temporal.Reconciler(store, root, CONFIG).reconcile(now_us=NOW)
        rows = store.conn.execute("SELECT field, status FROM targets ORDER BY field").fetchall()
        issues = store.conn.execute("SELECT field, code FROM issues ORDER BY field").fetchall()
    finally:
        store.close()
    assert rows == [("entities", "missing"), ("owner", "missing")]
    assert issues == [("entities", "dangling_reference"), ("owner", "dangling_reference")]
