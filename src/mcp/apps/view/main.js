// @ts-check
// The MCP Apps views' entry (bundled into one inline script by ../html.ts): connects to the host with the
// App class, follows the host's theme, styles and size, and draws the view this page is for (<html
// data-view>) from the tool answer the host hands over: the run view (get_run, diagnose_run) or the
// approvals view (review_approvals).

import { App, applyDocumentTheme, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";
import { h, render } from "preact";
import { showApprovals } from "./approvals-app.js";
import { applyHostStyles } from "./host-styles.js";
import { showRun } from "./run-app.js";
import { answerText } from "./tools.js";

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const view = document.documentElement.dataset.view;

/**
 * What the view reads of the host's context (the package's own type does not resolve under NodeNext).
 * @typedef {{ theme?: "light" | "dark", styles?: { variables?: Record<string, string> },
 *   containerDimensions?: { width?: number, maxWidth?: number } }} HostContext
 */

/** @param {HostContext | undefined} ctx */
function follow(ctx) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) {
    applyHostStyleVariables(/** @type {any} */ (ctx.styles.variables));
    applyHostStyles(ctx.styles.variables);
  }
  const dims = ctx.containerDimensions ?? {};
  const width = dims.width ?? dims.maxWidth;
  if (width) document.documentElement.style.setProperty("--app-width", `${width}px`);
}

function message(/** @type {string} */ text, error = false) {
  render(h("p", { class: error ? "error-text" : "muted", role: error ? "alert" : "status" }, text), main);
}

const app = new App({ name: "waymark-view", version: "0.1.0" }, {}, { autoResize: true });

app.ontoolresult = (/** @type {unknown} */ result) => {
  const answer = /** @type {any} */ (result);
  main.replaceChildren(); // the "waiting" line of the page, which Preact does not own
  if (answer.isError) return message(answerText(answer), true);
  const sc = answer.structuredContent ?? {};
  if (view === "approvals") return showApprovals(app, main, sc);
  // get_run answers {workflow, key, ...}; diagnose_run a diagnosis {run: {workflow, key}, category, ...}.
  const diagnosed = typeof sc.category === "string";
  const address = diagnosed ? sc.run : sc;
  if (!address?.workflow || address.key === undefined) return message("This answer names no run.", true);
  showRun(app, main, { workflow: address.workflow, key: address.key }, diagnosed ? sc : null);
};
app.onhostcontextchanged = (/** @type {HostContext} */ ctx) => follow(ctx);

app
  .connect()
  .then(() => follow(/** @type {HostContext | undefined} */ (app.getHostContext())))
  .catch((err) =>
    message(`Could not reach the host: ${err instanceof Error ? err.message : String(err)}`, true),
  );
