"""Splitting and safely reading YAML frontmatter.

libyaml composes the node tree (fast, in C) with a resolver that knows no
implicit types, so nothing is coerced: every scalar keeps the text the user
wrote and its quoting style. We then walk the tree ourselves, which is where
the hazards of untrusted YAML are stopped: aliases (billion laughs, recursive
lists) and nesting deeper than `MAX_DEPTH` are refused, explicit tags other
than the core ones are refused, duplicate keys are reported. libyaml's
composer recurses in C and crashes the interpreter on very deep flow
nesting, so a text that could nest deeply is first checked on the event
stream, which libyaml produces without recursion.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import yaml
from yaml._yaml import CParser
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from almanac.vault.issue import Issue

__all__ = ["MAX_DEPTH", "MAX_FRONTMATTER_BYTES", "Frontmatter", "load_frontmatter", "plain_value"]

MAX_DEPTH = 32
MAX_FRONTMATTER_BYTES = 64 * 1024
# libyaml's recursive composer is safe far beyond this; deeper texts are checked event by event.
_COMPOSE_SAFE_DEPTH = 1000

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_ALLOWED_TAGS = frozenset({_STR, _SEQ, _MAP})
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
# libyaml's contexts of a construct that needs a closing character.
_OPENERS = ("while parsing a flow", "while scanning a quoted")
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})


class _Composer(CParser, yaml.resolver.BaseResolver):
    """libyaml's composer with no implicit resolvers: plain scalars stay text."""

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        yaml.resolver.BaseResolver.__init__(self)

    def resolve(self, kind: type[Node], value: object, implicit: object) -> str:
        # Called only for untagged nodes; with no implicit types the answer is the default tag.
        return _STR if kind is ScalarNode else _SEQ if kind is SequenceNode else _MAP


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The top-level mapping of a frontmatter block.

    Args:
        fields: Key to its YAML node, in written order (a duplicate key keeps its last value).
        lines: Key to the 1-based file line of the key.
    """

    fields: Mapping[str, Node]
    lines: Mapping[str, int]


def load_frontmatter(
    text: str, *, path: str, first_line: int
) -> tuple[Frontmatter | None, list[Issue]]:
    """Read a frontmatter block (the text between the `---` lines).

    Returns:
        The mapping (None when the block cannot be used at all) and its issues.
    """
    issues: list[Issue] = []
    if not text.strip():
        return Frontmatter({}, {}), issues
    # Every nesting level needs one of these characters, so their count bounds the depth.
    bound = sum(text.count(c) for c in "[{-?\n")
    deep = bound > MAX_DEPTH
    if bound > _COMPOSE_SAFE_DEPTH and (problem := _event_stream_problem(text)):
        return None, [Issue(path, first_line, None, "invalid_frontmatter", problem)]
    try:
        composer = _Composer(text)
        try:
            root = composer.get_single_node()
        finally:
            composer.dispose()
    except yaml.YAMLError as exc:
        line, reason = _error_line(exc, text, first_line)
        return None, [Issue(path, line, None, "invalid_frontmatter", f"YAML error: {reason}")]
    if root is None:
        return Frontmatter({}, {}), issues
    # Aliases need `*`, explicit tags `!`, and nesting past MAX_DEPTH needs a deep text.
    problem = _tree_problem(root) if deep or "*" in text or "!" in text else None
    if problem:
        return None, [Issue(path, first_line, None, "invalid_frontmatter", problem)]
    if not isinstance(root, MappingNode):
        kind = "a list" if isinstance(root, SequenceNode) else "a single value"
        message = f"Frontmatter is {kind}, not a mapping of fields"
        return None, [Issue(path, first_line, None, "invalid_frontmatter", message)]
    fields: dict[str, Node] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = first_line + key_node.start_mark.line
        if not isinstance(key_node, ScalarNode):
            issues.append(Issue(path, line, None, "invalid_frontmatter", "A key is not a string"))
            return None, issues
        key = key_node.value
        if key in fields:
            issues.append(
                Issue(path, line, key, "duplicate_key", f"Key {key!r} is repeated; the last wins")
            )
        fields[key] = value_node
        lines[key] = line
    return Frontmatter(fields, lines), issues


def plain_value(node: Node) -> object:
    """The JSON value of a node: core-schema typing of plain scalars, strings otherwise."""
    if isinstance(node, ScalarNode):
        text = node.value
        if node.style:  # quoted or block: always text
            return text
        if text in _NULLS:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        if _INT.match(text):
            return int(text)
        if _FLOAT.match(text):
            return float(text)
        return text
    if isinstance(node, SequenceNode):
        return [plain_value(item) for item in node.value]
    return {k.value if isinstance(k, ScalarNode) else str(k): plain_value(v) for k, v in node.value}


def _error_line(exc: yaml.YAMLError, text: str, first_line: int) -> tuple[int, str]:
    """The file line a YAML error names, and its reason.

    libyaml names two places: where it noticed the problem and, for a construct left open
    (a `[`, a `{`, a quote), where that construct began. The opening is the line to fix (the
    problem is often noticed only at the end of the block, on the closing `---`), so it wins;
    otherwise the problem's line, never past the block's last line.
    """
    reason = getattr(exc, "problem", None) or str(exc)
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context", None) or ""
    opened = getattr(exc, "context_mark", None)
    last = max(text.rstrip("\n").count("\n"), 0)
    if opened is not None and context.startswith(_OPENERS):
        what = context.removeprefix("while parsing a ").removeprefix("while scanning a ")
        if problem is not None and problem.line != opened.line:
            reason += f" (the {what} opened on line {first_line + opened.line} is not closed)"
        return first_line + min(opened.line, last), reason
    if problem is None:
        return first_line, reason
    return first_line + min(problem.line, last), reason


def _event_stream_problem(text: str) -> str | None:
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return f"Frontmatter nests deeper than {MAX_DEPTH} levels"
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                return "YAML anchors and aliases are not allowed"
    except yaml.YAMLError as exc:
        return f"YAML error: {getattr(exc, 'problem', None) or exc}"
    return None


def _tree_problem(root: Node) -> str | None:
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            return "YAML anchors and aliases are not allowed"
        seen.add(id(node))
        if depth > MAX_DEPTH:
            return f"Frontmatter nests deeper than {MAX_DEPTH} levels"
        if node.tag not in _ALLOWED_TAGS:
            return f"Unsupported YAML tag {node.tag!r}"
        if isinstance(node, SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
    return None
