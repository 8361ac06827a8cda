// The LISTEN side of change notifications: one dedicated connection per store, a counter bumped by
// other store instances' commits, and listeners called at once.
//
// IMPORTANT: every commit that changes something sends NOTIFY with its store's instance id as payload;
// a store ignores its own. While the LISTEN connection is down (reconnecting), `value()` changes on
// every call, so the engine's polling takes over until it is back.

import pg from "pg";

const THROTTLE_MS = 10;

export class ChangeListener {
  private counter = 0;
  private client: pg.Client | null = null;
  private connected = false;
  private closed = false;
  private retryMs = 100;
  private retryTimer: NodeJS.Timeout | null = null;
  private pending: NodeJS.Timeout | null = null;
  private lastCall = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly instanceId: string,
  ) {}

  /** Connects and listens; rejects if the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** The counter: changes when another instance committed (or on every call while disconnected). */
  value(): number {
    return this.connected ? this.counter : ++this.counter;
  }

  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Counts a change at once; calls listeners at most once per THROTTLE_MS (the first at once, the rest
   * folded into one call at the end of the window), so a busy database does not keep engines ticking.
   */
  private bump(): void {
    this.counter++;
    if (this.pending) return;
    const wait = this.lastCall + THROTTLE_MS - Date.now();
    if (wait <= 0) {
      this.call();
      return;
    }
    this.pending = setTimeout(() => {
      this.pending = null;
      this.call();
    }, wait);
    this.pending.unref();
  }

  private call(): void {
    this.lastCall = Date.now();
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        // a listener's failure is its own
      }
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on("notification", (msg) => {
      if (msg.payload !== this.instanceId) this.bump();
    });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      client.removeAllListeners("end");
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.connected = true;
    this.retryMs = 100;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.connected = false;
    client.end().catch(() => {});
    this.bump(); // notifications may have been missed: look now
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().then(
        () => this.bump(),
        () => {
          this.retryMs = Math.min(this.retryMs * 2, 5000);
          this.scheduleReconnect();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }

  /** Test hook: drops the LISTEN connection as a network failure would. */
  dropConnection(): void {
    const client = this.client;
    if (client) this.lost(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pending) clearTimeout(this.pending);
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) {
      client.removeAllListeners("end");
      await client.end().catch(() => {});
    }
  }
}
