// @ts-check
// A form for a message to a queue, built from the queue's JSON Schema (form-model.js): a control per
// property, Approve and Reject for a boolean named like "approve", and "Write the JSON instead".
//
// IMPORTANT (DOM clobbering): field names come from the schema, so they can be any string, including
// names the form element already has (addEventListener, classList, submit, elements, ...). A control's
// `name` (or a bare `id`) would become a property of its form and hide the real one, so controls get no
// `name`, and ids carry a prefix no member has ("f3-by"): each control's element is kept by its path, and
// `data-field` carries that path ("a/b" for b inside a) for styling and tests.

import { h } from "preact";
import { useRef, useState } from "preact/hooks";
import { assertNever } from "./assert.js";
import { FieldError, formOf, readForm } from "./form-model.js";

/** @typedef {import("./form-model.js").Field} Field */
/** @typedef {import("./form-model.js").FormModel} FormModel */
/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control */
/**
 * @typedef {object} MessageFormProps
 * @property {string} queue
 * @property {unknown} schema the queue's JSON Schema
 * @property {(body: unknown) => Promise<string>} onSend sends; resolves with a line to show, or throws an
 *   error whose message (and `problems`, a list of strings) are shown under the form
 */
/** @typedef {{ state: "idle" } | { state: "busy" } | { state: "ok", text: string } | { state: "error", text: string, problems: string[] }} Status */

let forms = 0;

/** The form for one queue. */
export function MessageForm(/** @type {MessageFormProps} */ { queue, schema, onSend }) {
  const model = formOf(schema);
  const [prefix] = useState(() => `f${++forms}`);
  /** Controls by their path (JSON of the property names). */
  const controls = useRef(/** @type {Map<string, Control>} */ (new Map())).current;
  const rawArea = useRef(/** @type {HTMLTextAreaElement | null} */ (null));
  const [status, setStatus] = useState(/** @type {Status} */ ({ state: "idle" }));
  const busy = useRef(false);

  /** @type {import("./form-model.js").RawValues} */
  const raw = (path) => {
    const el = controls.get(JSON.stringify(path));
    if (!el) return "";
    return el instanceof HTMLInputElement && el.type === "checkbox" ? el.checked : el.value;
  };

  /** @param {() => unknown} makeBody */
  const submit = async (makeBody) => {
    if (busy.current) return;
    let body;
    try {
      body = makeBody();
    } catch (err) {
      setStatus({
        state: "error",
        text: err instanceof FieldError ? err.message : "The JSON is not valid.",
        problems: [],
      });
      return;
    }
    busy.current = true;
    setStatus({ state: "busy" });
    try {
      setStatus({ state: "ok", text: await onSend(body) });
    } catch (err) {
      const e = /** @type {{ message?: string, problems?: string[] | null }} */ (err);
      setStatus({ state: "error", text: String(e?.message ?? err), problems: e?.problems ?? [] });
    } finally {
      busy.current = false;
    }
  };

  /**
   * A button's click sends (Enter in a field clicks the first button too), not the form's submit event: in
   * an iframe sandboxed without allow-forms (an MCP Apps host) a form is never submitted. The browser's own
   * checks (required, min, pattern) run through reportValidity(), which works there too.
   * @param {MouseEvent} ev
   */
  const onClick = (ev) => {
    ev.preventDefault();
    const button = /** @type {HTMLButtonElement} */ (ev.currentTarget);
    if (button.form && !button.form.reportValidity()) return;
    submit(() => readForm(model, raw, model.decision !== null ? button.value !== "false" : null));
  };
  /** A submit that still happens (a sandbox that allows forms) must not reload the page. */
  const onSubmit = (/** @type {SubmitEvent} */ ev) => ev.preventDefault();

  /** Opening "Write the JSON instead" fills it with what the form holds. */
  const onToggle = (/** @type {Event} */ ev) => {
    const area = rawArea.current;
    if (!(/** @type {HTMLDetailsElement} */ (ev.currentTarget).open) || !area || area.value) return;
    try {
      area.value = JSON.stringify(readForm(model, raw, true), null, 2);
    } catch {
      area.value = "{}";
    }
  };

  const buttons = model.decision
    ? [
        h("button", { type: "submit", class: "primary", value: "true", key: "yes", onClick }, "Approve"),
        h("button", { type: "submit", class: "danger", value: "false", key: "no", onClick }, "Reject"),
      ]
    : [h("button", { type: "submit", class: "primary", key: "send", onClick }, `Send to ${queue}`)];

  return h(
    "div",
    { class: "message" },
    h(
      "form",
      {
        class: `message-form${status.state === "busy" ? " busy" : ""}`,
        "aria-label": `Message to queue ${queue}`,
        "data-queue": queue,
        onSubmit,
      },
      model.fields.map(([k, f]) => h(FieldControl, { key: k, field: f, path: [k], prefix, controls })),
      h("div", { class: "buttons" }, buttons),
      h(FormStatus, { status }),
    ),
    h(
      "details",
      { class: "raw", onToggle },
      h("summary", {}, "Write the JSON instead"),
      h("textarea", {
        rows: 5,
        class: "mono",
        spellcheck: false,
        "aria-label": `JSON message to ${queue}`,
        ref: rawArea,
      }),
      h(
        "div",
        { class: "buttons" },
        h(
          "button",
          { type: "button", onClick: () => submit(() => JSON.parse(rawArea.current?.value ?? "")) },
          "Send JSON",
        ),
      ),
    ),
  );
}

