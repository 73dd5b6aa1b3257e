from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field

from almanac.vault.issue import Issue

__all__ = [
    "KnownStats",
    "NoteFile",
    "ScanResult",
    "is_attachment",
    "is_ignored_name",
    "scan",
    "stat_note",
]

Stat = tuple[int, int, int]  # (size, mtime_ns, inode)


@dataclass(frozen=True, slots=True)
class NoteFile:
    """A regular `*.md` file inside the vault, as seen by one `stat`."""

    path: str
    fspath: str
    size: int
    mtime_ns: int
    ino: int


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The note files of a vault and the issues of what was skipped.

    Args:
        files: Every note file; with `known`, only those whose stat differs from it.
        issues: What was skipped and why.
        gone: With `known`, the known paths that are no longer notes.
        attachments: Every other regular file (images, PDFs, ...): listed, never read.
    """

    files: tuple[NoteFile, ...]
    issues: tuple[Issue, ...]
    gone: tuple[str, ...] = ()
    attachments: tuple[str, ...] = ()


class KnownStats(MutableMapping[str, Stat]):
    """Path to (size, mtime_ns, inode) as last seen, also by folder (`folders`: prefix, then
    name), so that a scan compares a folder's files by name without making their paths."""

    def __init__(self, items: Mapping[str, Stat] | None = None) -> None:
        self._all: dict[str, Stat] = {}
        self.folders: dict[str, dict[str, Stat]] = {}
        for path, stat in (items or {}).items():
            self[path] = stat

    def __getitem__(self, path: str) -> Stat:
        return self._all[path]

    def get(self, path: str, default: Stat | None = None) -> Stat | None:  # type: ignore[override]
        return self._all.get(path, default)

    def __contains__(self, path: object) -> bool:
        return path in self._all

    def __setitem__(self, path: str, stat: Stat) -> None:
        self._all[path] = stat
        cut = path.rfind("/") + 1
        self.folders.setdefault(path[:cut], {})[path[cut:]] = stat

    def __delitem__(self, path: str) -> None:
        del self._all[path]
        cut = path.rfind("/") + 1
        folder = self.folders[path[:cut]]
        del folder[path[cut:]]
        if not folder:
            del self.folders[path[:cut]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)


@dataclass(slots=True)
class _Walk:
    top: str
    files: list[NoteFile]
    issues: list[Issue]
    seen_dirs: set[tuple[int, int]]
    known: KnownStats
    gone: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)  # in walk order
    visited: set[str] = field(default_factory=set)  # folder prefixes walked


def is_ignored_name(name: str) -> bool:
    """Whether a file or folder name is never part of the vault.

    Hidden names (`.git`, `.obsidian`, `.trash`, `.stversions`, Syncthing's
    `.syncthing.*.tmp`) and Syncthing's `~syncthing~*.tmp` are skipped.
    """
    return name.startswith((".", "~syncthing~"))


def scan(
    root: str | os.PathLike[str],
    *,
    ordered: bool = True,
    known: Mapping[str, Stat] | None = None,
) -> ScanResult:
    """List every note of the vault at `root` without reading any.

    Symlinks are followed only while their target stays inside the vault;
    directory loops are cut by `(st_dev, st_ino)`. Anything that is not a
    regular file, leaves the vault or has an undecodable name is an issue.

    Args:
        ordered: Sort the files by path; without it they come in directory order.
        known: Path to (size, mtime_ns, inode) as last seen: files that still match are
            left out of `files` (no object is made for them), and vanished ones are `gone`.
    """
    top = os.path.realpath(root)
    root_stat = os.stat(top)
    if known is not None and not isinstance(known, KnownStats):
        known = KnownStats(known)
    walk = _Walk(top, [], [], {(root_stat.st_dev, root_stat.st_ino)}, known or KnownStats())
    _walk(walk, top, "")
    files = walk.files
    if ordered:
        files.sort(key=lambda f: f.path)
    walk.issues.sort(key=lambda i: (i.path, i.code))
    gone = walk.gone
    if known:  # every known note of a folder not walked (gone, or no longer a folder)
        for prefix in known.folders.keys() - walk.visited:
            gone += [prefix + name for name in known.folders[prefix]]
    attachments = sorted(walk.attachments) if ordered else walk.attachments
    return ScanResult(tuple(files), tuple(walk.issues), tuple(sorted(gone)), tuple(attachments))


