"""The direct executor and the document caches answer exactly as strawberry's own execution.

Each document runs through a schema built with `api.execution.Executor` and through the same
types under strawberry's default executor, and the two results (data and rendered errors)
must be equal: plain values, nulls, errors where the type forbids a null or refuses a value,
aliases, fragments, directives, lists of objects and errors inside them.
"""

from __future__ import annotations

import enum
import time
from pathlib import Path
from typing import Any

import pytest
import strawberry
from strawberry.extensions import SchemaExtension

from almanac.api.app import create_app
from almanac.api.context import Context
from almanac.api.documents import Documents
from almanac.api.execution import Executor
from almanac.api.schema import Query as AlmanacQuery, build_schema
from almanac.api.services import now_us
from almanac.api.settings import Limits, Settings


@strawberry.enum
class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@strawberry.type
class Leaf:
    name: str
    size: int
    colour: Colour
    maybe: str | None
    tags: list[str]


@strawberry.type
class Branch:
    label: str
    leaves: list[Leaf]
    first: Leaf
    spare: Leaf | None

    @strawberry.field
    def shout(self, times: int = 1) -> str:
        return self.label.upper() * times


def _leaf(label: str, **changes: Any) -> Leaf:
    values: dict[str, Any] = {
        "name": label,
        "size": 3,
        "colour": Colour.RED,
        "maybe": None,
        "tags": ["a", "b"],
    }
    values.update(changes)
    return Leaf(**values)


def _branches() -> list[Branch | None]:
    good = _leaf("good")
    return [
        Branch(label="plain", leaves=[good, _leaf("two", maybe="x")], first=good, spare=None),
        # A null where the type forbids it, a value the enum refuses, an int that is a string,
        # a null inside a list of non-null strings: each an error somewhere in the answer.
        Branch(label="nulls", leaves=[_leaf("n", name=None)], first=good, spare=good),
        Branch(label="enum", leaves=[good], first=_leaf("e", colour="green"), spare=None),
        Branch(label="int", leaves=[good], first=good, spare=_leaf("i", size="many")),
        Branch(label="tags", leaves=[_leaf("t", tags=["a", None])], first=good, spare=None),
        Branch(label="item", leaves=[good, None], first=good, spare=None),  # type: ignore[list-item]
        Branch(label="error", leaves=[good], first=ValueError("boom"), spare=None),  # type: ignore[arg-type]
        None,
    ]


@strawberry.type
class Query:
    @strawberry.field
    def branches(self) -> list[Branch | None]:
        return _branches()

    @strawberry.field
    def branch(self) -> Branch:
        return _branches()[0]  # type: ignore[return-value]


def _schemas() -> tuple[strawberry.Schema, strawberry.Schema]:
    direct = strawberry.Schema(
        query=Query,
        extensions=[Documents(Limits()).extension],
        execution_context_class=Executor,
    )
    return direct, strawberry.Schema(query=Query)


def _answer(schema: strawberry.Schema, document: str) -> tuple[Any, list[Any]]:
    result = schema.execute_sync(document)
    return result.data, [error.formatted for error in result.errors or []]


DOCUMENTS = [
    "{ branch { label leaves { name size colour maybe tags } first { name } spare { name } } }",
    "{ branches { label leaves { name size colour maybe tags } first { colour size } "
    "spare { size name } } }",
    "{ branches { label first { name colour } } }",
    "{ branches { leaves { tags } } }",
    "{ b: branch { l: label x: leaves { n: name, s: size } } }",
    "query { branch { ...B } } fragment B on Branch { label first { ...L } } "
    "fragment L on Leaf { name tags __typename }",
    "{ branch { label @skip(if: true) first @include(if: false) { name } leaves { name } } }",
    "{ branch { shout(times: 2) label } }",
    "{ branch { first { nope } } }",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_same_answer_as_strawberry(document: str) -> None:
    direct, reference = _schemas()
    expected = _answer(reference, document)
    assert _answer(direct, document) == expected
    assert _answer(direct, document) == expected  # from the caches this time


def test_errors_are_those_of_strawberry() -> None:
    # The documents above do reach the error cases (else the comparison proves little).
    _data, errors = _answer(_schemas()[1], DOCUMENTS[1])
    messages = " ".join(str(e["message"]) for e in errors)
    for fragment in ("Cannot return null", "Enum 'Colour'", "Int cannot represent", "boom"):
        assert fragment in messages


class Hook(SchemaExtension):
    """An extension with a resolve hook, which must see every field."""

    seen: list[str] = []

    def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        Hook.seen.append(info.field_name)
        return _next(root, info, *args, **kwargs)


def test_resolve_hooks_still_see_plain_fields() -> None:
    schema = strawberry.Schema(query=Query, extensions=[Hook], execution_context_class=Executor)
    Hook.seen.clear()
    assert schema.execute_sync("{ branch { first { name size } } }").errors is None
    assert Hook.seen == ["branch", "first", "name", "size"]


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ("{ branch { leaves { name } } }", None),
        ("{ " + " ".join(f"a{i}: branch {{ label }}" for i in range(31)) + " }", "aliases"),
        ("{ branch { " + " ".join(["label"] * 2000) + " } }", "2000 tokens"),
    ],
)
def test_limits_hold_for_a_cached_document(document: str, fragment: str | None) -> None:
    schema = build_schema()
    for _ in range(2):
        errors = [str(e) for e in schema.execute_sync(document).errors or []]
        if fragment is None:
            assert errors and "Cannot query field 'branch'" in errors[0]
        else:
            assert errors and fragment in errors[0]


GRAPH = """query($id: ID!) { graph(seed: {id: $id}, hops: 3, fanOut: 5, maxPaths: 100) {
  status seeds { id kind type title } nodes { id kind type title hop }
  paths { nodes edges { relation from to direction record
  locator { path startLine endLine revision } } } limits { reason nodeId available }
  meta { snapshot degraded coverage { complete issueCount issues(first: 3) { code path } }
  freshness { queriedAt scannedAt indexedAt } } } }"""


def test_graph_answer_as_strawberry(demo_vault: Path, tmp_path: Path) -> None:
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=None, watch=False)
    services = create_app(settings).state.services
    reference = strawberry.Schema(query=AlmanacQuery)
    stamp = now_us()
    answers = []
    for schema in (build_schema(), reference):
        context = Context(services, None, stamp, deadline=time.monotonic() + 30)
        try:
            result = schema.execute_sync(
                GRAPH, variable_values={"id": "people/ada-lopez"}, context_value=context
            )
        finally:
            context.close()
        assert result.errors is None, result.errors
        answers.append(result.data)
    services.close()
    assert answers[0] == answers[1]
    assert answers[0] is not None and len(answers[0]["graph"]["paths"]) > 3
