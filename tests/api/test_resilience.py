"""What the service does when something around it goes wrong."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import DEMO_RECORDS, LocalClient, data, post

STATUS = "{ status { snapshot recordCount } records(first: 1) { meta { degraded } } }"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "10.0.0.1"])
def test_without_tokens_a_foreign_host_name_is_refused(client: TestClient, host: str) -> None:
    # DNS rebinding: a loopback connection that names another host.
    response = post(client, "{ status { recordCount } }", headers={"host": host})
    assert response.status_code == 403
    assert response.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "[::1]:8000"])
def test_without_tokens_loopback_host_names_are_answered(client: TestClient, host: str) -> None:
    response = post(client, "{ status { recordCount } }", headers={"host": host})
    assert response.status_code == 200
    assert response.json()["data"]["status"]["recordCount"] == DEMO_RECORDS


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 16 MB tmpfs of its own (a disk that can fill up), unmounted after."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"this process may not mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write zeros into a new file of `folder` until its file system has no byte left."""
    filler = folder / "filler"
    block = bytes(4096)  # a tmpfs page: the last one fits exactly
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


def test_a_reconcile_on_a_full_disk_serves_the_last_snapshot_marked_stale(
    demo_vault: Path, small_disk: Path
) -> None:
    settings = Settings.build(vault=demo_vault, state=small_disk / "state.db", watch=False)
    with LocalClient(create_app(settings)) as client:
        before = data(client, STATUS)
        assert before["status"]["recordCount"] == DEMO_RECORDS
        filler = fill(small_disk)
        (demo_vault / "new.md").write_text("# New\n")
        for _ in range(2):  # and again: the next query tries again, and fails again
            answer = data(client, STATUS)
            assert answer["status"] == before["status"]
            assert answer["records"]["meta"]["degraded"] == ["index_stale"]
        filler.unlink()
        answer = data(client, STATUS)
        assert answer["status"]["recordCount"] == DEMO_RECORDS + 1
        assert answer["status"]["snapshot"] != before["status"]["snapshot"]
        assert answer["records"]["meta"]["degraded"] == []


def test_a_vault_that_is_gone_serves_the_last_snapshot_marked_stale(
    client: TestClient, demo_vault: Path
) -> None:
    # Its disk unmounted: the vault is not empty, it cannot be read; nothing is deleted.
    before = data(client, STATUS)
    (demo_vault / "new.md").write_text("# New\n")
    unmounted = demo_vault.rename(demo_vault.with_name("unmounted"))
    answer = data(client, STATUS)
    assert answer["status"] == before["status"]
    assert answer["records"]["meta"]["degraded"] == ["index_stale"]
    unmounted.rename(demo_vault)
    answer = data(client, STATUS)
    assert answer["status"]["recordCount"] == DEMO_RECORDS + 1
    assert answer["records"]["meta"]["degraded"] == []


def test_watcher_that_loses_the_vault_folder_falls_back_to_scanning(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    settings = Settings.build(vault=vault, state=tmp_path / "state.db", watch=True)
    with LocalClient(create_app(settings)) as client:
        assert data(client, STATUS)["status"]["recordCount"] == 1
        # Restore from a backup by swapping folders: the old watches point at the old inode.
        os.rename(vault, tmp_path / "old")
        shutil.copytree(tmp_path / "old", vault)
        (vault / "b.md").write_text("# B\n")
        assert data(client, STATUS)["status"]["recordCount"] == 2
        (vault / "c.md").write_text("# C\n")
        assert data(client, STATUS)["status"]["recordCount"] == 3


def test_watcher_follows_a_folder_created_and_removed_at_once(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    settings = Settings.build(vault=vault, state=tmp_path / "state.db", watch=True)
    with LocalClient(create_app(settings)) as client:
        assert data(client, STATUS)["status"]["recordCount"] == 0
        (vault / "gone").mkdir()
        (vault / "gone").rmdir()
        (vault / "kept").mkdir()
        (vault / "kept" / "n.md").write_text("# N\n")
        assert data(client, STATUS)["status"]["recordCount"] == 1
        (vault / "kept" / "n.md").write_text("# N2\n")
        (vault / "kept" / "m.md").write_text("# M\n")
        assert data(client, STATUS)["status"]["recordCount"] == 2
