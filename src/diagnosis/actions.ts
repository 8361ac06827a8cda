// Next actions as exact MCP tool calls (arguments valid for each tool's input schema) and changes for people.

import { createHash } from "node:crypto";
import type { NextAction, ToolName } from "./types.js";

type Address = { workflow: string; key: string };

/** An exact tool call. */
export function call(tool: ToolName, args: Record<string, unknown>, why: string): NextAction {
  return { kind: "call", tool, args, why };
}

/** A change only a person can make. */
export function person(change: string): NextAction {
  return { kind: "person", change };
}

/** replay_run as a dry run, then for real, then wait_for_run until it finishes. */
export function replayActions(address: Address, fromStep: string | null, what: string): NextAction[] {
  const from = fromStep === null ? {} : { fromStep };
  return [
    call("replay_run", { ...address, ...from, dryRun: true }, `preview: replay ${what}`),
    call("replay_run", { ...address, ...from }, "replay once the user agrees"),
    call("wait_for_run", { ...address, until: "finished" }, "follow it to the end"),
  ];
}

/** An idempotency key for a message a diagnosis proposes (at most 256 characters, stable per source). */
export function idempotencyKey(address: Address, queue: string, source: string): string {
  const plain = `diagnose-${address.key}-${queue}-${source}`.replace(/\s+/g, "-");
  if (plain.length <= 120) return plain;
  const hash = createHash("sha1").update(plain).digest("hex").slice(0, 16);
  return `diagnose-${hash}`;
}

/** send_message with an idempotency key, then wait_for_run for what the run does next. */
export function sendActions(
  address: Address,
  queue: string,
  body: unknown,
  source: string,
  why: string,
  fromStatus: string,
): NextAction[] {
  return [
    call(
      "send_message",
      { ...address, queue, body, idempotencyKey: idempotencyKey(address, queue, source) },
      why,
    ),
    call("wait_for_run", { ...address, fromStatus }, "see what the run does with it"),
  ];
}
