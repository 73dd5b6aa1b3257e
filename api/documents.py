"""GraphQL documents: parsed, measured and validated once per text, every step linear in the
document's size.

A document's cost is measured before graphql-core's validation rules run, in one walk that
visits each fragment once (`measure`): its depth, and the fields and aliases it selects once
every fragment spread is expanded. Expanded counts can be exponential in the document's size
(fragments that each spread two others), but the walk is not: a fragment's counts are worked
out once and added wherever it is spread. A document over a limit is refused with
`QUERY_TOO_COMPLEX` before any other rule sees it; one within the limits selects at most
`max_fields` fields, which bounds graphql-core's rules too: `OverlappingFieldsCanBeMerged`
compares fields of one response name pairwise, at most ~500,000 pairs (then graphql-core stops
it), tens of milliseconds. Introspection fields do not count for depth; graphql-core's
`MaxIntrospectionDepthRule` bounds their nesting, as a limit too. Parsing is bounded by
`max_tokens`.

The outcome depends on the text alone (the limits are fixed when the schema is built), so it
is kept for the most recent short documents, refusals included: a hostile document sent again
costs a dictionary look-up.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    Source,
    parse,
)
from graphql.language.parser import Parser, nested_too_deeply_error
from graphql.validation import validate
from graphql.validation.rules.max_introspection_depth_rule import MaxIntrospectionDepthRule
from strawberry.extensions import SchemaExtension
from strawberry.schema.validation_rules.maybe_null import MaybeNullValidationRule
from strawberry.schema.validation_rules.one_of import OneOfInputValidationRule

from almanac.api.errors import copy_error
from almanac.api.settings import Limits
from almanac.vault import QueryTooComplex

__all__ = [
    "DOCUMENTS_KEPT",
    "KEPT_TEXT_CHARS",
    "Cost",
    "Documents",
    "measure",
    "operation_label",
]

DOCUMENTS_KEPT = 256
KEPT_TEXT_CHARS = 16 * 1024  # longer documents are prepared every time, never kept
# Validation stops after this many errors (graphql-core's default is 100): each error costs
# its source locations, its copy and its JSON, ~1 ms for 100 at 2-3 nodes apiece.
MAX_ERRORS = 10
# Root fields that answer from an index in about a millisecond, whatever they select below.
_LIGHT_FIELDS = frozenset({"lookup", "record", "status"})
Rules: TypeAlias = tuple[type[ASTValidationRule], ...]
_SATURATED = 1 << 62  # counts stop growing here: a hostile document's exact count is not needed


@dataclass(frozen=True, slots=True)
class Cost:
    """What a document selects once every fragment spread is expanded."""

    depth: int = 0
    fields: int = 0
    aliases: int = 0
    directives: int = 0  # the most directives at one location


_NOTHING = Cost()


def measure(document: DocumentNode) -> Cost:
    """The document's depth (its deepest operation; introspection fields do not count), and the
    fields and aliases of all its operations, fragments expanded; each fragment walked once.

    A spread of an unknown fragment, or one inside its own cycle, counts nothing: the
    validation rules report those.
    """
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    known: dict[str, Cost | None] = {}  # None: being measured (a cycle reaches it again)

    def fragment(name: str) -> Cost:
        if name in known:
            return known[name] or _NOTHING
        definition = fragments.get(name)
        if definition is None:
            return _NOTHING
        known[name] = None
        cost = known[name] = selections(definition.selection_set)
        return cost

    def selections(selection_set: SelectionSetNode) -> Cost:
        depth = fields = aliases = directives = 0
        spread: set[str] = set()  # a fragment spread twice in one selection is collected once
        for selection in selection_set.selections:
            directives = max(directives, len(selection.directives or ()))
            if isinstance(selection, FieldNode):
                fields += 1
                aliases += selection.alias is not None
                if selection.selection_set is None:
                    continue
                inner = selections(selection.selection_set)
                if not selection.name.value.startswith("__"):
                    depth = max(depth, inner.depth + 1)
            elif isinstance(selection, InlineFragmentNode):
                inner = selections(selection.selection_set)
                depth = max(depth, inner.depth)
            elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in spread:
                spread.add(selection.name.value)
                inner = fragment(selection.name.value)
                depth = max(depth, inner.depth)
            else:
                continue
            fields = min(fields + inner.fields, _SATURATED)
            aliases = min(aliases + inner.aliases, _SATURATED)
            directives = max(directives, inner.directives)
        return Cost(depth, fields, aliases, directives)

    total = _NOTHING
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            cost = selections(definition.selection_set)
            total = Cost(
                max(total.depth, cost.depth),
                min(total.fields + cost.fields, _SATURATED),
                min(total.aliases + cost.aliases, _SATURATED),
                max(total.directives, cost.directives, len(definition.directives or ())),
            )
        elif isinstance(definition, FragmentDefinitionNode):
            used = len(definition.directives or ())
            total = Cost(total.depth, total.fields, total.aliases, max(total.directives, used))
    return total


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A document text's outcome: its document and validation errors, or why it did not parse."""

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...]


