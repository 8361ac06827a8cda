// How history and the code differ at one entry, worded the same by the error, the diagnosis, `waymark check`
// and failure groups: the entry's kind as a person says it and its name, e.g.
// `history holds a queue wait named "await-approval"; the code asks for one named "wait-approval"`.

/** One entry as history holds it or as the code asks for it. */
interface Entry {
  kind: string;
  name: string;
  /** What the entry waits for, where kind and name alone do not say it: `a batch of up to 10 messages on "items"`. */
  shape?: string;
}

/** Each entry kind as a noun (a queue entry is a wait on a queue, not the queue). */
const NOUNS: Record<string, string> = {
  step: "step",
  sleep: "sleep",
  queue: "queue wait",
  join: "join",
  race: "race",
  loop: "loop",
  version: "ctx.version marker",
  replay: "replay marker",
  child: "child run",
};

/** The kind of an entry as a noun: "queue wait", "step". */
export function entryNoun(kind: string): string {
  return NOUNS[kind] ?? `${kind} entry`;
}

/** An entry as a phrase: `a queue wait named "await-approval"`. */
export function entryPhrase(entry: Entry): string {
  return `a ${entryNoun(entry.kind)} named ${JSON.stringify(entry.name)}`;
}

/**
 * `history holds <entry or nothing more>; the code asks for <entry, "one named ..." when of the same kind,
 * or nothing more>`; `tense` "asked" for a run that already failed on it.
 */
export function divergence(
  recorded: Entry | null,
  requested: Entry | null,
  tense: "asks" | "asked" = "asks",
): string {
  if (recorded && requested && recorded.kind === requested.kind && recorded.name === requested.name) {
    return `history holds ${entryPhrase(recorded)} waiting for ${recorded.shape ?? "something else"}; the code ${tense} for ${requested.shape ?? "something else"}`;
  }
  const holds = recorded ? entryPhrase(recorded) : "nothing more";
  const asks = !requested
    ? `nothing more (the code ${tense === "asks" ? "finishes" : "finished"})`
    : recorded?.kind === requested.kind
      ? `one named ${JSON.stringify(requested.name)}`
      : entryPhrase(requested);
  return `history holds ${holds}; the code ${tense} for ${asks}`;
}
