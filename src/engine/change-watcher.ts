// Notices other processes' writes through the store's change counter: new messages for runs executing
// here, requests (cancel, replay) about them. Polled every `pollMs`, and at once when the store says so.
//
// IMPORTANT: messages are read past a high-water mark taken at start, so each is delivered once.

import type { Engine } from "./engine.js";

export class ChangeWatcher {
  private lastChange = -1;
  private messageMark = 0;
  private poller: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly engine: Engine) {}

  /** Takes the marks: what exists now is not news. */
  async init(): Promise<void> {
    this.messageMark = await this.engine.store.maxMessageId();
    this.lastChange = await this.engine.store.changeCounter();
  }

  /** Starts polling the change counter (and listening to the store, where it tells). */
  start(pollMs: number): void {
    const e = this.engine;
    this.poller = setInterval(() => void this.poll(), pollMs);
    this.unsubscribe = e.store.onChange?.(() => void e.tick()) ?? null;
  }

  stop(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Looks for writes of other processes: new messages for live runs, requests about them (the scheduler calls it). */
  async notice(): Promise<void> {
    const e = this.engine;
    const change = await e.store.changeCounter();
    if (change === this.lastChange) return;
    this.lastChange = change;
    e.events.emit({ type: "external" });
    for (;;) {
      const fresh = await e.store.messagesSince(this.messageMark, 1000);
      for (const m of fresh) {
        this.messageMark = m.id;
        if (m.consumedAt !== null) continue;
        const exec = e.active.get(m.runId);
        if (exec) exec.deliver(m);
        else e.loading.get(m.runId)?.push(m);
      }
      if (fresh.length < 1000) break;
    }
    if (e.active.size > 0) await e.requests.applyToActive([...e.active.keys()]);
    await e.childRuns.check();
  }

  private async poll(): Promise<void> {
    const e = this.engine;
    if (e.closed || e.scheduler.busy) return;
    try {
      if ((await e.store.changeCounter()) !== this.lastChange) void e.tick();
    } catch {
      // the next poll tries again
    }
  }
}
