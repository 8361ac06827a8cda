// One audit row on one line: a write naming a workflow but no key shows the workflow alone.

import { expect, test } from "vitest";
import { auditLine } from "../../src/mcp/tools/list-audit.js";

const row = (run: { workflow: string | null; key: string | null } | null) => ({
  id: 1,
  at: "2026-01-01T00:00:00.000Z",
  surface: "mcp" as const,
  client: { name: "c" },
  action: "cancel_runs",
  run: run && { ...run, runId: null },
  args: {},
  argsCut: false,
  outcome: { ok: true as const },
});

test("workflow alone, workflow/key, or nothing", () => {
  expect(auditLine(row({ workflow: "bigerr", key: null }))).toContain("cancel_runs bigerr by");
  expect(auditLine(row({ workflow: "bigerr", key: "k-1" }))).toContain("cancel_runs bigerr/k-1 by");
  expect(auditLine(row(null))).toContain("cancel_runs by");
});
