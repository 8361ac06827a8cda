// Waymark's log lines on stderr (stdout belongs to the MCP protocol in stdio mode): "source: message" text
// by default, or one JSON object per line with time, level, source, msg and fields (`--log-format json`).
//
// IMPORTANT: in JSON mode every line on stderr is an object, lines written by others too (the application's
// console.error, a library's warning): those become {"level":"info","source":"stderr","msg":...}.

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "text" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

let format: LogFormat = "text";
/** stderr's own write, before JSON mode wrapped it. */
let rawWrite: ((line: string) => void) | null = null;

/** Writes one log line: `source: message` as text, or an object with `fields` beside time, level and msg. */
export function log(
  level: LogLevel,
  source: string,
  message: string,
  fields?: Record<string, unknown>,
): void {
  if (format === "text") {
    process.stderr.write(`${source}: ${message}\n`);
    return;
  }
  const line = JSON.stringify({ time: new Date().toISOString(), level, source, msg: message, ...fields });
  (rawWrite ?? ((l: string) => process.stderr.write(l)))(`${line}\n`);
}

/** The format in force. */
export function logFormat(): LogFormat {
  return format;
}

/**
 * Sets the format for the process. JSON wraps stderr so lines from anyone else become objects too; text
 * puts stderr back as it was.
 */
export function setLogFormat(next: LogFormat): void {
  if (next === format) return;
  format = next;
  const stderr = process.stderr;
  if (next === "text") {
    flushPartial?.();
    if (flushPartial) process.off("exit", flushPartial);
    flushPartial = null;
    if (rawWrite) stderr.write = original!;
    rawWrite = null;
    return;
  }
  original = stderr.write;
  const write = original.bind(stderr) as (chunk: string) => boolean;
  rawWrite = (line) => void write(line);
  let partial = "";
  const emit = (l: string) => {
    if (l.trim() !== "")
      write(
        `${JSON.stringify({ time: new Date().toISOString(), level: "info", source: "stderr", msg: l })}\n`,
      );
  };
  // A last write without a newline is still a line: logged when the process exits (stderr is synchronous
  // then) or the format goes back to text.
  flushPartial = () => {
    const last = partial;
    partial = "";
    emit(last);
  };
  process.on("exit", flushPartial);
  stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    partial += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const l of lines) emit(l);
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof stderr.write;
}

let original: typeof process.stderr.write | null = null;
/** Logs what JSON mode holds of a line not ended yet (null in text mode). */
let flushPartial: (() => void) | null = null;
