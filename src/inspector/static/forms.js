// Forms built from a queue's JSON Schema (as the workflow's zod schema publishes it), and the diff of a
// run's state before and after an entry. The server validates every message again with the real schema.
//
// IMPORTANT: field names come from the schema, so they can be any string, including names the form
// element already has (addEventListener, classList, submit, elements, ...). A control's `name` would
// become a property of its form and hide the real one (DOM clobbering), so controls get no `name`: each
// field keeps a reference to its own element, and `data-field` carries its path for styling and tests.
// Values are gathered with own properties only (`__proto__` is a key like any other).

import { h, jsonBlock } from "./lib.js";

let ids = 0;
const nextId = () => `f${++ids}`;

class FieldError extends Error {}

/** An object of the given [key, value] pairs as own properties, whatever the keys ("__proto__" too). */
const record = (pairs) => Object.fromEntries(pairs.filter(([, v]) => v !== undefined));

const INPUT_TYPES = new Map([
  ["email", "email"],
  ["uri", "url"],
  ["date", "date"],
]);

/** `anyOf: [X, {type: "null"}]` → X, nullable. */
function unwrap(schema) {
  const alts = schema?.anyOf ?? schema?.oneOf;
  if (Array.isArray(alts) && alts.length === 2) {
    const other = alts.find((s) => s?.type !== "null");
    if (other && alts.some((s) => s?.type === "null")) return { schema: other, nullable: true };
  }
  return { schema: schema ?? {}, nullable: false };
}

function labelText(name, schema, required) {
  return `${schema.title ?? name}${required ? "" : " (optional)"}`;
}

/**
 * One control for one schema; returns { el, read } where read() gives the value or undefined (left out).
 * `path` names the field within the message ("a/b" for b inside a), shown as data-field.
 */
function field(rawSchema, name, required, path = name) {
  const { schema, nullable } = unwrap(rawSchema);
  const id = nextId();
  const dataset = { field: path };
  const label = h("label", { for: id, text: labelText(name, schema, required) });
  const hint = schema.description ? h("small", { class: "hint", text: schema.description }) : null;
  const empty = () => (nullable ? null : undefined);

  if (schema.type === "object" && schema.properties) {
    const req = new Set(schema.required ?? []);
    const parts = Object.entries(schema.properties).map(([k, s]) => [
      k,
      field(s, k, req.has(k), `${path}/${k}`),
    ]);
    const el = h(
      "fieldset",
      { class: "sub", dataset },
      h("legend", { text: labelText(name, schema, required) }),
      parts.map(([, f]) => f.el),
    );
    return {
      el,
      read: () => record(parts.map(([k, f]) => [k, f.read()])),
    };
  }
  if (schema.type === "boolean") {
    const input = h("input", { id, type: "checkbox", dataset });
    return { el: h("div", { class: "field check" }, input, label, hint), read: () => input.checked };
  }
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) {
    const select = h(
      "select",
      { id, dataset, required: required && !nullable },
      // A required choice starts unchosen: the browser refuses to send the form until one is picked.
      h("option", { value: "", text: required && !nullable ? "choose…" : "—" }),
      schema.enum.map((v) => h("option", { value: v, text: v })),
    );
    return {
      el: h("div", { class: "field" }, label, select, hint),
      read: () => (select.value === "" ? empty() : select.value),
    };
  }
  if (schema.type === "string") {
    const type = INPUT_TYPES.get(schema.format) ?? "text";
    const attrs = {
      id,
      dataset,
      type,
      required: required && !nullable,
      minlength: schema.minLength,
      maxlength: schema.maxLength,
      pattern: schema.pattern,
      autocomplete: "off",
    };
    const input =
      (schema.maxLength ?? 0) > 200 ? h("textarea", { ...attrs, type: false, rows: "3" }) : h("input", attrs);
    return {
      el: h("div", { class: "field" }, label, input, hint),
      read: () => (input.value === "" && !required ? empty() : input.value),
    };
  }
  if (schema.type === "number" || schema.type === "integer") {
    const safe = (n) => (n !== undefined && Math.abs(n) < 1e15 ? n : undefined);
    const input = h("input", {
      id,
      dataset,
      type: "number",
      required: required && !nullable,
      step: schema.type === "integer" ? "1" : "any",
      min: safe(schema.minimum),
      max: safe(schema.maximum),
    });
    return {
      el: h("div", { class: "field" }, label, input, hint),
      read: () => (input.value === "" ? empty() : Number(input.value)),
    };
  }
  // Anything else (arrays, unions, free objects): JSON text.
  const area = h("textarea", {
    id,
    dataset,
    rows: "3",
    class: "mono",
    placeholder: "JSON",
    spellcheck: "false",
  });
  return {
    el: h("div", { class: "field" }, label, area, hint ?? h("small", { class: "hint", text: "JSON" })),
    read: () => {
      if (area.value.trim() === "") return required ? null : empty();
      try {
        return JSON.parse(area.value);
      } catch {
        throw new FieldError(`${name}: not valid JSON.`);
      }
    },
  };
}

const DECISION = /^(approve|approved|accept|accepted)$/i;

/**
 * A form for a message to `queue` built from its JSON Schema. A boolean property named like "approve"
 * becomes two buttons, Approve and Reject. `send(body)` resolves with a line to show, or throws an
 * ApiError (its problems are listed under the form).
 */
