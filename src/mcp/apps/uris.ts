// The ui:// resources of the MCP Apps views (see register.ts): which tool answers a host draws, and with what.

/** The run view: timeline with attempts, diagnosis with evidence, state around the chosen entry, forms. */
export const RUN_VIEW_URI = "ui://waymark/run.html";

/** The approvals view: the runs waiting on a queue, each with the form built from the queue's schema. */
export const APPROVALS_VIEW_URI = "ui://waymark/approvals.html";

/** Which page of the bundle each resource opens with (the bundle reads it from <html data-view>). */
export const VIEWS = {
  [RUN_VIEW_URI]: { view: "run", name: "Waymark run view" },
  [APPROVALS_VIEW_URI]: { view: "approvals", name: "Waymark approvals view" },
} as const;

export type ViewUri = keyof typeof VIEWS;
