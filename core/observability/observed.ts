/** A request's observation (RequestObservation, in gw.observed): made at its route entry, read when it closes. */
import type { RequestObservation } from '../pipeline/context.ts';

export type { RequestObservation };

export function newObservation(plugins: number): RequestObservation {
  return { upstreamStart: 0, upstreamEnd: 0, firstTokenMs: -1, streamUsage: null, pluginMs: new Array<number>(plugins).fill(-1) };
}

/** The ms spent waiting on providers, or 0 when the request never reached one. */
export function upstreamMs(observed: RequestObservation, now: number): number {
  if (observed.upstreamStart === 0) return 0;
  return (observed.upstreamEnd || now) - observed.upstreamStart;
}
