// Change notices for subscriptions, shared by every session on one engine: a run's own events in this
// process, and a fingerprint check of watched runs when another process changed the database.
//
// IMPORTANT: a run executing in another process (attach mode) emits no events here; the engine reports
// only that the database changed ("external"), so watched runs are re-read and compared then.

import { createHash } from "node:crypto";
import type { WaymarkEngine } from "../engine/api.js";
import type { EngineEvent } from "../engine/events.js";

type Listener = () => void;

const feeds = new WeakMap<WaymarkEngine, ChangeFeed>();

/** The change feed of an engine (one per engine, shared by all its MCP sessions). */
export function changeFeed(engine: WaymarkEngine): ChangeFeed {
  let feed = feeds.get(engine);
  if (!feed) feeds.set(engine, (feed = new ChangeFeed(engine)));
  return feed;
}

const label = (workflow: string, key: string) => `${workflow}\u0000${key}`;

export class ChangeFeed {
  private readonly runs = new Map<string, Set<Listener>>();
  private readonly any = new Set<Listener>();
  private readonly fingerprints = new Map<string, string>();
  private anyFingerprint = "";
  private off: (() => void) | null = null;
  private checking: Promise<void> | null = null;
  private again = false;

  constructor(private readonly engine: WaymarkEngine) {}

  /** Calls `fn` on every change of one run (step recorded, status changed, state changed). */
  async watchRun(workflow: string, key: string, fn: Listener): Promise<() => void> {
    const id = label(workflow, key);
    let set = this.runs.get(id);
    if (!set) {
      this.runs.set(id, (set = new Set()));
      this.fingerprints.set(id, await this.fingerprint(workflow, key));
    }
    set.add(fn);
    this.listen();
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.runs.get(id) === set) {
        this.runs.delete(id);
        this.fingerprints.delete(id);
      }
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
    const set = this.runs.get(label(e.workflow, e.key));
    if (set) for (const fn of [...set]) call(fn);
    if (e.type === "run") for (const fn of [...this.any]) call(fn);
  }

  /** Re-reads every watched run after another process wrote, and notifies those that changed. */
  private checkAll(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.again = false;
        for (const [id, set] of [...this.runs]) {
          const [workflow, key] = id.split("\u0000") as [string, string];
          const fp = await this.fingerprint(workflow, key).catch(() => null);
          if (fp === null || fp === this.fingerprints.get(id)) continue;
          this.fingerprints.set(id, fp);
          for (const fn of [...set]) call(fn);
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

  /** What a client sees of a run (not its lease, which moves on its own). */
  private async fingerprint(workflow: string, key: string): Promise<string> {
    const run = await this.engine.findRun(workflow, key);
    if (!run) return "none";
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
    process.stderr.write(
      `waymark mcp: a change listener threw: ${err instanceof Error ? err.message : String(err)}\n`,
    );
  }
}
