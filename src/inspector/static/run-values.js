// @ts-check
// The run's input, state and output, folded away until opened.

import { h } from "preact";
import { JsonBlock } from "./parts.js";

/** The run's values panel. */
export function RunValues(
  /** @type {{ run: { input: unknown, state: unknown, output: unknown } }} */ { run },
) {
  const part = (/** @type {string} */ title, /** @type {unknown} */ value) =>
    h("div", {}, h("h3", {}, title), h(JsonBlock, { value, label: title }));
  return h(
    "section",
    { class: "panel values", "aria-label": "Input, state and output" },
    h(
      "details",
      {},
      h("summary", {}, "Input, state and output"),
      h(
        "div",
        { class: "three" },
        part("Input", run.input),
        part("State", run.state),
        part("Output", run.output),
      ),
    ),
  );
}
