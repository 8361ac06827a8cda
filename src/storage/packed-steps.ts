// A run's leading plain completed steps as the store read them, packed: replay reads them with no object each.

import { type EntryRow, ReplayEntry } from "./rows.js";

/** Steps a chunk of PackedSteps holds (the last may hold fewer): the store's read ranges, a power of two. */
export const PACK_CHUNK = 4096;
const SHIFT = 12;

/**
 * The root scope's entries at ordinals 0..count-1 (seq = ordinal + 1), each a step completed with an output
 * and nothing else to replay (no detail, no state change, as ReplayEntry): their names, and their output JSON
 * texts with "" for none (JSON text is never empty), in chunks of PACK_CHUNK as the store read them (no copy
 * into one list). A replay reads them by ordinal; entryAt() builds the entry object another reader asks for.
 */
export class PackedSteps {
  readonly count: number;

  constructor(
    readonly runId: number,
    private readonly names: readonly string[][],
    /** Output JSON texts by ordinal, "" for a step that returned nothing. */
    private readonly outputs: readonly string[][],
  ) {
    let count = 0;
    for (const [i, chunk] of names.entries()) {
      if (outputs[i]?.length !== chunk.length || (i < names.length - 1 && chunk.length !== PACK_CHUNK))
        throw new Error(
          `internal: packed chunk ${i} holds ${chunk.length} names and ${outputs[i]?.length} outputs.`,
        );
      count += chunk.length;
    }
    this.count = count;
  }

  /** The name of the step at `ordinal` (undefined past the last). */
  name(ordinal: number): string | undefined {
    return this.names[ordinal >>> SHIFT]?.[ordinal & (PACK_CHUNK - 1)];
  }

  /** The output JSON text of the step at `ordinal`, or null when it returned nothing. */
  output(ordinal: number): string | null {
    const text = this.outputs[ordinal >>> SHIFT]![ordinal & (PACK_CHUNK - 1)]!;
    return text === "" ? null : text;
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
