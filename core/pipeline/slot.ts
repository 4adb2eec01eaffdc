/**
 * Typed per-request state of a plugin's own: a slot on the request, not a field on core types. Whoever holds
 * the slot object can read and write it; a plugin exports its slot when others may read it.
 */
import type { GatewayState } from './context.ts';

export interface Slot<T> {
  readonly name: string;
  get(gw: GatewayState): T | undefined;
  set(gw: GatewayState, value: T): void;
}

export function createSlot<T>(name: string): Slot<T> {
  // Keyed by the request's state object: nothing is added to it, and a finished request's values go with it.
  const values = new WeakMap<GatewayState, T>();
  return {
    name,
    get: (gw) => values.get(gw),
    set: (gw, value) => {
      values.set(gw, value);
    },
  };
}
