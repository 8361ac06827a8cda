// `npm run bench:inspector`: the inspector's page on a 10,000-step run in headless Chromium, this tree's
// front end beside an earlier version of it (the peer) served by the same server in the same run.
//
//   npm run bench:inspector                        5 samples each, the peer from the default commit below
//   npm run bench:inspector -- --runs 9            samples per figure
//   npm run bench:inspector -- --peer <commit>     the peer's front end: src/inspector/static at <commit>
//   npm run bench:inspector -- --steps 2000        another history length
//
// Figures, each the median over fresh browser contexts (no cache), in the page's own clock:
//   first paint   from navigation to the frame after the timeline's first row is in the document
//   selection     from a click on an entry to the frame after the entry panel shows it (its fetch included)
// Ratios are this tree's figure over the peer's: below 1 is faster.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import type { Engine } from "../src/engine/engine.js";
import { setup, workflow } from "../src/index.js";
import { launchBrowser } from "../test/browser.js";
import { serveInspector } from "../test/inspector/helpers.js";
import { Closer } from "../test/mcp/helpers.js";
import { median, ROOT } from "./lib/common.js";
import { answered, markOf, markProbe } from "./lib/page-marks.js";

/** The last commit whose front end was one hand-diffed closure (before the Preact panels). */
const DEFAULT_PEER = "e9ee8d3";

