// send_message: a validated, durable message to a run's queue; says whether a waiting run consumed it.

import { z } from "zod";
import { fitAnswer } from "../budget.js";
import { domainCode, ToolError } from "../errors.js";
import { brief, quote } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { runAddress } from "./get-run.js";
import { defineTool } from "./tool.js";

/** How long to wait for a run that waits on the queue to consume the message. */
const CONSUME_WAIT_MS = 5000;

export const sendMessage = defineTool({
  name: "send_message",
  title: "Send a message to a run",
  description:
    "Sends a JSON message to one of a run's queues, e.g. an approval decision to a run that waits for it. The body is validated with the queue's schema first (get_run shows the schema of the queue a run waits on; list_workflows shows every queue's schema); nothing is stored if it does not match. The message is durable once this returns. Pass an idempotencyKey so that a retried call stores the message only once. The answer says whether a run waiting on that queue consumed it, and the run's status afterwards.",
  input: {
    ...runAddress,
    queue: bounded(LIMITS.name, "queue").describe(
      "Queue name, as declared by the workflow (see get_run or list_workflows).",
    ),
    body: z.unknown().describe("The message: JSON that matches the queue's schema."),
    idempotencyKey: bounded(LIMITS.idempotencyKey, "idempotencyKey")
      .min(1)
      .optional()
      .describe("Sending again with the same key stores nothing new. Recommended: a unique id per decision."),
  },
  output: {
    messageId: z.number().describe("Id of the stored message."),
    duplicate: z
      .boolean()
      .describe("True when the idempotency key was already used: nothing new was stored."),
    queue: bounded(LIMITS.name, "queue").describe("Queue it was sent to."),
    runWasWaiting: z
      .boolean()
      .describe("True when the run was waiting on this queue when the message arrived."),
    consumed: z.boolean().describe("True when the run has consumed the message."),
    consumedBy: z.string().nullable().describe("Path of the queue-wait entry that consumed it, if known."),
    runStatus: z.string().describe("The run's status after sending."),
  },
  annotations: {
    title: "Send a message to a run",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  write: true,
  async handler(args, ctx, extra) {
    const engine = ctx.engine;
    const row = await ctx.run(args.workflow, args.key);
    const label = `${row.workflow}/${row.key}`;
    const body = args.body;
    const wasWaiting = row.status === "waiting" && (row.waitQueues ?? "").includes(`|${args.queue}|`);
    let res: { messageId: number; duplicate: boolean };
    try {
      res = await engine.send(row.id, args.queue, body, {
        ...(args.idempotencyKey ? { idempotencyKey: args.idempotencyKey } : {}),
      });
    } catch (err) {
      if (domainCode(err) === "INVALID_MESSAGE") {
        const meta = (await engine.published()).get(`${row.workflow}@${row.version}`);
        const schema = meta?.queues[args.queue];
        throw new ToolError(
          "INVALID_MESSAGE",
          `${(err as Error).message}${schema ? ` The queue's JSON Schema: ${brief(schema, 1500)}` : ""}`,
        );
      }
      throw err;
    }
    let message = await engine.getMessage(res.messageId);
    if (message?.consumedAt == null && wasWaiting) {
      // Consumed by a commit of the run's queue wait, here (an entry) or in the process that runs it.
      const id = res.messageId;
      const watched = await engine.watchRun(
        row.id,
        async () => {
          const m = await engine.getMessage(id);
          return m?.consumedAt != null ? m : undefined;
        },
        { timeout: CONSUME_WAIT_MS, signal: extra.signal, entries: true },
      );
      message = watched.value ?? (await engine.getMessage(id));
    }
    const consumed = message?.consumedAt != null;
    let consumedBy: string | null = null;
    if (consumed && message?.consumedBy != null) {
      consumedBy = await engine.entry(row.id, message.consumedBy).then(
        (e) => e.path,
        () => null,
      );
    }
    const after = (await engine.getRun(row.id)) ?? row;
    const structured = {
      messageId: res.messageId,
      duplicate: res.duplicate,
      queue: args.queue,
      runWasWaiting: wasWaiting,
      consumed,
      consumedBy,
      runStatus: after.status,
    };
    const what = res.duplicate
      ? `Not stored again: idempotency key ${quote(args.idempotencyKey ?? "")} was already used by message #${res.messageId}.`
      : `Message #${res.messageId} stored on queue "${args.queue}" of ${label}.`;
    const fate = consumed
      ? `The run consumed it${consumedBy ? ` at "${consumedBy}"` : ""} and is now ${after.status}.`
      : wasWaiting
        ? `The run was waiting on "${args.queue}" but has not consumed it yet (its owning process may be busy or stopped); it is ${after.status}. Check again with get_run or wait_for_run.`
        : `The run is ${after.status === "waiting" ? "waiting, but not on" : `${after.status}, not waiting on`} queue "${args.queue}" at the moment; it reads the message when it next waits on that queue.`;
    return fitAnswer(() => ({ text: `${what} ${fate}`, structured }));
  },
});
