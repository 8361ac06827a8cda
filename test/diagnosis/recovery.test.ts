// Following a diagnosis's next actions — the scenario's fix where a person must act, every tool call
// through a real MCP client — brings each recoverable scenario of the corpus to completed.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SCENARIOS } from "../../fixtures/failures/index.js";
import { diagnose } from "../../src/diagnosis/index.js";
import { TOOLS } from "../../src/mcp/tools/index.js";
import { followNextActions, scenarioEnv } from "./harness.js";

describe("following the next actions", () => {
  for (const scenario of SCENARIOS.filter((s) => s.recoverable)) {
    it(`${scenario.name} (${scenario.expected.category}) completes`, async () => {
      const env = await scenarioEnv(scenario);
      await scenario.drive(env);
      const d = await diagnose(env.engine, { workflow: scenario.workflow, key: scenario.key });
      expect(d.category).toBe(scenario.expected.category);
      // Every call is valid for its tool's input schema as it stands.
      for (const a of d.nextActions) {
        if (a.kind !== "call") continue;
        const tool = TOOLS.find((t) => t.name === a.tool);
        expect(tool, a.tool).toBeDefined();
        expect(
          () => z.strictObject(tool!.input).parse(a.args),
          `${a.tool} ${JSON.stringify(a.args)}`,
        ).not.toThrow();
      }
      const { info, taken } = await followNextActions(scenario, env, d);
      expect(info.status, `${scenario.name} after ${taken.join(" → ")}: ${JSON.stringify(info.error)}`).toBe(
        "completed",
      );
      // A diagnosis of the recovered run finds nothing wrong.
      expect((await diagnose(env.engine, info.id)).category).toBe("healthy");
    });
  }
});
