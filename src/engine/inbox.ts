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

  /** The oldest queued message (lowest id, so first sent) on any of `queues`, taken off its queue. */
  take(queues: readonly string[]): MessageRow | undefined {
    let from: MessageRow[] | undefined;
    for (const q of queues) {
      const head = this.queues.get(q)?.[0];
      if (head && (!from || head.id < from[0]!.id)) from = this.queues.get(q);
    }
    return from?.shift();
  }
}
