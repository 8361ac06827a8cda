// The pruner: deletes finished runs older than their retention, part of the scheduler's pass (no timer of its
// own), in small batches: at most one transaction of PRUNE_BATCH runs per pass, and while a backlog remains the
// next batch follows after BACKLOG_PAUSE_MS of the clock, so other writers get the database in between.
// Also `pruneOlderThan`, what `waymark prune` does by hand.

import { InvalidInputError } from "../errors.js";
import type { PrunedCount, RetentionRule, RunCount, Store } from "../storage/store.js";
import { toMs } from "./duration.js";
import type { Engine } from "./engine.js";
import {
  effectiveRetention,
  type PruneOptions,
  type PruneResult,
  parseRetention,
  RETENTION_STATUSES,
  type Retention,
  type RetentionStatus,
  retentionRules,
} from "./retention.js";

/** Runs deleted per transaction. */
export const PRUNE_BATCH = 100;
/** Pause between batches while expired runs remain (ms of the engine's clock). */
export const BACKLOG_PAUSE_MS = 100;
/** How often the pruner looks for newly expired runs when none remained (ms of the engine's clock). */
export const PRUNE_INTERVAL_MS = 60_000;

/** The retention of one engine's workflows and when its next batch is due. */
export class Pruner {
  private readonly retention: ReturnType<typeof effectiveRetention>;
  private dueAt = 0;

  constructor(
    private readonly engine: Engine,
    engineWide: Retention | undefined,
  ) {
    const wide = engineWide === undefined ? undefined : parseRetention(engineWide, "retention");
    if (wide && "problem" in wide) throw new InvalidInputError(wide.problem as string);
    const own = [...engine.defs].map(([name, versions]) => {
      // The latest version's setting governs every run of the workflow, older versions' runs too.
      const latest = [...versions.values()].reduce((a, b) => (b.version > a.version ? b : a));
      return [name, latest.retention] as [string, typeof latest.retention];
    });
    this.retention = effectiveRetention(own, wide as Exclude<typeof wide, { problem: string }>);
  }

  /**
   * A run just finished: when its retention expires before the planned pass, the pass comes forward (a pass
   * plans only from runs finished before it, so a short retention would otherwise wait for PRUNE_INTERVAL_MS).
   */
  finished(workflow: string, status: string): void {
    const ms = this.retention.get(workflow)?.[status as RetentionStatus];
    if (ms === null || ms === undefined) return;
    const at = this.engine.clock.now() + ms + 1;
    if (at >= this.dueAt) return;
    this.dueAt = at;
    this.engine.scheduler.arm(at);
  }

  /** True when some workflow of this engine keeps its finished runs for a limited time. */
  get active(): boolean {
    for (const byStatus of this.retention.values()) {
      if (RETENTION_STATUSES.some((s) => byStatus[s] !== null)) return true;
    }
    return false;
  }

  /** Deletes one batch of expired runs if one is due; returns when the next batch is due (or Infinity). */
  async pass(now: number): Promise<number> {
    if (!this.active) return Number.POSITIVE_INFINITY;
    if (now < this.dueAt) return this.dueAt;
    try {
      return await this.pruneBatch(now);
    } catch (err) {
      // The rest of the pass goes on; pruning is tried again a second later.
      this.engine.reportStorageError(err);
      return (this.dueAt = now + 1000);
    }
  }

  private async pruneBatch(now: number): Promise<number> {
    const deleted = await this.engine.store.pruneRuns(retentionRules(this.retention, now), PRUNE_BATCH);
    this.report(deleted);
    if (total(deleted) >= PRUNE_BATCH) return (this.dueAt = now + BACKLOG_PAUSE_MS);
    // None left: the next pass is when the next finished run expires (a run finishing later expires later
    // still), and at least every PRUNE_INTERVAL_MS (a kept child expires when its parent ends, not by time).
    let next = now + PRUNE_INTERVAL_MS;
    const rules = retentionRules(this.retention, now);
    const firsts = await this.engine.store.nextToExpire(rules);
    for (const [i, finished] of firsts.entries()) {
      if (finished === null) continue;
      const at = finished + (now - rules[i]!.finishedBefore) + 1;
      if (at < next) next = at;
    }
    return (this.dueAt = next);
  }

  /** Counts deleted runs in the metrics and tells listeners (a "pruned" event), when there are any. */
  report(deleted: PrunedCount[]): void {
    const count = total(deleted);
    if (count === 0) return;
    this.engine.metrics.pruned(deleted);
    this.engine.events.emit({ type: "pruned", count, runs: deleted });
  }
}

/**
 * Deletes (or counts) finished runs older than `olderThan` across the database, batch by batch (one short
 * transaction each), whatever their workflows' retention. Runs of unfinished parents and runs with a pending
 * request are kept (see Store.countExpired).
 */
export async function pruneOlderThan(store: Store, now: number, options: PruneOptions): Promise<PruneResult> {
  const age = toMs(options.olderThan, "olderThan");
  const statuses = options.status ?? [...RETENTION_STATUSES];
  for (const s of statuses) {
    if (!(RETENTION_STATUSES as readonly string[]).includes(s)) {
      throw new InvalidInputError(
        `Cannot prune runs of status "${s}": only finished runs are pruned; use completed, failed or cancelled.`,
        { status: s },
      );
    }
  }
  const rules = rulesFor(await store.countRuns(), statuses, options.workflows, now - age);
  if (options.dryRun) {
    const runs = await store.countExpired(rules);
    return { dryRun: true, total: total(runs), runs };
  }
  const sums = new Map<string, PrunedCount>();
  for (;;) {
    const deleted = await store.pruneRuns(rules, PRUNE_BATCH);
    for (const d of deleted) {
      const k = `${d.workflow}\u0000${d.status}`;
      const sum = sums.get(k);
      if (sum) sum.count += d.count;
      else sums.set(k, { ...d });
    }
    if (total(deleted) < PRUNE_BATCH) break;
  }
  const runs = [...sums.values()];
  return { dryRun: false, total: total(runs), runs };
}

/** One rule per workflow and status that has runs (from the run counts). */
function rulesFor(
  counts: RunCount[],
  statuses: RetentionStatus[],
  workflows: string[] | undefined,
  finishedBefore: number,
): RetentionRule[] {
  const seen = new Set<string>();
  const rules: RetentionRule[] = [];
  for (const c of counts) {
    const status = c.status as RetentionStatus;
    if (!statuses.includes(status) || (workflows && !workflows.includes(c.workflow))) continue;
    const k = `${c.workflow}\u0000${status}`;
    if (seen.has(k)) continue;
    seen.add(k);
    rules.push({ workflow: c.workflow, status, finishedBefore });
  }
  return rules.sort((a, b) => (a.workflow < b.workflow ? -1 : a.workflow > b.workflow ? 1 : 0));
}

function total(counts: PrunedCount[]): number {
  return counts.reduce((n, c) => n + c.count, 0);
}
