// Schedules at run time: declared in the database at start, fired by the scheduler's pass (no timer of their
// own), paused and resumed through engine.schedules.
//
// IMPORTANT: a firing happens once across restarts and processes: its run's key is `name@<due ISO>` and it
// is created in the transaction that moves the schedule's next_due on by compare-and-set (Store.advanceSchedule).

import { ScheduleNotFoundError } from "../errors.js";
import { log } from "../log.js";
import { startRunTrace } from "../observability/tracing.js";
import type { RunRow, ScheduleRow } from "../storage/store.js";
import { emptyBatch, TERMINAL_STATUSES } from "../storage/store.js";
import { type RunConcurrency, runConcurrency } from "./concurrency.js";
import { latestDefinition } from "./definitions.js";
import type { Engine } from "./engine.js";
import { fromJson, toJson } from "./json.js";
import { NONE_GRACE_MS, type ScheduleDef } from "./schedule-spec.js";
import type { ScheduleControl, ScheduleInfo } from "./schedule-types.js";

export type { ScheduleControl, ScheduleInfo } from "./schedule-types.js";

/** Most firings one schedule makes in one pass with catchUp "all" (the rest follow in the next pass). */
const MAX_FIRINGS_PER_PASS = 1000;
/** Most occurrences walked to find the latest missed one. */
const MAX_WALK = 1_000_000;

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The schedules of one engine (its code's, for firing; the database's, for listing). */
export class Schedules implements ScheduleControl {
  /** Earliest next_due of this code's schedules as last read; the pass reads the table again from then. */
  private dueAt = 0;
  private readAt = Number.NEGATIVE_INFINITY;
  private counter = -1;

  constructor(
    private readonly engine: Engine,
    readonly defs: ReadonlyMap<string, ScheduleDef>,
  ) {}

  /** Declares this code's schedules in the database (others become orphaned); at start, by a process that executes. */
  async declare(): Promise<void> {
    // Code without schedules and a table with none live: nothing to write, so no write transaction (most
    // starts; it is part of what a resume costs).
    if (this.defs.size === 0 && (await this.engine.store.schedules()).every((r) => r.orphaned)) return;
    const now = this.engine.clock.now();
    const decls = [...this.defs.values()].map((d) => ({
      name: d.name,
      workflow: d.workflow,
      spec: d.spec,
      nextDue: d.next(now - 1),
    }));
    await this.engine.store.syncSchedules(decls, now);
  }

  /** Fires the schedules that are due; returns when the next one is (ms, or Infinity). Part of the scheduler's pass. */
  async pass(now: number): Promise<number> {
    if (this.defs.size === 0) return Number.POSITIVE_INFINITY;
    // Another process may have moved a schedule (fired, paused, resumed): look again after its commits
    // (as far as the change counter saw them yet), and at least once a second of the clock.
    const counter = await this.engine.store.changeCounter();
    if (now < this.dueAt && now - this.readAt < 1000 && counter === this.counter) return this.dueAt;
    this.readAt = now;
    this.counter = counter;
    let next = Number.POSITIVE_INFINITY;
    for (const row of await this.engine.store.schedules()) {
      const def = this.defs.get(row.name);
      if (!def || row.paused || row.spec !== def.spec) continue;
      const at = await this.fireDue(def, row, now);
      if (at !== null && at < next) next = at;
    }
    this.dueAt = next;
    return next;
  }

  /** Marks the table as changed here (pause, resume): the next pass reads it. */
  touch(): void {
    this.dueAt = 0;
    this.readAt = Number.NEGATIVE_INFINITY;
    this.engine.poke();
  }

  /** Fires one schedule's due firings by its catch-up policy; returns its next due time, or null. */
  private async fireDue(def: ScheduleDef, row: ScheduleRow, now: number): Promise<number | null> {
    const store = this.engine.store;
    if (row.nextDue === null) {
      const next = def.next(now - 1);
      await store.advanceSchedule({ name: def.name, expected: null, next, fired: null, now }, null);
      return next;
    }
    if (row.nextDue > now) return row.nextDue;
    // The due firings: every one for "all" (in order), else only the latest.
    const due: number[] = [];
    let t: number | null = row.nextDue;
    for (let walked = 0; t !== null && t <= now && walked < MAX_WALK; walked++) {
      if (def.catchUp === "all") {
        if (due.length >= MAX_FIRINGS_PER_PASS) break;
        due.push(t);
      } else due[0] = t;
      t = def.next(t);
    }
    if (def.catchUp === "none" && now - due[0]! > NONE_GRACE_MS) due.length = 0; // missed: not run
    let expected: number | null = row.nextDue;
    let lastRunId = row.lastRunId;
    for (let i = 0; i < due.length; i++) {
      const at = due[i]!;
      const next: number | null = i + 1 < due.length ? due[i + 1]! : t;
      const fired = await this.fireOne(def, at, expected, next, lastRunId, now);
      if (fired === false) return null; // another process moved it first: the next pass reads it again
      if (typeof fired === "number") lastRunId = fired;
      expected = next;
    }
    if (due.length === 0) {
      const moved = await store.advanceSchedule(
        { name: def.name, expected, next: t, fired: null, now },
        null,
      );
      if (!moved) return null;
    }
    return t;
  }

