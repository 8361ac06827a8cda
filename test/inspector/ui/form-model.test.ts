// Message forms from queue schemas (as zod's JSON Schema output publishes them): which controls, the
// Approve/Reject decision, and how typed values become the message.

import { describe, expect, test } from "vitest";
import { FieldError, formOf, readForm } from "../../../src/inspector/static/form-model.js";

/** Raw control values by property path, as the form's controls would hold them. */
const typed =
  (values: Record<string, string | boolean>) =>
  (path: readonly string[]): string | boolean =>
    Object.hasOwn(values, path.join(".")) ? values[path.join(".")]! : "";

const decisions = {
  type: "object",
  properties: {
    approve: { type: "boolean" },
    by: { type: "string", minLength: 1, description: "who decides" },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
    level: { type: "string", enum: ["low", "high"] },
    amount: { type: "integer", minimum: 0, maximum: 9007199254740991 },
  },
  required: ["approve", "by", "level"],
};

describe("formOf", () => {
  test("a boolean named like approve becomes the decision (Approve and Reject), the rest a control each", () => {
    const form = formOf(decisions);
    expect(form.decision).toBe("approve");
    const fields = Object.fromEntries(form.fields);
    expect(Object.keys(fields)).toEqual(["by", "note", "level", "amount"]);
    expect(fields.by).toMatchObject({
      kind: "string",
      required: true,
      label: "by",
      hint: "who decides",
      minLength: 1,
    });
    expect(fields.note).toMatchObject({
      kind: "string",
      required: false,
      nullable: true,
      label: "note (optional)",
    });
    expect(fields.level).toMatchObject({ kind: "enum", required: true, options: ["low", "high"] });
    // A bound past what the browser holds exactly is left off rather than rounded.
    expect(fields.amount).toMatchObject({ kind: "number", integer: true, min: 0, max: undefined });
  });

  test("a schema that is not an object is one JSON field holding the whole message", () => {
    const form = formOf({ type: "array", items: { type: "number" } });
    expect(form.object).toBe(false);
    expect(readForm(form, typed({ body: "[1, 2]" }), null)).toEqual([1, 2]);
  });
});

describe("readForm", () => {
  test("typed values become the message: numbers as numbers, the decision from the button, an empty nullable field null", () => {
    const form = formOf(decisions);
    const raw = typed({ by: "ann", level: "high", amount: "12" });
    expect(readForm(form, raw, true)).toEqual({
      by: "ann",
      note: null,
      level: "high",
      amount: 12,
      approve: true,
    });
    expect(readForm(form, raw, false)).toMatchObject({ approve: false });
  });

  test("an empty nullable field sends null; an empty optional one is left out; an unchecked box is false", () => {
    const form = formOf({
      type: "object",
      properties: {
        maybe: { anyOf: [{ type: "number" }, { type: "null" }] },
        skip: { type: "string" },
        flag: { type: "boolean" },
        nested: { type: "object", properties: { inner: { type: "string" } }, required: ["inner"] },
      },
    });
    expect(readForm(form, typed({ "nested.inner": "x" }), null)).toEqual({
      maybe: null,
      flag: false,
      nested: { inner: "x" },
    });
  });

  test("a JSON field that does not parse names the field", () => {
    const form = formOf({ type: "object", properties: { tags: { type: "array" } } });
    expect(() => readForm(form, typed({ tags: "[1," }), null)).toThrow(FieldError);
    expect(() => readForm(form, typed({ tags: "[1," }), null)).toThrow("tags: not valid JSON.");
    expect(readForm(form, typed({ tags: '["a"]' }), null)).toEqual({ tags: ["a"] });
  });

  test("fields named like built-in members ('__proto__', 'constructor', 'submit') arrive as properties of the message", () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"string"},"submit":{"type":"string"},"addEventListener":{"type":"string"}},"required":["__proto__","constructor","submit","addEventListener"]}',
    );
    const form = formOf(schema);
    expect(form.fields.map(([k]) => k)).toEqual(["__proto__", "constructor", "submit", "addEventListener"]);
    const body = readForm(
      form,
      typed(JSON.parse('{"__proto__":"p","constructor":"c","submit":"s","addEventListener":"a"}')),
      null,
    );
    expect(JSON.parse(JSON.stringify(body))).toEqual(
      JSON.parse('{"__proto__":"p","constructor":"c","submit":"s","addEventListener":"a"}'),
    );
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });
});
