// What a verify execution (a replay's or a deploy's check) reports to the check running it.

import type { Scope } from "./history.js";

/** What a verify execution tells the check that runs it (replay-check.ts), enough to know when it is done. */
export interface VerifyObserver {
  /** A scope's code began: it is to reach every entry the scope holds, unless it ends or is cancelled first. */
  opened(scope: Scope): void;
  /** A scope's code ended (its branch or iteration returned or threw): it reaches nothing more. */
  ended(scope: Scope): void;
  /** A recorded entry was reached again, or a divergence found. */
  progressed(): void;
  /** The workflow function ended: null when it returned, else why it failed (a divergence among others). */
  finished(error: unknown): void;
}
