/**
 * Progress of running image requests, for the `/image-progress` WebSocket namespace (core/api/image-progress.ts).
 * A subscriber names a request id (its own X-Request-ID) and gets that request's reports, and only when the
 * request was made by the same caller (tenant, kind and key id or JWT subject): another caller's id gives
 * nothing away. Reports are kept in this instance's memory: the WebSocket must reach the instance serving the
 * request (the load balancer's affinity, or one instance); a subscription made before the request arrives
 * waits for it.
 */
import type { ImageProgress } from '../canonical/image.ts';
import type { Caller } from '../pipeline/caller.ts';
import type { GatewayState } from '../pipeline/context.ts';

export type ProgressReport = (gw: GatewayState, status: ImageProgress['status'], progress: number) => void;

/** Who may see a request's progress: its caller. */
export const callerKey = (caller: Pick<Caller, 'tenantId' | 'kind' | 'id'> | undefined): string =>
  caller ? `${caller.tenantId}\u0000${caller.kind}\u0000${caller.id}` : 'anonymous';

interface Subscriber {
  owner: string;
  send(message: ImageProgress): void;
}

export class ImageProgressHub {
  private readonly subscribers = new Map<string, Set<Subscriber>>();

  /** Reports of `requestId` made by `owner`'s requests go to `send`, until the returned function is called. */
  subscribe(requestId: string, owner: string, send: (message: ImageProgress) => void): () => void {
    let set = this.subscribers.get(requestId);
    if (!set) this.subscribers.set(requestId, (set = new Set()));
    const subscriber: Subscriber = { owner, send };
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(requestId) === set) this.subscribers.delete(requestId);
    };
  }

  /** The dispatcher's report hook: nothing to do (and nothing allocated) when no one listens. */
  readonly report: ProgressReport = (gw, status, progress) => {
    const set = this.subscribers.get(gw.requestId);
    if (!set) return;
    const owner = callerKey(gw.caller);
    const message: ImageProgress = { request_id: gw.requestId, status, progress: Math.round(Math.min(Math.max(progress, 0), 100)) };
    for (const subscriber of set) if (subscriber.owner === owner) subscriber.send(message);
  };

  get size(): number {
    return this.subscribers.size;
  }
}
