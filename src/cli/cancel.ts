// `waymark cancel`: cancel many unfinished runs by signature, workflow, status or keys (see bulk-verb.ts).

import { runBulk } from "./bulk-verb.js";

/** `waymark cancel ...`; resolves the exit code. */
export function run(
  args: string[],
  io: { out: { write(t: string): unknown }; err: { write(t: string): unknown } } = {
    out: process.stdout,
    err: process.stderr,
  },
): Promise<number> {
  return runBulk("cancel", args, io);
}
