/**
 * Reading, deleting and cancelling stored responses (capability `responses`): GET /v1/responses (cursor list),
 * GET, DELETE /v1/responses/:id and POST /v1/responses/:id/cancel. Every read is by the caller's tenant, so another
 * tenant's id is 404 NOT_FOUND. POST /v1/responses itself (create, continue, stream) is core/ingress/responses*.ts.
 */
import { validationError } from '../errors.ts';
import type { LocalEndpoint, LocalEndpointDeps } from '../ingress/endpoint.ts';
import { liveResponses, type LiveResponse } from '../ingress/responses-live.ts';
import { responseObject } from '../ingress/responses-object.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import { pageRequest } from '../store/pagination.ts';
import {
  cancelResponse, deleteResponse, findResponse, listResponses, responseNotFound, responsePositionAfter, type ResponseRecord,
} from '../store/responses.ts';
import { isGatewayId } from '../store/ids.ts';
import { callerOf } from '../pipeline/recorded-caller.ts';
import { responseDeletedSchema, responseListSchema, responseObjectSchema } from './responses-schemas.ts';

const ROUTE = '/v1/responses';

type Query = Record<string, string | string[] | undefined>;


/** The route's response id, 404 NOT_FOUND when it cannot be one. */
function idOf(ctx: GatewayContext): string {
  const { id } = (ctx as GatewayContext & { params: { id: string } }).params;
  if (!isGatewayId('resp', id)) throw responseNotFound(id);
  return id;
}

/**
 * An in-progress response ends cancelled, keeping what it had produced. One streaming on this instance is stopped
 * at once and its partial output recorded here; one streaming elsewhere sees the cancelled record and records its
 * partial output itself. A response that has already ended is returned as it is.
 */
async function cancelIfRunning(deps: LocalEndpointDeps, tenantId: string, id: string): Promise<ResponseRecord> {
  const record = await findResponse(deps.db, tenantId, id);
  if (!record) throw responseNotFound(id);
  if (record.status !== 'in_progress') return record;
  const live = liveResponses(deps);
  const entry = live.get(id);
  let partial: ReturnType<LiveResponse['cancel']> | undefined;
  if (entry && entry.tenantId === tenantId) {
    // Out of the map first: a second cancel racing this one must not stop the same stream twice.
    live.delete(id);
    partial = entry.cancel();
  }
  const cancelled = await cancelResponse(deps.db, tenantId, id, deps.clock.now(), partial);
  // Null only when a concurrent delete removed it meanwhile.
  if (!cancelled) throw responseNotFound(id);
  return cancelled;
}

function listHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const { tenantId } = callerOf(ctx);
    const query = ctx.query as Query;
    const page = pageRequest(query);
    const { after } = query;
    if (after !== undefined) {
      if (Array.isArray(after) || page.after) throw validationError([{ path: '/after', message: 'must be given once, and not with cursor' }]);
      if (!isGatewayId('resp', after)) throw validationError([{ path: '/after', message: 'is not the id of a response of this tenant' }]);
      page.after = await responsePositionAfter(deps.db, tenantId, after);
    }
    ctx.body = await listResponses(deps.db, tenantId, page, responseObject);
  };
}

function fetchHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    // OpenAI can replay a background response as events (stream=true); a stored one is only answered whole.
    const { stream } = ctx.query as Query;
    if (stream !== undefined && stream !== 'false') {
      throw validationError([{ path: '/stream', message: 'must be false: a stored response is answered whole, not replayed as events' }]);
    }
    const id = idOf(ctx);
    const record = await findResponse(deps.db, callerOf(ctx).tenantId, id);
    if (!record) throw responseNotFound(id);
    ctx.body = responseObject(record);
  };
}

/** An in-progress response is cancelled first, so that its upstream stream stops rather than run on unrecorded. */
function deleteHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    const id = idOf(ctx);
    const { tenantId } = callerOf(ctx);
    await cancelIfRunning(deps, tenantId, id);
    if (!(await deleteResponse(deps.db, tenantId, id))) throw responseNotFound(id);
    ctx.body = { id, object: 'response' as const, deleted: true as const };
  };
}

function cancelHandler(deps: LocalEndpointDeps): GatewayMiddleware {
  return async (ctx) => {
    ctx.body = responseObject(await cancelIfRunning(deps, callerOf(ctx).tenantId, idOf(ctx)));
  };
}

const base = { kind: 'local', path: ROUTE, capability: 'responses', errorEnvelope: 'canonical' } as const;
const byId = { ...base, routePattern: `${ROUTE}/:id` } as const;

export const responsesReadEndpoints: readonly LocalEndpoint[] = [
  {
    ...base, method: 'GET',
    summary: 'The tenant\'s stored responses, oldest first: query limit (1-100, default 20), cursor (or after=<response id>).',
    responses: { '200': { description: 'A page of Response objects.', schema: responseListSchema } },
    handler: listHandler,
  },
  {
    ...byId, method: 'GET',
    summary: 'One stored response of the tenant, with its output in full (404 NOT_FOUND for an id the tenant does not have).',
    responses: { '200': { description: 'The Response.', schema: responseObjectSchema } },
    handler: fetchHandler,
  },
  {
    ...byId, method: 'DELETE',
    summary: 'Delete a stored response (an in-progress one is cancelled first); it can no longer be read or continued.',
    responses: { '200': { description: 'The deletion.', schema: responseDeletedSchema } },
    handler: deleteHandler,
  },
  {
    ...byId, routePattern: `${ROUTE}/:id/cancel`, method: 'POST',
    summary: 'Cancel an in-progress response: its upstream stream is stopped and it is recorded as cancelled with the output produced so far. A response that has ended is returned unchanged.',
    responses: { '200': { description: 'The Response.', schema: responseObjectSchema } },
    handler: cancelHandler,
  },
];
