// @ts-check
// The shapes the page works with: the API's answers, all taken from src/inspector/shapes.ts (the server
// returns these types, so the two cannot drift apart). Import them in JSDoc:
// /** @typedef {import("./types.js").EntryBar} EntryBar */.

/** @typedef {import("../shapes.js").EntryBar} EntryBar */
/** @typedef {EntryBar["attempts"][number]} AttemptBar */
/** @typedef {import("../shapes.js").BriefError} BriefError */
/** @typedef {import("../shapes.js").Clipped} Clipped */
/** @typedef {import("../shapes.js").MetaAnswer} MetaAnswer */
/** @typedef {import("../shapes.js").WorkflowsAnswer} WorkflowsAnswer */
/** @typedef {import("../shapes.js").RunsAnswer} RunsAnswer */
/** @typedef {import("../shapes.js").SchedulesAnswer} SchedulesAnswer */
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
/** @typedef {import("../shapes.js").FailuresAnswer} FailuresAnswer */
/** @typedef {import("../shapes.js").BulkPreviewAnswer} BulkPreviewAnswer */
/** @typedef {import("../shapes.js").BulkResultAnswer} BulkResultAnswer */
/** @typedef {DiagnosisAnswer["diagnosis"]} Diagnosis */
/** @typedef {Diagnosis["nextActions"][number]} NextAction */
/** @typedef {Exclude<ReplayAnswer, { requested: true }>} ReplayPlan */
/** @typedef {NonNullable<RunDetail["error"]>} ErrorInfo */
/** @typedef {NonNullable<RunAnswer["rollback"]>} RollbackSummary */

export {};