interface Args {
  runs: number;
  peer: string;
  steps: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 5, peer: DEFAULT_PEER, steps: 10_000 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? "";
    if (flag === "--runs") args.runs = Number(value());
    else if (flag === "--peer") args.peer = value();
    else if (flag === "--steps") args.steps = Number(value());
    else throw new Error(`bench:inspector: unknown option ${argv[i]} (see bench/inspector.ts)`);
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error("--runs takes a whole number from 1");
  if (!Number.isInteger(args.steps) || args.steps < 30)
    throw new Error("--steps takes a whole number from 30");
  return args;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The peer's page files, as they were at `commit`, in a directory of their own. */
function peerPage(commit: string, dir: string): string {
  const files = execFileSync("git", ["ls-tree", "--name-only", `${commit}:src/inspector/static`], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
  fs.mkdirSync(dir, { recursive: true });
  for (const name of files) {
    const body = execFileSync("git", ["show", `${commit}:src/inspector/static/${name}`], { cwd: ROOT });
    fs.writeFileSync(path.join(dir, name), body);
  }
  return dir;
}

/** The timeline's first row (marks "timeline" and "timeline:paint"). */
const PROBE = markProbe({ timeline: '.tl-main[data-path="s0"]' });

/** Beside PROBE: notes a click on an entry, and when the entry panel shows that entry. */
const ENTRY_PROBE = `(() => {
  const bench = window.__bench;
  new MutationObserver(() => {
    const shown = document.querySelector(".entry .entry-title .mono");
    if (bench.want && shown && shown.textContent === bench.want) bench.mark("entry:" + bench.want);
  }).observe(document, { subtree: true, childList: true, characterData: true });
  document.addEventListener("click", (ev) => {
    const row = ev.target.closest && ev.target.closest(".tl-main");
    if (!row) return;
    bench.want = row.dataset.path;
    bench.marks["click:" + row.dataset.path] = performance.now();
  }, true);
})();`;

/** What one sample measures (ms). */
interface Sample {
  /** Navigation to the page's first API call: its scripts loaded and running. */
  scripts: number;
  /** Navigation to the first timeline row drawn. */
  paint: number;
  /** The last byte of the history's answer to that frame: the page's own work. */
  paintAfterData: number;
  /** A click on an entry to the frame that shows it whole. */
  select: number;
  /** The part of it that is not the entry's answer on the way: the page's own work. */
  selectDrawing: number;
}

/** One sample: a fresh context opens the run, then one entry is chosen. */
async function sample(browser: Browser, url: string): Promise<Sample> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    await context.addInitScript(PROBE);
    await context.addInitScript(ENTRY_PROBE);
    const page = await context.newPage();
    await page.goto(url);
    const paint = await markOf(page, "timeline:paint");
    const history = await answered(page, "/history");
    const scripts = await answered(page, "/api/meta", "startTime");
    const target = page.locator('.tl-main[data-path="s20"]');
    await target.click();
    const clicked = await markOf(page, "click:s20");
    const shown = await markOf(page, "entry:s20:paint");
    const fetches = (await page.evaluate(
      `performance.getEntriesByType("resource").filter((r) => new URL(r.name).pathname.includes("/entries/")).map((r) => [r.startTime, r.responseEnd])`,
    )) as Array<[number, number]>;
    const fetch = fetches.at(-1);
    if (!fetch) throw new Error("the page never read the entry");
    return {
      scripts,
      paint,
      paintAfterData: paint - history,
      select: shown - clicked,
      selectDrawing: shown - clicked - (fetch[1] - fetch[0]),
    };
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const closer = new Closer();
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-bench-inspector-"));
  closer.add(() => fs.rmSync(temp, { recursive: true, force: true }));
  try {
    const long = workflow({
      run: async (ctx, input: { n: number }) => {
        for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, () => i);
      },
    });
    const engine = (await setup({ use: { long } }).start({
      database: path.join(temp, "long.db"),
    })) as unknown as Engine;
    closer.add(() => engine.close());
    log(`bench:inspector: writing a ${args.steps.toLocaleString("en")}-step run…`);
    const run = await engine.getOrCreate("long", "l1", { n: args.steps });
    while ((await run.status()) !== "completed") await new Promise((r) => setTimeout(r, 50));

    const current = await serveInspector(closer, engine);
    const peer = await serveInspector(closer, engine, {
      inspector: { pageDir: peerPage(args.peer, path.join(temp, "peer-page")) },
    });
    const browser = await launchBrowser();
    closer.add(() => browser.close());

    const figures = { current: [] as Sample[], peer: [] as Sample[] };
    // One warm-up each (the server's first history read, the browser's first start), then alternate.
    await sample(browser, `${current.base}/#/run/long/l1`);
    await sample(browser, `${peer.base}/#/run/long/l1`);
    for (let i = 0; i < args.runs; i++) {
      for (const [who, handle] of [
        ["peer", peer],
        ["current", current],
      ] as const) {
        const s = await sample(browser, `${handle.base}/#/run/long/l1`);
        figures[who].push(s);
        log(
          `  ${who.padEnd(7)} #${i + 1}: first paint ${s.paint.toFixed(0)} ms (scripts ${s.scripts.toFixed(0)}, ${s.paintAfterData.toFixed(0)} after the data), selection ${s.select.toFixed(0)} ms (${s.selectDrawing.toFixed(0)} drawing)`,
        );
      }
    }
    const row = (what: string, key: keyof Sample) => {
      const p = median(figures.peer.map((s) => s[key]));
      const c = median(figures.current.map((s) => s[key]));
      return `| ${what} | ${p.toFixed(0)} ms | ${c.toFixed(0)} ms | ×${(c / p).toFixed(2)} |`;
    };
    const out = [
      `Inspector on a ${args.steps.toLocaleString("en")}-step run, headless Chromium, median of ${args.runs} (peer: front end at ${args.peer}).`,
      "",
      "| figure | peer | this tree | ratio |",
      "|---|---|---|---|",
      row("first paint: navigation → first timeline row drawn", "paint"),
      row("  of which loading the page's scripts (navigation → first API call)", "scripts"),
      row("  of which the page's work: history answered → drawn", "paintAfterData"),
      row("entry selection: click → entry panel drawn", "select"),
      row("  of which the page's work (the entry's fetch left out)", "selectDrawing"),
    ];
    process.stdout.write(`${out.join("\n")}\n`);
  } finally {
    await closer.closeAll();
  }
}

await main();
