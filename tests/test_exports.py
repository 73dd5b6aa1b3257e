from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = [
    "vault",
    "temporal",
    "temporal.calendar",
    "temporal.store",
    "temporal.reconcile",
    "temporal.queries",
    "graph",
    "api",
    "almanac",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_complete(name: str) -> None:
    package = importlib.import_module(name)
    exported = list(package.__all__)
    # isort-style, as ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    public = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and not inspect.ismodule(v) and n != "annotations"
    }
    assert public == set(exported)
