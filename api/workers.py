"""`almanac serve --workers N`: N processes serving one state file.

uvicorn's own supervisor runs them: it binds the socket once, starts each worker as a fresh
interpreter (`spawn`) that builds its app with `worker_app`, replaces a worker that dies (a
SIGKILL included) and, on SIGTERM, stops every worker, each draining its requests in flight
for at most `GRACE_SECONDS`. The workers share the state file: one plans and writes a
reconcile at a time (`WriterLock` on `<state>.lock`), and the others follow its commits
(`Reconciler.follow`) before they plan or answer, so each keeps the freshness promise.
Settings reach the workers as `ALMANAC_*` variables, built once here.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import socket
import sys
import threading
from typing import Any

from starlette.applications import Starlette

from almanac.api.app import create_app
from almanac.api.metrics import log_requests, process_memory
from almanac.api.services import Services
from almanac.api.settings import Settings
from almanac.vault import StartupError

__all__ = [
    "GRACE_SECONDS",
    "MAX_WORKERS",
    "announce",
    "listening_socket",
    "serve_workers",
    "server_options",
    "serving_app",
    "worker_app",
    "worker_count",
]

GRACE_SECONDS = 5  # after SIGTERM, for requests in flight to finish (then they are cut)
MAX_WORKERS = 64
_LOG_FORMAT = "ALMANAC_LOG_FORMAT"  # how `almanac serve` tells its workers `--log-format`
_HEAD_BYTES = 16 * 1024  # a request head beside its query string: the usual headers

log = logging.getLogger("almanac")


def worker_count(value: str) -> int:
    """The number of worker processes `--workers` (or `ALMANAC_WORKERS`) asks for: a number
    from 1 to `MAX_WORKERS`, or `auto`: one per core this process may run on.

    Raises:
        StartupError: neither.
    """
    if value.strip().lower() == "auto":
        return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_WORKERS:
        raise StartupError(
            f"--workers must be auto or a number from 1 to {MAX_WORKERS}, not {value!r}"
        )
    return count


def serve_workers(settings: Settings, args: argparse.Namespace, workers: int) -> int:
    """Serve with `workers` processes until SIGTERM or SIGINT (`almanac serve --workers`)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ.update(
        {
            "ALMANAC_VAULT": str(settings.vault),
            "ALMANAC_STATE": str(settings.db_path.resolve()),
            "ALMANAC_CONFIG": str(args.config or ""),
            "ALMANAC_WATCH": "on" if settings.watch else "off",  # as decided here, once
            _LOG_FORMAT: args.log_format,
        }
    )
    announce(settings, args.host, args.port, watching=settings.watch, workers=workers)
    config = uvicorn.Config(
        "almanac.api.workers:worker_app",
        factory=True,
        workers=workers,
        host=args.host,
        port=args.port,
        **server_options(settings),
    )
    # What `uvicorn.run` does for workers, but with a socket of our own: uvicorn's is made
    # without naming TCP, so asyncio never sets TCP_NODELAY on the connections it accepts, and
    # a keep-alive client then waits out the peer's delayed ACK (~40 ms) on every request.
    Multiprocess(config, sockets=[listening_socket(args.host, args.port)]).run()
    return 0


def announce(settings: Settings, host: str, port: int, *, watching: bool, workers: int) -> None:
    """The start-up lines on stderr: how changes are found, the state file, where to go."""
    if watching:
        each = ", each worker" if workers > 1 else ""
        print(f"Watching {settings.vault} for changes (inotify{each})", file=sys.stderr)
    else:
        why = settings.watch_reason or "the file watcher is unavailable"
        print(f"Scanning {settings.vault} on every query: {why}", file=sys.stderr)
    print(f"State database: {settings.db_path}", file=sys.stderr)
    base = f"http://{host}:{port}"
    served = f" with {workers} workers" if workers > 1 else ""
    print(
        f"Serving {settings.vault}{served}: open {base}/ (GraphQL at {base}/graphql)",
        file=sys.stderr,
    )


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for `almanac serve`, one worker or several."""
    return {
        "log_level": "info",
        "access_log": False,  # the app writes its own lines (`RequestLines`)
        # h11 bounds a request's head; uvicorn's httptools parser, picked when it is installed,
        # would not (and `bench/polling.py` serves its floor with h11 too). The bound leaves
        # room for a GET's query string at the guard's own limit, which answers past it.
        "http": "h11",
        "h11_max_incomplete_event_size": settings.limits.max_body_bytes + _HEAD_BYTES,
        "ws": "websockets-sansio",
        "ws_max_size": settings.limits.max_body_bytes,  # a client's message, as a request body
        "timeout_graceful_shutdown": GRACE_SECONDS,
    }


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) for the workers to accept on.

    Raises:
        StartupError: it cannot be bound (the port is taken).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise StartupError(f"Cannot listen on {host}:{port}: {exc}") from exc
    sock.set_inheritable(True)
    return sock


def serving_app(settings: Settings, log_format: str) -> Starlette:
    """The app of a serving process (`almanac serve`, or one of its workers), with its
    request lines on stderr (`log_format`: text or json)."""
    log_requests()
    app = create_app(settings, request_log=log_format)
    # What start-up made (the reconciler's memory: millions of objects) lives as long as the
    # server: out of the collector's sight, or each full collection walks it (seconds at
    # 100,000 notes). The graph is frozen too once loaded (`Services`).
    gc.freeze()
    return app


def worker_app() -> Starlette:
    """One worker's app (uvicorn calls it in each worker process): settings from the
    `ALMANAC_*` variables `serve_workers` set."""
    app = serving_app(Settings.from_env(os.environ), os.environ.get(_LOG_FORMAT, "text"))
    services = app.state.services
    threading.Thread(
        target=_say_memory, args=(services,), name="almanac-memory", daemon=True
    ).start()
    return app


def _say_memory(services: Services) -> None:
    """Once the worker's graph is ready: its resident and proportional size, on stderr."""
    services.wait_graph()
    rss, pss = process_memory()
    print(
        f"Worker {os.getpid()} ready: RSS {rss / 2**20:.0f} MB, PSS {pss / 2**20:.0f} MB",
        file=sys.stderr,
        flush=True,
    )
