"""The floor of `bench/load.py --floor`: a plain Starlette app that answers each GraphQL query
with a precomputed answer of the real server (by query text, from `FLOOR_ANSWERS`), so the
same clients measure what HTTP, JSON and uvicorn cost alone.

    FLOOR_ANSWERS='{"query text": {...}}' uvicorn floor_app:app --app-dir bench [--workers N]
"""

from __future__ import annotations

import json
import os

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
