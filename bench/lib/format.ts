// Number formatting and Markdown tables for the console and bench/results.md.

export function int(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return "—";
  return Math.round(n).toLocaleString("en");
}

/** A number with `digits` significant decimals below 10, whole above. */
export function dec(n: number | undefined, digits = 1): string {
  if (n === undefined || !Number.isFinite(n)) return "—";
  if (Math.abs(n) >= 100) return int(n);
  return n.toFixed(Math.abs(n) >= 10 ? Math.min(digits, 1) : digits);
}

export function ms(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return "—";
  return n >= 1000 ? `${(n / 1000).toFixed(2)} s` : n >= 10 ? `${n.toFixed(0)} ms` : `${n.toFixed(2)} ms`;
}

/** "×3.2": how many times `a` beats `b` (for rates, a/b; pass ms values swapped). */
export function times(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return "—";
  const r = a / b;
  return `×${r >= 10 ? r.toFixed(0) : r.toFixed(2)}`;
}

export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0)
    return Number.NaN;
  return a / b;
}

export function mark(ok: boolean | null): string {
  return ok === null ? "?" : ok ? "✓" : "✗";
}

export function table(head: string[], rows: string[][], align?: Array<"l" | "r">): string {
  const sep = head.map((_, i) => ((align?.[i] ?? (i === 0 ? "l" : "r")) === "r" ? "---:" : "---"));
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(sep), ...rows.map(line)].join("\n");
}
