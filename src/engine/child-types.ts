// What ctx.child takes and (detached) answers, apart from the code that runs a child, so the workflow types
// name them without importing the execution.

/** What ctx.child takes besides its name and workflow. */
export interface ChildOptions<I = unknown> {
  /** The child's run key: the same key finds the same run (use one derived from the parent's key). */
  key: string;
  input?: I;
  /** Start it and return its address at once, without waiting for it (cancelling the parent leaves it). */
  detach?: boolean;
}

/** The address of a child run, as ctx.child with `{ detach: true }` returns it. */
export interface ChildAddress {
  workflow: string;
  key: string;
}
