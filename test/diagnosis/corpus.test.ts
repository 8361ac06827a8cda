// Every scenario of the failure corpus gets the diagnosis it expects: category, culprit, key evidence,
// first next action (and similar failures where it counts them). Sizes go to test-artifacts/.

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SCENARIOS } from "../../fixtures/failures/index.js";
import { diagnose, diagnosisText } from "../../src/diagnosis/index.js";
import { answerSize, MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { callTool, mcpClient, scenarioEnv } from "./harness.js";

const sizes: Record<string, { category: string; diagnosis: number; text: number; answer: number }> = {};

afterAll(() => {
  if (Object.keys(sizes).length < SCENARIOS.length) return; // a filtered run keeps the last full report
  const dir = path.resolve(import.meta.dirname, "../../test-artifacts");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "diagnosis-sizes.json"), `${JSON.stringify(sizes, null, 2)}\n`);
});

describe("failure corpus", () => {
  for (const scenario of SCENARIOS) {
    const want = scenario.expected;
    it(`${scenario.name}: ${want.category} at ${want.culprit ?? "(no entry)"}`, async () => {
      const env = await scenarioEnv(scenario);
      await scenario.drive(env);
      const d = await diagnose(env.engine, { workflow: scenario.workflow, key: scenario.key });

      expect(d.category).toBe(want.category);
      expect(d.culprit?.path ?? null).toBe(want.culprit);
      for (const e of want.evidence) {
        const found = d.evidence.some((x) => x.kind === e.kind && x.fact.includes(e.includes));
        expect(
          found,
          `evidence ${e.kind} containing ${JSON.stringify(e.includes)} in\n${JSON.stringify(d.evidence, null, 2)}`,
        ).toBe(true);
      }
      const first = d.nextActions[0];
      expect(first?.kind).toBe(want.firstAction.kind);
      if (first?.kind === "person" && want.firstAction.kind === "person") {
        expect(first.change).toContain(want.firstAction.includes);
      } else if (first?.kind === "call" && want.firstAction.kind === "call") {
        expect(first.tool).toBe(want.firstAction.tool);
        expect(first.args).toMatchObject(want.firstAction.args);
      }
      if (want.similar !== undefined) expect(d.similar?.count).toBe(want.similar);
      if (want.throwsAt !== undefined) {
        // The frame names the scenario's file and the line that throws (the first line holding that text).
        const file = `fixtures/failures/${scenario.name}.ts`;
        const lines = fs.readFileSync(path.resolve(import.meta.dirname, "../..", file), "utf8").split("\n");
        const line = lines.findIndex((l) => l.includes(want.throwsAt!)) + 1;
        expect(line).toBeGreaterThan(0);
        expect(d.evidence.find((e) => e.kind === "frame")?.fact).toContain(`${file}:${line}`);
      }
      // Every piece of evidence points at an entry, an attempt or another record.
      for (const e of d.evidence) {
        if (e.kind !== "fix" && e.kind !== "units" && e.kind !== "no-message")
          expect(e.entry !== undefined || e.ref !== undefined, JSON.stringify(e)).toBe(true);
      }
      // diagnose_run answers with the same diagnosis, within the budget.
      const answer = await callTool(await mcpClient(env.engine), "diagnose_run", {
        workflow: scenario.workflow,
        key: scenario.key,
      });
      expect(answer.structuredContent).toEqual(JSON.parse(JSON.stringify(d)));
      const size = JSON.stringify(d).length;
      sizes[scenario.name] = {
        category: d.category,
        diagnosis: size,
        text: diagnosisText(d).length,
        answer: answerSize(answer),
      };
      expect(size).toBeLessThan(2500);
      expect(answerSize(answer)).toBeLessThan(MAX_ANSWER_CHARS);
    });
  }
});
