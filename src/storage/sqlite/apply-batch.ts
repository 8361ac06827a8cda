// One WriteBatch applied to SQLite, in the order store.ts documents, inside the store's transaction.
//
// IMPORTANT: synchronous (better-sqlite3's db.transaction): no await, so the batch commits whole or not at all.

import type Database from "better-sqlite3";
import { LeaseLostError, StorageError } from "../../errors.js";
import {
  type BatchResult,
  type CreateResult,
  type CreateRun,
  type MessageResult,
  type RunPatch,
  type RunRow,
  SLOT_STATUSES,
  TERMINAL_STATUSES,
  type WriteBatch,
} from "../store.js";
import type { SlotOf, SqliteSlots } from "./slots.js";
import { numbered, PATCH_COLUMNS, type Statements } from "./statements.js";

/** Applies write batches with the store's prepared statements (and one cached UPDATE per patch shape). */
export class BatchWriter {
  private readonly patchStatements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly stmts: Statements,
    private readonly slots: SqliteSlots,
  ) {}

  /** Applies `batch`; call inside the store's immediate transaction (it never awaits). */
  apply(batch: WriteBatch): BatchResult {
    const s = this.stmts;
    const now = batch.now;
    for (const lease of batch.leases) {
      const owner = s.ownerOf.get(lease.runId) as string | null | undefined;
      if (owner !== lease.owner) throw new LeaseLostError(lease.runId, owner ?? null);
    }
    const created: CreateResult[] = [];
    for (const c of batch.creates) {
      // A limited run is never claimed here: the claim (slots.ts) gives it a slot or queues it.
      const owner = c.concurrency ? null : c.owner;
      const row = createdRow(c, owner);
      const id = s.insertRun.get(row) as number | undefined;
      if (id !== undefined) {
        row.id = id;
        created.push({ run: row, created: true });
        for (const [name, value] of Object.entries(c.tags ?? {})) s.setTag.run(numbered(id, name, value));
      } else created.push({ run: s.runByKey.get(c.workflow, c.key) as RunRow, created: false });
    }
    for (const d of batch.deleteEntries) for (const seq of d.seqs) s.deleteEntry.run(d.runId, seq);
    // Indexed loops over a batch's long lists: this code runs a dozen times in (b), too few to be optimised, and
    // for...of unoptimised allocates an iterator result per row.
    const entries = batch.entries;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      s.upsertEntry.run(
        e.runId,
        e.seq,
        e.scope,
        e.ordinal,
        e.name,
        e.kind,
        e.status,
        e.startedAt,
        e.endedAt,
        e.input,
        e.output,
        e.error,
        e.attempts,
        e.detail,
        e.stateSeq,
        e.stateDiff,
      );
    }
    for (const id of batch.unconsume) s.unconsume.run(id);
    for (const c of batch.consume) {
      if (s.consume.run(now, c.bySeq, c.messageId, c.runId).changes !== 1) {
        throw new StorageError("MESSAGE_ALREADY_CONSUMED", `Message #${c.messageId} was already consumed.`, {
          messageId: c.messageId,
        });
      }
    }
    const runs = batch.runs;
    for (let i = 0; i < runs.length; i++) this.patch(runs[i]!, now);
    for (const t of batch.tags) s.setTag.run(numbered(t.runId, t.name, t.value));
    const messages: MessageResult[] = [];
    for (const m of batch.messages) {
      const info = s.insertMessage.run(m.runId, m.queue, m.body, m.now, m.idempotencyKey);
      if (info.changes === 1) {
        messages.push({ id: Number(info.lastInsertRowid), duplicate: false });
        s.wakeForMessage.run(numbered(now, m.runId, m.queue));
      } else {
        messages.push({
          id: s.messageByIdempotency.get(m.runId, m.idempotencyKey) as number,
          duplicate: true,
        });
      }
    }
    const requests: number[] = [];
    for (const r of batch.requests) {
      requests.push(Number(s.insertRequest.run(r.runId, r.kind, r.args, now).lastInsertRowid));
      s.wakeForRequest.run(numbered(now, r.runId));
    }
    for (const d of batch.requestsDone) s.requestDone.run(now, d.result, d.id);
    for (const r of batch.rejections) s.insertRejection.run(r);
    return { created, messages, requests };
  }

  private patch(patch: RunPatch, now: number): void {
    const keys = Object.keys(patch).filter((k) => k !== "id" && (patch as never)[k] !== undefined);
    if (keys.length === 0) return;
    const signature = keys.join(",");
    const status = patch.status;
    let stmt = this.patchStatements.get(signature);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = @${k}`).join(", ");
      // A status change reads back what it must act on (a parent to wake, a slot freed) in the same statement.
      stmt = this.db.prepare(`UPDATE runs SET ${sets} WHERE id = @id${status ? ` ${AFTER_STATUS}` : ""}`);
      this.patchStatements.set(signature, stmt);
    }
    const params: Record<string, unknown> = { id: patch.id };
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      params[k] = (patch as unknown as Record<string, unknown>)[k];
    }
    let changed: ChangedRun | undefined;
    if (status) changed = stmt.get(params) as ChangedRun | undefined;
    else stmt.run(params);
    if (patch.waitQueues) this.stmts.wakeIfMessageWaiting.run(numbered(now, patch.id, patch.waitQueues));
    if (patch.waitRuns) this.stmts.wakeIfChildEnded.run(numbered(now, patch.id, patch.waitRuns));
    if (!status || !changed) return;
    if (changed.parentRunId !== null && TERMINAL_STATUSES.includes(status))
      this.stmts.wakeParent.run(numbered(now, patch.id));
    // Out of running/retrying: a concurrency slot may have freed.
    if (!SLOT_STATUSES.includes(status)) this.slots.releasedBy(changed, now);
  }
}

/** What a status change reads back: the parent to wake, the slot it may free. */
const AFTER_STATUS = `RETURNING workflow, concurrency_key AS concurrencyKey, concurrency_limit AS concurrencyLimit,
  parent_run_id AS parentRunId`;

interface ChangedRun extends SlotOf {
  parentRunId: number | null;
}

/**
 * The row a create inserts, as the store reads it back (its id set once inserted); also the insert's named
 * parameters. Fields in RUN_COLUMNS' order, so every run row has one shape.
 */
function createdRow(c: CreateRun, owner: string | null): RunRow {
  return {
    id: 0,
    workflow: c.workflow,
    key: c.key,
    version: c.version,
    status: owner ? "running" : "pending",
    input: c.input,
    initialState: c.initialState,
    state: c.initialState,
    output: null,
    error: null,
    waiting: null,
    waitQueues: null,
    wakeAt: owner ? c.leaseUntil : c.now,
    owner,
    leaseUntil: owner ? c.leaseUntil : null,
    createdAt: c.now,
    updatedAt: c.now,
    finishedAt: null,
    failureSignature: null,
    traceContext: c.traceContext ?? null,
    parentRunId: c.parentRunId ?? null,
    waitRuns: null,
    concurrencyKey: c.concurrency?.key ?? null,
    concurrencyLimit: c.concurrency?.limit ?? null,
    queuedAt: null,
  };
}
