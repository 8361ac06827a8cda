// A run's leading plain completed steps as the store read them, packed: replay reads them with no object each.

import { type EntryRow, ReplayEntry } from "./rows.js";

/**
 * The root scope's entries at ordinals 0..count-1 (seq = ordinal + 1), each a step completed with an output
 * and nothing else to replay (no detail, no state change, as ReplayEntry): their names, and their output JSON
 * texts with "" for none (JSON text is never empty). A replay reads the two lists; entryAt() builds the entry
 * object another reader asks for.
 */
export class PackedSteps {
  readonly count: number;

  constructor(
    readonly runId: number,
    readonly names: readonly string[],
    /** Output JSON texts by ordinal, "" for a step that returned nothing. */
    readonly outputs: readonly string[],
  ) {
    if (outputs.length !== names.length)
      throw new Error(`internal: ${names.length} packed names for ${outputs.length} outputs.`);
    this.count = names.length;
  }

  /** The output JSON text of the step at `ordinal`, or null when it returned nothing. */
  output(ordinal: number): string | null {
    const text = this.outputs[ordinal]!;
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
      this.names[ordinal]!,
      "step",
      "completed",
      this.output(ordinal),
      null,
      null,
      null,
    ) as unknown as EntryRow;
  }
}
