from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.vaults import VAULTS


@pytest.fixture(autouse=True)
def _no_almanac_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up ALMANAC_* settings from the machine."""
    import os

    for name in list(os.environ):
        if name.startswith("ALMANAC_"):
            monkeypatch.delenv(name)


@pytest.fixture
def fixture_vault(tmp_path: Path) -> Callable[[str], Path]:
    """A copy in `tmp_path` of one of the small hand-written vaults of tests/fixtures/vaults
    (nothing writes into tests/fixtures): `fixture_vault("names")`."""

    def copy(name: str) -> Path:
        return Path(shutil.copytree(VAULTS / name, tmp_path / "vaults" / name))

    return copy
