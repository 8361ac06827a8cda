// @ts-check
// Exhaustive switches over the page's closed sets: the type checker names a case left out.

/** Throws on a value no case handled; typed `never`, so a missing case is a type error. */
/** @returns {never} */
export function assertNever(/** @type {never} */ x) {
  throw new Error(`Unexpected ${JSON.stringify(x)}`);
}
