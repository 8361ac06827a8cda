// Wording shared by every rule: the common helpers (src/format.ts) and the cause of an error.

export { causeOf } from "../failure-signature.js";
export { brief, cut, errorLine, iso, plural, span } from "../format.js";
