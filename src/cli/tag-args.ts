// `--tag name=value` (repeatable) for the verbs that select runs by tags: one parse and one wording.

/** The tags of repeated `--tag name=value` flags (undefined when none), or the usage problem with the fix. */
export function parseTagFlags(
  pairs: string[] | undefined,
): { ok: true; tags: Record<string, string> | undefined } | { ok: false; problem: string } {
  let tags: Record<string, string> | undefined;
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0)
      return {
        ok: false,
        problem: `--tag ${JSON.stringify(pair)}: write it as name=value, e.g. --tag customer=c-9.`,
      };
    const name = pair.slice(0, eq);
    tags ??= {};
    if (Object.hasOwn(tags, name))
      return { ok: false, problem: `--tag ${name} is given twice: a run holds one value per tag name.` };
    tags[name] = pair.slice(eq + 1);
  }
  return { ok: true, tags };
}
