// Waymark's public API: define workflows, start the engine, work with runs.

export type {
  EntryDetail,
  FailureGroupsOptions,
  ListFailuresOptions,
  ListMessagesOptions,
  SendOptions,
  SendResult,
  WaymarkEngine,
} from "./engine/api.js";
export type {
  AuditClient,
  AuditControl,
  AuditEntry,
  AuditListOptions,
  AuditOutcome,
  AuditPage,
  AuditSurface,
  AuditWrite,
} from "./engine/audit-types.js";
export type { ChildAddress, ChildOptions } from "./engine/child-types.js";
export { type Clock, FakeClock, systemClock } from "./engine/clock.js";
export type { ConcurrencyInfo, ConcurrencyOptions } from "./engine/concurrency.js";
export type { Duration } from "./engine/duration.js";
export type {
  Attempt,
  Entry,
  EntryDetails,
  EntryKind,
  EntryOf,
  EntryStatus,
  JoinDetail,
  LoopDetail,
  QueueDetail,
  RaceDetail,
  ReplayDetail,
  SleepDetail,
  VersionDetail,
  WaitKind,
} from "./engine/entries.js";
export type { ErrorInfo } from "./engine/error-info.js";
export type { EngineEvent } from "./engine/events.js";
export type { ChildRun, RunAddress, RunFamily } from "./engine/family.js";
export { RunHandle } from "./engine/handle.js";
export type { StateDiff } from "./engine/json.js";
export type { ListRunsOptions, PublishedWorkflow, RunPage, WorkflowSummary } from "./engine/listing.js";
export type { ReplayOptions, ReplayPlan, ReplayRequest } from "./engine/replay-types.js";
export type { PruneOptions, PruneResult, Retention } from "./engine/retention.js";
export type { RunRef } from "./engine/run-ref.js";
export type {
  ScheduleCatchUp,
  ScheduleConfig,
  ScheduleOverlap,
  SchedulesConfig,
} from "./engine/schedule-spec.js";
export type { ScheduleControl, ScheduleInfo } from "./engine/schedule-types.js";
export type { HistoryEntry, RunInfo, WaitInfo } from "./engine/views.js";
export * from "./errors.js";
export { RollbackFailedError, type RollbackFailure, RollbackNotArmedError } from "./rollback-errors.js";

/**
 * The application's workflows, for the types of ctx.child by name. Declare them once, beside setup():
 * `declare module "waymark" { interface Register { workflows: typeof registry.workflows } }`; without it a
 * child named by a string takes any input and returns unknown (pass the definition itself to type it anyway).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the application's module augmentation
export interface Register {}
export { attach, type Registry, type StartOptions, setup } from "./registry.js";
export { DEFAULT_DATABASE, openStore } from "./storage/open.js";
export type { PrunedCount, RunStatus, Store } from "./storage/store.js";
export {
  type ActionContext,
  Loop,
  type LoopResult,
  type QueueMessage,
  type RollbackContext,
  type RollbackHandler,
  type StepContext,
  type StepOptions,
  type WorkflowContext,
  type WorkflowContextOf,
  type WorkflowDefinition,
  type WorkflowStepContextOf,
  workflow,
} from "./workflow.js";
