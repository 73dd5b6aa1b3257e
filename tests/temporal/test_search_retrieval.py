"""How a search was retrieved (issue 15): retrieval reasons, keyword variants fused by
reciprocal rank, and the one bounded relaxed pass of `AUTO`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal import (
    LifecycleFilter,
    MatchMode,
    MatchQuality,
    RecordFilter,
    RelaxedFallback,
    RetrievalReason,
    SearchStrategy,
)
from almanac.vault import InvalidCursor, InvalidInput
from tests import vaults

NOW = 1_800_000_000_000_000
AUTO = SearchStrategy.AUTO

# Fusion: each word's own list is known (title beats body; a shorter body beats a longer one).
FUSION = vaults.files("fusion")
# Relaxed: ten records; `common` is in six of them (more than half).
RELAXED = vaults.files("relaxed")


def open_store(tmp_path: Path, files: dict[str, str]) -> temporal.Store:
    root = tmp_path / "vault"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    config = temporal.VaultConfig()
    store = temporal.Store.open(tmp_path / "state.db", fingerprint=config.fingerprint("t"))
    temporal.Reconciler(store, root, config).reconcile(now_us=NOW)
    return store


@pytest.fixture
def fusion(tmp_path: Path) -> Iterator[temporal.Store]:
    store = open_store(tmp_path, FUSION)
    yield store
    store.close()


@pytest.fixture
def relaxed(tmp_path: Path) -> Iterator[temporal.Store]:
    store = open_store(tmp_path, RELAXED)
    yield store
    store.close()


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[temporal.Store]:
    """420 records: the first 210 say `left`, the other 210 `right`."""
    files = {
        f"w/{i:03}.md": f"# W{i}\n\n{'left' if i < 210 else 'right'} side\n" for i in range(420)
    }
    store = open_store(tmp_path_factory.mktemp("wide"), files)
    yield store
    store.close()


def run(
    store: temporal.Store,
    query: str,
    *,
    variants: tuple[str, ...] = (),
    strategy: SearchStrategy = SearchStrategy.STRICT,
    mode: MatchMode = MatchMode.ALL,
    flt: RecordFilter | None = None,
    first: int = 20,
    offset: int = 0,
    relaxed: bool = False,
) -> temporal.queries.SearchPage:
    with store.read() as reader:
        return temporal.search_records(
            reader,
            query,
            mode=mode,
            flt=flt or RecordFilter(),
            scopes=["default"],
            first=first,
            offset=offset,
            variants=variants,
            strategy=strategy,
            relaxed=relaxed,
        )


def ids(page: temporal.queries.SearchPage) -> list[str]:
    return [h.record.id for h in page.hits]


# Item 4: every reason, with its figures.
RAN_RELAXED = {
    "no-lexical-match-after-a-relaxed-pass-finding-nothing",
    "relaxed-match",
    "relaxed-offset-past-the-survivors",
}


@pytest.mark.parametrize(
    ("query", "options", "reason", "scoped", "pool", "per_query", "hits"),
    [
        ("alpha", {"flt": RecordFilter(type="person")}, "EMPTY_SCOPE", 0, 0, (0,), []),
        (
            "alpha",
            {"flt": RecordFilter(type="nothing"), "variants": ("beta",), "strategy": AUTO},
            "EMPTY_SCOPE",
            0,
            0,
            (0, 0),
            [],
        ),
        ("zebra", {}, "NO_LEXICAL_MATCH", 10, 0, (0,), []),
        ("alpha", {"flt": RecordFilter(type="memo")}, "NO_LEXICAL_MATCH", 1, 0, (0,), []),
        ("zebra", {"strategy": AUTO}, "NO_LEXICAL_MATCH", 10, 0, (0,), []),
        ("alpha beta zebra", {"strategy": AUTO, "offset": 1}, "NO_LEXICAL_MATCH", 10, 0, (0,), []),
        ("alpha", {}, "MATCHED", 10, 3, (3,), ["p/p03", "p/p02", "p/p01"]),
        ("alpha", {"offset": 2}, "MATCHED", 10, 3, (3,), ["p/p01"]),
        ("alpha", {"offset": 3}, "OFFSET_BEYOND_POOL", 10, 3, (3,), []),
        ("alpha", {"offset": 99}, "OFFSET_BEYOND_POOL", 10, 3, (3,), []),
        ("gamma delta", {"strategy": AUTO}, "RELAXED_MATCH", 10, 2, (0,), ["p/p04", "p/p01"]),
        (
            "gamma delta",
            {"strategy": AUTO, "offset": 2, "relaxed": True},
            "OFFSET_BEYOND_POOL",
            10,
            2,
            (0,),
            [],
        ),
    ],
    ids=[
        "empty-scope",
        "empty-scope-with-variants-and-auto",
        "no-lexical-match",
        "no-lexical-match-in-a-narrow-filter",
        "no-lexical-match-after-a-relaxed-pass-finding-nothing",
        "no-relaxed-pass-past-the-first-page",
        "matched",
        "matched-second-page",
        "offset-at-the-pool",
        "offset-past-the-pool",
        "relaxed-match",
        "relaxed-offset-past-the-survivors",
    ],
)
def test_every_answer_says_how_it_was_retrieved(
    request: pytest.FixtureRequest,
    relaxed: temporal.Store,
    query: str,
    options: dict[str, object],
    reason: str,
    scoped: int,
    pool: int,
    per_query: tuple[int, ...],
    hits: list[str],
) -> None:
    page = run(relaxed, query, **options)  # type: ignore[arg-type]
    retrieval = page.retrieval
    assert retrieval.reason is RetrievalReason[reason]
    assert (retrieval.scoped_active, retrieval.candidate_pool) == (scoped, pool)
    assert retrieval.per_query_matches == per_query
    assert retrieval.candidate_limit_reached is False
    assert page.total == pool
    assert ids(page) == hits
    ran_relaxed = request.node.callspec.id in RAN_RELAXED
    assert (retrieval.fallback is not None) == ran_relaxed


def test_scoped_active_counts_the_lifecycle_asked_for(relaxed: temporal.Store) -> None:
    every = run(relaxed, "zebra", flt=RecordFilter(lifecycle=LifecycleFilter.ALL))
    assert every.retrieval.scoped_active == 10
    gone = run(relaxed, "alpha", flt=RecordFilter(lifecycle=LifecycleFilter.SUPERSEDED))
    assert gone.retrieval.reason is RetrievalReason.EMPTY_SCOPE


# Item 5: reciprocal rank fusion against a hand-computed table.
def test_each_keyword_list_is_as_the_fusion_table_assumes(fusion: temporal.Store) -> None:
    assert ids(run(fusion, "alpha")) == ["f/n1", "f/n2", "f/n3"]
    assert ids(run(fusion, "beta")) == ["f/n2", "f/n1", "f/n3"]
    assert ids(run(fusion, "gamma")) == ["f/n3", "f/n5", "f/n4"]


# (record, its ranks in the lists of "alpha", "beta", "gamma"), in the fused order: n1 and n2
# tie exactly (ranks 1 and 2 both) and go by id; n3, third in two lists and first in one, wins.
FUSED = [
    ("f/n3", 1 / 63 + 1 / 63 + 1 / 61),
    ("f/n1", 1 / 61 + 1 / 62),
    ("f/n2", 1 / 62 + 1 / 61),
    ("f/n5", 1 / 62),
    ("f/n4", 1 / 63),
]


def test_variants_fuse_by_reciprocal_rank(fusion: temporal.Store) -> None:
    page = run(fusion, "alpha", variants=("beta", "gamma"))
    assert [h.record.id for h in page.hits] == [rid for rid, _ in FUSED]
    assert [h.score for h in page.hits] == pytest.approx([score for _, score in FUSED], abs=1e-15)
    assert page.hits[1].score == page.hits[2].score  # an exact tie, settled by id
    assert page.total == 5 and page.retrieval.per_query_matches == (3, 3, 3)
    assert page.retrieval.reason is RetrievalReason.MATCHED
    assert page.retrieval.candidate_pool == 5 and not page.retrieval.candidate_limit_reached
    assert {h.match_quality for h in page.hits} == {MatchQuality.EXACT}
    matches = {h.record.id: h.matches for h in page.hits}
    assert matches["f/n3"] == ("alpha", "beta", "gamma")
    assert matches["f/n4"] == ("gamma",)


def test_fused_pages_follow_the_fused_order(fusion: temporal.Store) -> None:
    pages = [
        ids(run(fusion, "alpha", variants=("beta", "gamma"), first=2, offset=at))
        for at in (0, 2, 4)
    ]
    assert pages == [["f/n3", "f/n1"], ["f/n2", "f/n5"], ["f/n4"]]


@pytest.mark.parametrize(
    ("query", "variants", "per_query", "expected"),
    [
        ("", ("beta",), (0, 3), ["f/n2", "f/n1", "f/n3"]),
        ("?!", ("gamma", "..."), (0, 3, 0), ["f/n3", "f/n5", "f/n4"]),
        ("alpha", ("",), (3, 0), ["f/n1", "f/n2", "f/n3"]),
    ],
    ids=["empty-query", "punctuation-query-and-variant", "empty-variant"],
)
def test_a_query_or_variant_without_words_is_skipped(
    fusion: temporal.Store,
    query: str,
    variants: tuple[str, ...],
    per_query: tuple[int, ...],
    expected: list[str],
) -> None:
    page = run(fusion, query, variants=variants)
    assert ids(page) == expected
    assert page.retrieval.per_query_matches == per_query


@pytest.mark.parametrize(
    ("query", "variants", "message"),
    [
        ("", ("", "!!"), "hold no word token"),
        ("x", ("a" * 101,), "'variants' must be at most 100 characters"),
        ("x", ("bad \ud800",), "'variants' must be valid Unicode"),
        ("", (), "'query' must hold 1 to 64"),
    ],
    ids=["no-words-at-all", "101-characters", "lone-surrogate", "empty-alone"],
)
def test_bad_variants_are_refused(
    fusion: temporal.Store, query: str, variants: tuple[str, ...], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        run(fusion, query, variants=variants)


def test_each_fused_list_brings_at_most_100_candidates(wide: temporal.Store) -> None:
    page = run(wide, "left", variants=("right",), first=100, offset=100)
    retrieval = page.retrieval
    assert retrieval.per_query_matches == (210, 210)
    assert (retrieval.candidate_pool, retrieval.candidate_limit_reached) == (200, True)
    assert page.total == 200 and len(page.hits) == 100
    # Rank r of "left" ties rank r of "right": each pair goes by id, "left" (000-209) first,
    # whichever list is the query's.
    for query, variant in (("left", "right"), ("right", "left")):
        first = run(wide, query, variants=(variant,), first=4)
        assert [h.record.id for h in first.hits] == ["w/000", "w/210", "w/001", "w/211"]


# Item 6: the relaxed pass, every figure checked.
def test_a_relaxed_pass_reports_every_figure(relaxed: temporal.Store) -> None:
    page = run(relaxed, "alpha beta gamma delta common zebra", strategy=AUTO)
    assert page.retrieval.per_query_matches == (0,)
    assert page.retrieval.fallback == RelaxedFallback(
        # df: gamma 1, delta 1, alpha 3, beta 3; common is in 6 of 10; zebra in none.
        keywords=("gamma", "delta", "alpha", "beta"),
        dropped_no_match=("zebra",),
        dropped_too_common=("common",),
        dropped_by_cap=(),
        coverage_required=2,
        recalled=4,  # p01, p02, p03, p04
        rejected=1,  # p03 holds alpha alone
        survived=3,
        candidate_limit_reached=False,
    )
    assert page.retrieval.reason is RetrievalReason.RELAXED_MATCH
    assert (page.retrieval.candidate_pool, page.total) == (3, 3)
    # Coverage first (p01 holds three), then BM25 of the recall: delta is rarer than alpha.
    assert ids(page) == ["p/p01", "p/p04", "p/p02"]
    assert [h.matches for h in page.hits] == [
        ("alpha", "beta", "gamma"),
        ("beta", "delta"),
        ("alpha", "beta"),
    ]
    assert {h.match_quality for h in page.hits} == {MatchQuality.RELAXED}
    assert page.hits[1].score is not None and page.hits[2].score is not None
    assert page.hits[1].score > page.hits[2].score
    assert page.relaxed
    snippet = page.hits[0].snippet
    assert snippet is not None and snippet.match_located and "alpha beta gamma" in snippet.text


def test_the_relaxed_pass_keeps_the_12_rarest_fragments(tmp_path: Path) -> None:
    words = [f"w{i:02}" for i in range(1, 15)]
    files = {f"c/f{i}.md": f"# F{i}\n\nfiller\n" for i in range(8)}
    files["c/x1.md"] = "# X1\n\n" + " ".join(words) + "\n"
    files["c/x2.md"] = "# X2\n\n" + " ".join(words[:13]) + "\n"
    store = open_store(tmp_path, files)
    try:
        page = run(store, " ".join(words) + " nowhere", variants=("w14 elsewhere",), strategy=AUTO)
    finally:
        store.close()
    fallback = page.retrieval.fallback
    assert fallback is not None
    # w14 is in one record, w01-w13 in two: rarest first, then query order.
    assert fallback.keywords == ("w14", *words[:11])
    assert fallback.dropped_by_cap == ("w12", "w13")
    assert fallback.dropped_no_match == ("nowhere", "elsewhere")
    assert fallback.dropped_too_common == ()
    assert (fallback.coverage_required, fallback.recalled, fallback.survived) == (6, 2, 2)
    assert page.retrieval.per_query_matches == (0, 0)
    assert ids(page) == ["c/x1", "c/x2"]  # x1 holds all 12 keywords, x2 11 (not w14)
    assert page.hits[1].matches == tuple(words[:11])


def test_the_relaxed_pass_caps_its_recall(wide: temporal.Store) -> None:
    # Each word is in exactly half the records: not more than half, so both are kept.
    page = run(wide, "left right", strategy=AUTO, first=100)
    fallback = page.retrieval.fallback
    assert fallback is not None
    assert fallback.keywords == ("left", "right")
    assert (fallback.recalled, fallback.survived, fallback.rejected) == (200, 200, 0)
    assert fallback.coverage_required == 1 and fallback.candidate_limit_reached
    assert page.retrieval.candidate_limit_reached and page.retrieval.candidate_pool == 200


def test_a_candidate_must_hold_half_the_keywords_rounded_up(relaxed: temporal.Store) -> None:
    page = run(relaxed, "gamma delta alpha zebra", strategy=AUTO)
    fallback = page.retrieval.fallback
    assert fallback is not None and fallback.keywords == ("gamma", "delta", "alpha")
    # Three keywords: two needed. p01 holds gamma and alpha; p02, p03 and p04 one each.
    assert (fallback.coverage_required, fallback.recalled, fallback.rejected) == (2, 4, 3)
    assert ids(page) == ["p/p01"]


def test_relaxed_hits_go_by_coverage_before_bm25(tmp_path: Path) -> None:
    files = {f"c/f{i}.md": f"# F{i}\n\nfiller\n" for i in range(7)}
    files["c/long.md"] = "# Long\n\n" + "words " * 40 + "kiwi mango papaya\n"
    files["c/short.md"] = "# Kiwi mango\n\nShort.\n"
    files["c/other.md"] = "# Other\n\npapaya\n"
    store = open_store(tmp_path, files)
    try:
        page = run(store, "kiwi mango papaya zebra", strategy=AUTO)
    finally:
        store.close()
    assert ids(page) == ["c/long", "c/short"]  # three keywords before two
    assert page.hits[1].score is not None and page.hits[0].score is not None
    assert page.hits[1].score > page.hits[0].score  # though BM25 says otherwise


def test_document_frequency_counts_only_what_the_filter_keeps(tmp_path: Path) -> None:
    files = {f"n/n{i}.md": f"# N{i}\n\napple banana\n" for i in range(6)}
    memo = "---\ntype: memo\n---\n# {}\n\n{}\n"
    files |= {
        "m/m1.md": memo.format("M1", "apple cherry"),
        "m/m2.md": memo.format("M2", "cherry"),
        "m/m3.md": memo.format("M3", "date"),
        "m/m4.md": memo.format("M4", "date"),
        "m/m5.md": memo.format("M5", "date"),
    }
    store = open_store(tmp_path, files)
    try:
        query = "apple cherry date zebra"
        memos = run(store, query, strategy=AUTO, flt=RecordFilter(type="memo"))
        every = run(store, query, strategy=AUTO)
    finally:
        store.close()
    # Among the 5 memos apple is in 1 (though in 7 of the 11 notes the index holds), cherry
    # in 2 and date in 3, more than half.
    assert memos.retrieval.scoped_active == 5
    fallback = memos.retrieval.fallback
    assert fallback is not None
    assert (fallback.keywords, fallback.dropped_too_common) == (("apple", "cherry"), ("date",))
    assert ids(memos) == ["m/m1", "m/m2"]
    # Among all 11, apple is too common, and date (3) ranks after cherry (2).
    fallback = every.retrieval.fallback
    assert fallback is not None
    assert (fallback.keywords, fallback.dropped_too_common) == (("cherry", "date"), ("apple",))


def test_a_relaxed_pass_that_finds_nothing_is_a_valid_answer(relaxed: temporal.Store) -> None:
    page = run(relaxed, "common zebra", strategy=AUTO)
    assert page.hits == () and page.total == 0
    assert page.retrieval.reason is RetrievalReason.NO_LEXICAL_MATCH
    assert page.retrieval.fallback == RelaxedFallback(
        keywords=(),
        dropped_no_match=("zebra",),
        dropped_too_common=("common",),
        dropped_by_cap=(),
        coverage_required=1,
        recalled=0,
        rejected=0,
        survived=0,
        candidate_limit_reached=False,
    )


def test_relaxed_pages_continue_the_relaxed_order(relaxed: temporal.Store) -> None:
    query = "alpha beta gamma delta common zebra"
    whole = ids(run(relaxed, query, strategy=AUTO))
    pages = [ids(run(relaxed, query, strategy=AUTO, first=1, offset=0))]
    pages += [
        ids(run(relaxed, query, strategy=AUTO, first=1, offset=at, relaxed=True)) for at in (1, 2)
    ]
    assert [i for page in pages for i in page] == whole
    # Past the first page, a strict position never starts a relaxed pass.
    assert run(relaxed, query, strategy=AUTO, offset=1).retrieval.fallback is None


def test_a_relaxed_position_needs_auto_and_no_strict_match(relaxed: temporal.Store) -> None:
    with pytest.raises(InvalidCursor, match="AUTO"):
        run(relaxed, "gamma delta", offset=1, relaxed=True)
    with pytest.raises(InvalidCursor, match="match as given"):
        run(relaxed, "alpha", strategy=AUTO, offset=1, relaxed=True)


def test_auto_skips_the_relaxed_pass_when_the_strict_queries_match(relaxed: temporal.Store) -> None:
    page = run(relaxed, "alpha", strategy=AUTO)
    assert page.retrieval.reason is RetrievalReason.MATCHED and page.retrieval.fallback is None
    assert {h.match_quality for h in page.hits} == {MatchQuality.EXACT}
