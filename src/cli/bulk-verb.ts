// `waymark replay` and `waymark cancel`: many runs by failure signature, workflow, status, tags or keys, as the
// replay_runs and cancel_runs tools do it. A dry run (--dry-run, or no --plan) pins the runs in a plan and
// prints its token; --plan TOKEN acts on exactly those runs, in batches, with a line per batch on stderr.

import { parseArgs } from "node:util";
import type { BulkPreview, BulkResult, BulkSelector, PlanAction } from "../engine/bulk-types.js";
import { attach, DEFAULT_DATABASE } from "../index.js";
import { RUN_STATUSES, type RunStatus } from "../storage/store.js";
import { cliClient } from "./audit-client.js";
import { databaseProblem } from "./database-arg.js";
import { parseTagFlags } from "./tag-args.js";
import { verbError } from "./verb-error.js";

const usageOf = (
  verb: "replay" | "cancel",
) => `Usage: waymark ${verb} [--signature <sig>] [--workflow <name>] [--status <status>]... [--key <key>]...
                      [--tag <name=value>]... [--created-after <ISO time>] [--created-before <ISO time>] [--dry-run] [--db <file>] [--json]
       waymark ${verb} --plan <token> [--batch-size n] [--db <file>] [--json]

${verb === "replay" ? "Replays many failed (or cancelled) runs after a fix: each retries its failed step on the latest version." : "Cancels many unfinished runs: each ends as cancelled, its history kept."}
Without --plan it is a dry run: it selects the runs, pins them in a plan (valid 15 minutes), prints how many,
by failure signature, samples${verb === "replay" ? " with what each replay discards and re-runs" : ""}, the runs that would be refused and
the plan's token. With --plan it acts on exactly those runs (never on runs that match later), 25 per batch,
and a second call carries an interrupted plan on (a finished one does nothing more).
${verb === "replay" ? "Without the workflow's code here the replays are stored for the application that runs it.\n" : ""}
  --signature <sig>      a failure signature as list_failures / waymark diagnose report it
  --workflow <name>      only runs of this workflow
  --status <status>      only runs in this status (repeatable): ${RUN_STATUSES.join(", ")}
  --key <key>            explicit run keys (repeatable; with --workflow)
  --tag <name=value>     only runs holding this tag with exactly this value (repeatable: all must hold)
  --created-after <t>    only runs created at or after this ISO time
  --created-before <t>   only runs created before this ISO time
  --dry-run              make the plan and show it; change nothing (the default without --plan)
  --plan <token>         act on the runs of this plan
  --batch-size <n>       runs per batch with --plan (1-500, default 25)
  --db <file>            SQLite database file or PostgreSQL URL (default ${DEFAULT_DATABASE})
  --json                 print JSON instead of text
  -h, --help             show this help

Exit codes: 0 done, 1 refused (unknown or expired plan, no such database), 2 bad usage.
`;

interface Output {
  write(text: string): unknown;
}

function time(value: string | undefined, name: string): number | undefined | string {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms)
    ? ms
    : `${name} ${JSON.stringify(value)} is not a time: use an ISO time such as 2026-01-31T12:00:00Z.`;
}

function previewText(verb: string, p: BulkPreview): string {
  const lines = [
    `Dry run: ${verb} would act on ${p.eligible} of the ${p.matched} runs selected; nothing changed.`,
    ...p.bySignature
      .slice(0, 10)
      .map(
        (g) =>
          `  ${String(g.count).padStart(5)}  ${g.workflow}  ${g.signature ?? "(no signature)"}  ${g.pattern}`,
      ),
    ...p.samples.map((s) =>
      s.replay
        ? `  e.g. ${s.run}: from "${s.replay.from ?? "(start)"}", discards ${s.replay.discardCount}, re-runs ${s.replay.rerun.join(", ") || "nothing"}, version ${s.replay.version.from} -> ${s.replay.version.to}`
        : s.refused
          ? `  e.g. ${s.run}: refused: ${s.refused}`
          : `  e.g. ${s.run} (${s.status})`,
    ),
    ...p.refused.slice(0, 20).map((r) => `  refused ${r.run} (${r.status}): ${r.reason}`),
    `Plan ${p.token}, valid until ${new Date(p.expiresAt).toISOString()}. To do it: waymark ${verb} --plan ${p.token}`,
  ];
  return `${lines.join("\n")}\n`;
}

