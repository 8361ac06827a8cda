// The README's tool list names every tool the server registers, and nothing else.

import fs from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { TOOLS } from "../../src/mcp/tools/index.js";
import { ROOT } from "./helpers.js";

test("the README's Tools: paragraph lists exactly the registered tools", () => {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const paragraph = /^Tools: ([\s\S]*?)Resources:/m.exec(readme)?.[1];
  expect(paragraph, 'a paragraph starting "Tools:" in README.md').toBeDefined();
  const named = new Set([...paragraph!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
  expect([...named].sort()).toEqual(TOOLS.map((t) => t.name).sort());
  expect(paragraph).toContain(
    `hides the ${["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"][TOOLS.filter((t) => t.write).length]} that`,
  );
});
