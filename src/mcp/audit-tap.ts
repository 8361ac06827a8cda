// The audit of MCP writes: a transport wrapper that sees every tools/call of a write tool and the answer
// that leaves for it, whoever made that answer (the tool, the SDK's argument validation, the session guard's
// refusals), and records the write with its outcome before the answer is sent. It sits under the guard,
// nearest the real transport, so no refusal escapes it.
//
// IMPORTANT: nothing here walks a request's arguments (a hostile one may nest 100,000 levels): they are
// held by reference and handed to engine.audit, which checks their depth without recursion.

import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import type { WaymarkEngine } from "../engine/api.js";
import type { AuditClient, AuditOutcome, AuditTarget } from "../engine/audit-types.js";
import { LIMITS } from "./limits.js";

/** A write tool's call waiting for its answer. */
interface Pending {
  tool: string;
  args: unknown;
}

type Json = Record<string, unknown>;

/** The run a write tool's arguments name (workflow and key, when both are short strings). */
function targetOf(args: unknown): AuditTarget | null {
  if (typeof args !== "object" || args === null) return null;
  const { workflow, key } = args as Json;
  const ok = (v: unknown, max: number): v is string => typeof v === "string" && v.length <= max;
  const target: AuditTarget = {};
  if (ok(workflow, LIMITS.name)) target.workflow = workflow;
  if (ok(key, LIMITS.key)) target.key = key;
  return target.workflow === undefined && target.key === undefined ? null : target;
}

/**
 * The outcome an answer tells: a result with isError starts with "CODE: message"; the SDK's own refusals do
 * not. A confirmation the user declined (structuredContent.declined) is recorded DECLINED, not ok.
 */
export function outcomeOfAnswer(message: JSONRPCMessage): AuditOutcome {
  if ("error" in message && message.error) {
    const { code, message: text } = message.error as { code: number; message: string };
    return { ok: false, code: code === -32602 ? "INVALID_INPUT" : "UNEXPECTED", message: String(text) };
  }
  const result = ("result" in message ? message.result : {}) as Json;
  const structured = (result.structuredContent ?? {}) as Json;
  if (result.isError !== true && structured.declined === true)
    return {
      ok: false,
      code: "DECLINED",
      message:
        typeof structured.message === "string" ? structured.message : "The user declined; nothing changed.",
    };
  if (result.isError !== true) return { ok: true };
  const content = Array.isArray(result.content) ? (result.content as Json[]) : [];
  const text = content.map((c) => (typeof c.text === "string" ? c.text : "")).join("\n");
  const coded = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(text);
  if (coded) return { ok: false, code: coded[1]!, message: coded[2]! };
  const sdk = /^(?:MCP error -32602: )?Input validation error: ([\s\S]*)$/.exec(text);
  if (sdk) return { ok: false, code: "INVALID_INPUT", message: sdk[1]! };
  return { ok: false, code: "UNEXPECTED", message: text };
}

export interface AuditTapOptions {
  engine: WaymarkEngine;
  /** Names of the write tools this server offers. */
  writeTools: ReadonlySet<string>;
  /** The client as its initialize request named it (read when a write is recorded). */
  client: () => { name?: string; version?: string } | undefined;
}

/** Records the write tools' calls of one session; see the top of the file. */
export class AuditTap implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  private readonly pending = new Map<string | number, Pending>();

  constructor(
    private readonly inner: Transport,
    private readonly options: AuditTapOptions,
  ) {
    // Handlers the transport's owner set before connecting are kept (the SDK chains them).
    this.onclose = inner.onclose;
    this.onerror = inner.onerror;
    this.onmessage = inner.onmessage;
    inner.onclose = () => {
      this.settleAll(
        "SESSION_CLOSED",
        "The session closed before the call was answered; the write may have been done.",
      );
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      this.watch(message);
      this.onmessage?.(message, extra);
    };
  }

  private watch(message: JSONRPCMessage): void {
    if (!("method" in message)) return;
    const params = (message.params ?? {}) as Json;
    if ("id" in message && message.method === "tools/call") {
      const name = params.name;
      if (typeof name === "string" && this.options.writeTools.has(name))
        this.pending.set(message.id, { tool: name, args: params.arguments ?? {} });
    } else if (message.method === "notifications/cancelled") {
      const id = params.requestId as string | number | undefined;
      const call = id === undefined ? undefined : this.pending.get(id);
      if (call && id !== undefined) {
        this.pending.delete(id);
        void this.record(call, {
          ok: false,
          code: "CANCELLED_BY_CLIENT",
          message: `The client cancelled the call${typeof params.reason === "string" ? ` (${params.reason.slice(0, 200)})` : ""}; the write may have been done.`,
        });
      }
    }
  }

  private client(): AuditClient {
    const info = this.options.client();
    const client: AuditClient = {};
    if (typeof info?.name === "string") client.name = info.name.slice(0, 200);
    if (typeof info?.version === "string") client.version = info.version.slice(0, 100);
    if (this.inner.sessionId) client.session = this.inner.sessionId;
    return client;
  }

  private async record(call: Pending, outcome: AuditOutcome): Promise<void> {
    const target = targetOf(call.args);
    if (target?.workflow !== undefined && target.key !== undefined) {
      const row = await this.options.engine.findRun(target.workflow, target.key).catch(() => undefined);
      if (row) target.runId = row.id;
    }
    await this.options.engine.audit.record(
      { surface: "mcp", client: this.client(), action: call.tool, run: target, args: call.args },
      outcome,
    );
  }

  private settleAll(code: string, message: string): void {
    for (const call of this.pending.values()) void this.record(call, { ok: false, code, message });
    this.pending.clear();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = "id" in message && !("method" in message) ? message.id : undefined;
    const call = id === undefined || id === null ? undefined : this.pending.get(id);
    if (call && id !== undefined && id !== null) {
      this.pending.delete(id);
      // Recorded before the answer leaves: a client that reads the audit next finds its write there.
      await this.record(call, outcomeOfAnswer(message));
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
