"""What the packages import at run time is what `pip install almanac` installs."""

from __future__ import annotations

import ast
import sys
from importlib.metadata import packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault", "temporal", "graph", "api")
_FIRST_PARTY = {*PACKAGES, "almanac"}


def _imported_modules() -> set[str]:
    names: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names - _FIRST_PARTY - set(sys.stdlib_module_names) - {"__future__"}


def _runtime_requirements() -> set[str]:
    found = set()
    for line in requires("almanac") or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.add(requirement.name.lower().replace("_", "-"))
    return found


def test_every_imported_distribution_is_a_runtime_dependency() -> None:
    providers = packages_distributions()
    imported = {
        distribution.lower().replace("_", "-")
        for module in _imported_modules()
        for distribution in providers.get(module, [module])
    }
    assert imported - _runtime_requirements() == set()


def test_the_testclient_of_almanac_query_can_be_imported() -> None:
    # `almanac query` answers through starlette's TestClient, which needs httpx2 at run time.
    assert "httpx2" in _runtime_requirements()