  /**
   * One firing: skipped while the previous run is unfinished (overlap "skip"), else the run `name@<due ISO>`.
   * Returns the run's id, true when skipped or failed, false when another process had fired it.
   */
  private async fireOne(
    def: ScheduleDef,
    at: number,
    expected: number | null,
    next: number | null,
    lastRunId: number | null,
    now: number,
  ): Promise<number | boolean> {
    const e = this.engine;
    const advance = (outcome: string) => ({
      name: def.name,
      expected,
      next,
      fired: { due: at, outcome },
      now,
    });
    if (def.overlap === "skip" && lastRunId !== null) {
      const last = await e.store.getRun(lastRunId);
      if (last && !TERMINAL_STATUSES.includes(last.status)) {
        log(
          "info",
          "waymark",
          `schedule "${def.name}" skipped its firing due ${iso(at)}: run ${last.key} is still ${last.status}.`,
        );
        return (await e.store.advanceSchedule(advance("skipped"), null)) !== null;
      }
    }
    const key = `${def.name}@${iso(at)}`;
    let input: string | null;
    try {
      const value = def.input(new Date(at));
      input = value === undefined ? null : toJson(value, `The input of schedule "${def.name}"`);
    } catch (err) {
      const why = `input failed: ${err instanceof Error ? err.message : String(err)}`;
      log("error", "waymark", `schedule "${def.name}" did not fire at ${iso(at)}: its ${why}`);
      return (await e.store.advanceSchedule(advance(why), null)) !== null;
    }
    const wf = latestDefinition(e.defs, def.workflow);
    let concurrency: RunConcurrency | null;
    try {
      concurrency = runConcurrency(wf.concurrency, `${def.workflow}/${key}`, fromJson(input));
    } catch (err) {
      const why = `concurrency key failed: ${err instanceof Error ? err.message : String(err)}`;
      log("error", "waymark", `schedule "${def.name}" did not fire at ${iso(at)}: its ${why}`);
      return (await e.store.advanceSchedule(advance(why), null)) !== null;
    }
    const claim = e.executes && e.active.size < e.maxActive && concurrency === null;
    const started = startRunTrace(def.workflow, key, wf.version, now);
    const result = await e.store.advanceSchedule(advance("started"), {
      ...emptyBatch(now),
      creates: [
        {
          workflow: def.workflow,
          key,
          version: wf.version,
          input,
          initialState: toJson(wf.initialState, `The initial state of workflow "${def.workflow}"`),
          now,
          owner: claim ? e.owner : null,
          leaseUntil: claim ? now + e.leaseMs : null,
          traceContext: started.traceparent,
          concurrency,
        },
      ],
    });
    if (result === null) return false;
    const { run, created } = result.created[0]!;
    if (created) {
      started.created(run.id);
      this.started(run, claim);
    }
    return run.id;
  }

  private started(run: RunRow, claimed: boolean): void {
    const e = this.engine;
    if (claimed) e.begin(run, [], []);
    else e.poke();
    e.events.emit({ type: "run", runId: run.id, workflow: run.workflow, key: run.key, status: run.status });
  }

  // ---- ScheduleControl ------------------------------------------------------------------------

  async list(): Promise<ScheduleInfo[]> {
    this.engine.assertOpen();
    const rows = await this.engine.store.schedules();
    const ids = rows.flatMap((r) => (r.lastRunId === null ? [] : [r.lastRunId]));
    const runs = new Map((ids.length ? await this.engine.store.getRuns(ids) : []).map((r) => [r.id, r]));
    return rows.map((r) => {
      const run = r.lastRunId === null ? undefined : runs.get(r.lastRunId);
      return {
        name: r.name,
        workflow: r.workflow,
        spec: JSON.parse(r.spec) as Record<string, unknown>,
        nextDue: r.paused || r.orphaned ? null : iso(r.nextDue),
        paused: r.paused,
        orphaned: r.orphaned,
        last: r.lastDue === null ? null : { due: iso(r.lastDue)!, outcome: r.lastOutcome ?? "started" },
        lastRun: run ? { id: run.id, key: run.key, status: run.status } : null,
      };
    });
  }

  pause(name: string): Promise<ScheduleInfo> {
    return this.setPaused(name, true);
  }

  resume(name: string): Promise<ScheduleInfo> {
    return this.setPaused(name, false);
  }

  private async setPaused(name: string, paused: boolean): Promise<ScheduleInfo> {
    const e = this.engine;
    e.assertOpen();
    const now = e.clock.now();
    const found = await e.store.setSchedulePaused(String(name), paused, now);
    // Resumed here with its code: its next firing at once (otherwise the next pass of a process with it does).
    const def = this.defs.get(name);
    if (found && !paused && def && e.executes) {
      await e.store.advanceSchedule(
        { name, expected: null, next: def.next(now - 1), fired: null, now },
        null,
      );
    }
    const list = await this.list();
    if (!found)
      throw new ScheduleNotFoundError(
        String(name),
        list.map((s) => s.name),
      );
    this.touch();
    return list.find((s) => s.name === name)!;
  }
}
