"""schemathesis against the ASGI app: every generated document gets a well-formed answer.

schemathesis 4 counts every error that carries a `path` and a code it does not know
(our FORBIDDEN for an unknown `scope`, SNAPSHOT_CHANGED) as a "GraphQL server error",
and `positive_data_acceptance` fails on BAD_USER_INPUT for values the schema cannot
express (`first: 0`). Both are replaced by `no_server_error`, which is stricter where it
matters: never a 5xx, never INTERNAL_SERVER_ERROR, every error a documented code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings as hypothesis_settings
from schemathesis.checks import not_a_server_error, positive_data_acceptance
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import DOCUMENTED


def no_server_error(ctx: Any, response: Any, case: Any) -> None:
    assert response.status_code < 500, response.text
    body = response.json()
    assert isinstance(body, dict), response.text
    for error in body.get("errors") or []:
        assert error["extensions"]["code"] in DOCUMENTED, error


@pytest.fixture
def app(settings: Settings) -> Iterator[Starlette]:
    app = create_app(settings)
    yield app
    app.state.services.close()


def loopback(app: ASGIApp) -> ASGIApp:
    """The app as a loopback client reaches it (schemathesis's client says `testserver`)."""

    async def reached(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope = {
                **scope,
                "client": ("127.0.0.1", 50000),
                "headers": [*headers, (b"host", b"127.0.0.1")],
            }
        await app(scope, receive, send)

    return reached


@pytest.fixture
def api_schema(app: Starlette) -> Any:
    return schemathesis.graphql.from_asgi("/graphql", loopback(app))


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis_settings(
    max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
def test_graphql_api_conforms(case: Any) -> None:
    case.call_and_validate(
        excluded_checks=[not_a_server_error, positive_data_acceptance],
        additional_checks=[no_server_error],
    )