/** Under the form: sending, sent (the server's line), or what was wrong. */
function FormStatus(/** @type {{ status: Status }} */ { status }) {
  switch (status.state) {
    case "idle":
      return h("div", { class: "form-status", role: "status", "aria-live": "polite" });
    case "busy":
      return h("div", { class: "form-status", role: "status", "aria-live": "polite" }, "Sending…");
    case "ok":
      return h("div", { class: "form-status ok", role: "status", "aria-live": "polite" }, status.text);
    case "error":
      return h(
        "div",
        { class: "form-status error", role: "alert", "aria-live": "polite" },
        h("p", {}, status.text),
        status.problems.length
          ? h(
              "ul",
              {},
              status.problems.map((p, i) => h("li", { key: i }, p)),
            )
          : null,
      );
    default:
      return assertNever(status);
  }
}

/**
 * @typedef {object} FieldProps
 * @property {Field} field
 * @property {string[]} path property names from the form's root
 * @property {string} prefix the form's id prefix
 * @property {Map<string, Control>} controls where each control's element is kept, by path
 */

/** One control (or a fieldset of them) for one property. */
function FieldControl(/** @type {FieldProps} */ { field: f, path, prefix, controls }) {
  const key = JSON.stringify(path);
  const field = path.join("/");
  const id = `${prefix}-${path.map(encodeURIComponent).join(".")}`;
  /** Keeps the element of this control (and forgets it when it goes). */
  const ref = (/** @type {Control | null} */ el) => {
    if (el) controls.set(key, el);
    else controls.delete(key);
  };
  const label = h("label", { for: id }, f.label);
  const hint = f.hint ? h("small", { class: "hint" }, f.hint) : null;
  const required = f.required && !f.nullable;
  switch (f.kind) {
    case "object":
      return h(
        "fieldset",
        { class: "sub", "data-field": field },
        h("legend", {}, f.label),
        f.fields.map(([k, sub]) =>
          h(FieldControl, { key: k, field: sub, path: [...path, k], prefix, controls }),
        ),
      );
    case "boolean":
      return h(
        "div",
        { class: "field check" },
        h("input", { id, type: "checkbox", "data-field": field, ref }),
        label,
        hint,
      );
    case "enum":
      return h(
        "div",
        { class: "field" },
        label,
        h(
          "select",
          { id, "data-field": field, required, ref },
          // A required choice starts unchosen: the browser refuses to send the form until one is picked.
          h("option", { value: "" }, required ? "choose…" : "—"),
          f.options.map((v) => h("option", { value: v, key: v }, v)),
        ),
        hint,
      );
    case "string": {
      const attrs = {
        id,
        "data-field": field,
        required,
        minLength: f.minLength,
        maxLength: f.maxLength,
        autocomplete: "off",
        ref,
      };
      return h(
        "div",
        { class: "field" },
        label,
        f.multiline
          ? h("textarea", { ...attrs, rows: 3 })
          : h("input", { ...attrs, type: f.input, pattern: f.pattern }),
        hint,
      );
    }
    case "number":
      return h(
        "div",
        { class: "field" },
        label,
        h("input", {
          id,
          "data-field": field,
          type: "number",
          required,
          step: f.integer ? "1" : "any",
          min: f.min,
          max: f.max,
          ref,
        }),
        hint,
      );
    case "json":
      return h(
        "div",
        { class: "field" },
        label,
        h("textarea", {
          id,
          "data-field": field,
          rows: 3,
          class: "mono",
          placeholder: "JSON",
          spellcheck: false,
          ref,
        }),
        hint ?? h("small", { class: "hint" }, "JSON"),
      );
    default:
      return assertNever(f);
  }
}
