"""What the service does when something around it goes wrong."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from tests.api.helpers import DEMO_RECORDS, data, post

STATUS = "{ status { recordCount } records(first: 1) { meta { degraded } } }"


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


def test_a_failing_reconcile_serves_the_last_snapshot_marked_stale(
    client: TestClient, demo_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]

    def broken(**_: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(services.reconciler, "reconcile", broken)
    (demo_vault / "new.md").write_text("# New\n")
    answer = data(client, STATUS)
    assert answer["status"]["recordCount"] == DEMO_RECORDS
    assert answer["records"]["meta"]["degraded"] == ["index_stale"]
    monkeypatch.undo()
    answer = data(client, STATUS)
    assert answer["status"]["recordCount"] == DEMO_RECORDS + 1
    assert answer["records"]["meta"]["degraded"] == []


def test_watcher_that_loses_the_vault_folder_falls_back_to_scanning(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    settings = Settings.build(vault=vault, state=tmp_path / "state.db", watch=True)
    with TestClient(create_app(settings)) as client:
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
    with TestClient(create_app(settings)) as client:
        assert data(client, STATUS)["status"]["recordCount"] == 0
        (vault / "gone").mkdir()
        (vault / "gone").rmdir()
        (vault / "kept").mkdir()
        (vault / "kept" / "n.md").write_text("# N\n")
        assert data(client, STATUS)["status"]["recordCount"] == 1
        (vault / "kept" / "n.md").write_text("# N2\n")
        (vault / "kept" / "m.md").write_text("# M\n")
        assert data(client, STATUS)["status"]["recordCount"] == 2
