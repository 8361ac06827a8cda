// The top stack frame in the user's own code: skips Node internals, dependencies and Waymark itself.

import path from "node:path";
import { fileURLToPath } from "node:url";

/** One parsed stack frame. */
export interface Frame {
  /** The function, when the stack names it. */
  fn: string | null;
  /** File path, relative to the working directory when inside it. */
  file: string;
  line: number;
  column: number;
}

/** Waymark's own source folder (src/ or dist/src/): frames in it are the engine's, not the user's. */
const OWN_DIR = fileURLToPath(new URL("../", import.meta.url));

const FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?\s*$/;

function toPath(file: string): string {
  if (file.startsWith("file://")) {
    try {
      return fileURLToPath(file);
    } catch {
      return file;
    }
  }
  return file;
}

function isUserFile(file: string): boolean {
  if (file.startsWith("node:") || file.startsWith("internal/") || !file.includes("/")) return false;
  if (file.includes(`${path.sep}node_modules${path.sep}`)) return false;
  return !file.startsWith(OWN_DIR);
}

/**
 * The function name worth showing, or null. V8 names anonymous functions after where they appear:
 * an arrow passed to `ctx.step("x", fn, { retries: 0 })` reads `ctx.step.retries`, which looks like an
 * API name and is not the user's; a method of an object literal reads `Object.run`.
 */
function shownName(raw: string | undefined): string | null {
  if (!raw) return null;
  const name = raw.replace(/^async /, "").replace(/^Object\./, "");
  if (name === "<anonymous>" || name.includes("<anonymous>")) return null;
  // A dotted name starting in lower case is inferred from a call's arguments (`ctx.step.retries`);
  // `Class.method` (upper case) and plain names are real names.
  if (/^[a-z_$][\w$]*\./.test(name)) return null;
  return name;
}

/** Parses the frames of a V8 stack trace (lines starting with "at"). */
export function parseStack(stack: string | undefined): Frame[] {
  if (!stack) return [];
  const frames: Frame[] = [];
  for (const line of stack.split("\n")) {
    const m = FRAME.exec(line);
    if (!m) continue;
    frames.push({ fn: shownName(m[1]), file: toPath(m[2]!), line: Number(m[3]), column: Number(m[4]) });
  }
  return frames;
}

/** The first frame in user code, with its file relative to the working directory; null if none. */
export function topUserFrame(stack: string | undefined, cwd = process.cwd()): Frame | null {
  const frame = parseStack(stack).find((f) => isUserFile(f.file));
  if (!frame) return null;
  const rel = path.relative(cwd, frame.file);
  return { ...frame, file: rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : frame.file };
}

/** "fixtures/failures/tax-outage.ts:31 (quoteTax)". */
export function frameText(f: Frame): string {
  return `${f.file}:${f.line}${f.fn ? ` (${f.fn})` : ""}`;
}
