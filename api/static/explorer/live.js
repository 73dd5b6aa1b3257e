// How the page learns that the vault changed. Today: `status { snapshot }` every 2 s; a
// subscription can replace `poll` without changing callers.
import { gql } from "./api.js";

const PERIOD_MS = 2000;

/** Call `changed()` once each time the server's snapshot differs from `shown()`. */
export function watchSnapshot(shown, changed) {
  let told = null;
  async function poll() {
    try {
      const current = shown();
      if (current && document.visibilityState !== "hidden") {
        const { status } = await gql("query Live { status { snapshot } }");
        if (status.snapshot !== shown()) {
          if (told !== status.snapshot) changed(status.snapshot);
          told = status.snapshot;
        } else {
          told = null;
        }
      }
    } catch (error) {
      console.warn("live check failed", error);
    }
    window.setTimeout(poll, PERIOD_MS);
  }
  window.setTimeout(poll, PERIOD_MS);
}
