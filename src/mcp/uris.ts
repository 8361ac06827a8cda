// Resource addresses: waymark://workflows and waymark://runs/{workflow}/{key}[/history|/state|/steps/{id}].
// Workflow names and keys are percent-encoded, so a key may hold any character.

export const WORKFLOWS_URI = "waymark://workflows";

export type RunPart = "run" | "history" | "state" | "step";

/** A parsed run resource address. */
export interface RunAddress {
  workflow: string;
  key: string;
  part: RunPart;
  /** Entry id or path, for part "step". */
  step?: string;
}

const enc = encodeURIComponent;

export function runUri(workflow: string, key: string): string {
  return `waymark://runs/${enc(workflow)}/${enc(key)}`;
}

export function historyUri(workflow: string, key: string): string {
  return `${runUri(workflow, key)}/history`;
}

export function stateUri(workflow: string, key: string): string {
  return `${runUri(workflow, key)}/state`;
}

export function stepUri(workflow: string, key: string, id: number | string): string {
  return `${runUri(workflow, key)}/steps/${enc(String(id))}`;
}

function dec(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** Parses a run resource address, or null when `uri` is not one. */
export function parseRunUri(uri: string): RunAddress | null {
  const m = /^waymark:\/\/runs\/([^/]+)\/([^/]+)(?:\/(history|state)|\/steps\/([^/]+))?$/.exec(uri);
  if (!m) return null;
  const workflow = dec(m[1]!);
  const key = dec(m[2]!);
  if (workflow === null || key === null) return null;
  if (m[4] !== undefined) {
    const step = dec(m[4]);
    return step === null ? null : { workflow, key, part: "step", step };
  }
  return { workflow, key, part: (m[3] as "history" | "state" | undefined) ?? "run" };
}
