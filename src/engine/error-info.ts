// Errors as history records them: plain data, never a live object.

/** An error as recorded: enough to read, never a live object. */
export interface ErrorInfo {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  details?: Record<string, unknown>;
}

/** Turns anything thrown into a recordable error. */
export function errorInfo(err: unknown): ErrorInfo {
  if (err instanceof Error) {
    const info: ErrorInfo = { name: err.name, message: err.message };
    if (err.stack) info.stack = err.stack;
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string") info.code = code;
    const details = (err as { details?: unknown }).details;
    if (details && typeof details === "object") {
      try {
        info.details = JSON.parse(JSON.stringify(details)) as Record<string, unknown>;
      } catch {
        // details that do not serialise are left out
      }
    }
    return info;
  }
  let message: string;
  try {
    message = typeof err === "string" ? err : JSON.stringify(err);
  } catch {
    message = String(err);
  }
  return { name: "NonErrorThrown", message: `A non-Error value was thrown: ${message}` };
}
