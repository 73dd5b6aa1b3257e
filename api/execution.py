"""How strawberry runs a document: plain fields read directly, the deadline looked at for every
object.

graphql-core completes every field through the same chain (resolve info, argument values,
`complete_value` for the non-null wrapper, then for the leaf), about 10 µs a field: a graph
answer of 100 paths has ~2,200 fields. Most of them are plain attributes of plain objects
(strawberry's "basic" fields, no resolver, no arguments) of a scalar or enum type, of an object
type, or a list of those. `Executor` reads such a field and coerces it (or executes the
object's own fields) directly; anything else (a resolver, arguments, directives on the field,
a null or an error value where the type says non-null, a value the type refuses, an object
type that needs a runtime type check or has asynchronous fields below it, `@defer`, an
extension with a resolve hook) takes graphql-core's own path, which then produces its usual
result or error. An error below a directly completed object is handled as graphql-core does:
null at the nearest nullable field, up the path otherwise.

Every object below the root starts with a look at the request's deadline: a request past it
stops with `QUERY_TOO_COMPLEX` there (a located field error), however its time was spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    Undefined,
    get_named_type,
    is_abstract_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet
from graphql.pyutils import AwaitableOrValue, Path, gather_with_cancel
from graphql.type import GraphQLLeafType
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from almanac.vault import QueryTooComplex

__all__ = ["Executor"]

# A plain field's plan: how to read it, its leaf or object type, whether it is a list of those
# (non-null), whether it is non-null.
_Plan = tuple[Callable[[Any], Any], GraphQLLeafType | GraphQLObjectType, bool, bool]
_PLAN = "almanac.plain"  # the key of the plan in a field definition's `extensions`
_STRAWBERRY = GraphQLCoreConverter.DEFINITION_BACKREF


class Executor(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's executor with a direct path for plain fields."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        manager = self.middleware_manager
        # An extension with a resolve hook must see every field: then no direct path.
        self.direct = manager is None or not manager.middlewares
        self.deadline: float | None = getattr(self.context_value, "deadline", None)

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        """graphql-core's `execute_fields`, plain fields first completed directly."""
        if path is not None and self.deadline is not None and time.monotonic() > self.deadline:
            raise QueryTooComplex("The query ran past its time limit")
        if not self.direct or position_context is not None:  # no resolve hooks, no @defer
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        results: dict[str, Any] = {}
        is_awaitable = self.is_awaitable
        awaitable_fields: list[str] = []
        get_field = self.schema.get_field
        try:
            for response_name, field_details_list in grouped_field_set.items():
                node = field_details_list[0].node
                field_def = get_field(parent_type, node.name.value)
                if field_def is not None and not node.arguments and not node.directives:
                    plan = _plan(field_def)
                    if plan is not None:
                        field_path = (path, response_name, parent_type.name)
                        done = self._direct(
                            plan, source_value, field_def, field_details_list, field_path
                        )
                        if done is not Undefined:
                            results[response_name] = done
                            continue
                result = self.execute_field(
                    parent_type,
                    source_value,
                    field_details_list,
                    Path(path, response_name, parent_type.name),
                    position_context,
                )
                if result is not Undefined:
                    results[response_name] = result
                    if is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return results

        async def get_results() -> dict[str, Any]:
            awaited = await gather_with_cancel(*(results[field] for field in awaitable_fields))
            results.update(zip(awaitable_fields, awaited, strict=True))
            return results

        return get_results()

    def _direct(
        self,
        plan: _Plan,
        source: Any,
        field_def: GraphQLField,
        field_details_list: FieldDetailsList,
        field_path: tuple[Path | None, str, str],
    ) -> Any:
        """A plain field completed directly, or Undefined when graphql-core must decide."""
        read, kind, is_list, non_null = plan
        try:
            value = read(source)
        except Exception:  # graphql-core reads it again and reports the error
            return Undefined
        if not isinstance(kind, GraphQLObjectType):
            return _complete(value, kind, is_list, non_null)
        if value is None:
            return Undefined if non_null else None
        if is_list:
            if not isinstance(value, (list, tuple)) or any(
                item is None or isinstance(item, Exception) for item in value
            ):
                return Undefined
        elif isinstance(value, Exception):
            return Undefined
        grouped, deferred, _ = self.collect_subfields(kind, field_details_list)
        if deferred:
            return Undefined
        path = Path(*field_path)
        try:
            if not is_list:
                return self.execute_fields(kind, value, path, grouped, None)
            return [
                self.execute_fields(kind, item, path.add_key(i, None), grouped, None)
                for i, item in enumerate(value)
            ]
        except Exception as raw_error:  # as graphql-core: null here, or up to a nullable field
            self.handle_field_error(raw_error, field_def.type, field_details_list, path)
            return None


def _plan(field_def: GraphQLField) -> _Plan | None:
    """How to complete `field_def` directly, or None; worked out once, kept on the field."""
    extensions = field_def.extensions
    if _PLAN in extensions:
        return extensions[_PLAN]  # type: ignore[no-any-return]
    plan: _Plan | None = None
    kind = field_def.type
    non_null = isinstance(kind, GraphQLNonNull)
    inner = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    definition = extensions.get(_STRAWBERRY)
    if (
        isinstance(definition, StrawberryField)
        and definition.is_basic_field
        and definition.default_resolver is getattr
        and getattr(field_def.resolve, "_is_default", False)
        and not field_def.args
    ):
        read = attrgetter(definition.python_name)
        item: Any = inner
        is_list = isinstance(inner, GraphQLList) and isinstance(inner.of_type, GraphQLNonNull)
        if is_list:
            item = inner.of_type.of_type  # type: ignore[union-attr]
        if is_leaf_type(item) or (isinstance(item, GraphQLObjectType) and _synchronous(item)):
            plan = (read, item, is_list, non_null)
    extensions[_PLAN] = plan
    return plan


def _synchronous(kind: GraphQLObjectType, seen: set[str] | None = None) -> bool:
    """Whether every field below `kind` resolves without awaiting (its results are values) and
    no type below it needs a runtime type check."""
    seen = set() if seen is None else seen
    if kind.name in seen:
        return True
    seen.add(kind.name)
    if kind.is_type_of is not None:
        return False
    for field_def in kind.fields.values():
        definition = field_def.extensions.get(_STRAWBERRY)
        if not isinstance(definition, StrawberryField) or definition.is_async:
            return False
        named = get_named_type(field_def.type)
        if is_abstract_type(named):
            return False
        if isinstance(named, GraphQLObjectType) and not _synchronous(named, seen):
            return False
    return True


def _complete(value: Any, leaf: GraphQLLeafType, is_list: bool, non_null: bool) -> Any:
    """The completed value, or Undefined when graphql-core must decide (a null where the type
    forbids it, an error value, a value the type refuses)."""
    if value is None:
        return Undefined if non_null else None
    if not is_list:
        return _coerce(leaf, value)
    if not isinstance(value, (list, tuple)):
        return Undefined
    out = [_coerce(leaf, item) for item in value]
    return Undefined if any(item is Undefined for item in out) else out


def _coerce(leaf: GraphQLLeafType, value: Any) -> Any:
    if value is None or isinstance(value, Exception):
        return Undefined
    try:
        coerced = leaf.coerce_output_value(value)
    except Exception:  # graphql-core raises it again, as a located field error
        return Undefined
    return Undefined if coerced is None else coerced
