// How the page learns that the vault changed: `subscription { snapshots }` over WebSocket
// (graphql-transport-ws), the server telling of each commit; when the socket cannot be opened
// or is lost, `status { snapshot }` every 2 s instead.
import { gql, token } from "./api.js";

const PERIOD_MS = 2000;
const SUBSCRIBE = "subscription Live { snapshots { snapshot } }";

/** Call `changed()` once each time the server's snapshot differs from `shown()`. */
export function watchSnapshot(shown, changed) {
  let told = null;
  let latest = null; // the server's snapshot as last heard
  function compare() {
    const current = shown();
    if (!current || !latest) return; // nothing shown yet: compared again shortly
    if (latest !== current) {
      if (told !== latest) changed(latest);
      told = latest;
    } else {
      told = null;
    }
  }
  function seen(snapshot) {
    latest = snapshot;
    compare();
  }
  // An event may come before the first view is shown, or a view be shown after the last event.
  window.setInterval(compare, 1000);
  subscribe(seen, () => poll(shown, seen));
}

/** Follow the server's events; `fallBack()` once if the socket fails or closes. */
function subscribe(seen, fallBack) {
  let acknowledged = false;
  let done = false;
  const stop = () => {
    if (!done) {
      done = true;
      fallBack();
    }
  };
  let socket;
  try {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${scheme}//${window.location.host}/graphql`, "graphql-transport-ws");
  } catch (error) {
    console.warn("live updates fall back to polling", error);
    stop();
    return;
  }
  socket.addEventListener("open", () => {
    const bearer = token();
    const payload = bearer ? { Authorization: `Bearer ${bearer}` } : {};
    socket.send(JSON.stringify({ type: "connection_init", payload }));
  });
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "connection_ack") {
      acknowledged = true;
      socket.send(JSON.stringify({ id: "live", type: "subscribe", payload: { query: SUBSCRIBE } }));
    } else if (message.type === "next") {
      const snapshot = message.payload?.data?.snapshots?.snapshot;
      if (snapshot) seen(snapshot);
    } else if (message.type === "ping") {
      socket.send(JSON.stringify({ type: "pong" }));
    } else if (message.type === "error" || message.type === "complete") {
      socket.close();
    }
  });
  socket.addEventListener("close", () => {
    if (!acknowledged) console.info("live updates: no subscription here, polling instead");
    stop();
  });
}

function poll(shown, seen) {
  async function check() {
    try {
      if (shown() && document.visibilityState !== "hidden") {
        const { status } = await gql("query Live { status { snapshot } }");
        seen(status.snapshot);
      }
    } catch (error) {
      console.warn("live check failed", error);
    }
    window.setTimeout(check, PERIOD_MS);
  }
  window.setTimeout(check, PERIOD_MS);
}
