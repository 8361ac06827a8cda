// The one place that finds a Chromium for browser tests and bench scripts, and launches it headless.
// Order: WAYMARK_BROWSER (or CHROME_PATH) naming an executable; a system Chromium or Chrome (common paths,
// then PATH); the Chromium shipped inside the @sparticuz/chromium devDependency (Linux x64), unpacked
// once into node_modules/.cache. Finding none is an error that names the three ways to get one: browser
// tests never skip.

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { type Browser, type BrowserContext, chromium, type LaunchOptions } from "playwright-core";

const ROOT = path.resolve(import.meta.dirname, "..");
const PACKAGE = "@sparticuz/chromium";

/** Where the browser came from: what a failing launch and a curious reader want to know. */
export type BrowserSource = "environment" | "system" | "package";

/** A browser executable and how it was found. */
export interface FoundBrowser {
  path: string;
  source: BrowserSource;
  /** One line for logs and errors, e.g. `@sparticuz/chromium 147.0.0, unpacked to ...`. */
  how: string;
}

/** Thrown when no browser can be had; its message lists the three ways to get one. */
export class NoBrowserError extends Error {
  readonly code = "NO_BROWSER";
  constructor(reasons: string[]) {
    super(
      [
        "No Chromium or Chrome for the browser tests. Get one in any of three ways:",
        "  1. set WAYMARK_BROWSER (or CHROME_PATH) to a Chromium or Chrome executable;",
        "  2. install a system Chromium or Chrome (e.g. `apt-get install chromium`), found on common paths and PATH;",
        `  3. on Linux x64, \`npm install\` the devDependency ${PACKAGE}, which carries a Chromium inside it.`,
        "What was tried:",
        ...reasons.map((r) => `  - ${r}`),
      ].join("\n"),
    );
    this.name = "NoBrowserError";
  }
}

const SYSTEM_PATHS = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/snap/bin/chromium",
  "/opt/google/chrome/chrome",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
];
const PATH_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Where findBrowser looks; tests narrow it to prove each step of the order. */
export interface BrowserSearch {
  env?: NodeJS.ProcessEnv;
  systemPaths?: readonly string[];
  /** The npm package that carries a Chromium (a name that is not installed turns that step off). */
  packageName?: string;
  /** Where the package's Chromium is unpacked. */
  cacheRoot?: string;
}

/** The first system Chromium or Chrome: common install paths, then the names on PATH. */
export function systemBrowser(
  env: NodeJS.ProcessEnv = process.env,
  systemPaths: readonly string[] = SYSTEM_PATHS,
): string | undefined {
  const fromPath = (env.PATH ?? "")
    .split(path.delimiter)
    .filter(Boolean)
    .flatMap((dir) => PATH_NAMES.map((name) => path.join(dir, name)));
  return [...systemPaths, ...fromPath].find(isExecutable);
}

/** The package's Chromium, unpacked into node_modules/.cache once per version (atomically: a rename). */
export async function packagedBrowser(
  packageName = PACKAGE,
  cacheRoot = path.join(ROOT, "node_modules", ".cache"),
): Promise<string> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `${packageName} ships a Chromium for Linux x64 only; this is ${process.platform} ${process.arch}`,
    );
  }
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(packageName);
  } catch {
    throw new Error(`${packageName} is not installed (run \`npm ci\`)`);
  }
  // entry is <package>/build/cjs/index.cjs; the compressed browser is <package>/bin/chromium.br.
  const pkgDir = path.resolve(path.dirname(entry), "..", "..");
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version as string;
  const source = path.join(pkgDir, "bin", "chromium.br");
  if (!fs.existsSync(source)) throw new Error(`${packageName} ${version} has no ${source}`);
  const dir = path.join(cacheRoot, "waymark-chromium", version);
  const target = path.join(dir, "chromium");
  if (isExecutable(target)) return target;
  // Each process unpacks to a file of its own and renames it into place, so a parallel test file or a
  // second checkout never runs a half-written binary (the package's own executablePath() shares /tmp/chromium).
  fs.mkdirSync(dir, { recursive: true });
  const partial = `${target}.${process.pid}-${randomUUID()}.partial`;
  try {
    await pipeline(
      fs.createReadStream(source),
      zlib.createBrotliDecompress(),
      fs.createWriteStream(partial, { mode: 0o755 }),
    );
    fs.renameSync(partial, target);
  } finally {
    fs.rmSync(partial, { force: true });
  }
  return target;
}

/** Finds a browser in the documented order, or throws NoBrowserError naming what was tried. */
export async function findBrowser(search: BrowserSearch = {}): Promise<FoundBrowser> {
  const env = search.env ?? process.env;
  const systemPaths = search.systemPaths ?? SYSTEM_PATHS;
  const packageName = search.packageName ?? PACKAGE;
  for (const name of ["WAYMARK_BROWSER", "CHROME_PATH"] as const) {
    const value = env[name];
    if (!value) continue;
    // A variable that names nothing is a mistake to report, not a reason to quietly use another browser.
    if (!isExecutable(value)) {
      throw new NoBrowserError([`${name}=${value} is not an executable file; fix or unset it`]);
    }
    return { path: value, source: "environment", how: `${name}=${value}` };
  }
  const reasons = ["WAYMARK_BROWSER and CHROME_PATH are not set"];
  const system = systemBrowser(env, systemPaths);
  if (system) return { path: system, source: "system", how: `system browser ${system}` };
  reasons.push(`no system browser at ${systemPaths.join(", ")} nor as ${PATH_NAMES.join("/")} on PATH`);
  try {
    const file = await packagedBrowser(packageName, search.cacheRoot);
    return { path: file, source: "package", how: `${packageName}, unpacked to ${file}` };
  } catch (error) {
    reasons.push((error as Error).message);
  }
  throw new NoBrowserError(reasons);
}

/** Flags for headless runs here: root needs --no-sandbox; no GPU, no calls home. */
export const HEADLESS_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function launchFailed(found: FoundBrowser, error: unknown): Error {
  return new Error(
    `The browser found (${found.how}) did not start: ${(error as Error).message}\n` +
      "Set WAYMARK_BROWSER to another Chromium or Chrome to use that one instead.",
    { cause: error },
  );
}

/** Launches the found browser headless (a fresh browser; close it when done). */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const found = await findBrowser();
  try {
    return await chromium.launch({
      ...options,
      executablePath: found.path,
      headless: true,
      args: [...HEADLESS_ARGS, ...(options.args ?? [])],
    });
  } catch (error) {
    throw launchFailed(found, error);
  }
}

/** Launches the found browser headless with a profile directory of its own, as a person's browser has. */
export async function launchPersistentBrowser(
  profileDir: string,
  options: Parameters<typeof chromium.launchPersistentContext>[1] = {},
): Promise<BrowserContext> {
  const found = await findBrowser();
  try {
    return await chromium.launchPersistentContext(profileDir, {
      ...options,
      executablePath: found.path,
      headless: true,
      args: [...HEADLESS_ARGS, ...(options.args ?? [])],
    });
  } catch (error) {
    throw launchFailed(found, error);
  }
}
