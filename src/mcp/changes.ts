// Change notices for subscriptions, shared by every session on one engine: a run's own events in this
// process, and a check of the watched runs when another process changed the database.
//
// IMPORTANT: a run executing in another process (attach mode) emits no events here; the engine reports
// only that the database changed ("external"). Then the watched runs executing now (status running) are
// read whole and compared at once; every watched run's row (one query per 1,000 runs) is compared at most
// once a second, and only a run whose row moved (status, update time, owner, lease, wake-up) is read whole.
// Only the subscribers of a run that changed are called. So a change costs the runs executing and the
// runs that changed, plus at most one row per watched run a second, not a history read per subscription.

import { createHash } from "node:crypto";
import type { WaymarkEngine } from "../engine/api.js";
import type { EngineEvent } from "../engine/events.js";

import { log } from "../log.js";
import type { RunRow } from "../storage/store.js";

type Listener = () => void;

const feeds = new WeakMap<WaymarkEngine, ChangeFeed>();

/** The change feed of an engine (one per engine, shared by all its MCP sessions). */
export function changeFeed(engine: WaymarkEngine): ChangeFeed {
  let feed = feeds.get(engine);
  if (!feed) feeds.set(engine, (feed = new ChangeFeed(engine)));
  return feed;
}

const label = (workflow: string, key: string) => `${workflow}\u0000${key}`;

/** One watched run: its subscribers and what they last saw of it. */
interface Watched {
  id: number;
  listeners: Set<Listener>;
  /** The row's fields that move with every change of an idle run (see summaryOf). */
  summary: string;
  /** The whole run as a client sees it (row and entries). */
  fingerprint: string;
}

/** What changes in a run's row whenever a run that no process holds changes (claims, cancels, wake-ups). */
function summaryOf(run: RunRow | undefined): string {
  return run ? [run.status, run.updatedAt, run.owner, run.leaseUntil, run.wakeAt].join("|") : "none";
}

const BATCH = 1000;
/** The shortest time between two comparisons of every watched run's row. */
const SWEEP_MS = 1000;

export class ChangeFeed {
  private readonly runs = new Map<string, Watched>();
  private readonly any = new Set<Listener>();
  private anyFingerprint = "";
  private off: (() => void) | null = null;
  private checking: Promise<void> | null = null;
  private again = false;
  /** When every watched run's row was last compared (performance.now()), and the timer of the next. */
  private sweptAt = -Infinity;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Watched runs that were executing at the last look. */
  private live = new Set<Watched>();

  constructor(private readonly engine: WaymarkEngine) {}

  /** Calls `fn` on every change of one run (step recorded, status changed, state changed). */
  async watchRun(workflow: string, key: string, fn: Listener): Promise<() => void> {
    const id = label(workflow, key);
    if (!this.runs.has(id)) {
      const run = await this.engine.findRun(workflow, key);
      if (!run) throw new Error(`There is no run "${workflow}/${key}" to watch.`);
      const fingerprint = await this.fingerprint(run);
      // Another subscribe may have got here first while this one read.
      if (!this.runs.has(id))
        this.runs.set(id, { id: run.id, listeners: new Set(), summary: summaryOf(run), fingerprint });
    }
    const w = this.runs.get(id)!;
    w.listeners.add(fn);
    this.listen();
    return () => {
      w.listeners.delete(fn);
      if (w.listeners.size === 0 && this.runs.get(id) === w) this.runs.delete(id);
      this.maybeStop();
    };
  }

  /** Calls `fn` whenever a run is created or changes status (the workflows overview changed). */
  async watchAll(fn: Listener): Promise<() => void> {
    if (this.any.size === 0) this.anyFingerprint = await this.countsFingerprint();
    this.any.add(fn);
    this.listen();
    return () => {
      this.any.delete(fn);
      this.maybeStop();
    };
  }

  private listen(): void {
    if (!this.off) this.off = this.engine.on((e) => this.onEvent(e));
  }

  private maybeStop(): void {
    if (this.runs.size === 0 && this.any.size === 0 && this.off) {
      this.off();
      this.off = null;
    }
  }

