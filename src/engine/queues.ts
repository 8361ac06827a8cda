// Queue schemas of a run (from the code in this process, else as another process published them) and the
// check of a message against them; a refused message is recorded for diagnosis before the error is thrown.

import { z } from "zod";
import { InvalidMessageError, NoCodeError, UnknownQueueError } from "../errors.js";
import type { RunRow, Store } from "../storage/store.js";
import type { Clock } from "./clock.js";
import type { Definitions } from "./definitions.js";
import type { PublishedWorkflow } from "./listing.js";
import type { WriteQueue } from "./write-queue.js";

/** Workflows' queues and actions as the processes that run them published them, read once and cached. */
export class QueueSchemas {
  private cache: Map<string, PublishedWorkflow> | null = null;

  constructor(
    private readonly store: Store,
    private readonly defs: Definitions,
  ) {}

  /** Workflows as published in the database by the processes that run them (name@version). */
  async published(refresh = false): Promise<Map<string, PublishedWorkflow>> {
    if (!this.cache || refresh) {
      const map = new Map<string, PublishedWorkflow>();
      for (const m of await this.store.workflowMeta()) {
        map.set(`${m.name}@${m.version}`, {
          name: m.name,
          version: m.version,
          description: m.description,
          queues: JSON.parse(m.queues) as Record<string, unknown>,
          actions: JSON.parse(m.actions) as string[],
        });
      }
      this.cache = map;
    }
    return this.cache;
  }

  /** The schema of a run's queue: from the code when this process has it, else as published. */
  async schema(run: RunRow, queue: string): Promise<z.ZodType> {
    const def = this.defs.get(run.workflow)?.get(run.version);
    if (def) {
      const schema =
        typeof queue === "string" && Object.hasOwn(def.queues, queue) ? def.queues[queue] : undefined;
      if (!schema) throw new UnknownQueueError(run.workflow, String(queue), Object.keys(def.queues));
      return schema;
    }
    const key = `${run.workflow}@${run.version}`;
    const meta = (await this.published()).get(key) ?? (await this.published(true)).get(key);
    if (!meta) {
      throw new NoCodeError(
        `No process has published workflow "${run.workflow}" version ${run.version} to this database, so its queues are unknown. Start the application that runs it once, then send again.`,
        { workflow: run.workflow, version: run.version },
      );
    }
    const json =
      typeof queue === "string" && Object.hasOwn(meta.queues, queue) ? meta.queues[queue] : undefined;
    if (json === undefined)
      throw new UnknownQueueError(run.workflow, String(queue), Object.keys(meta.queues));
    return z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
  }
}

/** Parses a message with its queue's schema; a refusal is recorded for diagnosis and thrown. */
export async function validateMessage(
  deps: { writes: WriteQueue; clock: Clock; schemas: QueueSchemas },
  run: RunRow,
  queue: string,
  body: unknown,
): Promise<unknown> {
  const label = `${run.workflow}/${run.key}`;
  const refuse = async (err: Error): Promise<never> => {
    let text: string;
    try {
      text = JSON.stringify(body) ?? String(body);
    } catch {
      text = String(body);
    }
    deps.writes.rejection({
      runId: run.id,
      queue: String(queue).slice(0, 200),
      body: text.slice(0, 2000),
      error: err.message,
      at: deps.clock.now(),
    });
    // Stored before the caller hears of it, so a diagnosis made right after can show it.
    await deps.writes.flush();
    throw err;
  };
  let schema: z.ZodType;
  try {
    schema = await deps.schemas.schema(run, queue);
  } catch (err) {
    if (err instanceof UnknownQueueError) await refuse(err);
    throw err;
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    await refuse(
      new InvalidMessageError(
        label,
        queue,
        parsed.error.issues.map(
          (i: { path: PropertyKey[]; message: string }) =>
            `${i.path.length ? i.path.join(".") : "body"}: ${i.message}`,
        ),
      ),
    );
  }
  return parsed.data;
}
