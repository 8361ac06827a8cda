// A write whose confirmation the user declined is audited as DECLINED (nothing changed), not as ok.

import { expect, test } from "vitest";
import { outcomeOfAnswer } from "../../src/mcp/audit-tap.js";

test("a declined confirmation is audited DECLINED with its message; a done write stays ok", () => {
  const declined = outcomeOfAnswer({
    jsonrpc: "2.0",
    id: 1,
    result: {
      content: [{ type: "text", text: "The user declined; nothing changed." }],
      structuredContent: {
        declined: true,
        message: "The user declined; nothing changed. Plan p still holds 1 pending run.",
      },
    },
  });
  expect(declined).toEqual({
    ok: false,
    code: "DECLINED",
    message: "The user declined; nothing changed. Plan p still holds 1 pending run.",
  });
  const done = outcomeOfAnswer({
    jsonrpc: "2.0",
    id: 2,
    result: { content: [{ type: "text", text: "ok" }], structuredContent: { declined: false } },
  });
  expect(done).toEqual({ ok: true });
});
