"""`scan` and `stat_note`: what counts as a note file, and what is skipped or reported."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from almanac import vault
from almanac.vault import Issue, NoteFile, is_ignored_name, read_note, scan, stat_note


def _write(root: Path, path: str, data: bytes = b"# note\n") -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _paths(root: Path) -> list[str]:
    return [f.path for f in scan(root).files]


def _issues(root: Path) -> list[tuple[str, str]]:
    return [(i.path, i.code) for i in scan(root).issues]


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the vault with a note that must never be read."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.md").write_bytes(b"---\nid: secret\n---\n")
    return path


def test_scan_lists_markdown_files_sorted_with_their_stat(vault_dir: Path) -> None:
    _write(vault_dir, "zeta.md", b"12345")
    _write(vault_dir, "people/Ada Lovelace.md")
    _write(vault_dir, "people/deep/er/x.md")
    _write(vault_dir, "Zoë.md")
    _write(vault_dir, "notes.txt")
    _write(vault_dir, "README")
    _write(vault_dir, "upper.MD")

    result = scan(vault_dir)

    assert [f.path for f in result.files] == [
        "Zoë.md",
        "people/Ada Lovelace.md",
        "people/deep/er/x.md",
        "zeta.md",
    ]
    assert result.issues == ()
    zeta = result.files[-1]
    st = os.stat(vault_dir / "zeta.md")
    assert zeta == NoteFile("zeta.md", str(vault_dir / "zeta.md"), 5, st.st_mtime_ns, st.st_ino)


def test_scan_of_an_empty_vault_is_empty(vault_dir: Path) -> None:
    assert scan(vault_dir) == vault.ScanResult((), ())


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(".git/x.md", id="git"),
        pytest.param(".obsidian/x.md", id="obsidian"),
        pytest.param(".trash/x.md", id="trash"),
        pytest.param(".stversions/x~20240101-120000.md", id="stversions"),
        pytest.param("sub/.obsidian/x.md", id="nested-dot-folder"),
        pytest.param(".hidden.md", id="hidden-file"),
        pytest.param(".syncthing.x.md.tmp", id="syncthing-temp"),
        pytest.param("sub/.syncthing.x.md.tmp", id="nested-syncthing-temp"),
        pytest.param("~syncthing~x.md.tmp", id="syncthing-temp-windows"),
    ],
)
def test_scan_ignores_dot_folders_and_syncthing_temp_files(vault_dir: Path, path: str) -> None:
    _write(vault_dir, path)

    assert scan(vault_dir).files == ()
    assert scan(vault_dir).issues == ()


@pytest.mark.parametrize(
    ("name", "ignored"),
    [
        pytest.param(".git", True, id="git"),
        pytest.param(".syncthing.a.md.tmp", True, id="syncthing-temp"),
        pytest.param("~syncthing~a.md.tmp", True, id="syncthing-temp-windows"),
        pytest.param("a.md", False, id="note"),
        pytest.param("a.sync-conflict-20240101-120000-ABCDEFG.md", False, id="conflict-copy"),
        pytest.param("~a.md", False, id="tilde"),
    ],
)
def test_is_ignored_name(name: str, ignored: bool) -> None:
    assert is_ignored_name(name) is ignored


def test_scan_keeps_syncthing_conflict_copies(vault_dir: Path) -> None:
    _write(vault_dir, "x.md")
    _write(vault_dir, "x.sync-conflict-20240101-120000-ABCDEFG.md")

    assert _paths(vault_dir) == ["x.md", "x.sync-conflict-20240101-120000-ABCDEFG.md"]


@pytest.mark.parametrize(
    ("link", "target"),
    [
        pytest.param("escape.md", "absolute-file", id="absolute-file"),
        pytest.param("escape.md", "relative-file", id="relative-file"),
        pytest.param("elsewhere", "absolute-dir", id="absolute-dir"),
        pytest.param("sub/elsewhere", "relative-dir", id="nested-relative-dir"),
        pytest.param("passwd.md", "etc-passwd", id="etc-passwd"),
    ],
)
def test_scan_reports_symlinks_leaving_the_vault_and_never_reads_them(
    vault_dir: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, link: str, target: str
) -> None:
    _write(vault_dir, "good.md")
    (vault_dir / "sub").mkdir()
    depth = link.count("/")
    pointee = {
        "absolute-file": str(outside / "secret.md"),
        "relative-file": "../outside/secret.md",
        "absolute-dir": str(outside),
        "relative-dir": "../" * (depth + 1) + "outside",
        "etc-passwd": "/etc/passwd",
    }[target]
    os.symlink(pointee, vault_dir / link)
    touched: list[str] = []
    real_open, real_scandir = os.open, os.scandir

    def spy_open(path: str, *args: int, **kwargs: int) -> int:
        touched.append(os.path.realpath(path))
        return real_open(path, *args, **kwargs)

    def spy_scandir(path: str) -> Iterator[os.DirEntry[str]]:
        touched.append(os.path.realpath(path))
        return real_scandir(path)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", spy_open)
        patch.setattr(os, "scandir", spy_scandir)
        result = scan(vault_dir)
        notes = [read_note(f) for f in result.files]

    assert [f.path for f in result.files] == ["good.md"]
    assert [(i.path, i.code) for i in result.issues] == [(link, "unsafe_path")]
    assert [n.note.id for n in notes if n.note] == ["good"]
    real_vault = os.path.realpath(vault_dir)
    assert touched
    assert all(p == real_vault or p.startswith(real_vault + os.sep) for p in touched), touched


def test_scan_follows_symlinks_that_stay_inside_the_vault(vault_dir: Path) -> None:
    _write(vault_dir, "real/a.md", b"# A\n")
    os.symlink("real/a.md", vault_dir / "link.md")

    result = scan(vault_dir)

    assert [f.path for f in result.files] == ["link.md", "real/a.md"]
    assert result.files[0].fspath == os.path.realpath(vault_dir / "real/a.md")
    assert result.issues == ()


def test_scan_through_a_symlinked_vault_root(vault_dir: Path, tmp_path: Path) -> None:
    _write(vault_dir, "a.md")
    os.symlink(vault_dir, tmp_path / "vault-link")

    assert _paths(tmp_path / "vault-link") == ["a.md"]


def _ordered_scandir(
    reverse: bool,
) -> Callable[[str], contextlib.nullcontext[list[os.DirEntry[str]]]]:
    real_scandir = os.scandir

    def scandir(path: str) -> contextlib.nullcontext[list[os.DirEntry[str]]]:
        with real_scandir(path) as entries:
            return contextlib.nullcontext(sorted(entries, key=lambda e: e.name, reverse=reverse))

    return scandir


@pytest.mark.parametrize(
    "reverse",
    [
        pytest.param(True, id="real-folder-listed-first"),
        pytest.param(False, id="alias-listed-first"),
    ],
)
def test_scan_symlinked_folder_inside_vault_never_hides_the_real_folder(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, reverse: bool
) -> None:
    _write(vault_dir, "people/ada.md")
    os.symlink("people", vault_dir / "alias")
    monkeypatch.setattr(os, "scandir", _ordered_scandir(reverse))

    assert "people/ada.md" in _paths(vault_dir)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param({"loop": "."}, [("loop", "unsafe_path")], id="link-to-root"),
        pytest.param({"deep/up": ".."}, [("deep/up", "unsafe_path")], id="link-to-parent"),
        pytest.param({"deep/self": "../deep"}, [("deep/self", "unsafe_path")], id="link-to-itself"),
        pytest.param(
            {"a.md": "b.md", "b.md": "a.md"},
            [("a.md", "unsafe_path"), ("b.md", "unsafe_path")],
            id="file-link-cycle",
        ),
        pytest.param({"self.md": "self.md"}, [("self.md", "unsafe_path")], id="file-links-itself"),
        pytest.param({"broken.md": "missing.md"}, [("broken.md", "unsafe_path")], id="broken"),
    ],
)
def test_scan_reports_symlink_loops_and_broken_links(
    vault_dir: Path, make: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    _write(vault_dir, "deep/note.md")
    for link, target in make.items():
        os.symlink(target, vault_dir / link)

    result = scan(vault_dir)

    assert [f.path for f in result.files] == ["deep/note.md"]
    assert [(i.path, i.code) for i in result.issues] == expected


def test_scan_reports_a_fifo_named_like_a_note_without_opening_it(vault_dir: Path) -> None:
    os.mkfifo(vault_dir / "x.md")
    os.mkfifo(vault_dir / "pipe")  # not a note name: not even looked at

    result = scan(vault_dir)

    assert result.files == ()
    assert result.issues == (
        Issue("x.md", None, None, "not_regular_file", "Not a regular file: skipped"),
    )


def test_scan_traverses_a_directory_named_like_a_note(vault_dir: Path) -> None:
    _write(vault_dir, "x.md/inner.md")
    _write(vault_dir, "x.md/y.md/deeper.md")

    result = scan(vault_dir)

    assert [f.path for f in result.files] == ["x.md/inner.md", "x.md/y.md/deeper.md"]
    assert result.issues == ()


def test_scan_reports_undecodable_file_names(vault_dir: Path) -> None:
    _write(vault_dir, "good.md")
    fd = os.open(os.fsencode(vault_dir) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    os.mkdir(os.fsencode(vault_dir) + b"/dir\xfe")
    fd = os.open(os.fsencode(vault_dir) + b"/dir\xfe/inner.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)

    result = scan(vault_dir)

    assert [f.path for f in result.files] == ["good.md"]
    assert [(i.path, i.code) for i in result.issues] == [
        ("bad\\xff.md", "not_utf8"),
        ("dir\\xfe", "not_utf8"),
    ]
    assert all(i.path.encode("utf-8") for i in result.issues)


def test_stat_note_sees_one_note_the_way_scan_does(vault_dir: Path, outside: Path) -> None:
    _write(vault_dir, "sub/a.md", b"abc")
    os.symlink(outside / "secret.md", vault_dir / "escape.md")
    os.mkfifo(vault_dir / "fifo.md")

    found = stat_note(vault_dir, "sub/a.md")

    assert isinstance(found, NoteFile)
    assert (found.path, found.size) == ("sub/a.md", 3)
    assert stat_note(vault_dir, "missing.md") is None
    escape = stat_note(vault_dir, "escape.md")
    assert isinstance(escape, Issue)
    assert escape.code == "unsafe_path"
    fifo = stat_note(vault_dir, "fifo.md")
    assert isinstance(fifo, Issue)
    assert fifo.code == "not_regular_file"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("a.txt", id="not-markdown"),
        pytest.param(".obsidian/a.md", id="dot-folder"),
        pytest.param("../outside/secret.md", id="dot-dot"),
        pytest.param("sub//a.md", id="empty-part"),
        pytest.param("sub/", id="folder"),
    ],
)
def test_stat_note_ignores_what_scan_never_lists(vault_dir: Path, outside: Path, path: str) -> None:
    _write(vault_dir, "sub/a.md")
    _write(vault_dir, ".obsidian/a.md")
    _write(vault_dir, "a.txt")

    assert stat_note(vault_dir, path) is None


def test_stat_note_refuses_a_note_under_a_symlinked_folder_leaving_the_vault(
    vault_dir: Path, outside: Path
) -> None:
    os.symlink(outside, vault_dir / "elsewhere")

    found = stat_note(vault_dir, "elsewhere/secret.md")

    assert not isinstance(found, NoteFile)


# -- scanning against what was seen before (`known`) ----------------------------------------


def _stats(root: Path) -> dict[str, tuple[int, int, int]]:
    return {f.path: (f.size, f.mtime_ns, f.ino) for f in scan(root).files}


def _mutate(root: Path, rng: random.Random) -> None:
    """One change a user or a sync tool might make to a vault."""
    notes = sorted(p for p in _stats(root))
    folders = sorted({p.rpartition("/")[0] for p in notes if "/" in p})
    kind = rng.choice(
        ["add", "edit", "delete", "folder", "dir-in-place", "symlink", "fifo", "drop"]
    )
    if kind == "add" or not notes:
        _write(root, f"{rng.choice(['', 'a/', 'a/b/', 'c/'])}n{rng.randint(0, 99)}.md")
    elif kind == "edit":
        _write(root, rng.choice(notes), b"# edited " + bytes(str(rng.random()), "ascii"))
    elif kind == "delete":
        (root / rng.choice(notes)).unlink()
    elif kind == "folder" and folders:
        shutil.rmtree(root / rng.choice(folders))
    elif kind == "dir-in-place":  # a note replaced by a folder of the same name
        victim = root / rng.choice(notes)
        victim.unlink()
        victim.mkdir()
    elif kind == "symlink":  # a note replaced by a link to another note (inside the vault)
        name, other = rng.choice(notes), rng.choice(notes)
        (root / name).unlink()
        if name != other:
            os.symlink(root / other, root / name)
    elif kind == "fifo":
        victim = root / rng.choice(notes)
        victim.unlink()
        os.mkfifo(victim)
    elif kind == "drop":
        (root / rng.choice(notes)).rename(root / f"moved{rng.randint(0, 99)}.txt")


@pytest.mark.parametrize("seed", range(12))
def test_a_scan_against_known_stats_equals_a_full_scan(tmp_path: Path, seed: int) -> None:
    """Unchanged notes are only counted, folder by folder: what is left (changed files, gone
    paths) must be exactly what comparing a full scan with the known stats gives."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    for i in range(30):
        _write(root, f"{rng.choice(['', 'a/', 'a/b/', 'c/'])}n{i}.md")
    known = vault.KnownStats(_stats(root))
    for _ in range(25):
        _mutate(root, rng)
        full = scan(root)
        quick = scan(root, known=known)
        seen = {f.path: (f.size, f.mtime_ns, f.ino) for f in full.files}
        # Changed files are listed (a symlinked note always is: the reconciler compares it).
        listed = {f.path: (f.size, f.mtime_ns, f.ino) for f in quick.files}
        assert listed.items() <= seen.items()
        changed = {p for p, s in seen.items() if known.get(p) != s}
        assert {p for p, s in listed.items() if known.get(p) != s} == changed
        assert list(quick.gone) == sorted(known.keys() - seen.keys())
        assert quick.issues == full.issues
        # As the reconciler does: remember what it saw.
        for path in quick.gone:
            del known[path]
        for f in quick.files:
            known[f.path] = (f.size, f.mtime_ns, f.ino)
        assert dict(known) == seen


