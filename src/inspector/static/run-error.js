// @ts-check
// Why a run failed: for a failed step, the step and what its code threw first; then the run's error with
// its code, and the stack.

import { h } from "preact";

/** @typedef {import("./types.js").ErrorInfo} ErrorInfo */

/** What a failed step's error says it threw: the step's name and the cause, when it names them. */
export function causeOf(/** @type {ErrorInfo} */ err) {
  const cause = /** @type {{ name?: unknown, message?: unknown } | undefined} */ (err.details?.cause);
  const step = err.details?.step;
  return {
    cause:
      cause && cause.message !== undefined
        ? { name: String(cause.name ?? "Error"), message: String(cause.message) }
        : null,
    step: typeof step === "string" ? step : null,
  };
}

/** The run's error panel; nothing when the run has no error. */
export function RunError(/** @type {{ error: ErrorInfo | null }} */ { error: err }) {
  if (!err) return null;
  const { cause, step } = causeOf(err);
  return h(
    "section",
    { class: "panel run-error", "aria-label": "Error" },
    h("h2", {}, "Why it failed"),
    cause
      ? h(
          "p",
          { class: "error-text big" },
          step ? [h("code", {}, step), " threw "] : null,
          h("strong", {}, `${cause.name}: `),
          cause.message,
        )
      : null,
    h(
      "p",
      { class: cause ? "muted" : "error-text big" },
      h("strong", {}, `${err.name}: `),
      err.message,
      err.code ? ` (${err.code})` : "",
    ),
    err.stack ? h("details", {}, h("summary", {}, "Stack"), h("pre", { class: "stack" }, err.stack)) : null,
  );
}
