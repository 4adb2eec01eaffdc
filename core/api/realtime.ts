/**
 * POST /v1/realtime/sessions and GET /v1/realtime/sessions/:id (capability `realtime`). Creation goes through the
 * route's pipeline like any request (auth, ip-allow, rate limits); it takes one of the deployment's session slots
 * (realtime.maxConcurrentSessions, held in the KV so that the cap is exact across instances: 429
 * RATE_LIMIT_EXCEEDED past it), records the session `connecting`, and issues a single-use ticket that lives 60 s
 * in the KV. The `realtime.expire` job, due when the ticket expires, closes a session never connected; its slot
 * lapsed with the ticket already. The connection itself is core/realtime/hub.ts.
 */
import { randomBytes } from 'node:crypto';
import { passthroughTargets } from '../dispatch/passthrough.ts';
import { GatewayError, validationError } from '../errors.ts';
import { jsonBodyReader } from '../ingress/body.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import type { JobHandler, JobQueue, JobSpec } from '../jobs/types.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import type { Queryable } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import { expireUnredeemed, findRealtimeSession, insertRealtimeSession, newRealtimeSessionId, realtimeSessionObject } from '../store/realtime-sessions.ts';
import { CONNECT_PATH, REALTIME_METER, realtimeWork } from '../realtime/hub.ts';
import { createFields, realtimeCreateSchema } from '../realtime/create-body.ts';
import { releaseSlot, takeSlot, ticketKey } from '../realtime/kv-ops.ts';

const ROUTE = '/v1/realtime/sessions';
/** The spec's ticket lifetime. */
export const TICKET_TTL_MS = 60_000;
export const REALTIME_EXPIRE = 'realtime.expire';
const BODY_LIMIT = 1024 * 1024;
const readBody = jsonBodyReader(BODY_LIMIT);

const idOf = (ctx: GatewayContext) => (ctx as GatewayContext & { params: { id: string } }).params.id;

/** The WebSocket address: server.publicUrl, else the request's scheme and Host, as ws:// or wss://. */
function connectUrl(deps: LocalEndpointDeps, ctx: GatewayContext): string {
  const configured = deps.config.server.publicUrl;
  const base = configured ? configured.replace(/\/+$/, '') : `${ctx.protocol}://${ctx.host}`;
  return `${base.replace(/^http/i, 'ws')}${CONNECT_PATH}`;
}

/** Routing's answer for the caller, narrowed to the session's provider. */
function resolveModel(deps: LocalEndpointDeps, ctx: GatewayContext, provider: string, requested: string) {
  const { modelId, route } = deps.routing.resolve(requested, ctx.state.gw.caller?.policy);
  const target = route.targets.find((t) => t.slug === provider);
  if (!target) throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Model "${modelId}" is not served by ${provider}, the session's provider`, { model: modelId, provider });
  return { modelId, upstreamModel: target.upstreamModel };
}

const expireJob = (id: string, at: number): JobSpec => ({ kind: REALTIME_EXPIRE, key: `${REALTIME_EXPIRE}:${id}`, payload: { id }, runAt: at });

function createHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const fields = createFields(await readBody(ctx));
    const entry = passthroughTargets(deps.config, deps.providers).get(fields.provider);
    if (!entry) throw validationError([{ path: '/provider', message: `no provider "${fields.provider}" is configured and enabled` }]);
    if (!entry.provider.capabilities.realtime || !entry.provider.realtime) {
      throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `${fields.provider} has no realtime API on this gateway`, { provider: fields.provider });
    }
    const model = resolveModel(deps, ctx, fields.provider, fields.model);
    const id = newRealtimeSessionId();
    const now = deps.clock.now();
    const expiresAt = now + TICKET_TTL_MS;
    const cap = deps.config.realtime.maxConcurrentSessions;
    if (!(await deps.kv.run(takeSlot, { id, cap, now, until: expiresAt }))) {
      throw new GatewayError('RATE_LIMIT_EXCEEDED', `The deployment's ${cap} realtime sessions are in use (connecting or connected); try again once one closes`, { limit: cap, scope: 'realtime_sessions' });
    }
    const ticket = randomBytes(32).toString('base64url');
    try {
      const record = await deps.db.transaction(async (tx) => {
        const inserted = await insertRealtimeSession(tx, id, {
          ...callerOf(ctx), provider: fields.provider, requestedModel: fields.model, model: model.modelId, upstreamModel: model.upstreamModel,
          settings: fields.settings, idleTimeoutSeconds: fields.idleTimeoutSeconds, metadata: fields.metadata, ticketExpiresAt: expiresAt, createdAt: now,
        });
        await deps.jobs.enqueue(expireJob(id, expiresAt), tx);
        return inserted;
      });
      await deps.kv.set(ticketKey(ticket), id, TICKET_TTL_MS);
      ctx.body = realtimeSessionObject(record, { gateway_ws_url: connectUrl(deps, ctx), ticket });
    } catch (err) {
      await deps.kv.run(releaseSlot, { id }).catch(() => {});
      throw err;
    }
  };
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const session = await findRealtimeSession(deps.db, callerOf(ctx).tenantId, idOf(ctx));
    if (!session) throw new GatewayError('NOT_FOUND', `No realtime session ${idOf(ctx)}`, { id: idOf(ctx) });
    ctx.body = realtimeSessionObject(session, { gateway_ws_url: connectUrl(deps, ctx) });
  };
}

