// Bulk replay and cancel: a dry run selects the runs and pins them in a stored plan; a real call acts on
// that plan's runs only, in batches, recording each run's outcome as it goes.
//
// IMPORTANT: a plan never grows: a run that matches the selector after the dry run is not in it. Each run's
// outcome is written once (Store.recordPlanOutcomes), so a second call, after a crash or not, carries on
// with the pending runs and a finished plan does nothing more. A call that stopped after acting but before
// recording leaves runs pending that it already replayed/cancelled: the next call knows them by the plan
// token in their replay marker's requestedBy / cancel reason and counts them done.

import { randomBytes } from "node:crypto";
import { InvalidInputError, PlanError } from "../errors.js";
import type { PlanOutcome, PlanRow, RunQuery, RunRow } from "../storage/store.js";
import type { AuditWrite } from "./audit-types.js";
import { bySignature, checkSelector, judge, MAX_PLAN_RUNS, matches, PLAN_TTL_MS } from "./bulk-plan.js";
import type {
  BulkControl,
  BulkCounts,
  BulkPlanInfo,
  BulkPreview,
  BulkProgress,
  BulkRefusal,
  BulkRequest,
  BulkResult,
  BulkSample,
  BulkSelector,
  PlanAction,
} from "./bulk-types.js";
import type { Engine } from "./engine.js";
import { REPLAY_SCOPE } from "./replay-plan.js";
import type { ReplayPlan } from "./replay-types.js";
import { tagsByRun } from "./tags.js";

export type * from "./bulk-types.js";

/** Runs acted on per batch unless asked otherwise (each batch's outcomes are stored before the next). */
const DEFAULT_BATCH = 25;
const SAMPLES = 10;
const LISTED_REFUSALS = 50;

const label = (r: RunRow) => `${r.workflow}/${r.key}`;

/** Outcomes as stored, counted in the buckets answers use. */
function countsOf(rows: ReadonlyArray<{ outcome: string | null; count: number }>): BulkCounts & {
  pending: number;
} {
  const c = { done: 0, requested: 0, refused: 0, skipped: 0, pending: 0 };
  for (const r of rows) {
    if (r.outcome === null) c.pending += r.count;
    else if (r.outcome === "replayed" || r.outcome === "cancelled") c.done += r.count;
    else if (r.outcome === "requested") c.requested += r.count;
    else if (r.outcome === "refused") c.refused += r.count;
    else c.skipped += r.count;
  }
  return c;
}

const doneOutcome = (action: PlanAction) => (action === "replay" ? "replayed" : "cancelled");

/**
 * Whether this plan already replayed or cancelled the run (its requestedBy names the plan): true when a
 * call acted on it and stopped before recording the outcome. Reads the replay markers or the cancel reason.
 */
async function actedBy(engine: Engine, info: BulkPlanInfo, row: RunRow): Promise<boolean> {
  const mark = `(plan ${info.token})`;
  if (info.action === "cancel") {
    if (row.status !== "cancelled" || !row.error) return false;
    const by = (JSON.parse(row.error) as { details?: { by?: unknown } }).details?.by;
    return typeof by === "string" && by.endsWith(mark);
  }
  for (let after = 0; ; ) {
    const page = await engine.store.listEntries(row.id, after, 1000);
    for (const e of page) {
      if (e.scope !== REPLAY_SCOPE || !e.detail) continue;
      const by = (JSON.parse(e.detail) as { requestedBy?: unknown }).requestedBy;
      if (typeof by === "string" && by.endsWith(mark)) return true;
    }
    if (page.length < 1000) return false;
    after = page.at(-1)!.seq;
  }
}

/** The bulk actions of one engine. */
export class Bulk implements BulkControl {
  /** Plans being carried out by a call in this process (a second call at once is refused). */
  private readonly running = new Set<string>();

  constructor(private readonly engine: Engine) {}

  /** The runs a selector matches, newest first; refuses more than MAX_PLAN_RUNS. */
  private async select(input: BulkSelector): Promise<RunRow[]> {
    const selector = checkSelector(input);
    const store = this.engine.store;
    if (selector.keys) {
      const found: RunRow[] = [];
      for (const key of new Set(selector.keys)) {
        const row = await store.findRun(selector.workflow!, key);
        if (row) found.push(row);
      }
      const tags = selector.tags ? tagsByRun(await store.runTags(found.map((r) => r.id))) : new Map();
      return found.filter((row) => matches(selector, row, tags.get(row.id)));
    }
    const query: RunQuery = { limit: 1000 };
    if (selector.workflow !== undefined) query.workflow = selector.workflow;
    if (selector.status !== undefined) query.status = selector.status;
    if (selector.signature !== undefined) query.failureSignature = selector.signature;
    if (selector.createdAfter !== undefined) query.createdAfter = selector.createdAfter;
    if (selector.createdBefore !== undefined) query.createdBefore = selector.createdBefore;
    if (selector.tags !== undefined) query.tags = selector.tags;
    const out: RunRow[] = [];
    for (;;) {
      const page = await store.listRuns(query);
      out.push(...page);
      if (out.length > MAX_PLAN_RUNS)
        throw new InvalidInputError(
          `The selector matches more than ${MAX_PLAN_RUNS.toLocaleString("en")} runs; one plan takes at most that many. Narrow it with a workflow, a status, tags or a time window (createdAfter/createdBefore) and make several plans.`,
        );
      const last = page.at(-1);
      if (page.length < query.limit || !last) return out;
      query.before = { createdAt: last.createdAt, id: last.id };
    }
  }

