// The stdio line reader, property-tested: any request cut into any chunks comes out as its line, or,
// over the limit, as one over-long report carrying the request's id wherever the id sits in the object.

import fc from "fast-check";
import { expect, test } from "vitest";
import { IdScanner, type LineEvent, LineReader } from "../../src/mcp/line-reader.js";

/** A JSON-RPC request written with its members in the given order, some spaces between tokens. */
const request = fc
  .record({
    id: fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.integer()),
    method: fc.string({ maxLength: 20 }),
    params: fc.dictionary(
      fc.oneof(fc.constant("id"), fc.string({ maxLength: 6 })),
      fc.jsonValue({ maxDepth: 3 }),
    ),
    order: fc.shuffledSubarray(["jsonrpc", "id", "method", "params"], { minLength: 4, maxLength: 4 }),
    space: fc.constantFrom("", " ", "\t"),
  })
  .map(({ id, method, params, order, space }) => {
    const values: Record<string, unknown> = { jsonrpc: "2.0", id, method, params };
    const text = `{${space}${order.map((k) => `${JSON.stringify(k)}${space}:${space}${JSON.stringify(values[k])}`).join(`,${space}`)}${space}}`;
    return { id, text };
  });

/** `bytes` cut at the given points (mod its length), in order. */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  return out;
}

test("lines come out whole however the bytes are cut; over the limit, as one report with the request's id", () => {
  fc.assert(
    fc.property(
      fc.array(request, { minLength: 1, maxLength: 4 }),
      fc.array(fc.nat()),
      fc.nat(),
      (reqs, cuts, pick) => {
        const bytes = Buffer.from(reqs.map((r) => `${r.text}\r\n`).join(""), "utf8");
        // One request (chosen by `pick`) is over the limit; the limit leaves every other whole.
        const sizes = reqs.map((r) => Buffer.byteLength(`${r.text}\r`));
        const big = pick % reqs.length;
        const others = sizes.filter((_, i) => i !== big);
        const max = Math.max(0, ...others);
        if (sizes[big]! <= max) return; // no request is longer than the rest: nothing to cut
        const reader = new LineReader(max);
        const events: LineEvent[] = [];
        for (const c of chunks(bytes, cuts)) events.push(...reader.push(c));
        expect(events).toHaveLength(reqs.length);
        reqs.forEach((r, i) => {
          const e = events[i]!;
          if (sizes[i]! > max) expect(e).toEqual({ kind: "overlong", bytes: sizes[i], id: r.id });
          else expect(e).toEqual({ kind: "line", text: r.text });
        });
      },
    ),
    { numRuns: 300 },
  );
});

test("the id scanner reads no id from a batch, a scalar, a null id or an id in a nested object", () => {
  const idOf = (text: string) => {
    const s = new IdScanner();
    s.feed(Buffer.from(text));
    return s.id;
  };
  expect(idOf('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')).toBe(null);
  expect(idOf('"id"')).toBe(null);
  expect(idOf('{"jsonrpc":"2.0","id":null,"method":"ping"}')).toBe(null);
  expect(idOf('{"params":{"id":5},"method":"ping"}')).toBe(null);
  expect(idOf('{"params":{"id":5},"id":-12.5e1}')).toBe(-125);
  expect(idOf('{"idx":1,"id":"a\\"b\\u00e9"}')).toBe('a"bé');
});
