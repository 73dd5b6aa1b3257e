"""GraphiQL works offline: everything from this server, an example query that runs."""

from __future__ import annotations

from tests.browser.conftest import Watched


def test_graphiql_runs_its_example_from_the_package(explorer: Watched) -> None:
    page = explorer.open("/graphql")
    editor = page.locator(".graphiql-query-editor")
    editor.wait_for()
    assert "status" in editor.inner_text()
    page.locator(".graphiql-execute-button").click()
    result = page.locator(".graphiql-response")
    result.get_by_text("recordCount").wait_for()
    assert '"recordCount": 88' in result.inner_text()
