// ctx.child's types: the child's input is checked and its output flows, from the definition given or, by
// name, from the workflows the application registers (Register, checked by tsc on a project of its own).

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, expectTypeOf, it } from "vitest";
import { type ChildAddress, workflow } from "../../src/index.js";

const payment = workflow({
  run: async (_ctx, input: { amount: number }) => ({ receipt: `r-${input.amount}` }),
});

describe("ctx.child types", () => {
  it("takes the definition's input and returns its output, or the address when detached", () => {
    workflow({
      run: async (ctx) => {
        const receipt = await ctx.child("charge", payment, { key: "k", input: { amount: 1 } });
        expectTypeOf(receipt).toEqualTypeOf<{ receipt: string }>();
        const address = await ctx.child("later", payment, { key: "l", input: { amount: 2 }, detach: true });
        expectTypeOf(address).toEqualTypeOf<ChildAddress>();
        // @ts-expect-error amount is a number
        await ctx.child("bad", payment, { key: "b", input: { amount: "3" } });
        // @ts-expect-error a key is required
        await ctx.child("keyless", payment, { input: { amount: 3 } });
      },
    });
  });

  it("by name, typed through Register: tsc accepts the project and every @ts-expect-error in it is needed", async () => {
    const root = path.resolve(import.meta.dirname, "../..");
    const tsc = path.join(root, "node_modules/typescript/bin/tsc");
    const project = path.join(root, "test/types/child-register/tsconfig.json");
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, "-p", project], { cwd: root }).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout }),
    );
    expect(stdout).toBe("");
  }, 60_000);
});
