from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import almanac
from almanac.api.settings import DEMO_VAULT
from tests.almanac.real_data import executive_data, write_executive_vault


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[almanac.Almanac]:
    """An Almanac over an unedited copy of the demo vault, shared by a module's tests."""
    folder = tmp_path_factory.mktemp("demo")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    with almanac.open(folder / "vault", state=folder / "state.db") as kb:
        yield kb


@pytest.fixture(scope="module")
def real_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[almanac.Almanac]:
    """An Almanac over the real-data vault (the presidents and their terms)."""
    source = executive_data()
    folder = tmp_path_factory.mktemp("real")
    write_executive_vault(source, folder / "vault")
    with almanac.open(folder / "vault", state=folder / "state.db") as kb:
        yield kb


@pytest.fixture
def demo_vault(tmp_path: Path) -> Path:
    """A private copy of the demo vault, free to edit."""
    shutil.copytree(DEMO_VAULT, tmp_path / "vault")
    return tmp_path / "vault"
