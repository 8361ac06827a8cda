// Invoices for the bulk tests: version 1 fails in "tax" (the tax API is down) or in "mail" (the mail server
// refuses), by the input's kind; version 2 fixes the tax step only. `slowMs` makes version 2's code take that
// long (synchronously) before its first step, so a real process can be killed in the middle of a plan.

import { setup, workflow } from "../../src/index.js";

export function invoiceVersions(slowMs = 0) {
  const body = (fixed: boolean) => async (ctx: any, input: { n: number; kind: "tax" | "mail" }) => {
    await ctx.step("load", () => input.n);
    if (fixed && slowMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, slowMs);
    await ctx.step(
      "tax",
      () => {
        if (input.kind === "tax" && !fixed) throw new Error(`Tax API answered 503 for invoice ${input.n}`);
        return 0.2;
      },
      { retries: 0 },
    );
    await ctx.step(
      "mail",
      () => {
        if (input.kind === "mail") throw new Error(`SMTP server refused the mail of invoice ${input.n}`);
        return "sent";
      },
      { retries: 0 },
    );
    return "paid";
  };
  return {
    v1: workflow({ version: 1, run: body(false) }),
    v2: workflow({ version: 2, run: body(true) }),
  };
}

const { v1, v2 } = invoiceVersions(Number(process.env.WAYMARK_TEST_SLOW_MS ?? 0));
/** Before the fix. */
export const broken = setup({ use: { invoice: v1 } });
/** After the fix: both versions (failed runs stay on 1 until replayed). */
export const fixed = setup({ use: { invoice: [v1, v2] } });
