/**
 * The responses streaming on this instance, by gateway id, so that POST /v1/responses/:id/cancel can stop one at
 * once and keep what it had produced. A cancel sent to another instance is seen by the streaming one when it next
 * reads its record (the record is the truth across instances; this map only makes the local case immediate).
 */
import type { ResponseUsage } from '../store/responses.ts';

export interface LiveResponse {
  tenantId: string;
  /** Stops the upstream stream; answers the output items and usage produced so far. */
  cancel(): { output: unknown[]; usage: ResponseUsage | null };
}

const registries = new WeakMap<object, Map<string, LiveResponse>>();

/** One map per gateway: `owner` is the gateway's endpoint deps, the same object for every route. */
export function liveResponses(owner: object): Map<string, LiveResponse> {
  let live = registries.get(owner);
  if (!live) registries.set(owner, (live = new Map()));
  return live;
}
