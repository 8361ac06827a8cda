// @ts-check
// What a message form asks for, worked out from a queue's JSON Schema (as the workflow's zod schema
// publishes it), and how the values typed into it become the message (no DOM). The server validates
// every message again with the real schema; this only makes a form people can fill in.

import { assertNever } from "./assert.js";

/**
 * One control of a form.
 * @typedef {{ name: string, label: string, hint: string | null, required: boolean, nullable: boolean }} FieldBase
 * @typedef {FieldBase & (
 *   | { kind: "object", fields: Array<[string, Field]> }
 *   | { kind: "boolean" }
 *   | { kind: "enum", options: string[] }
 *   | { kind: "string", input: "text" | "email" | "url" | "date", multiline: boolean,
 *       minLength?: number, maxLength?: number, pattern?: string }
 *   | { kind: "number", integer: boolean, min?: number, max?: number }
 *   | { kind: "json" }
 * )} Field
 */
/**
 * A whole form: its fields, and the boolean property (named like "approve") that becomes the Approve and
 * Reject buttons. A schema that is not an object gets one JSON field whose value is the message.
 * @typedef {{ object: boolean, decision: string | null, fields: Array<[string, Field]> }} FormModel
 */
/**
 * What a control holds: a checkbox its checked state, anything else its text. A field's raw value is
 * found by its path (property names from the form's root).
 * @typedef {(path: readonly string[]) => string | boolean} RawValues
 */

/** A value that cannot become part of the message (names the field). */
export class FieldError extends Error {}

const DECISION = /^(approve|approved|accept|accepted)$/i;

/** The input type of a string format (a Map: a format named "constructor" finds nothing). */
const INPUT_TYPES = new Map(
  /** @type {const} */ ([
    ["email", "email"],
    ["uri", "url"],
    ["date", "date"],
  ]),
);

/** @param {unknown} v @returns {Record<string, any>} */
const obj = (v) => (v !== null && typeof v === "object" ? /** @type {Record<string, any>} */ (v) : {});

/** `anyOf: [X, {type: "null"}]` → X, nullable. */
export function unwrap(/** @type {unknown} */ schema) {
  const s = obj(schema);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts) && alts.length === 2) {
    const other = alts.find((a) => obj(a).type !== "null");
    if (other && alts.some((a) => obj(a).type === "null")) return { schema: obj(other), nullable: true };
  }
  return { schema: s, nullable: false };
}

/** The properties of an object schema as [name, schema] pairs (own properties only, "__proto__" too). */
function properties(/** @type {Record<string, any>} */ schema) {
  return Object.entries(obj(schema.properties));
}

/** A number the browser can hold exactly as an input's min or max, else undefined. */
const safe = (/** @type {unknown} */ n) => (typeof n === "number" && Math.abs(n) < 1e15 ? n : undefined);
const num = (/** @type {unknown} */ n) => (typeof n === "number" ? n : undefined);
const text = (/** @type {unknown} */ s) => (typeof s === "string" ? s : undefined);

/**
 * The control for one property (or the whole message).
 * @param {unknown} raw its schema
 * @param {string} name
 * @param {boolean} required
 * @returns {Field}
 */
export function fieldOf(raw, name, required) {
  const { schema, nullable } = unwrap(raw);
  /** @type {FieldBase} */
  const base = {
    name,
    label: `${text(schema.title) ?? name}${required ? "" : " (optional)"}`,
    hint: text(schema.description) ?? null,
    required,
    nullable,
  };
  if (schema.type === "object" && schema.properties) {
    const req = new Set(Array.isArray(schema.required) ? schema.required : []);
    /** @type {Field} */
    const f = {
      ...base,
      kind: "object",
      fields: properties(schema).map(([k, s]) => [k, fieldOf(s, k, req.has(k))]),
    };
    return f;
  }
  if (schema.type === "boolean") return /** @type {Field} */ ({ ...base, kind: "boolean" });
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string"))
    return /** @type {Field} */ ({ ...base, kind: "enum", options: schema.enum });
  if (schema.type === "string") {
    return /** @type {Field} */ ({
      ...base,
      kind: "string",
      input: INPUT_TYPES.get(schema.format) ?? "text",
      multiline: (num(schema.maxLength) ?? 0) > 200,
      minLength: num(schema.minLength),
      maxLength: num(schema.maxLength),
      pattern: text(schema.pattern),
    });
  }
  if (schema.type === "number" || schema.type === "integer") {
    return /** @type {Field} */ ({
      ...base,
      kind: "number",
      integer: schema.type === "integer",
      min: safe(schema.minimum),
      max: safe(schema.maximum),
    });
  }
  // Anything else (arrays, unions, free objects): JSON text.
  return /** @type {Field} */ ({ ...base, kind: "json" });
}

/** The form for a message to a queue whose messages follow `schema`. */
export function formOf(/** @type {unknown} */ schema) {
  const root = unwrap(schema).schema;
  if (!(root.type === "object" && root.properties)) {
    /** @type {FormModel} */
    const single = { object: false, decision: null, fields: [["body", fieldOf(root, "message", true)]] };
    return single;
  }
  const req = new Set(Array.isArray(root.required) ? root.required : []);
  const props = properties(root);
  const decision =
    props.find(([k, s]) => DECISION.test(k) && unwrap(s).schema.type === "boolean")?.[0] ?? null;
  /** @type {FormModel} */
  const model = {
    object: true,
    decision,
    fields: props.filter(([k]) => k !== decision).map(([k, s]) => [k, fieldOf(s, k, req.has(k))]),
  };
  return model;
}

/** Sets an own property, even one named "__proto__". */
function put(/** @type {Record<string, unknown>} */ out, /** @type {string} */ k, /** @type {unknown} */ v) {
  Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/**
 * One field's value from what its controls hold; undefined leaves it out of the message.
 * @param {Field} field
 * @param {readonly string[]} path
 * @param {RawValues} raw
 * @returns {unknown}
 */
export function readField(field, path, raw) {
  const empty = field.nullable ? null : undefined;
  switch (field.kind) {
    case "object": {
      /** @type {Record<string, unknown>} */
      const out = {};
      for (const [k, f] of field.fields) {
        const v = readField(f, [...path, k], raw);
        if (v !== undefined) put(out, k, v);
      }
      return out;
    }
    case "boolean":
      return raw(path) === true;
    case "enum": {
      const v = String(raw(path));
      return v === "" ? empty : v;
    }
    case "string": {
      const v = String(raw(path));
      return v === "" && !field.required ? empty : v;
    }
    case "number": {
      const v = String(raw(path));
      return v === "" ? empty : Number(v);
    }
    case "json": {
      const v = String(raw(path));
      if (v.trim() === "") return field.required ? null : empty;
      try {
        return JSON.parse(v);
      } catch {
        throw new FieldError(`${field.name}: not valid JSON.`);
      }
    }
    default:
      return assertNever(field);
  }
}

/**
 * The message the form holds; with a decision property, `decision` is its value (Approve or Reject).
 * @param {FormModel} model
 * @param {RawValues} raw
 * @param {boolean | null} decision
 */
export function readForm(model, raw, decision) {
  if (!model.object) {
    const only = model.fields[0];
    return only ? readField(only[1], [only[0]], raw) : null;
  }
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [k, f] of model.fields) {
    const v = readField(f, [k], raw);
    if (v !== undefined) put(out, k, v);
  }
  if (model.decision !== null && decision !== null) put(out, model.decision, decision);
  return out;
}
