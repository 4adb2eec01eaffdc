/**
 * GET /image-progress (capability `images`): a WebSocket on which a caller follows its own image requests. The
 * route's plugins (auth, ip-allow, rate limits) admit the upgrade before it completes, as for the passthrough
 * (core/api/proxy-upgrade.ts); a refusal is an ordinary HTTP answer in the canonical envelope.
 *
 * The caller picks its request's id (X-Request-ID on the POST /v1/images/generations) and subscribes to it:
 * `?request_id=<id>` on the URL (subscribed before the socket opens), or a message
 * `{"type": "subscribe", "request_id": "<id>"}` (answered `{"subscribed": "<id>"}`; `unsubscribe` likewise).
 * Reports arrive as `{request_id, status, progress}` (status queued | in_progress | completed, progress 0-100),
 * from providers that report progress while polled. Only the caller who made the request receives them.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import type { ImageProgress } from '../canonical/image.ts';
import { callerKey, type ImageProgressHub } from '../dispatch/image-progress.ts';
import { isWebSocketUpgrade } from '../dispatch/passthrough-ws.ts';
import { GatewayError } from '../errors.ts';
import type { EndpointDefinition, LocalEndpointDeps } from '../ingress/endpoint.ts';
import { SANE_REQUEST_ID } from '../validation.ts';
import { upgradeOf } from './proxy-upgrade.ts';

/** Subscriptions one socket may hold: a client follows its own few requests, not a firehose. */
export const MAX_SUBSCRIPTIONS = 64;
/** Messages a client sends are tiny; anything bigger is a misuse. */
const MAX_MESSAGE_BYTES = 4096;

const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });

type Send = (message: object) => void;

/** One socket's subscriptions, each ended when the socket closes. */
function follow(hub: ImageProgressHub, owner: string, socket: WebSocket, first: string | null): void {
  const subscriptions = new Map<string, () => void>();
  const send: Send = (message) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const subscribe = (requestId: string): boolean => {
    if (subscriptions.has(requestId)) return true;
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
      send({ error: { code: 'VALIDATION_ERROR', message: `At most ${MAX_SUBSCRIPTIONS} subscriptions per connection` } });
      return false;
    }
    subscriptions.set(requestId, hub.subscribe(requestId, owner, (message: ImageProgress) => send(message)));
    return true;
  };
  if (first !== null) subscribe(first);
  socket.on('message', (data, isBinary) => {
    const message = isBinary ? null : parsed(data.toString());
    if (!message) {
      send({ error: { code: 'VALIDATION_ERROR', message: 'Send {"type": "subscribe" | "unsubscribe", "request_id": "<your X-Request-ID>"}' } });
      return;
    }
    if (message.type === 'subscribe') {
      if (subscribe(message.request_id)) send({ subscribed: message.request_id });
    } else {
      subscriptions.get(message.request_id)?.();
      subscriptions.delete(message.request_id);
      send({ unsubscribed: message.request_id });
    }
  });
  socket.once('close', () => {
    for (const end of subscriptions.values()) end();
    subscriptions.clear();
  });
  // A peer that resets the connection must not become an uncaught error.
  socket.on('error', () => socket.terminate());
}

function parsed(text: string): { type: 'subscribe' | 'unsubscribe'; request_id: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const m = value as { type?: unknown; request_id?: unknown } | null;
  if (!m || typeof m !== 'object' || (m.type !== 'subscribe' && m.type !== 'unsubscribe')) return null;
  if (typeof m.request_id !== 'string' || !SANE_REQUEST_ID.test(m.request_id)) return null;
  return { type: m.type, request_id: m.request_id };
}

export const imageProgressEndpoint: EndpointDefinition = {
  kind: 'local', method: 'GET', path: '/image-progress', capability: 'images', errorEnvelope: 'canonical',
  summary: 'Progress of the caller\'s image requests over WebSocket.',
  description: 'Upgrade to WebSocket, authenticated as any request. Subscribe with ?request_id=<X-Request-ID of your POST /v1/images/generations> or by sending {"type":"subscribe","request_id":"..."}; receive {request_id, status, progress (0-100)} from providers that report progress (replicate, fal-ai, runway). Only the caller who made a request receives its reports.',
  responses: { '101': { description: 'Switched to WebSocket.' } },
  handler: (deps: LocalEndpointDeps) => async (ctx) => {
    const upgrade = upgradeOf(ctx.req);
    if (!upgrade || !isWebSocketUpgrade(ctx.req)) {
      throw new GatewayError('VALIDATION_ERROR', 'GET /image-progress is a WebSocket: send it as an upgrade', [{ path: 'headers.upgrade', message: 'must be "websocket"' }]);
    }
    const query = ctx.query.request_id;
    const first = typeof query === 'string' ? query : null;
    if (first !== null && !SANE_REQUEST_ID.test(first)) {
      throw new GatewayError('VALIDATION_ERROR', 'request_id must be a request id as X-Request-ID takes them', [{ path: 'query.request_id', message: `must match ${SANE_REQUEST_ID}` }]);
    }
    const owner = callerKey(ctx.state.gw.caller);
    // The socket belongs to the WebSocket now: Koa writes nothing more.
    ctx.respond = false;
    ctx.status = 101;
    server.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (socket) => follow(deps.imageProgress, owner, socket, first));
  },
};
