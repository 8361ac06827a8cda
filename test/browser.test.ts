// The browser discovery every browser test uses: its order (variable, system, package), its refusal to
// skip when nothing is found, and the packaged Chromium really starting and rendering a page here.

import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, test } from "vitest";
import { findBrowser, HEADLESS_ARGS, NoBrowserError, packagedBrowser } from "./browser.js";
import { tempDir } from "./helpers.js";

/** An executable file standing in for a browser (discovery only checks that it can be run). */
function fakeBrowser(dir: string, name: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return file;
}

const NOTHING = { systemPaths: [], packageName: "@waymark/no-such-browser-package" };

describe("finding a browser", () => {
  test("WAYMARK_BROWSER comes first, then CHROME_PATH, before any system browser", async () => {
    const dir = tempDir();
    const named = fakeBrowser(dir, "my-chrome");
    const other = fakeBrowser(dir, "other-chrome");
    const system = fakeBrowser(dir, "chromium");
    const search = { systemPaths: [system], env: { PATH: dir } };

    const first = await findBrowser({
      ...search,
      env: { ...search.env, WAYMARK_BROWSER: named, CHROME_PATH: other },
    });
    expect(first).toMatchObject({ path: named, source: "environment" });
    const second = await findBrowser({ ...search, env: { ...search.env, CHROME_PATH: other } });
    expect(second).toMatchObject({ path: other, source: "environment" });
  });

  test("a variable naming no executable is an error, not a quiet fall-back to another browser", async () => {
    const dir = tempDir();
    const system = fakeBrowser(dir, "chromium");
    const missing = path.join(dir, "no-such-chrome");
    const error = await findBrowser({ systemPaths: [system], env: { WAYMARK_BROWSER: missing } }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(NoBrowserError);
    expect(error.message).toContain(`WAYMARK_BROWSER=${missing} is not an executable file`);
  });

  test("a system browser is found on the common paths, then by name on PATH, before the package", async () => {
    const dir = tempDir();
    const onDisk = fakeBrowser(dir, "google-chrome-stable");
    expect(await findBrowser({ systemPaths: [path.join(dir, "absent"), onDisk], env: {} })).toMatchObject({
      path: onDisk,
      source: "system",
    });
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "chromium"), "not executable"); // skipped: mode 644
    const onPath = fakeBrowser(bin, "chromium-browser");
    expect(
      await findBrowser({ systemPaths: [], env: { PATH: `${path.join(dir, "empty")}:${bin}` } }),
    ).toMatchObject({ path: onPath, source: "system" });
  });

  test("with none of the three, it fails and names the three ways to get a browser", async () => {
    const error = await findBrowser({ ...NOTHING, env: { PATH: tempDir() } }).catch((e) => e);
    expect(error).toBeInstanceOf(NoBrowserError);
    expect(error.code).toBe("NO_BROWSER");
    expect(error.message).toContain("set WAYMARK_BROWSER (or CHROME_PATH)");
    expect(error.message).toContain("apt-get install chromium");
    expect(error.message).toContain("@sparticuz/chromium");
    expect(error.message).toContain("@waymark/no-such-browser-package is not installed");
  });
});

describe("the Chromium inside the @sparticuz/chromium devDependency", () => {
  test("unpacks once into a cache and renders a page headless on this machine (Linux x64)", async () => {
    if (process.platform !== "linux" || process.arch !== "x64") {
      await expect(packagedBrowser()).rejects.toThrow("Linux x64 only");
      return;
    }
    const file = await packagedBrowser();
    expect(file).toContain(path.join("node_modules", ".cache", "waymark-chromium"));
    expect(await packagedBrowser()).toBe(file); // the second call reuses the unpacked binary
    const browser = await chromium.launch({ executablePath: file, headless: true, args: HEADLESS_ARGS });
    try {
      const page = await browser.newPage();
      await page.setContent("<p id=out></p><script>out.textContent = 'ran ' + (6 * 7)</script>");
      expect(await page.locator("#out").textContent()).toBe("ran 42");
    } finally {
      await browser.close();
    }
  }, 120_000);
});
