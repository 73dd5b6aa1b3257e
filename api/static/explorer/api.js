// Talking to /graphql: one POST per view, the bearer token from sessionStorage, and the record
// of what was sent (for each view's "show query" link).

const TOKEN_KEY = "almanac.token";

export const META = `fragment Meta on ResultMeta {
  snapshot
  freshness { queriedAt scannedAt indexedAt }
  coverage { complete issueCount issues(first: 50) { code path line message } }
  degraded
}`;

export class GraphQLFailure extends Error {
  constructor(errors, status) {
    super(errors.map((e) => e.message).join("; ") || `HTTP ${status}`);
    this.errors = errors;
    this.code = errors[0]?.extensions?.code || null;
  }
}

let askToken = null; // set by main.js: () => Promise<void> once a token is entered

export function onTokenNeeded(ask) {
  askToken = ask;
}

export function token() {
  return window.sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) window.sessionStorage.setItem(TOKEN_KEY, value);
  else window.sessionStorage.removeItem(TOKEN_KEY);
}

/** POST a document; resolves to `data`, rejects with GraphQLFailure. Asks for a token (and
 * retries) when the server says one is needed. */
export async function gql(query, variables = {}) {
  for (;;) {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    const bearer = token();
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    const response = await fetch("/graphql", {
      method: "POST",
      headers,
      body: JSON.stringify({ query, variables }),
      credentials: "same-origin",
    });
    let body;
    try {
      body = await response.json();
    } catch {
      throw new GraphQLFailure([{ message: `HTTP ${response.status}` }], response.status);
    }
    const errors = body.errors || [];
    if (errors.some((e) => e.extensions?.code === "UNAUTHENTICATED") && askToken) {
      setToken(null);
      await askToken(bearer ? "That token was refused." : "");
      continue;
    }
    if (errors.length && !body.data) throw new GraphQLFailure(errors, response.status);
    if (errors.length) throw new GraphQLFailure(errors, response.status);
    return body.data;
  }
}

/** The GraphiQL URL that opens `query` with `variables` (a fragment: never sent as a GET). */
export function graphiqlHref(query, variables) {
  const params = new URLSearchParams({ query, variables: JSON.stringify(variables, null, 2) });
  return `/graphql#${params}`;
}
