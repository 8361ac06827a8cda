// The timeline's rows from entries alone: the order of root entries, lanes under containers in branch
// order, nested scopes, collapsed containers, compacted loops, and scopes no container opens.

import { describe, expect, test } from "vitest";
import type { EntryBar } from "../../../src/inspector/shapes.js";
import { waitsOn } from "../../../src/inspector/static/timeline-row.js";
import { buildRows, childSuffix, worst } from "../../../src/inspector/static/timeline-rows.js";
import { withFlags } from "./fixtures.js";

let seq = 0;
/** An entry bar as the API sends it; `path` is worked out from scope and name. */
function bar(scope: string, name: string, more: Partial<EntryBar> = {}): EntryBar {
  seq++;
  return withFlags({
    id: seq,
    path: scope ? `${scope}/${name}` : name,
    scope,
    name,
    kind: "step",
    status: "completed",
    startedAt: 1000 + seq,
    endedAt: 1001 + seq,
    attempts: [],
    error: null,
    detail: {},
    ...more,
  });
}

/** Each row as one line: entries by path, lanes by label, notes by text, indented by depth. */
function outline(rows: ReturnType<typeof buildRows>): string[] {
  return rows.map((r) => {
    const pad = " ".repeat(r.depth);
    if (r.type === "entry") return `${pad}${r.entry.path}`;
    if (r.type === "lane") return `${pad}[${r.label}] ${r.status}${r.winner ? " winner" : ""}`;
    return `${pad}(${r.label})`;
  });
}

describe("buildRows", () => {
  test("root entries by id; a join's lanes in the order its code named the branches, each with its entries", () => {
    seq = 0;
    const load = bar("", "load");
    const join = bar("", "notify", { kind: "join", detail: { branches: ["sms", "email"] } });
    // The email branch started first, but the code named sms first: the lanes follow the code.
    const email = bar("notify[email]", "send-email");
    const sms = bar("notify[sms]", "send-sms", { status: "failed" });
    const save = bar("", "save");
    const rows = buildRows([save, sms, email, join, load], new Set());
    expect(outline(rows)).toEqual([
      "load",
      "notify",
      " [sms] failed",
      "  notify[sms]/send-sms",
      " [email] completed",
      "  notify[email]/send-email",
      "save",
    ]);
    const first = rows[1];
    expect(first?.type === "entry" && first.container).toBe(true);
  });

  test("a race marks its winner; loop iterations go in number order and a compacted loop says how many", () => {
    seq = 0;
    const race = bar("", "fastest", { kind: "race", detail: { winner: "b" } });
    const a = bar("fastest[a]", "try-a", { status: "cancelled" });
    const b = bar("fastest[b]", "try-b");
    const loop = bar("", "agent", { kind: "loop", detail: { compacted: { iterations: 8 } } });
    const i10 = bar("agent#10", "think");
    const i9 = bar("agent#9", "think");
    const rows = buildRows([race, a, b, loop, i10, i9], new Set());
    expect(outline(rows)).toEqual([
      "fastest",
      " [a] cancelled",
      "  fastest[a]/try-a",
      " [b] completed winner",
      "  fastest[b]/try-b",
      "agent",
      " (8 earlier iterations compacted)",
      " [iteration 9] completed",
      "  agent#9/think",
      " [iteration 10] completed",
      "  agent#10/think",
    ]);
  });

  test("containers nest to any depth; collapsing one hides its lanes and everything inside them", () => {
    seq = 0;
    const outer = bar("", "outer", { kind: "join", detail: { branches: ["x"] } });
    const inner = bar("outer[x]", "inner", { kind: "race" });
    const deep = bar("outer[x]/inner[y]", "deep", { status: "running", endedAt: null });
    const after = bar("", "after");
    const all = [outer, inner, deep, after];
    expect(outline(buildRows(all, new Set()))).toEqual([
      "outer",
      " [x] completed", // a lane's status is that of its own entries (inner), not of those nested deeper
      "  outer[x]/inner",
      "   [y] running",
      "    outer[x]/inner[y]/deep",
      "after",
    ]);
    expect(outline(buildRows(all, new Set([inner.id])))).toEqual([
      "outer",
      " [x] completed",
      "  outer[x]/inner",
      "after",
    ]);
    // Collapsed scopes are placed, not lost: they do not reappear as orphan lanes at the end.
    expect(outline(buildRows(all, new Set([outer.id])))).toEqual(["outer", "after"]);
  });

  test("entries of a scope no container opens come last as a lane of their own; a replay's marker sits at the root", () => {
    seq = 0;
    const step = bar("", "one");
    const replay = bar("~replay", "replay-1", { kind: "replay" });
    const stray = bar("gone[z]", "left-over", { status: "failed" });
    const two = bar("", "two");
    expect(outline(buildRows([stray, two, replay, step], new Set()))).toEqual([
      "one",
      "~replay/replay-1",
      "two",
      "[gone[z]] failed",
      " gone[z]/left-over",
    ]);
  });

  test("lanes follow the API's container flag, not a list of kinds: a kind the page has never heard of opens lanes", () => {
    seq = 0;
    const spawn = { ...bar("", "spawn", { kind: "child-batch" }), container: true };
    const inside = bar("spawn[one]", "work");
    expect(outline(buildRows([spawn, inside], new Set()))).toEqual([
      "spawn",
      " [one] completed",
      "  spawn[one]/work",
    ]);
    // A join the API does not flag as a container is an entry like any other; its scope is left over.
    const join = { ...bar("", "j", { kind: "join" }), container: false };
    const branch = bar("j[a]", "x");
    expect(outline(buildRows([join, branch], new Set()))).toEqual(["j", "[j[a]] completed", " j[a]/x"]);
  });

  test("an entry's lanes are only the scopes directly below it", () => {
    expect(childSuffix("notify[sms]", "notify")).toBe("[sms]");
    expect(childSuffix("agent#12", "agent")).toBe("#12");
    expect(childSuffix("notify[sms]/x[y]", "notify")).toBeNull();
    expect(childSuffix("notifyAll[sms]", "notify")).toBeNull();
  });

  test("a lane shows the worst status of its entries", () => {
    expect(worst(["completed", "waiting", "completed"])).toBe("waiting");
    expect(worst(["running", "failed", "cancelled"])).toBe("failed");
    expect(worst(["cancelled", "retrying"])).toBe("cancelled");
    expect(worst([])).toBe("completed");
  });

  test("a waiting queue entry says every queue it waits on, and how full a batch is", () => {
    const wait = (detail: Record<string, unknown>) =>
      bar("", "w", { kind: "queue", status: "waiting", detail });
    expect(waitsOn(wait({ queue: "decisions" }))).toBe("on decisions");
    expect(waitsOn(wait({ queue: "approve", queues: ["approve", "reject"] }))).toBe("on approve or reject");
    expect(waitsOn(wait({ queue: "a", queues: ["a", "b", "c"] }))).toBe("on a, b or c");
    expect(waitsOn(wait({ queue: "items", count: 5, messageIds: [3, 4] }))).toBe("on items · 2 of 5");
    // Ids too long for the bar's detail are left out: only the batch's size is said.
    expect(waitsOn(wait({ queue: "items", count: 500 }))).toBe("on items · batch of 500");
  });

  test("the rollback handlers' scope is a lane named for what it holds", () => {
    seq = 0;
    const step = bar("", "reserve-car");
    const undo = bar("~rollback", "reserve-car", { kind: "rollback" });
    expect(outline(buildRows([step, undo], new Set()))).toEqual([
      "reserve-car",
      "[rollback handlers] completed",
      " ~rollback/reserve-car",
    ]);
  });
});
