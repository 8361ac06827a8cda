// ctx.state outside a step: the run's committed state, readable and not writable. A write there would
// change memory only (never recorded, gone after a restart), so it is refused with how to do it instead.

import { StateReadOnlyError } from "../errors.js";

const views = new WeakMap<object, object>();

function refuse(label: string, key: PropertyKey): never {
  throw new StateReadOnlyError(label, String(key));
}

/** A read-only view of `state` (nested objects too); the same view for the same object. */
export function readOnlyState<T extends object>(state: T, label: string): T {
  const known = views.get(state);
  if (known) return known as T;
  const view = new Proxy(state, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      return typeof value === "object" && value !== null ? readOnlyState(value, label) : value;
    },
    set: (_t, key) => refuse(label, key),
    deleteProperty: (_t, key) => refuse(label, key),
    defineProperty: (_t, key) => refuse(label, key),
    setPrototypeOf: () => refuse(label, "__proto__"),
  });
  views.set(state, view);
  return view;
}