/** Closes a session whose ticket expired unredeemed, and frees its slot (lapsed already: this is belt and braces). */
export function realtimeExpireHandler(deps: { db: Queryable; kv: KV }): JobHandler {
  return async (ctx) => {
    const { id } = ctx.job.payload as { id: string };
    if (await expireUnredeemed(deps.db, id, ctx.now())) await deps.kv.run(releaseSlot, { id });
    return { status: 'done' };
  };
}

/** Reports a closed session's usage that could not be reported at its close; retried with the runner's backoff. */
export function realtimeMeterHandler(deps: { db: Queryable; meterWork(work: MeteredWork): Promise<void> }): JobHandler {
  return async (ctx) => {
    const { id } = ctx.job.payload as { id: string };
    const session = await findRealtimeSession(deps.db, null, id);
    if (!session || session.status !== 'closed') return { status: 'done' };
    await deps.meterWork(realtimeWork(session, session.usage, session.closedAt ?? ctx.now(), session.closeReason ?? 'closed'));
    return { status: 'done' };
  };
}

export function registerRealtimeJobs(
  runner: JobQueue & { register(kind: string, handler: JobHandler, options?: { maxAttempts?: number }): void },
  deps: { db: Queryable; kv: KV; meterWork(work: MeteredWork): Promise<void> },
): void {
  runner.register(REALTIME_EXPIRE, realtimeExpireHandler(deps));
  runner.register(REALTIME_METER, realtimeMeterHandler(deps), { maxAttempts: 20 });
}

const sessionSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, object: { type: 'string', enum: ['realtime.session'] }, provider: { type: 'string' }, model: { type: 'string' },
    status: { type: 'string', enum: ['connecting', 'connected', 'closed'] }, gateway_ws_url: { type: 'string' },
    subprotocol_hint: { type: 'string' }, ticket: { type: 'string' }, ticket_expires_at: { type: 'integer' }, created_at: { type: 'integer' },
    metadata: { type: 'object', nullable: true },
    usage: { type: 'object', properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, audio_seconds: { type: 'number' } } },
  },
} as const;

export const realtimeEndpoints: LocalEndpoint[] = [
  {
    kind: 'local', method: 'POST', path: ROUTE, capability: 'realtime', errorEnvelope: 'canonical', bodyLimitBytes: BODY_LIMIT,
    summary: 'Create a realtime session: a single-use ticket for the /v1/realtime/connect WebSocket.',
    description: 'Open a WebSocket to gateway_ws_url with the subprotocol given as subprotocol_hint (ticket.<ticket>) within 60 s; the gateway connects to the provider with its own credential, applies the session\'s settings and relays frames both ways. 429 RATE_LIMIT_EXCEEDED when the deployment\'s concurrent sessions are all in use.',
    requestSchema: realtimeCreateSchema,
    responses: { '200': { description: 'The session, status connecting.', schema: sessionSchema } },
    handler: createHandler,
  },
  {
    kind: 'local', method: 'GET', path: ROUTE, routePattern: `${ROUTE}/:id`, capability: 'realtime', errorEnvelope: 'canonical',
    summary: 'A realtime session: its status, and once closed its usage {input_tokens, output_tokens, audio_seconds}.',
    responses: { '200': { description: 'The session.', schema: sessionSchema } },
    handler: fetchHandler,
  },
];
