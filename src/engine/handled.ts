// Marks a ctx call's promise handled, so one the workflow drops never ends the process.

/** A rejection handler that does nothing (the rejection is seen by whoever awaits the promise). */
export const ignore = (): void => {};

/**
 * Every ctx call's promise that may reject is marked handled: one the code drops (a call inside a step,
 * refused; one left waiting when the run ends, rejected as the execution stops; a refusal nobody awaits) is
 * not an unhandled rejection, which by Node's default ends the process and every run in it. Whoever awaits
 * it still gets the rejection; what a call did is in the run's history (a refusal inside a step also fails
 * the run, see RunExecution.check). A promise fulfilled already (a replayed step's) needs no handler.
 */
export function called<T>(result: Promise<T>): Promise<T> {
  result.catch(ignore);
  return result;
}

/** A rejected promise already marked handled (see called). */
export function rejected<T>(err: unknown): Promise<T> {
  return called(Promise.reject(err));
}
