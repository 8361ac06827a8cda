// A CLI verb's error line on stderr: `waymark VERB: message` in text mode, one object of level error in
// JSON mode (through log.ts, so it is not taken for another writer's info line).

import { log, logFormat } from "../log.js";

/** Where a verb writes (process.stderr, or what a test passes). */
interface Output {
  write(text: string): unknown;
}

/** Writes `message` as `verb`'s error: to `err` as text, or as an error-level log object in JSON mode. */
export function verbError(err: Output, verb: string, message: string): void {
  if (logFormat() === "json") log("error", `waymark ${verb}`, message.trimEnd());
  else err.write(`waymark ${verb}: ${message.endsWith("\n") ? message : `${message}\n`}`);
}
