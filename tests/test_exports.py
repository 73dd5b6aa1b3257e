from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = [
    "almanac.vault",
    "almanac.temporal",
    "almanac.temporal.calendar",
    "almanac.temporal.store",
    "almanac.temporal.reconcile",
    "almanac.temporal.queries",
    "almanac.graph",
    "almanac.api",
    "almanac",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_complete(name: str) -> None:
    package = importlib.import_module(name)
    exported = list(package.__all__)
    # isort-style, as ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    # Each exported name answers (`almanac.open` is imported when first asked for).
    assert all(getattr(package, n) is not None for n in exported)
    public = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and not inspect.ismodule(v) and n != "annotations"
    }
    assert public == set(exported)
