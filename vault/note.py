from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from yaml.nodes import Node, ScalarNode, SequenceNode

from almanac.vault.content import (
    decode,
    line_count,
    read_bytes,
)
from almanac.vault.frontmatter import MAX_FRONTMATTER_BYTES, load_frontmatter, plain_value
from almanac.vault.issue import Issue, reduce_by_fields
from almanac.vault.links import Link, extract_links, first_heading, wiki_target
from almanac.vault.reading import DATE_FIELDS, ReadOptions, daily_date
from almanac.vault.scan import NoteFile

__all__ = [
    "KNOWN_FIELDS",
    "REFERENCE_FIELDS",
    "Note",
    "ParsedNote",
    "parse_note",
    "read_note",
]

REFERENCE_FIELDS = ("owner", "subject", "source", "from", "to", "superseded_by")
_LIST_FIELDS = ("aliases", "tags", "entities", "derived_from", "exdates", "rdates")
_TEXT_FIELDS = (
    "type", "title", "relation", "fact_key", "timezone", "recurrence", "lifecycle", "state"
)  # fmt: skip
_KNOWN = frozenset(
    ("id", "source_event", "weight", *DATE_FIELDS, *REFERENCE_FIELDS, *_LIST_FIELDS, *_TEXT_FIELDS)
)
# Every frontmatter field Almanac reads itself (`[fields]` may not map another name onto one).
KNOWN_FIELDS = _KNOWN
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}\Z")
_SNAKE = re.compile(r"[a-z][a-z0-9_]*\Z")
_WIKI_WHOLE = re.compile(r"!?\[\[([^\[\]\n]+)\]\]\Z")
_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_FRONTMATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_BAD_ID_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_LIFECYCLES = ("active", "superseded", "withdrawn")
_STATES = ("open", "done", "cancelled")
_PLAIN = ReadOptions()
_CONFLICT_COPY = re.compile(r"\.sync-conflict-[0-9]{8}-[0-9]{6}(?:-[A-Z0-9]+)?\Z")


@dataclass(frozen=True, slots=True)
class Note:
    """One note as written: frontmatter fields checked for type, nothing resolved yet.

    Dates, zones and recurrence are kept as the text written (`dates`,
    `timezone`, `recurrence`, `exdates`, `rdates`); `temporal` reads them.
    References (`refs`, `entities`, `derived_from`) hold the target text with any `[[ ]]` removed.
    The mappings are plain dicts, never changed after parsing, so a note can be pickled
    (a cold reconcile parses in a second process).
    """

    path: str
    slug: str
    id: str
    revision: str
    line_count: int
    type: str
    title: str
    body: str
    body_line: int
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()
    refs: Mapping[str, str] = field(default_factory=dict)
    relation: str | None = None
    fact_key: str | None = None
    weight: float | None = None
    source_event: bool = False
    lifecycle: str = "active"
    state: str | None = None
    timezone: str | None = None
    recurrence: str | None = None
    dates: Mapping[str, str] = field(default_factory=dict)
    exdates: tuple[str, ...] = ()
    rdates: tuple[str, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict)
    # A date field read from another name (`[fields]`: occurred_at <- date) or from a daily
    # note's file name (`file name`): the name as written, for issues.
    written: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, object] = field(default_factory=dict)
    links: tuple[Link, ...] = ()
    valid: bool = True

    __reduce__ = reduce_by_fields

    @property
    def kind(self) -> str:
        """`relationship`, `claim` or `page`, derived from the type."""
        return self.type if self.type in ("relationship", "claim") else "page"


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """The result of reading one file: the note (None if unusable) and its issues."""

    path: str
    revision: str
    note: Note | None
    issues: tuple[Issue, ...]

    __reduce__ = reduce_by_fields


def read_note(
    file: NoteFile,
    *,
    type_aliases: Mapping[str, str] | None = None,
    options: ReadOptions | None = None,
) -> ParsedNote:
    """Read and parse one note file; every problem is an issue, never an exception."""
    content = read_bytes(file)
    if isinstance(content, Issue):
        return ParsedNote(file.path, "", None, (content,))
    return parse_note(
        file.path,
        content.data,
        revision=content.sha256,
        type_aliases=type_aliases,
        options=options,
    )


