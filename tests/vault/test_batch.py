"""Reading and parsing many notes with a worker process: the same outcomes as in-process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from almanac import vault
from almanac.vault.batch import read_and_parse, read_in_workers
from almanac.vault.reading import ReadOptions


def _vault(root: Path, count: int) -> list[vault.NoteFile]:
    for i in range(count):
        folder = root / f"f{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\ntitle: N{i}\ntags: [t{i % 3}]\n---\nSee [[N{i + 1}]].\n"
        if i % 50 == 0:
            text = "---\ntype: [\n---\nbroken\n"
        (folder / f"n{i}.md").write_text(text)
    return sorted(vault.scan(root).files, key=lambda f: f.path)


def test_a_worker_and_this_process_parse_every_file_once(tmp_path: Path) -> None:
    files = _vault(tmp_path, 400)
    known = {files[3].path: "not the hash", files[4].path: "x"}
    serial = read_and_parse(files, known, ReadOptions({"note": "page"}))
    seen: list[int] = []
    chunks = list(
        read_in_workers(
            files,
            known,
            ReadOptions({"note": "page"}),
            chunk=7,
            progress=lambda done, _: seen.append(done),
        )
    )
    outcomes = [o for chunk in chunks for o in chunk]
    assert sorted(outcomes, key=lambda o: o[0]) == serial
    assert seen[-1] == len(files) and seen == sorted(seen)


def test_a_worker_that_cannot_start_leaves_everything_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _vault(tmp_path, 2000)  # long enough for the worker to fail before the end
    serial = read_and_parse(files, {}, ReadOptions())
    # The worker takes this process's import path: a `vault` that fails to import, ahead of
    # the real one, makes it exit at once (this process has the real one loaded already).
    shadow = tmp_path / "shadow" / "vault"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('shadowed')\n")
    monkeypatch.setattr(sys, "path", [str(shadow.parent), *sys.path])
    outcomes = [o for chunk in read_in_workers(files, {}, ReadOptions(), chunk=20) for o in chunk]
    assert sorted(outcomes, key=lambda o: o[0]) == serial