function resultText(verb: string, r: BulkResult): string {
  const c = r.counts;
  const lines = [
    `${verb} plan ${r.token}: ${c.done} done, ${c.requested} requested, ${c.refused} refused, ${c.skipped} skipped (already done or changed).`,
    ...r.refusals.slice(0, 20).map((x) => `  ${x.run} (${x.status}): ${x.reason}`),
    r.finished
      ? "The plan is finished; running it again does nothing more."
      : `${r.progress.pending} runs are still pending: run waymark ${verb} --plan ${r.token} again.`,
  ];
  return `${lines.join("\n")}\n`;
}

/** `waymark replay|cancel ...`; resolves the exit code (0 done, 1 refused, 2 bad usage). */
export async function runBulk(
  verb: "replay" | "cancel",
  args: string[],
  io: { out: Output; err: Output },
): Promise<number> {
  const USAGE = usageOf(verb);
  const usage = (why: string) => {
    verbError(io.err, verb, `${why}\n\n${USAGE}`);
    return 2;
  };
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        signature: { type: "string" },
        workflow: { type: "string" },
        status: { type: "string", multiple: true },
        key: { type: "string", multiple: true },
        tag: { type: "string", multiple: true },
        "created-after": { type: "string" },
        "created-before": { type: "string" },
        "dry-run": { type: "boolean" },
        plan: { type: "string" },
        "batch-size": { type: "string" },
        db: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const selector: BulkSelector = {};
  if (typeof values.signature === "string") selector.signature = values.signature;
  if (typeof values.workflow === "string") selector.workflow = values.workflow;
  const statuses = (values.status as string[] | undefined) ?? [];
  const bad = statuses.find((s) => !(RUN_STATUSES as readonly string[]).includes(s));
  if (bad !== undefined) return usage(`--status ${bad}: statuses are ${RUN_STATUSES.join(", ")}.`);
  if (statuses.length) selector.status = statuses as RunStatus[];
  if (values.key) selector.keys = values.key as string[];
  const tagged = parseTagFlags(values.tag as string[] | undefined);
  if (!tagged.ok) return usage(tagged.problem);
  if (tagged.tags) selector.tags = tagged.tags;
  for (const [flag, field] of [
    ["created-after", "createdAfter"],
    ["created-before", "createdBefore"],
  ] as const) {
    const t = time(values[flag] as string | undefined, `--${flag}`);
    if (typeof t === "string") return usage(t);
    if (t !== undefined) selector[field] = t;
  }
  const plan = values.plan as string | undefined;
  if (plan !== undefined && (Object.keys(selector).length > 0 || values["dry-run"]))
    return usage("--plan acts on the runs its dry run pinned: pass no selector and no --dry-run with it.");
  if (plan === undefined && Object.keys(selector).length === 0)
    return usage(
      "Say which runs: --signature, --workflow, --status, --tag, --key or a time window (or --plan TOKEN).",
    );
  const batch = values["batch-size"] === undefined ? undefined : Number(values["batch-size"]);
  if (batch !== undefined && !(Number.isInteger(batch) && batch >= 1 && batch <= 500))
    return usage("--batch-size takes a whole number from 1 to 500.");
  const database = (values.db as string | undefined) ?? DEFAULT_DATABASE;
  const problem = databaseProblem({
    db: database,
    dbGiven: values.db !== undefined,
    create: false,
    readOnly: false,
  });
  if (problem) {
    verbError(io.err, verb, problem);
    return 1;
  }
  const action: PlanAction = verb;
  const engine = await attach({ database });
  try {
    if (plan === undefined) {
      const preview = await engine.bulk.preview({ action, selector });
      io.out.write(values.json ? `${JSON.stringify(preview, null, 2)}\n` : previewText(verb, preview));
      return 0;
    }
    const result = await engine.bulk.apply(plan, {
      action,
      ...(batch !== undefined ? { batchSize: batch } : {}),
      by: `waymark ${verb}`,
      audit: { surface: "cli", client: cliClient(verb), action: `${verb}_runs` },
      onProgress: (p) => {
        io.err.write(`waymark ${verb}: ${p.message}\n`);
      },
    });
    io.out.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : resultText(verb, result));
    return 0;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === undefined || !/^(PLAN_|INVALID_INPUT|INVALID_TAG|TAG_LIMIT)/.test(code)) throw err;
    verbError(io.err, verb, (err as Error).message);
    return 1;
  } finally {
    await engine.close();
  }
}
