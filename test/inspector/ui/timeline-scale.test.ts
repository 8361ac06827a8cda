// The timeline's time axis: to scale, except an idle stretch longer than all the rest, folded to a band.

import { describe, expect, test } from "vitest";
import type { EntryBar } from "../../../src/inspector/shapes.js";
import { endOf, makeScale, runScale, ticks } from "../../../src/inspector/static/timeline-scale.js";
import { withFlags } from "./fixtures.js";

const HOUR = 3_600_000;

describe("makeScale", () => {
  test("without idle stretches times map linearly from 0 to 100 percent", () => {
    const s = makeScale(0, 10_000, [
      [0, 4_000],
      [4_000, 10_000],
    ]);
    expect(s.pieces.filter((p) => p.fold)).toHaveLength(0);
    expect(s.at(0)).toBe(0);
    expect(s.at(2_500)).toBeCloseTo(25);
    expect(s.at(10_000)).toBeCloseTo(100);
  });

  test("an idle hour between two seconds of work folds to a narrow band; the work keeps the rest of the track", () => {
    // A failed run replayed an hour later: 1 s of work, an hour of nothing, 1 s of work.
    const s = makeScale(0, HOUR + 2_000, [
      [0, 1_000],
      [HOUR + 1_000, HOUR + 2_000],
    ]);
    const folds = s.pieces.filter((p) => p.fold);
    expect(folds).toEqual([expect.objectContaining({ a: 1_000, b: HOUR + 1_000, w: 4 })]);
    // Each second of work takes half of what the fold leaves.
    expect(s.at(1_000)).toBeCloseTo(48);
    expect(s.at(HOUR + 1_000)).toBeCloseTo(52);
    expect(s.at(HOUR + 1_500)).toBeCloseTo(76);
    // The axis labels the fold with its length.
    expect(ticks(s).find((t) => t.fold)?.label).toBe("1h 0m");
  });

  test("a gap shorter than the rest of the run, or under a second, stays to scale", () => {
    const long = makeScale(0, 30_000, [
      [0, 10_000],
      [20_000, 30_000],
    ]);
    expect(long.pieces.some((p) => p.fold)).toBe(false);
    const short = makeScale(0, 1_500, [
      [0, 100],
      [1_000, 1_500],
    ]);
    expect(short.pieces.some((p) => p.fold)).toBe(false);
  });

  test("ticks are round steps from the run's start, none on top of another", () => {
    const s = makeScale(0, 60_000, [[0, 60_000]]);
    const labels = ticks(s).map((t) => t.label);
    expect(labels[0]).toBe("0");
    expect(labels).toContain("+10s");
    const xs = ticks(s).map((t) => t.x);
    for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThanOrEqual(7);
  });
});

describe("runScale", () => {
  const bar = (more: Partial<EntryBar>): EntryBar =>
    withFlags({
      id: 1,
      path: "x",
      scope: "",
      name: "x",
      kind: "step",
      status: "completed",
      startedAt: 0,
      endedAt: 1_000,
      attempts: [],
      error: null,
      detail: {},
      ...more,
    });

  test("a join reopened by a replay an hour later folds: only the entries inside containers count as work", () => {
    const join = bar({ id: 1, kind: "join", startedAt: 0, endedAt: HOUR + 2_000 });
    const first = bar({ id: 2, scope: "j[a]", startedAt: 0, endedAt: 1_000 });
    const again = bar({ id: 3, scope: "j[a]", startedAt: HOUR + 1_000, endedAt: HOUR + 2_000 });
    const run = { createdAt: 0, finishedAt: HOUR + 2_000 };
    const s = runScale([join, first, again], run, false, HOUR + 5_000);
    expect(s.pieces.some((p) => p.fold)).toBe(true);
    // Counted as work, the container would have covered the gap: nothing folds.
    const asWork = { ...join, container: false };
    const flat = runScale([asWork, first, again], run, false, HOUR + 5_000);
    expect(flat.pieces.some((p) => p.fold)).toBe(false);
  });

  test("a live run's track runs to now; an entry still going ends now", () => {
    const running = bar({ status: "running", startedAt: 1_000, endedAt: null });
    expect(endOf(running, 9_000)).toBe(9_000);
    const s = runScale([running], { createdAt: 0, finishedAt: null }, true, 9_000);
    expect(s.t1).toBe(9_000);
    expect(s.at(9_000)).toBeCloseTo(100);
  });
});
