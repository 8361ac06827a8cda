// Rivet's engine on an in-memory EngineDriver: the fastest storage it can have.
//
// The package's own InMemoryDriver (from "@rivetkit/workflow-engine/testing") waits `latency` ms on every
// KV call (10 by default; even 0 is a setTimeout, about 1 ms), which would measure timers, not the engine.
// This driver keeps its semantics (one Map per workflow, `list` sorted by key bytes, messages in memory)
// without any wait, and uses a faster key encoding than its hex strings: it favours the peer.

import fs from "node:fs";
import type { EngineDriver, KVEntry, KVWrite, WorkflowMessageDriver } from "@rivetkit/workflow-engine";
import { InMemoryDriver } from "@rivetkit/workflow-engine/testing";

/** Key bytes as a latin1 string: one char per byte, so string order is byte order. */
function keyString(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");
}

/** One workflow's KV namespace and alarm, in memory (each Rivet workflow needs its own driver). */
export class RivetMemoryDriver implements EngineDriver {
  readonly workerPollInterval = 100;
  private readonly kv = new Map<string, KVEntry>();
  alarm: number | undefined;
  /** The package's in-memory message queue (it does not wait; only its KV methods do). */
  private readonly messages = new InMemoryDriver();
  readonly messageDriver: WorkflowMessageDriver = this.messages.messageDriver;

  async get(key: Uint8Array): Promise<Uint8Array | null> {
    return this.kv.get(keyString(key))?.value ?? null;
  }

  async set(key: Uint8Array, value: Uint8Array): Promise<void> {
    this.kv.set(keyString(key), { key, value });
  }

  async delete(key: Uint8Array): Promise<void> {
    this.kv.delete(keyString(key));
  }

  async batchDelete(keys: Uint8Array[]): Promise<void> {
    for (const key of keys) this.kv.delete(keyString(key));
  }

  async deletePrefix(prefix: Uint8Array): Promise<void> {
    const p = keyString(prefix);
    for (const k of this.kv.keys()) if (k.startsWith(p)) this.kv.delete(k);
  }

  async deleteRange(start: Uint8Array, end: Uint8Array): Promise<void> {
    const s = keyString(start);
    const e = keyString(end);
    for (const k of this.kv.keys()) if (k >= s && k < e) this.kv.delete(k);
  }

  async list(prefix: Uint8Array): Promise<KVEntry[]> {
    const p = keyString(prefix);
    const hits: Array<[string, KVEntry]> = [];
    for (const [k, entry] of this.kv) if (k.startsWith(p)) hits.push([k, entry]);
    hits.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return hits.map(([, entry]) => entry);
  }

  async batch(writes: KVWrite[]): Promise<void> {
    for (const { key, value } of writes) this.kv.set(keyString(key), { key, value });
  }

  async setAlarm(_workflowId: string, wakeAt: number): Promise<void> {
    this.alarm = wakeAt;
  }

  async clearAlarm(_workflowId: string): Promise<void> {
    this.alarm = undefined;
  }

  waitForMessages(messageNames: string[], abortSignal: AbortSignal): Promise<void> {
    return this.messages.waitForMessages(messageNames, abortSignal);
  }

  /** A copy of the stored KV (not the messages): lets a test resume from a snapshot. */
  clone(): RivetMemoryDriver {
    const copy = new RivetMemoryDriver();
    for (const [k, v] of this.kv) copy.kv.set(k, v);
    copy.alarm = this.alarm;
    return copy;
  }

  /** Writes the stored KV to a file (length-prefixed keys and values), to build a test's starting point once. */
  save(file: string): void {
    fs.writeFileSync(file, this.encode());
  }

  /** A driver holding the KV saved by `save`. */
  static load(file: string): RivetMemoryDriver {
    return RivetMemoryDriver.decode(fs.readFileSync(file));
  }

  /** The stored KV as bytes: per pair, key length and value length (u32 LE), then key and value. */
  encode(): Buffer {
    const parts: Buffer[] = [];
    for (const { key, value } of this.kv.values()) {
      const head = Buffer.alloc(8);
      head.writeUInt32LE(key.byteLength, 0);
      head.writeUInt32LE(value.byteLength, 4);
      parts.push(head, Buffer.from(key), Buffer.from(value));
    }
    return Buffer.concat(parts);
  }

  /** A driver holding the KV of `encode`. */
  static decode(data: Buffer): RivetMemoryDriver {
    const driver = new RivetMemoryDriver();
    for (let at = 0; at < data.length; ) {
      const k = data.readUInt32LE(at);
      const v = data.readUInt32LE(at + 4);
      const key = new Uint8Array(data.subarray(at + 8, at + 8 + k));
      const value = new Uint8Array(data.subarray(at + 8 + k, at + 8 + k + v));
      driver.kv.set(keyString(key), { key, value });
      at += 8 + k + v;
    }
    return driver;
  }

  /** Writes many workflows' drivers to one file: per workflow, its id and its encoded KV, length-prefixed. */
  static saveMany(file: string, drivers: Map<string, RivetMemoryDriver>): void {
    const parts: Buffer[] = [];
    for (const [id, driver] of drivers) {
      const name = Buffer.from(id, "utf8");
      const body = driver.encode();
      const head = Buffer.alloc(8);
      head.writeUInt32LE(name.byteLength, 0);
      head.writeUInt32LE(body.byteLength, 4);
      parts.push(head, name, body);
    }
    fs.writeFileSync(file, Buffer.concat(parts));
  }

  /** The drivers saved by `saveMany`, by workflow id. */
  static loadMany(file: string): Map<string, RivetMemoryDriver> {
    const data = fs.readFileSync(file);
    const out = new Map<string, RivetMemoryDriver>();
    for (let at = 0; at < data.length; ) {
      const n = data.readUInt32LE(at);
      const b = data.readUInt32LE(at + 4);
      const id = data.toString("utf8", at + 8, at + 8 + n);
      out.set(id, RivetMemoryDriver.decode(data.subarray(at + 8 + n, at + 8 + n + b)));
      at += 8 + n + b;
    }
    return out;
  }

  /** Number of KV pairs held. */
  get size(): number {
    return this.kv.size;
  }
}
