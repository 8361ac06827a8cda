// A process-wide hold on starting engines, for `waymark mcp --registry`: while it imports the user's
// module, an engine that module starts would run workflows beside the application's own engine (creating
// runs, sending messages twice). Kept on globalThis under a registered symbol, so a module that loads
// another copy of Waymark (the app's node_modules beside the CLI's) meets the same hold.

import { EngineStartRefusedError } from "./errors.js";

interface Hold {
  /** What holds starts, for the error: e.g. `waymark mcp is importing ./registry.ts as its --registry module`. */
  readonly why: string;
  /** Every start refused while the hold lasted (e.g. "registry.start()"). */
  readonly refused: string[];
}

const KEY = Symbol.for("waymark.startHold");
const slot = globalThis as { [KEY]?: Hold };

/** Throws EngineStartRefusedError while starts are held; `where` names the call (e.g. "registry.start()"). */
export function assertStartAllowed(where: string): void {
  const hold = slot[KEY];
  if (!hold) return;
  hold.refused.push(where);
  throw new EngineStartRefusedError(where, hold.why);
}

/** Holds engine starts while `fn` runs; resolves to what it returned and the starts refused meanwhile. */
export async function holdingStarts<T>(
  why: string,
  fn: () => Promise<T>,
): Promise<{ result: PromiseSettledResult<T>; refused: string[] }> {
  const hold: Hold = { why, refused: [] };
  const previous = slot[KEY];
  slot[KEY] = hold;
  try {
    const [result] = await Promise.allSettled([fn()]);
    return { result: result!, refused: hold.refused };
  } finally {
    slot[KEY] = previous;
  }
}