def stat_note(root: str | os.PathLike[str], path: str) -> NoteFile | Issue | None:
    """Look at one vault-relative path the way `scan` would; None when it is not a note."""
    top = os.path.realpath(root)
    if not _decodable(path):
        return Issue(_printable(path), None, None, "not_utf8", "File name is not valid UTF-8")
    parts = path.split("/")
    if not path.endswith(".md") or any(is_ignored_name(p) or p in ("", "..") for p in parts):
        return None
    fspath = os.path.join(top, *parts)
    try:
        st = os.lstat(fspath)
    except OSError:
        return None
    folder = os.path.dirname(fspath)
    if os.path.realpath(folder) != folder:
        return Issue(path, None, None, "unsafe_path", "Path goes through a symlinked folder")
    return _note_or_issue(top, fspath, path, st)


def is_attachment(root: str | os.PathLike[str], path: str) -> bool:
    """Whether a vault-relative path is an attachment now, as `scan` would list it: a regular
    file (or a symlink to one inside the vault) that is not a note, outside hidden folders."""
    parts = path.split("/")
    if path.endswith(".md") or not _decodable(path):
        return False
    if any(is_ignored_name(p) or p in ("", "..") for p in parts):
        return False
    top = os.path.realpath(root)
    fspath = os.path.join(top, *parts)
    if os.path.realpath(os.path.dirname(fspath)) != os.path.dirname(fspath):
        return False  # through a symlinked folder: scans name it by the link's path
    try:
        st = os.lstat(fspath)
        if stat_module.S_ISLNK(st.st_mode):
            real = os.path.realpath(fspath)
            if not real.startswith(top + os.sep):
                return False
            st = os.stat(real)
    except OSError:
        return False
    return stat_module.S_ISREG(st.st_mode)


def _walk(walk: _Walk, folder: str, prefix: str) -> None:
    walk.visited.add(prefix)
    known = walk.known.folders.get(prefix, {})
    files, issues, attachments = len(walk.files), len(walk.issues), len(walk.attachments)
    folders: list[tuple[str, str, tuple[int, int]]] = []
    try:
        # Streamed, not listed: each entry (and its stat) is freed before the next is made,
        # which keeps a no-change scan of 100,000 files close to bare `stat` calls.
        with os.scandir(folder) as entries:
            links, kept, same = _entries(walk, entries, prefix, known, folders)
    except OSError as exc:
        # Unreadable, as a whole: what was seen of it before the error is dropped.
        del walk.files[files:], walk.issues[issues:], walk.attachments[attachments:]
        walk.seen_dirs.difference_update(key for _, _, key in folders)
        walk.issues.append(Issue(prefix.rstrip("/") or ".", None, None, "unreadable", str(exc)))
        walk.gone += [prefix + name for name in known]
        return
    for fspath, path, _ in folders:  # once this folder is closed: one open folder at a time
        _walk(walk, fspath, path + "/")
    # Symlinks after the real entries (by name): a folder both holds and links to is reached
    # by its own path.
    for entry in sorted(links, key=lambda e: e.name):
        path = prefix + entry.name
        before = len(walk.files)
        try:
            _follow_link(walk, entry.path, path)
        except OSError as exc:
            message = f"Cannot stat: {exc.strerror}"
            walk.issues.append(Issue(path, None, None, "unreadable", message))
        if len(walk.files) > before and walk.files[-1].path == path:
            kept.add(entry.name)
    if len(same) + len(kept & known.keys()) != len(known):
        # Some known note of this folder is not one any more (rare).
        here = kept | set(same)
        walk.gone += [prefix + name for name in known if name not in here]


