// A run's leading plain completed steps as the store read them, packed: replay reads them with no object each.

import { type EntryRow, ReplayEntry } from "./rows.js";

/** Steps a chunk of PackedSteps holds (the last may hold fewer): the store's read ranges, a power of two. */
export const PACK_CHUNK = 4096;
const SHIFT = 12;

/** Joins a chunk's names and its outputs: no name or JSON text holds it. */
export const PACK_SEP = "\u0001";

/**
 * One range of `count` steps as the store read it: their names joined by PACK_SEP, their output JSON texts
 * ("" for none: JSON text is never empty) joined likewise, and where each part begins in its text (at
 * `count`, the text's length + 1). The texts are not split: a step's name is compared in place and its
 * output cut out when read, so a replay keeps no string a step alive (10,000 of them survived a scavenge).
 */
export interface PackedChunk {
  readonly names: string;
  readonly outputs: string;
  readonly nameAt: Uint32Array;
  readonly outputAt: Uint32Array;
}

/** The chunk of `count` steps in these texts, or null when either does not hold exactly `count` parts. */
export function packChunk(names: string, outputs: string, count: number): PackedChunk | null {
  const nameAt = partsAt(names, count);
  const outputAt = nameAt && partsAt(outputs, count);
  return outputAt ? { names, outputs, nameAt: nameAt!, outputAt } : null;
}

/** Where each of the `count` parts of `text` begins (then text.length + 1), or null for another count. */
function partsAt(text: string, count: number): Uint32Array | null {
  const at = new Uint32Array(count + 1);
  let p = -1;
  for (let i = 1; i < count; i++) {
    p = text.indexOf(PACK_SEP, p + 1);
    if (p === -1) return null;
    at[i] = p + 1;
  }
  if (text.indexOf(PACK_SEP, p + 1) !== -1) return null;
  at[count] = text.length + 1;
  return at;
}

/**
 * The root scope's entries at ordinals 0..count-1 (seq = ordinal + 1), each a step completed with an output
 * and nothing else to replay (no detail, no state change, as ReplayEntry), in chunks of PACK_CHUNK as the
 * store read them (no copy into one list). A replay reads them by ordinal; entryAt() builds the entry object
 * another reader asks for.
 */
export class PackedSteps {
  readonly count: number;

  constructor(
    readonly runId: number,
    private readonly chunks: readonly PackedChunk[],
  ) {
    let count = 0;
    for (const [i, chunk] of chunks.entries()) {
      const n = chunk.nameAt.length - 1;
      if (chunk.outputAt.length - 1 !== n || (i < chunks.length - 1 && n !== PACK_CHUNK))
        throw new Error(
          `internal: packed chunk ${i} holds ${n} names and ${chunk.outputAt.length - 1} outputs.`,
        );
      count += n;
    }
    this.count = count;
  }

  /** True when the step at `ordinal` is named `name` (false past the last); compares in place. */
  nameIs(ordinal: number, name: string): boolean {
    if (!(ordinal >= 0 && ordinal < this.count)) return false;
    const c = this.chunks[ordinal >>> SHIFT]!;
    const i = ordinal & (PACK_CHUNK - 1);
    const start = c.nameAt[i]!;
    return c.nameAt[i + 1]! - 1 - start === name.length && c.names.startsWith(name, start);
  }

  /** The name of the step at `ordinal` (undefined past the last). */
  name(ordinal: number): string | undefined {
    if (!(ordinal >= 0 && ordinal < this.count)) return undefined;
    const c = this.chunks[ordinal >>> SHIFT]!;
    const i = ordinal & (PACK_CHUNK - 1);
    return c.names.slice(c.nameAt[i], c.nameAt[i + 1]! - 1);
  }

  /** The output JSON text of the step at `ordinal`, or null when it returned nothing. */
  output(ordinal: number): string | null {
    const c = this.chunks[ordinal >>> SHIFT]!;
    const i = ordinal & (PACK_CHUNK - 1);
    const start = c.outputAt[i]!;
    const end = c.outputAt[i + 1]! - 1;
    return end === start ? null : c.outputs.slice(start, end);
  }

  /** The entry at `ordinal` as an object (what the store would have loaded for it). */
  entryAt(ordinal: number): EntryRow {
    if (!(ordinal >= 0 && ordinal < this.count))
      throw new RangeError(`packed step ${ordinal} of ${this.count}`);
    return new ReplayEntry(
      this.runId,
      ordinal + 1,
      "",
      ordinal,
      this.name(ordinal)!,
      "step",
      "completed",
      this.output(ordinal),
      null,
      null,
      null,
    ) as unknown as EntryRow;
  }
}
