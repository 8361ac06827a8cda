// The end of an exhaustive switch over a closed set: the compiler flags a case left out.

/** Called in `default:` of a switch over a string-literal union; reaching it at run time is a bug. */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`Waymark internal: unexpected ${what} ${JSON.stringify(value)}.`);
}