def test_a_folder_failing_partway_through_its_listing_is_unreadable_as_a_whole(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a.md", "b.md", "c.md"):
        (vault_dir / "d" / name).parent.mkdir(exist_ok=True)
        (vault_dir / "d" / name).write_text("# note\n")
    (vault_dir / "d" / "sub").mkdir()
    (vault_dir / "keep.md").write_text("# kept\n")
    known = {f.path: (f.size, f.mtime_ns, f.ino) for f in scan(vault_dir).files}
    (vault_dir / "d" / "a.md").write_text("# changed, so it would be listed\n")
    real_scandir = os.scandir

    class Failing:
        """The OS listing of folder `d`, failing (EIO) after its first entries."""

        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def __iter__(self) -> Iterator[os.DirEntry[str]]:
            yield from sorted(self.inner, key=lambda e: e.name)[:3]
            raise OSError(errno.EIO, "Input/output error")

    def scandir(path: str) -> object:
        return Failing(path) if path.endswith("/d") else real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan(vault_dir, known=known)
    assert [f.path for f in result.files] == []
    assert ("d", "unreadable") in [(i.path, i.code) for i in result.issues]
    assert sorted(result.gone) == ["d/a.md", "d/b.md", "d/c.md"]


def test_scan_lists_attachments_without_reading_them(vault_dir: Path, outside: Path) -> None:
    for path in ("a.md", "img/logo.png", "img/sub/doc.pdf", ".obsidian/x.png", "img/.hidden.png"):
        _write(vault_dir, path)
    (vault_dir / "img" / "unreadable.png").write_bytes(b"png")
    (vault_dir / "img" / "unreadable.png").chmod(0)
    (vault_dir / "img" / "link.png").symlink_to(vault_dir / "img" / "logo.png")
    (vault_dir / "img" / "away.png").symlink_to(outside / "secret.md")
    os.mkfifo(vault_dir / "img" / "fifo.png")

    result = scan(vault_dir)

    assert [f.path for f in result.files] == ["a.md"]
    assert result.attachments == (
        "img/link.png",
        "img/logo.png",
        "img/sub/doc.pdf",
        "img/unreadable.png",
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("img/logo.png", True, id="file"),
        pytest.param("img/link.png", True, id="symlink-inside"),
        pytest.param("img/away.png", False, id="symlink-outside"),
        pytest.param("img/missing.png", False, id="missing"),
        pytest.param("img", False, id="folder"),
        pytest.param("a.md", False, id="note"),
        pytest.param(".obsidian/x.png", False, id="hidden-folder"),
        pytest.param("img/../img/logo.png", False, id="dot-dot"),
    ],
)
def test_is_attachment(vault_dir: Path, outside: Path, path: str, expected: bool) -> None:
    for name in ("a.md", "img/logo.png", ".obsidian/x.png"):
        _write(vault_dir, name)
    (vault_dir / "img" / "link.png").symlink_to(vault_dir / "img" / "logo.png")
    (vault_dir / "img" / "away.png").symlink_to(outside / "secret.md")

    assert vault.is_attachment(vault_dir, path) is expected
