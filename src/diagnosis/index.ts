// The diagnosis module: why a run failed or is stuck, and what to do next (engine side, no MCP inside).

export { call } from "./actions.js";
export type * from "./compare-types.js";
export { diagnose } from "./diagnose.js";
export { actionLine, diagnosisReport, diagnosisText } from "./render.js";
export {
  type FailureGroup,
  type FailureKey,
  type FailureList,
  listFailures,
  normaliseMessage,
  signatureOf,
} from "./signatures.js";
export * from "./types.js";
