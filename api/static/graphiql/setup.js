// GraphiQL for the served vault: an example query that works on any vault, or the exact
// document and variables of an explorer view (`/graphql#query=...&variables=...`; a fragment,
// so they never reach the server as a GET query). A bearer token the explorer kept in
// sessionStorage is sent as the Authorization header.
(function () {
  "use strict";
  var EXAMPLE = [
    "# The vault this server reads. Run it with Ctrl-Enter (or the ▶ button).",
    "query Example {",
    "  status { recordCount snapshot coverage { complete issueCount } }",
    "  records(first: 5) { total nodes { id type title } }",
    "  chronicleSince(since: \"2026-01-01\", first: 5) {",
    "    entries { record { id title } date { text precision } clock }",
    "  }",
    "}",
    "",
  ].join("\n");
  var fragment = new URLSearchParams(window.location.hash.slice(1));
  var props = { defaultQuery: EXAMPLE, defaultEditorToolsVisibility: true };
  if (fragment.has("query")) {
    props.query = fragment.get("query");
    props.variables = fragment.get("variables") || "";
  }
  var token = window.sessionStorage.getItem("almanac.token");
  var headers = token ? { Authorization: "Bearer " + token } : {};
  props.fetcher = GraphiQL.createFetcher({ url: "/graphql", headers: headers });
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(React.createElement(GraphiQL, props));
})();