class Documents:
    """Prepares document texts for one schema's limits, keeping the most recent outcomes."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._kept = functools.lru_cache(maxsize=DOCUMENTS_KEPT)(self._prepare)
        self._kept_kinds = functools.lru_cache(maxsize=DOCUMENTS_KEPT)(self._subscribes)
        # (text, operation name) of the documents seen to ask only for light root fields: the
        # schema runs them again in its light lane (`is_light`). Bounded like the cache above.
        self._light: dict[tuple[str, str | None], None] = {}

    def is_light(self, text: str | None, operation_name: str | None) -> bool:
        """Whether `text` (with `operation_name`) was seen to ask only for light root fields
        (`_LIGHT_FIELDS`): an operation that cannot be slow. Unseen texts are not."""
        return (text, operation_name) in self._light if text is not None else False

    def seen(self, text: str, operation_name: str | None, label: str) -> None:
        """Remember what a prepared document's operation asks for (its `operation_label`)."""
        if label not in _LIGHT_FIELDS or len(text) > KEPT_TEXT_CHARS:
            return
        if len(self._light) >= DOCUMENTS_KEPT:
            self._light.pop(next(iter(self._light)), None)  # the oldest goes
        self._light[(text, operation_name)] = None

    def subscribes(self, text: str, operation_name: str | None) -> bool:
        """Whether `text` (with `operation_name`) asks for a subscription, or may: a document
        that does not parse within the limits, or has no such operation, counts as one, and
        goes the way subscriptions go (where it is refused with its errors)."""
        if len(text) > KEPT_TEXT_CHARS:
            return self._subscribes(text, operation_name)
        return self._kept_kinds(text, operation_name)

    def _subscribes(self, text: str, operation_name: str | None) -> bool:
        try:
            document = _parse(text, self.limits.max_tokens)
        except GraphQLError:
            return True
        operations = [
            d
            for d in document.definitions
            if isinstance(d, OperationDefinitionNode)
            and (operation_name is None or (d.name is not None and d.name.value == operation_name))
        ]
        if len(operations) != 1:
            return True
        return operations[0].operation is OperationType.SUBSCRIPTION

    def extension(self) -> SchemaExtension:
        """The schema extension that hands strawberry a prepared document (a factory)."""
        return _DocumentExtension(self)

    def prepare(self, schema: GraphQLSchema, rules: Rules, text: str) -> _Prepared:
        """The document of `text` and its validation errors under `rules`."""
        if len(text) > KEPT_TEXT_CHARS:
            return self._prepare(schema, rules, text)
        return self._kept(schema, rules, text)

    def _prepare(self, schema: GraphQLSchema, rules: Rules, text: str) -> _Prepared:
        limits = self.limits
        try:
            document = _parse(text, limits.max_tokens)
        except GraphQLError as error:
            return _Prepared(None, (copy_error(error, detached=True),))
        cost = measure(document)
        problem = _too_complex(cost, limits)
        if problem is not None:
            return _Prepared(None, (GraphQLError(str(problem), original_error=problem),))
        invalid = _surplus_directives(schema, cost)
        if invalid is not None:
            return _Prepared(None, (invalid,))
        # Introspection fields do not count for depth (GraphiQL's own query nests deep), but
        # nested lists of them multiply: graphql-core's rule bounds how deep they may go.
        deep = validate(schema, document, (MaxIntrospectionDepthRule,))
        if deep:
            return _Prepared(None, tuple(_limit(e, e.message) for e in deep))
        # strawberry's own rules too, as its `validate_document` adds them, with fewer errors.
        strawberry_rules = (MaybeNullValidationRule, OneOfInputValidationRule)
        errors = validate(schema, document, (*rules, *strawberry_rules), max_errors=MAX_ERRORS)
        if errors:  # kept without the document: a refused text keeps no syntax tree alive
            return _Prepared(None, tuple(copy_error(e, detached=True) for e in errors))
        return _Prepared(document, ())