export function messageForm(queue, schema, send) {
  const root = unwrap(schema).schema;
  const isObject = root.type === "object" && root.properties;
  const decision = isObject
    ? Object.entries(root.properties).find(
        ([k, s]) => DECISION.test(k) && unwrap(s).schema.type === "boolean",
      )?.[0]
    : undefined;
  const req = new Set(root.required ?? []);
  const parts = isObject
    ? Object.entries(root.properties)
        .filter(([k]) => k !== decision)
        .map(([k, s]) => [k, field(s, k, req.has(k))])
    : [["body", field(root, "message", true)]];
  const read = () => (isObject ? record(parts.map(([k, f]) => [k, f.read()])) : parts[0][1].read());
  const status = h("div", { class: "form-status", role: "status", "aria-live": "polite" });
  const buttons = decision
    ? [
        h("button", { type: "submit", class: "primary", value: "true", text: "Approve" }),
        h("button", { type: "submit", class: "danger", value: "false", text: "Reject" }),
      ]
    : [h("button", { type: "submit", class: "primary", text: `Send to ${queue}` })];

  const form = h(
    "form",
    { class: "message-form", "aria-label": `Message to queue ${queue}`, dataset: { queue } },
    parts.map(([, f]) => f.el),
    h("div", { class: "buttons" }, buttons),
    status,
  );

  const rawArea = h("textarea", {
    rows: "5",
    class: "mono",
    spellcheck: "false",
    "aria-label": `JSON message to ${queue}`,
  });
  const raw = h(
    "details",
    { class: "raw" },
    h("summary", { text: "Write the JSON instead" }),
    rawArea,
    h(
      "div",
      { class: "buttons" },
      h("button", {
        type: "button",
        text: "Send JSON",
        onclick: () => submit(() => JSON.parse(rawArea.value)),
      }),
    ),
  );
  raw.addEventListener("toggle", () => {
    if (!raw.open || rawArea.value) return;
    try {
      const body = read();
      if (decision) body[decision] = true;
      rawArea.value = JSON.stringify(body, null, 2);
    } catch {
      rawArea.value = "{}";
    }
  });

  let busy = false;
  async function submit(makeBody) {
    if (busy) return;
    let body;
    try {
      body = makeBody();
    } catch (err) {
      showError(err instanceof FieldError ? err.message : "The JSON is not valid.");
      return;
    }
    busy = true;
    form.classList.add("busy");
    status.className = "form-status";
    status.textContent = "Sending…";
    try {
      status.textContent = await send(body);
      status.classList.add("ok");
    } catch (err) {
      showError(err.message, err.problems);
    } finally {
      busy = false;
      form.classList.remove("busy");
    }
  }
  function showError(message, problems) {
    status.className = "form-status error";
    status.setAttribute("role", "alert");
    status.replaceChildren(h("p", { text: message }));
    if (problems?.length)
      status.append(
        h(
          "ul",
          {},
          problems.map((p) => h("li", { text: p })),
        ),
      );
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(() => {
      const body = read();
      if (decision) body[decision] = ev.submitter?.value !== "false";
      return body;
    });
  });
  return h("div", { class: "message" }, form, raw);
}

// ---- state diff ------------------------------------------------------------------------------------

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const esc = (k) => String(k).replaceAll("~", "~0").replaceAll("/", "~1");

/** Changes from `a` to `b` as JSON Pointer paths: added, removed or changed. */
export function diff(a, b, path = "", out = []) {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b)) out.push({ path: `${path}/${esc(k)}`, op: "removed", before: a[k] });
      else if (!(k in a)) out.push({ path: `${path}/${esc(k)}`, op: "added", after: b[k] });
      else diff(a[k], b[k], `${path}/${esc(k)}`, out);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) diff(a[i], b[i], `${path}/${i}`, out);
    return out;
  }
  out.push({ path: path || "/", op: "changed", before: a, after: b });
  return out;
}

const short = (v) => (v === undefined ? "" : JSON.stringify(v, null, 1).replace(/\n\s*/g, " "));

/** The state before and after an entry: a table of what changed, and both states in full. */
export function stateDiff(before, after) {
  const clipped = (v) => v && typeof v === "object" && v.$clipped === true;
  if (clipped(before) || clipped(after)) {
    return h(
      "div",
      {},
      h("p", { class: "muted", text: "The state is too large to compare here." }),
      jsonBlock(before, "State before"),
      jsonBlock(after, "State after"),
    );
  }
  const changes = diff(before, after);
  const table = changes.length
    ? h(
        "table",
        { class: "diff" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", { text: "path" }), h("th", { text: "before" }), h("th", { text: "after" })),
        ),
        h(
          "tbody",
          {},
          changes.map((c) =>
            h(
              "tr",
              { class: `d-${c.op}` },
              h("td", { class: "mono", text: c.path }),
              h(
                "td",
                { class: "mono before" },
                c.op === "added" ? h("span", { class: "muted", text: "(none)" }) : short(c.before),
              ),
              h(
                "td",
                { class: "mono after" },
                c.op === "removed" ? h("span", { class: "muted", text: "(removed)" }) : short(c.after),
              ),
            ),
          ),
        ),
      )
    : h("p", { class: "muted", text: "This entry did not change the state." });
  return h(
    "div",
    { class: "state-diff" },
    table,
    h(
      "details",
      {},
      h("summary", { text: "Whole state before and after" }),
      h(
        "div",
        { class: "two" },
        h("div", {}, h("h4", { text: "Before" }), jsonBlock(before)),
        h("div", {}, h("h4", { text: "After" }), jsonBlock(after)),
      ),
    ),
  );
}
