// The inspector's failures view and its "Replay all N" (the same engine calls list_failures and replay_runs make).
//
//   GET  /api/failures?workflow          failed and retrying runs of the last 7 days, grouped by signature
//   POST /api/bulk/replay                { signature, workflow? }: a dry run that pins a plan and answers its preview
//                                        { plan }: replays exactly the runs that plan pinned, answers the counts
//
// IMPORTANT: the POST writes (a dry run stores a plan); it is refused (403) in read-only mode and audited like
// the other inspector writes: the dry run and any refusal as one write, a real call per run it acts on.

import type { IncomingMessage } from "node:http";
import type { WaymarkEngine } from "../engine/api.js";
import { outcomeOf } from "../engine/audit.js";
import type { AuditClient } from "../engine/audit-types.js";
import type { BulkPreview, BulkResult } from "../engine/bulk-types.js";
import { ApiError, readJson } from "./respond.js";
import type { FailuresAnswer } from "./shapes.js";

/** The audit's name for the bulk replay (the MCP tool's). */
const ACTION = "replay_runs";
/** Most signature groups the view lists. */
const GROUPS = 50;

function text(value: unknown, what: string, max: number): string {
  if (typeof value !== "string" || value === "" || value.length > max)
    throw new ApiError(
      400,
      "INVALID_INPUT",
      `${what} must be a non-empty string of at most ${max} characters.`,
    );
  return value;
}

export class BulkApi {
  constructor(
    private readonly engine: WaymarkEngine,
    private readonly options: { readOnly: boolean; maxBodyBytes: number },
  ) {}

  /** GET /api/failures. */
  async failures(url: URL): Promise<FailuresAnswer> {
    const workflow = url.searchParams.get("workflow");
    const list = await this.engine.listFailures({ limit: GROUPS, ...(workflow ? { workflow } : {}) });
    return { ...list, serverNow: this.engine.clock.now() };
  }

  /** POST /api/bulk/replay: a dry run by signature, or the real call on a plan's token. */
  async replay(req: IncomingMessage, client: AuditClient): Promise<BulkPreview | BulkResult> {
    let args: unknown = null;
    try {
      if (this.options.readOnly) {
        throw new ApiError(
          403,
          "READ_ONLY",
          "This server is read-only (--read-only): it shows failures but does not replay them.",
        );
      }
      args = await readJson(req, this.options.maxBodyBytes);
      if (typeof args !== "object" || args === null || Array.isArray(args))
        throw new ApiError(400, "INVALID_INPUT", "The request body must be a JSON object.");
      const body = args as Record<string, unknown>;
      if (body.plan !== undefined) {
        if (body.signature !== undefined || body.workflow !== undefined)
          throw new ApiError(
            400,
            "INVALID_INPUT",
            "Send either { signature } (a dry run that makes a plan) or { plan } (replay the runs it pinned), not both.",
          );
        const token = text(body.plan, "plan", 200);
        const info = await this.engine.bulk.plan(token);
        if (info.action !== "replay")
          throw new ApiError(400, "INVALID_INPUT", `Plan ${token} is a ${info.action} plan, not a replay.`);
        // Each run acted on or refused is audited by the engine against that run.
        return await this.engine.bulk.apply(token, {
          action: "replay",
          by: "the run inspector",
          audit: { surface: "inspector", client, action: ACTION },
        });
      }
      const signature = text(body.signature, "signature", 200);
      const workflow = body.workflow === undefined ? undefined : text(body.workflow, "workflow", 200);
      const preview = await this.engine.bulk.preview({
        action: "replay",
        selector: { signature, ...(workflow !== undefined ? { workflow } : {}) },
      });
      await this.engine.audit.record(
        { surface: "inspector", client, action: ACTION, run: workflow ? { workflow } : null, args },
        { ok: true },
      );
      return preview;
    } catch (err) {
      await this.engine.audit.record(
        { surface: "inspector", client, action: ACTION, run: null, args },
        outcomeOf(err),
      );
      throw err;
    }
  }
}
