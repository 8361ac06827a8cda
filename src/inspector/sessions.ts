// The inspector's login sessions: random ids kept in this server's memory, each with an expiry.
//
// IMPORTANT: a session id means nothing outside the server that made it: it is not derived from the
// token, so another server with the same token (or any other server on 127.0.0.1, which receives the
// cookie too, since cookies ignore ports) cannot use it; it expires; and revokeAll() (the server
// stopping) ends every one. The cookie name carries the port and a random server id, so servers side by
// side on one machine never overwrite each other's cookie.

import { randomBytes } from "node:crypto";

/** How long a login lasts by default: a working day. */
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60_000;
/** At most this many live sessions; a login past it ends the oldest. */
export const MAX_SESSIONS = 1000;

export interface SessionOptions {
  /** Milliseconds since the epoch (the engine's clock, so tests move it). */
  now: () => number;
  ttlMs?: number;
  max?: number;
}

/** The sessions of one inspector (one server). */
export class Sessions {
  /** Random per server: part of the cookie name. */
  readonly serverId = randomBytes(6).toString("hex");
  readonly ttlMs: number;
  private readonly max: number;
  private readonly expiry = new Map<string, number>(); // id → expires at; insertion order is age
  private readonly now: () => number;

  constructor(options: SessionOptions) {
    this.now = options.now;
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.max = options.max ?? MAX_SESSIONS;
  }

  /** The cookie that carries a session for the server listening on `port`. */
  cookieName(port: number): string {
    return `waymark_inspector_${port}_${this.serverId}`;
  }

  /** Starts a session; returns its id (256 random bits). */
  create(): string {
    const now = this.now();
    // Insertion order is expiry order (one ttl for all), so the expired ones are at the front.
    for (const [id, at] of this.expiry) {
      if (at > now) break;
      this.expiry.delete(id);
    }
    while (this.expiry.size >= this.max) this.expiry.delete(this.expiry.keys().next().value!);
    const id = randomBytes(32).toString("base64url");
    this.expiry.set(id, now + this.ttlMs);
    return id;
  }

  /** True while `id` names a live session of this server; an expired one is forgotten. */
  valid(id: string): boolean {
    const at = this.expiry.get(id);
    if (at === undefined) return false;
    if (at > this.now()) return true;
    this.expiry.delete(id);
    return false;
  }

  /** Ends every session (the server stops). */
  revokeAll(): void {
    this.expiry.clear();
  }

  /** Live sessions held in memory. */
  get size(): number {
    return this.expiry.size;
  }
}
