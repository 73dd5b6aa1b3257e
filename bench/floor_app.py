"""The floor of `bench/load.py --floor`: a plain Starlette app that answers each GraphQL query
with a precomputed answer of the real server (by query text, from `FLOOR_ANSWERS`), so the
same clients measure what HTTP, JSON and uvicorn cost alone.

    FLOOR_ANSWERS='{"query text": {...}}' python bench/floor_app.py --port P [--workers N]

With several workers it listens as `almanac serve --workers` does (`api.workers`), so both
pay the same for TCP.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ANSWERS = {
    query: json.dumps(body).encode()
    for query, body in json.loads(os.environ.get("FLOOR_ANSWERS", "{}")).items()
}


async def graphql(request: Request) -> Response:
    payload = await request.json()  # read and parsed, as the real server does
    answer = ANSWERS.get(payload.get("query", ""))
    if answer is None:
        return JSONResponse({"errors": [{"message": "no precomputed answer"}]}, status_code=400)
    return Response(answer, media_type="application/json")


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


app = Starlette(routes=[Route("/graphql", graphql, methods=["POST"]), Route("/healthz", healthz)])


def main() -> None:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.workers == 1:
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", http="h11")
        return
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here.parent)]  # the repository first (bench/ has a graph.py)
    sys.path.append(str(here))  # spawned workers get this sys.path too
    from almanac.api.workers import listening_socket

    config = uvicorn.Config(
        "floor_app:app",
        workers=args.workers,
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        http="h11",  # as `almanac serve`
    )
    Multiprocess(config, sockets=[listening_socket("127.0.0.1", args.port)]).run()


if __name__ == "__main__":
    main()
