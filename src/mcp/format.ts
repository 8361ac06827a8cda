// Shared shapes and wording of answers: run summaries, waits, errors and times as a model reads them.

import { z } from "zod";
import { assertNever } from "../assert-never.js";
import { groupWaits, type RunInfo, type WaitInfo } from "../engine/views.js";
import { errorLine, iso, queueNames } from "../format.js";
import { RUN_STATUSES } from "../storage/store.js";
import { tagsText } from "./tags.js";

export { brief, errorLine, iso, quote } from "../format.js";

export const runStatusSchema = z.enum(RUN_STATUSES as [string, ...string[]]);

/** "queue \"decisions\"", "sleep until 2025-...", "retry at ..." for each wait. */
export function waitText(waits: WaitInfo[] | null): string | null {
  if (!waits || waits.length === 0) return null;
  return groupWaits(waits)
    .map((w) => {
      const until = w.until === null ? "" : ` until ${iso(w.until)}`;
      switch (w.kind) {
        case "queue":
          return w.queues
            ? `message on any of queues ${queueNames(w.queues)} at "${w.entry}"${until ? ` (timeout${until})` : ""}`
            : `message on queue "${w.queue}" at "${w.entry}"${until ? ` (timeout${until})` : ""}`;
        case "retry":
          return `retry of "${w.entry}" at ${iso(w.until)}`;
        case "sleep":
          return `sleep "${w.entry}"${until}`;
        case "child":
          return `child run "${w.child}" at "${w.entry}"`;
        default:
          return assertNever(w.kind, "wait kind");
      }
    })
    .join("; ");
}

/** Tags shown per run in lists, and the characters of a value shown (full tags stay in get_run). */
export const LIST_TAGS = 5;
export const LIST_TAG_VALUE = 40;

export const runSummaryShape = {
  workflow: z.string().describe("Workflow name."),
  key: z.string().describe("Run key, unique within the workflow."),
  status: runStatusSchema.describe("Run status."),
  version: z.number().describe("Workflow version the run is pinned to."),
  createdAt: z.string().describe("When the run was created (ISO time)."),
  updatedAt: z.string().describe("When its status last changed (ISO time)."),
  finishedAt: z.string().nullable().describe("When it finished, or null."),
  waitingOn: z.string().nullable().describe("What a waiting, sleeping or retrying run waits for."),
  error: z.string().nullable().describe("The error of a failed run, one line."),
  tags: z
    .record(z.string(), z.string())
    .describe(
      `The run's tags: names to values (empty when it has none); in lists at most ${LIST_TAGS}, values cut to ${LIST_TAG_VALUE} characters (get_run has them all).`,
    ),
  moreTags: z
    .number()
    .describe("How many more tags the run holds than shown here (get_run shows every tag)."),
  uri: z.string().describe("Resource address of the run."),
};

export type RunSummary = {
  workflow: string;
  key: string;
  status: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  waitingOn: string | null;
  error: string | null;
  tags: Record<string, string>;
  moreTags: number;
  uri: string;
};

function compactTags(tags: Record<string, string>): { tags: Record<string, string>; moreTags: number } {
  const entries = Object.entries(tags);
  const shown = entries
    .slice(0, LIST_TAGS)
    .map(([n, v]) => [
      n,
      [...v].length > LIST_TAG_VALUE ? `${[...v].slice(0, LIST_TAG_VALUE).join("")}…` : v,
    ]);
  return { tags: Object.fromEntries(shown), moreTags: entries.length - shown.length };
}

/** The one-line facts of a run, for lists. */
export function runSummary(run: RunInfo, uri: string): RunSummary {
  return {
    workflow: run.workflow,
    key: run.key,
    status: run.status,
    version: run.version,
    createdAt: iso(run.createdAt)!,
    updatedAt: iso(run.updatedAt)!,
    finishedAt: iso(run.finishedAt),
    waitingOn: waitText(run.waiting),
    error: errorLine(run.error, 200),
    ...compactTags(run.tags),
    uri,
  };
}

/** `invoice/42 [waiting] v2 — message on queue "decisions"...` */
export function runLine(s: RunSummary): string {
  const extra = s.waitingOn ? ` — waits for ${s.waitingOn}` : s.error ? ` — ${s.error}` : "";
  const more = s.moreTags ? `, +${s.moreTags} more tags (get_run)` : "";
  const tags = tagsText(s.tags) + more;
  return `${s.workflow}/${s.key} [${s.status}] v${s.version}, created ${s.createdAt}${tags ? ` {${tags}}` : ""}${extra}`;
}

/** Times an entry's detail records in ms since the epoch (a sleep's or wait's end, a message's arrival). */
const DETAIL_TIMES = ["until", "sentAt"];

/** An entry's detail with its times as ISO strings, like every other time in answers. */
export function detailIso(detail: Record<string, unknown>): Record<string, unknown> {
  const out = { ...detail };
  for (const k of DETAIL_TIMES) if (typeof out[k] === "number") out[k] = iso(out[k] as number);
  return out;
}
