// Failing invoices for the inspector's "Replay all N" tests: 3 runs fail at "tax" (one of them with a key
// that is HTML), 1 at "mail", on version 1; then the fix lands (version 2, test/engine/bulk-invoices.ts) and
// the engine that serves the inspector runs the fixed code.

import { expect } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock } from "../../src/index.js";
import { broken, fixed } from "../engine/bulk-invoices.js";
import type { Closer } from "../mcp/helpers.js";

/** A key the page must show as text, never as markup. */
export const HOSTILE_KEY = `<img src=x onerror="document.title='pwned'">`;
export const TAX_KEYS = ["inv-1", "inv-2", HOSTILE_KEY];
export const MAIL_KEY = "inv-mail";

export async function failingInvoices(closer: Closer, database: string) {
  const clock = new FakeClock();
  const before = await broken.start({ database, clock });
  const runs = [];
  for (const [i, key] of TAX_KEYS.entries())
    runs.push(await before.getOrCreate("invoice", key, { n: i + 1, kind: "tax" }));
  runs.push(await before.getOrCreate("invoice", MAIL_KEY, { n: 9, kind: "mail" }));
  for (const r of runs) await expect(r.result()).rejects.toThrow(/Tax API|SMTP/);
  const tax = (await before.findRun("invoice", "inv-1"))!.failureSignature!;
  const mail = (await before.findRun("invoice", MAIL_KEY))!.failureSignature!;
  await before.close();
  const engine = (await fixed.start({ database, clock })) as unknown as Engine;
  closer.add(() => engine.close());
  return { engine, clock, tax, mail };
}
