from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import DEMO_VAULT, Settings
from tests.api.helpers import LocalClient
from tests.api.time_vaults import EXTRA, NOTES, app_over, write_vault


@pytest.fixture
def demo_vault(tmp_path: Path) -> Path:
    """A private copy of the bundled demo vault, free to edit."""
    folder = tmp_path / "vault"
    shutil.copytree(DEMO_VAULT, folder)
    return folder


@pytest.fixture
def settings(demo_vault: Path, tmp_path: Path) -> Settings:
    """The demo copy, a fresh state database, no watcher: every query scans."""
    return Settings.build(vault=demo_vault, state=tmp_path / "state.db", config=None, watch=False)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with LocalClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="module")
def demo_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app over an unedited demo copy, shared by a module's read-only tests."""
    folder = tmp_path_factory.mktemp("demo")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("ALMANAC_"):
                patch.delenv(name)
        settings = Settings.build(
            vault=folder / "vault", state=folder / "state.db", config=None, watch=False
        )
        with LocalClient(create_app(settings)) as client:
            yield client


# -- the time-query suites' shared vaults (tests/api/time_vaults.py) ------------------------


@pytest.fixture(scope="module")
def rv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("review")
    write_vault(folder / "vault", NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


@pytest.fixture(scope="module")
def extra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("extra")
    write_vault(folder / "vault", EXTRA)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client
