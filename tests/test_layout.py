"""The layout rules of STYLE.md 1, read off the source: layers, rooms, sizes, no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

from almanac import temporal

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vault", "temporal", "graph", "api", "almanac")
LINKED = PACKAGES[:-1]
LAYERS = {"vault": 0, "temporal": 1, "graph": 2, "api": 3, "almanac": 4}
ROOMS = ("calendar", "store", "reconcile", "queries")
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    # almanac/graph and its kin link to the design card's folders (pyproject.toml): each module
    # is read once, where it lives.
    links = {("almanac", package) for package in LINKED}
    paths = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    return {_module_name(p): p for p in paths if p.relative_to(ROOT).parts[:2] not in links}


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """The modules of ours that `path` imports by name (TYPE_CHECKING imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from package import module` names a module too; `from almanac import temporal`
            # names the package below, not the door above it.
            names = {f"{node.module}.{a.name}" for a in node.names}
            if node.module != "almanac" or {_linked(n) for n in names} - set(LINKED):
                found.add(node.module)
            found.update(names)
    # Every module of ours is imported under the one installed name: almanac.graph is graph/.
    ours = {_linked(name) for name in found}
    return {name for name in ours if name in MODULES}


def _linked(imported: str) -> str:
    """The module of `imported` as named here: `almanac.graph.view` is `graph.view`."""
    rest = imported.removeprefix("almanac.")
    return rest if rest.split(".")[0] in LINKED else imported


GRAPH: nx.DiGraph[str] = nx.DiGraph(
    (name, target) for name, path in MODULES.items() for target in _imports(path)
)


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "temporal" and len(parts) > 1 and parts[1] in ROOMS else None


def test_no_import_cycle() -> None:
    assert list(nx.simple_cycles(GRAPH)) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, lines


def test_packages_import_only_from_their_left() -> None:
    wrong = [
        (source, target)
        for source, target in GRAPH.edges
        if LAYERS[target.split(".")[0]] > LAYERS[source.split(".")[0]]
    ]
    assert wrong == []


def test_other_packages_import_temporal_from_its_rooms_at_most() -> None:
    """Outside `temporal`, nothing imports one of its modules: the package or a room."""
    wrong = [
        (source, target)
        for source, target in GRAPH.edges
        if not source.startswith("temporal")
        and target.startswith("temporal.")
        and target.count(".") > 1
    ]
    assert wrong == []


def test_rooms_import_in_one_direction() -> None:
    allowed = {
        "calendar": set(),
        "store": {"calendar"},
        "reconcile": {"calendar", "store"},
        "queries": {"calendar", "store"},
    }
    wrong = []
    for source, target in GRAPH.edges:
        room, other = _room(source), _room(target)
        if room and other and room != other and other not in allowed[room]:
            wrong.append((source, target))
        # Outside the rooms, only the shared domain types, and never from `calendar`.
        outside = target.startswith("temporal.") and other is None
        if room and outside and (target != "temporal.records" or room == "calendar"):
            wrong.append((source, target))
        if room and target == "temporal":
            wrong.append((source, target))
    assert wrong == []


def test_rooms_import_each_other_through_the_room() -> None:
    wrong = [
        (source, target)
        for source, target in GRAPH.edges
        if _room(source)
        and _room(target)
        and _room(source) != _room(target)
        and target.count(".") > 1
    ]
    assert wrong == []


def test_temporal_exports_only_what_graph_and_api_use() -> None:
    used: set[str] = set()
    for name, path in MODULES.items():
        if not name.startswith(("graph", "api")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "almanac.temporal":
                used.update(alias.name for alias in node.names)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "temporal"
            ):
                used.add(node.attr)
    assert sorted(set(temporal.__all__) - used) == []


def _all_imports(path: Path) -> set[str]:
    """Every module `path` imports by name, ours or not."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_almanac_is_a_thin_door_onto_the_packages_below() -> None:
    """`almanac` reaches the engine through the packages' public names only (`from api import
    Embedded`), and never the libraries the engine wraps: no SQL, no HTTP, no strawberry."""
    wrong = []
    for name, path in MODULES.items():
        # `python -m almanac` is the command (`almanac.api.cli:main`, as the script names it).
        if not name.startswith("almanac") or name == "almanac.__main__":
            continue
        for imported in _all_imports(path):
            target = _linked(imported)
            top = target.split(".")[0]
            if top in LAYERS and top != "almanac" and target != top:
                wrong.append((name, target))
            if top in ("sqlite3", "sqlite_utils", "strawberry", "starlette", "uvicorn", "graphql"):
                wrong.append((name, target))
    assert wrong == []


def test_one_import_name() -> None:
    """SPEC 6: installed, Almanac owns `almanac` alone, so nothing of ours imports `api`,
    `graph`, `temporal` or `vault` by their folders' names (a user's own `api` would answer)."""
    sources = [*MODULES.values(), *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    wrong = sorted(
        f"{path.relative_to(ROOT)}: {target}"
        for path in sources
        for target in _all_imports(path)
        if target.split(".")[0] in LINKED
    )
    assert wrong == []


def test_the_links_point_at_the_folders() -> None:
    for package in LINKED:
        link = ROOT / "almanac" / package
        assert link.is_symlink() and link.resolve() == ROOT / package
