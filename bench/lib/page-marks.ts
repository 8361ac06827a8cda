// Marks in a page's own clock, for the bench scripts that time the inspector in headless Chromium
// (bench/inspector.ts, scenario g): an init script notes (performance.now(), ms since navigation) when an
// element first matches a selector and the frame after it; the resource timings say which API call the
// page waited on.

import type { Browser, Page } from "playwright-core";

/**
 * An init script (runs before the page's own scripts) that marks `name` when `selector` first matches, and
 * `name:paint` at the frame after. `window.__bench.mark(name)` lets a further init script add marks of its own.
 */
export function markProbe(selectors: Record<string, string>): string {
  return `(() => {
  const marks = {};
  const selectors = ${JSON.stringify(selectors)};
  const mark = (name) => {
    if (name in marks) return;
    marks[name] = performance.now();
    requestAnimationFrame(() => { marks[name + ":paint"] = performance.now(); });
  };
  window.__bench = { marks, mark, want: null };
  new MutationObserver(() => {
    for (const [name, selector] of Object.entries(selectors)) {
      if (!(name in marks) && document.querySelector(selector)) mark(name);
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();`;
}

/** Waits (up to `timeoutMs`) until the probe has noted `name`, and returns what it noted (ms). */
export async function markOf(page: Page, name: string, timeoutMs = 30_000): Promise<number> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const at = await page.evaluate(`window.__bench && window.__bench.marks[${JSON.stringify(name)}]`);
    if (typeof at === "number") return at;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the page never showed ${name}`);
}

/** When the page asked for (`startTime`) or had the last byte of (`responseEnd`) an API path ending so. */
export async function answered(page: Page, suffix: string, when = "responseEnd"): Promise<number> {
  const at = await page.evaluate(
    `Math.max(...performance.getEntriesByType("resource").filter((r) => new URL(r.name).pathname.endsWith(${JSON.stringify(suffix)})).map((r) => r.${when}))`,
  );
  if (typeof at !== "number" || !Number.isFinite(at)) throw new Error(`the page never read ${suffix}`);
  return at;
}

/** One API call of the page: its path after /api (query left out), when it was asked and answered (ms). */
export interface ApiCall {
  path: string;
  start: number;
  end: number;
}

/** The page's finished API calls so far (an open event stream is not among them), in the order asked. */
export async function apiCalls(page: Page): Promise<ApiCall[]> {
  return (await page.evaluate(
    `performance.getEntriesByType("resource").map((r) => [new URL(r.name).pathname, r.startTime, r.responseEnd]).filter(([p]) => p.includes("/api/")).map(([p, start, end]) => ({ path: p.slice(p.indexOf("/api/") + 4), start, end }))`,
  )) as ApiCall[];
}

/** First paint of `url` in a fresh context (no cache): navigation to the frame after `selector` matched. */
export async function firstPaint(
  browser: Browser,
  url: string,
  selector: string,
): Promise<{ paint: number; calls: ApiCall[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    await context.addInitScript(markProbe({ shown: selector }));
    const page = await context.newPage();
    await page.goto(url);
    const paint = await markOf(page, "shown:paint");
    return { paint, calls: (await apiCalls(page)).filter((c) => c.start < paint) };
  } finally {
    await context.close();
  }
}
