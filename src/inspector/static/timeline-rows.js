// @ts-check
// The timeline's rows, worked out from the entries alone (no DOM): root entries in order, each container
// followed by its branches or loop iterations (a lane row each) and their entries, nested to any depth.

/** @typedef {import("./types.js").EntryBar} EntryBar */
/**
 * One row of the timeline: an entry, a lane (a branch or loop iteration, or a scope no container opens),
 * or a note (a loop's compacted iterations).
 * @typedef {{ type: "entry", entry: EntryBar, depth: number, container: boolean }
 *   | { type: "lane", scope: string, label: string, depth: number, entries: EntryBar[], status: string, winner: boolean }
 *   | { type: "note", depth: number, label: string }} Row
 */

/** The scope suffix of a branch ("[mail]") or loop iteration ("#3") directly below `path`, or null. */
export function childSuffix(/** @type {string} */ scope, /** @type {string} */ path) {
  if (!scope.startsWith(path)) return null;
  const rest = scope.slice(path.length);
  return /^(\[[^\]/]*\]|#\d+)$/.test(rest) ? rest : null;
}

/** What a lane of the engine's own scopes is called (entries.ts ROLLBACK_SCOPE: the handlers' runs). */
const LANE_NAMES = /** @type {Record<string, string>} */ ({ "~rollback": "rollback handlers" });

/** @type {Record<string, number>} */
const RANK = { failed: 5, cancelled: 4, retrying: 3, running: 3, waiting: 2, completed: 1 };

/** The status a lane shows: the worst of its entries' (failed before cancelled before running...). */
export function worst(/** @type {Iterable<string>} */ statuses) {
  let best = "completed";
  for (const s of statuses) if ((RANK[s] ?? 0) > (RANK[best] ?? 0)) best = s;
  return best;
}

/**
 * Orders entries as a tree: root entries by id, each container followed by its branches or iterations
 * (a lane row each) and their entries. Entries of scopes no container opens come last, so none is lost.
 * A collapsed container's lanes and their entries are left out.
 * @param {readonly EntryBar[]} entries
 * @param {ReadonlySet<number>} collapsed ids of collapsed containers
 * @returns {Row[]}
 */
export function buildRows(entries, collapsed) {
  /** @type {Map<string, EntryBar[]>} */
  const byScope = new Map();
  for (const e of entries) {
    const scope = e.scope === "~replay" ? "" : e.scope;
    let list = byScope.get(scope);
    if (!list) byScope.set(scope, (list = []));
    list.push(e);
  }
  for (const list of byScope.values()) list.sort((a, b) => a.id - b.id);
  /** @type {Row[]} */
  const rows = [];
  const placed = new Set();
  const first = (/** @type {string} */ scope) => byScope.get(scope)?.[0]?.id ?? 0;

  /** @param {string} scope @param {number} depth */
  const walk = (scope, depth) => {
    placed.add(scope);
    for (const e of byScope.get(scope) ?? []) {
      rows.push({ type: "entry", entry: e, depth, container: e.container });
      if (!e.container) continue;
      const children = [...byScope.keys()].filter((s) => childSuffix(s, e.path) !== null);
      if (collapsed.has(e.id)) {
        for (const s of children) markPlaced(s);
        continue;
      }
      const compacted = e.kind === "loop" ? Number(detailOf(e, "compacted", "iterations") ?? 0) : 0;
      if (compacted > 0) {
        rows.push({
          type: "note",
          depth: depth + 1,
          label: `${compacted} earlier iteration${compacted === 1 ? "" : "s"} compacted`,
        });
      }
      const order = Array.isArray(e.detail?.branches) ? e.detail.branches : [];
      const suffix = (/** @type {string} */ s) => /** @type {string} */ (childSuffix(s, e.path));
      children.sort((a, b) => {
        const sa = suffix(a);
        const sb = suffix(b);
        const ia = order.indexOf(sa.slice(1, -1));
        const ib = order.indexOf(sb.slice(1, -1));
        if (ia !== ib && ia >= 0 && ib >= 0) return ia - ib;
        if (sa.startsWith("#") && sb.startsWith("#")) return Number(sa.slice(1)) - Number(sb.slice(1));
        return first(a) - first(b);
      });
      for (const s of children) {
        const list = byScope.get(s) ?? [];
        const sfx = suffix(s);
        rows.push({
          type: "lane",
          scope: s,
          label: sfx.startsWith("#") ? `iteration ${sfx.slice(1)}` : sfx.slice(1, -1),
          depth: depth + 1,
          entries: list,
          status: worst(list.map((x) => x.status)),
          winner: e.kind === "race" && e.detail?.winner === sfx.slice(1, -1),
        });
        walk(s, depth + 2);
      }
    }
  };
  /** A collapsed container's scopes, and every scope nested in them, count as placed. */
  const markPlaced = (/** @type {string} */ scope) => {
    placed.add(scope);
    for (const s of byScope.keys()) if (!placed.has(s) && s.startsWith(`${scope}/`)) markPlaced(s);
  };
  walk("", 0);
  for (const [s, list] of byScope) {
    if (placed.has(s)) continue;
    rows.push({
      type: "lane",
      scope: s,
      label: LANE_NAMES[s] ?? s,
      depth: 0,
      entries: list,
      status: worst(list.map((x) => x.status)),
      winner: false,
    });
    walk(s, 1);
  }
  return rows;
}

/** detail[a][b] of an entry, when its detail has it. */
function detailOf(/** @type {EntryBar} */ e, /** @type {string} */ a, /** @type {string} */ b) {
  const v = e.detail?.[a];
  return v && typeof v === "object" ? /** @type {Record<string, unknown>} */ (v)[b] : undefined;
}
