from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_almanac_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up ALMANAC_* settings from the machine."""
    import os

    for name in list(os.environ):
        if name.startswith("ALMANAC_"):
            monkeypatch.delenv(name)
