// A run's messages received but not yet read, per queue in id order, each taken once.

import type { MessageRow } from "../storage/store.js";

/** The messages a run holds per queue, each message counted once however often it arrives. */
export class Inbox {
  private readonly queues = new Map<string, MessageRow[]>();
  private readonly seen = new Set<number>();

  /** Queues a message unless already seen; false when it was. */
  add(m: MessageRow): boolean {
    if (this.seen.has(m.id)) return false;
    this.seen.add(m.id);
    let list = this.queues.get(m.queue);
    if (!list) this.queues.set(m.queue, (list = []));
    list.push(m);
    if (list.length > 1 && list[list.length - 2]!.id > m.id) list.sort((a, b) => a.id - b.id);
    return true;
  }

  /** The oldest queued message on `queue`, taken off it. */
  take(queue: string): MessageRow | undefined {
    return this.queues.get(queue)?.shift();
  }
}