def parse_note(
    path: str,
    data: bytes,
    *,
    revision: str | None = None,
    type_aliases: Mapping[str, str] | None = None,
    options: ReadOptions | None = None,
) -> ParsedNote:
    """Parse a note's bytes into a `Note` and its validation issues.

    Args:
        path: Vault-relative POSIX path (`people/ada.md`).
        data: The file bytes.
        revision: SHA-256 hex of `data`, when already computed.
        type_aliases: Written type to ontology type (`people` -> `person`); overrides
            `options.type_aliases`.
        options: Field names and daily notes of the configuration.
    """
    options = options or _PLAIN
    if type_aliases is not None:
        options = ReadOptions(type_aliases, options.fields, options.daily_notes)
    revision = revision or hashlib.sha256(data).hexdigest()
    text, problem, bad_line = decode(data)
    if text is None:
        issue = Issue(path, bad_line, None, "not_utf8", problem)
        return ParsedNote(path, revision, None, (issue,))
    issues: list[Issue] = []
    head, fm_text, body, body_line = _split(text)
    if head == "unclosed":
        issue = Issue(path, 1, None, "invalid_frontmatter", "Frontmatter has no closing '---' line")
        return ParsedNote(path, revision, None, (issue,))
    fields: Mapping[str, Node] = {}
    lines: Mapping[str, int] = {}
    if fm_text is not None:
        if len(fm_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
            message = f"Frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB"
            return ParsedNote(
                path, revision, None, (Issue(path, 1, None, "file_too_large", message),)
            )
        frontmatter, problems = load_frontmatter(fm_text, path=path, first_line=2)
        issues.extend(problems)
        if frontmatter is None:
            return ParsedNote(path, revision, None, tuple(issues))
        fields, lines = frontmatter.fields, frontmatter.lines
    note = _Builder(path, revision, text, body, body_line, fields, lines, issues).build(options)
    return ParsedNote(path, revision, note, tuple(issues))


class _Builder:
    """Checks each field's type; a bad field becomes absent with an issue."""

    def __init__(
        self,
        path: str,
        revision: str,
        text: str,
        body: str,
        body_line: int,
        fields: Mapping[str, Node],
        lines: Mapping[str, int],
        issues: list[Issue],
    ) -> None:
        self.path, self.revision, self.text = path, revision, text
        self.body, self.body_line = body, body_line
        self.fields, self.lines, self.issues = fields, lines, issues
        self.valid = True
        self.id: str | None = None

    def build(self, options: ReadOptions) -> Note:
        slug = unicodedata.normalize(
            "NFC", self.path[:-3] if self.path.endswith(".md") else self.path
        )
        note_id = self._id(slug)
        self.id = note_id
        written_type = self._text("type") or "note"
        note_type = options.type_aliases.get(written_type, written_type)
        title = self._text("title") or first_heading(self.body) or slug.rsplit("/", 1)[-1]
        lifecycle = self._choice("lifecycle", _LIFECYCLES) or "active"
        fields = self.fields
        refs = {
            name: ref
            for name in REFERENCE_FIELDS
            if name in fields and (ref := self._ref(name)) is not None
        }
        relation = self._text("relation")
        if relation is not None and not _SNAKE.match(relation):
            self._issue("relation", "invalid_field", f"Relation {relation!r} is not snake_case")
            relation = None
        fact_key = self._text("fact_key")
        if fact_key is not None and not _SNAKE.match(fact_key):
            self._issue("fact_key", "invalid_field", f"fact_key {fact_key!r} is not snake_case")
            fact_key = None
        if note_type == "relationship":
            self._require(("from", "to"), refs)
            if relation is None:
                self._missing("relation")
        elif note_type == "claim":
            self._require(("subject",), refs)
        dates, written = self._dates(options)
        extra = {k: plain_value(v) for k, v in self.fields.items() if k not in _KNOWN}
        return Note(
            path=self.path,
            slug=slug,
            id=note_id,
            revision=self.revision,
            line_count=line_count(self.text),
            type=note_type,
            title=title,
            body=self.body,
            body_line=self.body_line,
            aliases=self._list("aliases"),
            tags=self._list("tags"),
            entities=tuple(_strip_wiki(e) for e in self._list("entities")),
            derived_from=tuple(_strip_wiki(e) for e in self._list("derived_from")),
            refs=refs,
            relation=relation,
            fact_key=fact_key,
            weight=self._weight(),
            source_event=self._bool("source_event"),
            lifecycle=lifecycle,
            state=self._choice("state", _STATES),
            timezone=self._text("timezone"),
            recurrence=self._text("recurrence"),
            dates=dates,
            exdates=self._list("exdates"),
            rdates=self._list("rdates"),
            lines=dict(self.lines)
            | {a: self.lines[w] for a, w in written.items() if w in self.lines},
            written=written,
            extra=extra,
            links=extract_links(self.body, first_line=self.body_line, note_path=self.path),
            valid=self.valid,
        )

    def _dates(self, options: ReadOptions) -> tuple[dict[str, str], dict[str, str]]:
        """The date fields as written, and the other names some of them were read from.

        Almanac's own name wins over the user's names (`[fields]`), which are tried in order;
        a daily note's file name dates its `occurred_at` when nothing else does.
        """
        fields = self.fields
        dates: dict[str, str] = {}
        written: dict[str, str] = {}
        for name in DATE_FIELDS:
            for other in (name, *options.fields.get(name, ())):
                if other in fields:
                    value = self._text(other, read_as=name if other != name else None)
                    if value is not None:
                        dates[name] = value
                        if other != name:
                            written[name] = other
                        break
        daily = options.daily_notes
        if daily is not None and "occurred_at" not in dates:
            day, problem = daily_date(self.path, daily)
            if day is not None:
                dates["occurred_at"], written["occurred_at"] = day, "file name"
            elif problem is not None:
                self.issues.append(
                    Issue(self.path, None, "occurred_at", "invalid_date", problem, self.id)
                )
        return dates, written

    def _id(self, slug: str) -> str:
        node = self.fields.get("id")
        if node is None:
            # A Syncthing conflict copy stands for its original: same id, so both are reported.
            slug = _CONFLICT_COPY.sub("", slug)
            bad = [c for c in slug if unicodedata.category(c) in _BAD_ID_CATEGORIES]
            if bad:
                self.valid = False
                message = f"File name makes id {slug!r} with control or format characters"
                self._issue(None, "invalid_id", message, record_id=None)
            return slug
        value = node.value if isinstance(node, ScalarNode) else None
        if value is None or not value.strip():
            self.valid = False
            self._issue("id", "invalid_id", "Field 'id' must be a non-empty string", record_id=None)
            return slug
        value = unicodedata.normalize("NFC", value)
        if not _ID.match(value):
            self.valid = False
            message = f"Id {value!r} must match [A-Za-z0-9][A-Za-z0-9._:/-]{{0,199}}"
            self._issue("id", "invalid_id", message, record_id=None)
        return value

    def _text(self, name: str, *, read_as: str | None = None) -> str | None:
        node = self.fields.get(name)
        if node is None:
            return None
        if isinstance(node, ScalarNode):
            if not node.style and node.value in ("", "~", "null", "Null", "NULL"):
                return None
            return str(node.value)
        shown = f"{name!r} (read as {read_as})" if read_as else repr(name)
        self._issue(name, "invalid_field", f"Field {shown} must be a single string")
        return None

    def _list(self, name: str) -> tuple[str, ...]:
        node = self.fields.get(name)
        if node is None:
            return ()
        if isinstance(node, ScalarNode):
            value = self._text(name)
            return (value,) if value else ()
        if isinstance(node, SequenceNode) and all(isinstance(i, ScalarNode) for i in node.value):
            return tuple(i.value for i in node.value if i.value.strip())
        self._issue(name, "invalid_field", f"Field {name!r} must be a list of strings")
        return ()

    def _ref(self, name: str) -> str | None:
        value = self._text(name)
        return _strip_wiki(value) if value else None

    def _choice(self, name: str, choices: tuple[str, ...]) -> str | None:
        value = self._text(name)
        if value is None or value in choices:
            return value
        self._issue(name, "invalid_field", f"{name} {value!r} is not one of {', '.join(choices)}")
        if name == "lifecycle":
            self.valid = False
        return None

    def _bool(self, name: str) -> bool:
        value = self._text(name)
        if value is None:
            return False
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        self._issue(name, "invalid_field", f"{name} {value!r} must be true or false")
        return False

    def _weight(self) -> float | None:
        value = self._text("weight")
        if value is None:
            return None
        if _NUMBER.match(value) and 0.0 <= float(value) <= 1.0:
            return float(value)
        self._issue("weight", "invalid_field", f"Weight {value!r} must be a number from 0 to 1")
        return None

    def _require(self, names: tuple[str, ...], refs: Mapping[str, str]) -> None:
        for name in names:
            if name not in refs:
                self._missing(name)

    def _missing(self, name: str) -> None:
        self.valid = False
        self._issue(name, "missing_field", f"Field {name!r} is required for this type")

    def _issue(
        self, name: str | None, code: str, message: str, *, record_id: str | None = ""
    ) -> None:
        line = self.lines.get(name, 1) if name else None
        rid = self.id if record_id == "" else record_id
        self.issues.append(Issue(self.path, line, name, code, message, rid))


def _split(text: str) -> tuple[str, str | None, str, int]:
    """(`none`|`closed`|`unclosed`, frontmatter text, body, 1-based line of the body)."""
    first, _, rest = text.partition("\n")
    if first.rstrip() != "---":
        return "none", None, text, 1
    end = _FRONTMATTER_END.search(rest)
    if end is None:
        return "unclosed", None, "", 1
    fm_text = rest[: end.start()]
    body = rest[end.end() + 1 :]
    body_line = 2 + fm_text.count("\n") + 1
    return "closed", fm_text, body, body_line


def _strip_wiki(value: str) -> str:
    match = _WIKI_WHOLE.match(value.strip())
    return wiki_target(match.group(1)) if match else value.strip()