  private onEvent(e: EngineEvent): void {
    if (e.type === "external") {
      void this.checkAll();
      return;
    }
    if (e.type !== "run" && e.type !== "entry") return;
    const watched = this.runs.get(label(e.workflow, e.key));
    if (watched) for (const fn of [...watched.listeners]) call(fn);
    if (e.type === "run") for (const fn of [...this.any]) call(fn);
  }

  /**
   * After another process wrote: finds the watched runs that changed and notifies their subscribers. At
   * once for runs executing now (status running: only those record entries) and those that just stopped;
   * every other watched run by its row, at most once a second (a claim, a cancel, a wake-up moves it).
   */
  private checkAll(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.again = false;
        await this.checkRunning();
        const wait = this.sweptAt + SWEEP_MS - performance.now();
        if (wait <= 0) {
          this.sweptAt = performance.now();
          await this.check([...this.runs.values()]);
        } else if (!this.sweepTimer) {
          // The writes since the last sweep are looked at once it is due, even if no other write follows.
          this.sweepTimer = setTimeout(() => {
            this.sweepTimer = null;
            if (!this.engine.closed && this.runs.size) void this.checkAll();
          }, wait);
          this.sweepTimer.unref();
        }
        if (this.any.size) {
          const fp = await this.countsFingerprint().catch(() => this.anyFingerprint);
          if (fp !== this.anyFingerprint) {
            this.anyFingerprint = fp;
            for (const fn of [...this.any]) call(fn);
          }
        }
      } while (this.again && !this.engine.closed);
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /** The watched runs executing now, and those that were at the last look: compared at once. */
  private async checkRunning(): Promise<void> {
    const now = new Set<Watched>();
    for (let cursor: string | undefined; ; ) {
      const page = await this.engine
        .listRuns({ status: "running", limit: 1000, ...(cursor ? { cursor } : {}) })
        .catch(() => null);
      if (!page) return;
      for (const r of page.runs) {
        const w = this.runs.get(label(r.workflow, r.key));
        if (w) now.add(w);
      }
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    const look = [...new Set([...now, ...this.live])];
    this.live = now;
    await this.check(look);
  }

  /** Compares the given watched runs with their rows, read in batches. */
  private async check(watched: Watched[]): Promise<void> {
    for (let i = 0; i < watched.length; i += BATCH) {
      const chunk = watched.slice(i, i + BATCH);
      const rows = await this.engine.getRuns(chunk.map((w) => w.id)).catch(() => null);
      if (!rows) continue;
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const w of chunk) await this.compare(w, byId.get(w.id));
    }
  }

  /** Reads a watched run whole only when its row moved or a process holds it; calls its subscribers if it changed. */
  private async compare(w: Watched, run: RunRow | undefined): Promise<void> {
    const summary = summaryOf(run);
    if (summary === w.summary && !run?.owner) return;
    w.summary = summary;
    const fp = run ? await this.fingerprint(run).catch(() => null) : "none";
    if (fp === null || fp === w.fingerprint) return;
    w.fingerprint = fp;
    for (const fn of [...w.listeners]) call(fn);
  }

  /** What a client sees of a run (not its lease, which moves on its own). */
  private async fingerprint(run: RunRow): Promise<string> {
    const h = createHash("sha1");
    h.update(
      [run.status, run.updatedAt, run.state, run.output, run.error, run.waiting, run.wakeAt].join("\u0001"),
    );
    // Every entry, a page at a time (history pages hold at most 10,000).
    for (let after = 0; ; ) {
      const page = await this.engine.history(run.id, { after, limit: 10_000 });
      for (const e of page) {
        h.update(`${e.id}|${e.status}|${e.endedAt}|${e.attempts?.length ?? 0}|${e.stateChange ? 1 : 0}\n`);
      }
      if (page.length < 10_000) break;
      after = page.at(-1)!.id;
    }
    return h.digest("hex");
  }

  private async countsFingerprint(): Promise<string> {
    return JSON.stringify((await this.engine.listWorkflows()).map((w) => [w.name, w.runs]));
  }
}

function call(fn: Listener): void {
  try {
    fn();
  } catch (err) {
    log(
      "error",
      "waymark mcp",
      `a change listener threw: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