def _parse(text: str, max_tokens: int) -> DocumentNode:
    """As graphql-core's `parse`; a limit it hits is `QueryTooComplex`, not a syntax error like
    any other (the document may well be valid): more than `max_tokens` tokens (the parser's
    count, or the lexer's while it skips a run of comments: its error stands at a `#`), or
    nesting past graphql-core's own limit."""
    parser = Parser(Source(text), max_tokens=max_tokens)
    try:
        return parser.parse_document()
    except RecursionError:
        pass
    except GraphQLSyntaxError as error:
        at = list(error.positions or [-1])[0]
        if parser._token_counter <= max_tokens and text[at : at + 1] != "#":
            raise
        raise _limit(error, f"Document contains more than {max_tokens} tokens") from None
    raise _limit(nested_too_deeply_error(parser), "Document is nested too deeply")


def _surplus_directives(schema: GraphQLSchema, cost: Cost) -> GraphQLError | None:
    """A location with more directives than the schema has, none repeatable, repeats one or
    names an unknown one: invalid, said at once (graphql-core's rules would report each)."""
    if any(d.is_repeatable for d in schema.directives) or cost.directives <= len(schema.directives):
        return None
    return GraphQLError(
        f"A location carries {cost.directives} directives; the schema has"
        f" {len(schema.directives)}, none repeatable: one is unknown or repeated."
    )


def _limit(error: GraphQLError, reason: str) -> GraphQLError:
    """An error that is a limit: `QUERY_TOO_COMPLEX` where it is rendered."""
    return copy_error(error, detached=True, cause=QueryTooComplex(reason))


def _too_complex(cost: Cost, limits: Limits) -> QueryTooComplex | None:
    if cost.depth > limits.max_depth:
        return QueryTooComplex(
            f"The document exceeds maximum operation depth of {limits.max_depth}"
        )
    if cost.aliases > limits.max_aliases:
        return QueryTooComplex(
            f"The document selects more than {limits.max_aliases} aliases (fragments expanded)"
        )
    if cost.fields > limits.max_fields:
        return QueryTooComplex(
            f"The document selects more than {limits.max_fields} fields (fragments expanded)"
        )
    return None


def operation_label(
    schema: GraphQLSchema, document: DocumentNode | None, operation_name: str | None
) -> str:
    """A bounded label of what a document asks (metrics and logs): the root field of the
    schema it selects, `multiple`, `introspection`, or `invalid` for a refused document. Never
    a name the client chose."""
    if document is None:
        return "invalid"
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [
        o
        for o in operations
        if operation_name is None or (o.name and o.name.value == operation_name)
    ]
    if len(chosen) != 1:
        return "invalid"
    operation = chosen[0]
    root = {
        "query": schema.query_type,
        "subscription": schema.subscription_type,
        "mutation": schema.mutation_type,
    }[operation.operation.value]
    fields = root.fields if root is not None else {}
    names: set[str] = set()
    for selection in operation.selection_set.selections:
        if isinstance(selection, FieldNode):
            names.add(selection.name.value)
        else:
            names.add("multiple")  # fragments at the root: not worth a walk for a label
    if names <= {"__schema", "__type", "__typename"}:
        return "introspection"
    names -= {"__typename"}
    if len(names) == 1:
        (name,) = names
        return name if name in fields else "invalid"
    return "multiple"


_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")
_STAND_IN = parse("{ __typename }")


def _stand_in(operation_name: str | None) -> DocumentNode:
    """A document with the operation strawberry will look for, standing in for a refused one."""
    if operation_name is None or not _NAME.fullmatch(operation_name):
        return _STAND_IN
    return parse(f"query {operation_name} {{ __typename }}")


class _DocumentExtension(SchemaExtension):
    """Parsing and validation from `Documents`: strawberry's own steps then find them done."""

    def __init__(self, documents: Documents) -> None:
        super().__init__()
        self.documents = documents

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query is not None:
            prepared = self.documents.prepare(
                context.schema._schema, tuple(context.validation_rules), context.query
            )
            if prepared.document is None:
                # Refused: strawberry answers with these errors once it has a document to read
                # the operation's type from (one never executed).
                context.graphql_document = _stand_in(context.operation_name)
            else:
                context.graphql_document = prepared.document
            context.pre_execution_errors = list(prepared.errors)  # [] skips strawberry's rules
            label = operation_label(
                context.schema._schema, prepared.document, context.operation_name
            )
            self.documents.seen(context.query, context.operation_name, label)
            owner = context.context
            if hasattr(owner, "operation"):
                owner.operation = label
        yield
