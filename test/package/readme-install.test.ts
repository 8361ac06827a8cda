// The README's install section tells a new user what a git-URL install costs and to prefer the tarball.

import fs from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";

test('"Use it in your app" says a git install runs prepare (every devDependency, a build) and to prefer the tarball', () => {
  const readme = fs.readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");
  const section = /^## Use it in your app\n([\s\S]*?)^## /m.exec(readme)?.[1];
  expect(section, 'a "## Use it in your app" section').toBeDefined();
  const text = section!.replace(/\s+/g, " ");
  expect(text).toContain("Prefer the tarball.");
  expect(text).toMatch(/git-URL install runs the package's `prepare` script/);
  expect(text).toMatch(/installs every devDependency .*a Chromium for the browser tests.*then builds/);
  expect(text).toMatch(/several minutes \(about 10 .* about 3 for the tarball/);
  // What prepare runs, as package.json has it.
  const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8"));
  expect(pkg.scripts.prepare).toBe("npm run build");
  expect(Object.keys(pkg.devDependencies)).toContain("@sparticuz/chromium");
});
