// Unknown arguments are refused, naming the key, instead of being silently dropped.

import { afterEach, expect, test } from "vitest";
import { Closer, call, connect, startEngine, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("a misspelt argument is refused as INVALID_INPUT naming it", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  const cancel = await call(client, "cancel_runs", { workflw: "x" });
  expect(cancel.isError).toBe(true);
  expect(text(cancel)).toContain("workflw");
  const compare = await call(client, "compare_runs", { workflow: "a", key: "b", other: { key: "c" } });
  expect(compare.isError).toBe(true);
  expect(text(compare)).toContain("other");
  const audit = await call(client, "list_audit", { limt: 5 });
  expect(audit.isError).toBe(true);
  expect(text(audit)).toContain("limt");
  expect((await call(client, "list_audit", { limit: 5 })).isError).toBeFalsy();
});
