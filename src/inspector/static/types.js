// @ts-check
// The shapes the page works with: the API's answers as src/inspector/shapes.ts declares them, and the
// page's own. Import them in JSDoc: /** @typedef {import("./types.js").EntryBar} EntryBar */.

/** @typedef {import("../shapes.js").EntryBar} EntryBar */
/** @typedef {EntryBar["attempts"][number]} AttemptBar */
/** @typedef {import("../shapes.js").BriefError} BriefError */
/** @typedef {import("../shapes.js").Clipped} Clipped */
/** @typedef {import("../shapes.js").MetaAnswer} MetaAnswer */
/** @typedef {import("../shapes.js").WorkflowsAnswer} WorkflowsAnswer */
/** @typedef {import("../shapes.js").RunsAnswer} RunsAnswer */
/** @typedef {import("../shapes.js").RunRow} RunRow */
/** @typedef {import("../shapes.js").RunAnswer} RunAnswer */
/** @typedef {import("../shapes.js").RunDetail} RunDetail */
/** @typedef {import("../shapes.js").WaitView} WaitView */
/** @typedef {import("../shapes.js").QueueView} QueueView */
/** @typedef {import("../shapes.js").RunActions} RunActions */
/** @typedef {import("../shapes.js").HistoryAnswer} HistoryAnswer */
/** @typedef {import("../shapes.js").EntryWhole} EntryWhole */
/** @typedef {import("../shapes.js").EntryAnswer} EntryAnswer */
/** @typedef {import("../shapes.js").DiagnosisAnswer} DiagnosisAnswer */
/** @typedef {import("../shapes.js").SendAnswer} SendAnswer */
/** @typedef {import("../shapes.js").ReplayAnswer} ReplayAnswer */
/** @typedef {import("../shapes.js").CancelAnswer} CancelAnswer */
/** @typedef {import("../../diagnosis/types.js").Diagnosis} Diagnosis */
/** @typedef {import("../../diagnosis/types.js").NextAction} NextAction */
/** @typedef {import("../../engine/replay.js").ReplayPlan} ReplayPlan */
/** @typedef {import("../../engine/error-info.js").ErrorInfo} ErrorInfo */

export {};
