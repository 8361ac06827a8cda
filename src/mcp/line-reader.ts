// Splits the stdio byte stream into lines of at most `maxBytes`. A longer line is never held whole: it
// is skipped to its newline, and reported with its size and the id of the request it carried (read on
// the fly by a small scanner of the top-level object), so the session answers it and goes on.

/** A JSON-RPC request id, or null when none could be read. */
export type RequestId = string | number | null;

/** What a chunk of input completed: a line (without its newline), or a line too long to read. */
export type LineEvent = { kind: "line"; text: string } | { kind: "overlong"; bytes: number; id: RequestId };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;
const isNumberByte = (b: number) =>
  (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45;

/**
 * Finds `"id": <string or number>` among the top-level members of a JSON object as its bytes stream
 * by, without keeping them. Stops at the id, at the end of the object, or at anything not an object.
 */
export class IdScanner {
  id: RequestId = null;
  private done = false;
  private depth = 0;
  private inString = false;
  private escape = false;
  /** Where the scan is within a top-level member. */
  private expect: "key" | "colon" | "value" = "key";
  private readingKey = false;
  private key: number[] = [];
  private keyLength = 0;
  private capture: "no" | "pending" | "string" | "number" = "no";
  private captured: number[] = [];

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.done; i++) this.byte(bytes[i]!);
  }

  private finish(id: RequestId = null): void {
    this.id = id;
    this.done = true;
  }

  private byte(b: number): void {
    if (this.inString) {
      this.stringByte(b);
    } else if (this.capture === "number") {
      if (isNumberByte(b)) {
        if (this.captured.length < 64) this.captured.push(b);
      } else {
        const n = Number(Buffer.from(this.captured).toString("latin1"));
        this.finish(Number.isFinite(n) ? n : null);
      }
    } else if (isSpace(b)) {
      // between tokens
    } else if (this.depth === 0) {
      if (b === 0x7b) this.depth = 1;
      else this.finish(); // not an object (a batch, a scalar): no id to read
    } else if (this.depth > 1) {
      if (b === QUOTE) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if (b === 0x7d || b === 0x5d) this.depth--;
    } else this.member(b);
  }

  /** A byte at depth 1, among the members of the top-level object. */
  private member(b: number): void {
    if (this.expect === "key") {
      if (b !== QUOTE) {
        this.finish(); // "}" or malformed
        return;
      }
      this.inString = true;
      this.readingKey = true;
      this.key = [];
      this.keyLength = 0;
    } else if (this.expect === "colon") {
      if (b !== 0x3a) {
        this.finish();
        return;
      }
      this.expect = "value";
      if (this.keyLength === 2 && this.key[0] === 0x69 && this.key[1] === 0x64) this.capture = "pending";
    } else if (this.capture === "pending") {
      if (b === QUOTE) {
        this.capture = "string";
        this.inString = true;
      } else if (isNumberByte(b)) {
        this.capture = "number";
        this.captured = [b];
      } else this.finish(); // null, or not an id
    } else if (b === QUOTE) this.inString = true;
    else if (b === 0x7b || b === 0x5b) this.depth++;
    else if (b === 0x2c) this.expect = "key";
    else if (b === 0x7d) this.finish();
  }

  private stringByte(b: number): void {
    if (this.escape) {
      this.escape = false;
      this.keep(b);
      return;
    }
    if (b === BACKSLASH) {
      this.escape = true;
      this.keep(b);
      return;
    }
    if (b !== QUOTE) {
      this.keep(b);
      return;
    }
    this.inString = false;
    if (this.readingKey) {
      this.readingKey = false;
      this.expect = "colon";
    } else if (this.capture === "string") {
      try {
        this.finish(JSON.parse(`"${Buffer.from(this.captured).toString("utf8")}"`) as string);
      } catch {
        this.finish();
      }
    }
  }

  private keep(b: number): void {
    if (this.readingKey) {
      this.keyLength++;
      if (this.key.length < 2) this.key.push(b);
    } else if (this.capture === "string") {
      if (this.captured.length < 256) this.captured.push(b);
      else this.finish(); // an id that long is not one we could answer usefully
    }
  }
}

/** Cuts a byte stream into lines; see the top of the file. */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping: { bytes: number; scanner: IdScanner } | null = null;

  constructor(readonly maxBytes: number) {}

  /** The lines `chunk` completes, in order (a line's end may come in a later chunk). */
  push(chunk: Buffer): LineEvent[] {
    const out: LineEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (this.skipping) {
        this.skipping.bytes += piece.length;
        this.skipping.scanner.feed(piece);
      } else if (this.size + piece.length > this.maxBytes) {
        const scanner = new IdScanner();
        for (const part of this.parts) scanner.feed(part);
        scanner.feed(piece);
        this.skipping = { bytes: this.size + piece.length, scanner };
        this.parts = [];
        this.size = 0;
      } else if (piece.length > 0) {
        this.parts.push(Buffer.from(piece)); // a copy: the chunk is not kept alive by a short piece of it
        this.size += piece.length;
      }
      if (newline === -1) break;
      if (this.skipping) {
        out.push({ kind: "overlong", bytes: this.skipping.bytes, id: this.skipping.scanner.id });
        this.skipping = null;
      } else {
        const text = Buffer.concat(this.parts, this.size).toString("utf8");
        out.push({ kind: "line", text: text.endsWith("\r") ? text.slice(0, -1) : text });
        this.parts = [];
        this.size = 0;
      }
      start = newline + 1;
    }
    return out;
  }
}
