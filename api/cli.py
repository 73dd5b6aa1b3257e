from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from almanac.api.services import Services, now_us
from almanac.api.settings import Settings
from almanac.temporal import StatusCounts
from almanac.vault import AlmanacError, Issue, StartupError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """The `almanac` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except AlmanacError as exc:  # StartupError included: bad settings, vault or state file
        print(f"almanac: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="almanac", description="Knowledge graph over a Markdown vault"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def vault_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("--vault", help="vault folder (default: the bundled demo vault)")
        command.add_argument("--state", help="state database file (default: per-vault cache file)")
        command.add_argument(
            "--config", help="TOML configuration: scopes, type aliases, limits, tokens"
        )

    serve = commands.add_parser("serve", help="serve the GraphQL API")
    vault_options(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--watch",
        choices=("auto", "on", "off"),
        default="auto",
        help="learn of changes from inotify (on), scan on every query (off), or on unless the"
        " vault is on a network or FUSE mount (auto, the default)",
    )
    serve.add_argument("--no-watch", action="store_true", help="the same as --watch off")
    serve.add_argument(
        "--workers",
        default=None,
        help="processes serving the one state file: a number, or auto (one per core);"
        " default: ALMANAC_WORKERS, else 1",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="one line per request on stderr: text (client, request, status, operation,"
        " duration, cache, request id) or json (an object with those and the snapshot)",
    )
    serve.set_defaults(run=_serve)

    reconcile = commands.add_parser("reconcile", help="bring the state database up to date")
    vault_options(reconcile)
    reconcile.set_defaults(run=_reconcile)

    check = commands.add_parser("check", help="report validation issues; exit 1 if there are any")
    vault_options(check)
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(run=_check)

    query = commands.add_parser("query", help="run a GraphQL document and print the JSON result")
    vault_options(query)
    query.add_argument("document")
    query.add_argument("--variables", default=None, help="JSON object of variables")
    query.set_defaults(run=_query)

    export = commands.add_parser("export-schema", help="write the GraphQL schema (SDL)")
    export.add_argument("--output", default="schema.graphql")
    export.set_defaults(run=_export)
    return parser


def _settings(args: argparse.Namespace, *, watch: str = "off") -> Settings:
    return Settings.build(vault=args.vault, state=args.state, config=args.config, watch=watch)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from almanac.api.context import is_loopback
    from almanac.api.workers import (
        announce,
        serve_workers,
        server_options,
        serving_app,
        worker_count,
    )

    settings = _settings(args, watch="off" if args.no_watch else args.watch)
    if not settings.tokens and not is_loopback(args.host):
        raise StartupError("Without configured tokens Almanac serves on loopback only")
    workers = worker_count(args.workers if args.workers is not None else _env_workers())
    if workers > 1:
        return serve_workers(settings, args, workers)
    app = serving_app(settings, args.log_format)
    watching = app.state.services.watch_mode == "inotify"
    announce(settings, args.host, args.port, watching=watching, workers=1)
    uvicorn.run(app, host=args.host, port=args.port, **server_options(settings))
    return 0


def _env_workers() -> str:
    return os.environ.get("ALMANAC_WORKERS") or "1"


def _reconcile(args: argparse.Namespace) -> int:
    settings = _settings(args)
    show = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show and total:
            width = 30
            filled = width * done // total
            bar = "#" * filled + "-" * (width - filled)
            print(f"\rreconcile [{bar}] {done}/{total}", end="", file=sys.stderr, flush=True)

    counts, issues, snapshot = _report(settings, progress)
    if show:
        print(file=sys.stderr)
    print(f"{counts.records} records, {len(issues)} issues, snapshot {snapshot}")
    return 0


def _check(args: argparse.Namespace) -> int:
    counts, issues, _ = _report(_settings(args), None)
    if args.json:
        report = {
            "records": counts.records,
            "issues": [
                {
                    "code": i.code,
                    "path": i.path,
                    "line": i.line,
                    "field": i.field,
                    "recordId": i.record_id,
                    "message": i.message,
                }
                for i in issues
            ],
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for i in issues:
            where = f"{i.path}:{i.line}" if i.line else i.path
            print(f"{where}: {i.code}: {i.message}")
        print(f"{counts.records} records, {len(issues)} issues")
    return 1 if issues else 0


def _query(args: argparse.Namespace) -> int:
    from starlette.testclient import TestClient

    from almanac.api.app import create_app

    try:
        variables = json.loads(args.variables) if args.variables else None
    except ValueError as exc:
        raise StartupError(f"--variables is not JSON: {exc}") from exc
    if variables is not None and not isinstance(variables, dict):
        raise StartupError("--variables must be a JSON object")
    settings = _settings(args)
    # One request: the graph projection is built only if the document traverses.
    with TestClient(
        create_app(settings, graph=False), base_url="http://127.0.0.1", client=("127.0.0.1", 0)
    ) as client:
        response = client.post("/graphql", json={"query": args.document, "variables": variables})
    print(json.dumps(response.json(), indent=2, ensure_ascii=False))
    return 0 if response.status_code == 200 and "errors" not in response.json() else 1


def _export(args: argparse.Namespace) -> int:
    from almanac.api.schema import build_schema

    Path(args.output).write_text(build_schema().as_str() + "\n", encoding="utf-8")
    return 0


def _report(
    settings: Settings, progress: Callable[[int, int], None] | None
) -> tuple[StatusCounts, list[Issue], str]:
    """Reconcile, then the counts, the issues and the snapshot of every scope."""
    services = Services.open(settings, now_us=now_us(), progress=progress, graph=False)
    try:
        scopes = settings.config.all_scopes()
        with services.store.read() as reader:
            return reader.counts(scopes), reader.issues(scopes), services.reconciler.snapshot()
    finally:
        services.close()


if __name__ == "__main__":
    sys.exit(main())
