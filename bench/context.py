"""`context` in process (issue 29, item 6): one bundle of budget 6,000 for questions that name
a hub, an ordinary person and nobody, through `kb.query` (the GraphQL document in process).

    python bench/context.py --vault /tmp/ctx/vault --state /tmp/ctx/db [--notes 100000] [--runs 30]

Generates the vault (bench/generate.py) when the folder does not exist, and reconciles it the
first time. The questions take turns call by call; each asks for every field of the bundle.
Prints one JSON object with the median and p90 of each, in milliseconds; figures go into
bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generate import generate

import almanac
from almanac.vault import GraphWarming

BUNDLE = """query($text: String, $budget: Int) {
  context(query: $text, budget: $budget, asOf: "2026-06-01T12:00:00Z") {
    items { part record { id kind type title } text chars
            locator { path startLine endLine revision }
            date { text start end } clock lifecycle conflicted }
    budget used omitted parts { part returned included omitted } missingPins
    retrieval { reason scopedActive candidatePool } asOf timezone meta { snapshot degraded } } }"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--budget", type=int, default=6000)
    args = parser.parse_args()
    out: dict[str, object] = {}
    if not args.vault.exists():
        generate(args.vault, args.notes)
    start = time.perf_counter()
    kb = almanac.open(args.vault, state=args.state, watch=True)
    out["open_s"] = round(time.perf_counter() - start, 2)
    out["records"] = kb.status().record_count
    people = [r for r, _ in zip(kb.records(type="person"), range(50), strict=False)]
    degree = sorted((_degree(kb, p.id), p.title) for p in people)
    questions = {
        "hub": f"What happened with {degree[-1][1]} lately?",
        "ordinary": f"What is due for {degree[len(degree) // 2][1]}?",
        "nobody": "Which storage engine did the team choose for the pipeline?",
    }
    out["questions"] = questions
    times: dict[str, list[float]] = {name: [] for name in questions}
    for _ in range(args.runs):
        for name, text in questions.items():
            begin = time.perf_counter()
            answer = kb.query(BUNDLE, {"text": text, "budget": args.budget})
            times[name].append((time.perf_counter() - begin) * 1000)
            assert "errors" not in answer, answer["errors"]
            out[f"{name}_items"] = len(answer["data"]["context"]["items"])
            out[f"{name}_used"] = answer["data"]["context"]["used"]
    for name, values in times.items():
        values.sort()
        out[f"{name}_p50_ms"] = round(statistics.median(values), 1)
        out[f"{name}_p90_ms"] = round(values[int(len(values) * 0.9) - 1], 1)
    kb.close()
    print(json.dumps(out, indent=1))


def _degree(kb: almanac.Almanac, record_id: str) -> int:
    """How many records one hop reaches from `record_id`, once the graph has warmed up (the
    bundle itself reads no graph: the hub is only chosen through it)."""
    while True:
        try:
            return len(kb.graph(record_id, hops=1, fan_out=100, max_paths=100).nodes)
        except almanac.AlmanacError as exc:
            if not isinstance(exc, GraphWarming):
                raise
            time.sleep(0.5)


if __name__ == "__main__":
    main()