  async preview(request: BulkRequest): Promise<BulkPreview> {
    this.engine.assertOpen();
    if (request.action !== "replay" && request.action !== "cancel")
      throw new InvalidInputError(
        `Unknown bulk action ${JSON.stringify(request.action)}: use "replay" or "cancel".`,
      );
    const rows = await this.select(request.selector);
    const refusedAll: BulkRefusal[] = [];
    const eligible = new Set<number>();
    for (const r of rows) {
      const v = judge(request.action, r);
      if (v.act) eligible.add(r.id);
      else refusedAll.push({ run: label(r), status: r.status, reason: v.reason });
    }
    const samples: BulkSample[] = [];
    for (const r of rows.filter((row) => eligible.has(row.id)).slice(0, SAMPLES))
      samples.push(await this.sample(request, r));
    const now = this.engine.clock.now();
    const token = `plan_${randomBytes(12).toString("base64url")}`;
    const plan: PlanRow = {
      token,
      action: request.action,
      spec: JSON.stringify(request),
      createdAt: now,
      expiresAt: now + PLAN_TTL_MS,
      total: rows.length,
    };
    await this.engine.store.createPlan(
      plan,
      rows.map((r) => r.id),
    );
    const groups = bySignature(rows, eligible);
    const patterns = new Map<string, string>();
    for (const g of groups.slice(0, 10)) {
      if (g.signature === null) continue;
      const list = await this.engine.listFailures({ since: 0, signature: g.signature, limit: 1 });
      patterns.set(g.signature, list.failures[0]?.pattern ?? "");
    }
    return {
      action: request.action,
      token,
      expiresAt: plan.expiresAt,
      matched: rows.length,
      eligible: eligible.size,
      bySignature: groups.map((g) => ({ ...g, pattern: (g.signature && patterns.get(g.signature)) || "" })),
      samples,
      refused: refusedAll.slice(0, LISTED_REFUSALS),
      refusedCount: refusedAll.length,
    };
  }

  /** What acting on one run would do: a replay's dry run in short, or why it is refused. */
  private async sample(request: BulkRequest, run: RunRow): Promise<BulkSample> {
    if (request.action === "cancel") return { run: label(run), status: run.status };
    try {
      const p = (await this.engine.replay(run.id, {
        dryRun: true,
        ...(request.version !== undefined ? { version: request.version } : {}),
      })) as ReplayPlan;
      return {
        run: label(run),
        status: run.status,
        replay: {
          from: p.from?.path ?? null,
          discard: p.discard.slice(0, 8).map((d) => d.path),
          discardCount: p.discard.length,
          rerun: p.rerun.slice(0, 8).map((s) => s.path),
          version: p.version,
          checkedAgainstCode: p.checkedAgainstCode,
        },
      };
    } catch (err) {
      const code = (err as { code?: string }).code;
      return {
        run: label(run),
        status: run.status,
        refused: `${code ? `${code}: ` : ""}${(err as Error).message}`,
      };
    }
  }

  async plan(token: string): Promise<BulkPlanInfo> {
    this.engine.assertOpen();
    const row = typeof token === "string" ? await this.engine.store.getPlan(token) : undefined;
    if (!row)
      throw new PlanError(
        "PLAN_NOT_FOUND",
        `There is no plan ${JSON.stringify(token)} in ${this.engine.database()}. Make one with a dry run (replay_runs or cancel_runs without plan, or waymark replay/cancel --dry-run) and pass the token it answers.`,
        String(token),
      );
    return {
      action: row.action,
      token: row.token,
      request: JSON.parse(row.spec) as BulkRequest,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      total: row.total,
      progress: countsOf(await this.engine.store.planProgress(token)),
    };
  }