def _entries(
    walk: _Walk,
    entries: Iterator[os.DirEntry[str]],
    prefix: str,
    known: Mapping[str, Stat],
    folders: list[tuple[str, str, tuple[int, int]]],
) -> tuple[list[os.DirEntry[str]], set[str], list[str]]:
    """Look at one folder's files; its sub-folders (into `folders`, marked seen) and symlinks
    are left to walk after.

    Returns:
        The symlinks, the names of notes to read (new or changed) and of known notes unchanged.
    """
    top, files, issues, seen_dirs = walk.top, walk.files, walk.issues, walk.seen_dirs
    links: list[os.DirEntry[str]] = []
    kept: set[str] = set()
    same: list[str] = []  # no path is made for these
    for entry in entries:
        name = entry.name
        if name[0] in ".~" and is_ignored_name(name):
            continue
        if name.endswith(".md") and entry.is_file(follow_symlinks=False):
            # The common case, kept short: a regular note file.
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                path = prefix + name
                issues.append(Issue(path, None, None, "unreadable", f"Cannot stat: {exc.strerror}"))
                continue
            if name.isascii() or _decodable(name):
                if known.get(name) == (st.st_size, st.st_mtime_ns, st.st_ino):
                    same.append(name)
                else:
                    kept.add(name)
                    path = prefix + name
                    files.append(NoteFile(path, entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
                continue
        path = prefix + name
        if not _decodable(name):
            issues.append(
                Issue(_printable(path), None, None, "not_utf8", "File name is not valid UTF-8")
            )
            continue
        try:
            if entry.is_symlink():
                links.append(entry)
            elif entry.is_dir(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                key = (st.st_dev, st.st_ino)
                if key not in seen_dirs:
                    seen_dirs.add(key)
                    folders.append((entry.path, path, key))
            elif name.endswith(".md"):
                found = _note_or_issue(top, entry.path, path, entry.stat(follow_symlinks=False))
                _keep(walk, found)
                if isinstance(found, NoteFile):
                    kept.add(name)
            elif entry.is_file(follow_symlinks=False):
                walk.attachments.append(path)  # listed, never read
        except OSError as exc:
            issues.append(Issue(path, None, None, "unreadable", f"Cannot stat: {exc.strerror}"))
    return links, kept, same


def _follow_link(walk: _Walk, fspath: str, path: str) -> None:
    top, issues, seen_dirs = walk.top, walk.issues, walk.seen_dirs
    real = os.path.realpath(fspath)
    if real != top and not real.startswith(top + os.sep):
        if path.endswith(".md") or os.path.isdir(real):
            issues.append(
                Issue(
                    path, None, None, "unsafe_path", "Symlink leaves the vault: skipped, not read"
                )
            )
        return
    try:
        st = os.stat(real)
    except OSError:
        issues.append(Issue(path, None, None, "unsafe_path", "Broken symlink: skipped"))
        return
    if stat_module.S_ISDIR(st.st_mode):
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            issues.append(Issue(path, None, None, "unsafe_path", "Symlink loop: skipped"))
            return
        seen_dirs.add(key)
        _walk(walk, real, path + "/")
    elif path.endswith(".md"):
        _keep(walk, _note_or_issue(top, real, path, st))
    elif stat_module.S_ISREG(st.st_mode):
        walk.attachments.append(path)


def _keep(walk: _Walk, found: NoteFile | Issue | None) -> None:
    if isinstance(found, NoteFile):
        walk.files.append(found)
    elif found is not None:
        walk.issues.append(found)


def _note_or_issue(top: str, fspath: str, path: str, st: os.stat_result) -> NoteFile | Issue | None:
    if stat_module.S_ISLNK(st.st_mode):
        real = os.path.realpath(fspath)
        if not real.startswith(top + os.sep):
            return Issue(path, None, None, "unsafe_path", "Symlink leaves the vault: skipped")
        try:
            st = os.stat(real)
        except OSError:
            return Issue(path, None, None, "unsafe_path", "Broken symlink: skipped")
        fspath = real
    if stat_module.S_ISDIR(st.st_mode):
        return None
    if not stat_module.S_ISREG(st.st_mode):
        return Issue(path, None, None, "not_regular_file", "Not a regular file: skipped")
    return NoteFile(path, fspath, st.st_size, st.st_mtime_ns, st.st_ino)


def _decodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