  async apply(
    token: string,
    options: {
      action?: PlanAction;
      batchSize?: number;
      by?: string;
      onProgress?: (p: BulkProgress) => Promise<void> | void;
      signal?: AbortSignal;
      audit?: Omit<AuditWrite, "run" | "args">;
    } = {},
  ): Promise<BulkResult> {
    const info = await this.plan(token);
    const verb = info.action === "replay" ? "replay_runs" : "cancel_runs";
    if (options.action !== undefined && options.action !== info.action)
      throw new InvalidInputError(
        `Plan ${token} is a ${info.action} plan; carry it out with ${verb}, or make a ${options.action} plan with a dry run.`,
      );
    const started = info.progress.pending < info.total;
    const now = this.engine.clock.now();
    if (!started && now > info.expiresAt)
      throw new PlanError(
        "PLAN_EXPIRED",
        `Plan ${token} expired at ${new Date(info.expiresAt).toISOString()} (plans are accepted for ${PLAN_TTL_MS / 60_000} minutes) before it started; nothing was done. Make a new one with a dry run of ${verb} (the same selector: ${JSON.stringify(info.request.selector)}) and check its preview again.`,
        token,
      );
    if (this.running.has(token))
      throw new PlanError(
        "PLAN_BUSY",
        `Plan ${token} is being carried out by another call right now; wait for it to answer, then call again to see its outcome.`,
        token,
      );
    const batchSize = Math.min(Math.max(Math.floor(options.batchSize ?? DEFAULT_BATCH), 1), 500);
    const by = options.by ?? "api";
    const counts: BulkCounts = {
      done: 0,
      requested: 0,
      refused: 0,
      skipped: info.total - info.progress.pending,
    };
    const refusals: BulkRefusal[] = [];
    let processed = counts.skipped;
    this.running.add(token);
    try {
      for (let after = 0; !options.signal?.aborted; ) {
        const batch = await this.engine.store.planRuns(token, { after, limit: batchSize, pendingOnly: true });
        if (batch.length === 0) break;
        after = batch.at(-1)!.position;
        const runs = new Map((await this.engine.getRuns(batch.map((b) => b.runId))).map((r) => [r.id, r]));
        const outcomes: Array<PlanOutcome & { row: RunRow | undefined }> = [];
        for (const b of batch) {
          const row = runs.get(b.runId);
          const outcome = await this.act(info, row, by);
          outcomes.push({ ...outcome, runId: b.runId, row });
          if (options.audit && row && outcome.outcome !== "skipped")
            await this.engine.audit.record(
              {
                ...options.audit,
                run: { workflow: row.workflow, key: row.key, runId: row.id },
                args: { plan: token },
              },
              outcome.outcome === "refused"
                ? { ok: false, code: "REFUSED", message: outcome.reason ?? "refused" }
                : { ok: true },
            );
        }
        const recorded = new Set(
          await this.engine.store.recordPlanOutcomes(
            token,
            outcomes.map(({ runId, outcome, reason }) => ({ runId, outcome, reason })),
            this.engine.clock.now(),
          ),
        );
        for (const o of outcomes) {
          // A run another call recorded first was that call's to count.
          const bucket = !recorded.has(o.runId) ? "skipped" : countsOf([{ outcome: o.outcome, count: 1 }]);
          if (bucket === "skipped") counts.skipped++;
          else for (const k of ["done", "requested", "refused", "skipped"] as const) counts[k] += bucket[k];
          if (o.reason !== null && refusals.length < LISTED_REFUSALS)
            refusals.push({
              run: o.row ? label(o.row) : `#${o.runId}`,
              status: o.row?.status ?? "cancelled",
              reason: o.reason,
            });
        }
        processed += batch.length;
        await options.onProgress?.({
          processed,
          total: info.total,
          message: `${verb} ${token}: ${processed} of ${info.total} runs (${counts.done} ${info.action === "replay" ? "replayed" : "cancelled"}, ${counts.refused} refused, ${counts.skipped} skipped)`,
        });
      }
    } finally {
      this.running.delete(token);
    }
    const progress = countsOf(await this.engine.store.planProgress(token));
    return {
      action: info.action,
      token,
      total: info.total,
      counts,
      refusals,
      progress,
      finished: progress.pending === 0,
    };
  }

  /** Acts on one run of a plan; never throws (a refusal is an outcome). */
  private async act(
    info: BulkPlanInfo,
    row: RunRow | undefined,
    by: string,
  ): Promise<Omit<PlanOutcome, "runId">> {
    if (!row) return { outcome: "skipped", reason: "the run no longer exists (it was pruned)" };
    const v = judge(info.action, row, info.createdAt);
    if (!v.act) {
      // A call that stopped (crashed) between acting and recording: this plan's own replay or cancel.
      if (await actedBy(this.engine, info, row)) return { outcome: doneOutcome(info.action), reason: null };
      return { outcome: v.outcome, reason: v.reason };
    }
    const requestedBy = `${by} (plan ${info.token})`;
    try {
      if (info.action === "cancel") {
        const status = await this.engine.cancel(row.id, { by: requestedBy });
        if (status === "requested") return { outcome: "requested", reason: null };
        return status === "cancelled"
          ? { outcome: "cancelled", reason: null }
          : { outcome: "skipped", reason: `it finished (${status}) before the cancel reached it` };
      }
      const version = info.request.version;
      const r = await this.engine.replay(row.id, {
        requestedBy,
        waitMs: 0,
        ...(version !== undefined ? { version } : {}),
      });
      return "requested" in r
        ? { outcome: "requested", reason: null }
        : { outcome: "replayed", reason: null };
    } catch (err) {
      const code = (err as { code?: string }).code;
      return { outcome: "refused", reason: `${code ? `${code}: ` : ""}${(err as Error).message}` };
    }
  }
}
