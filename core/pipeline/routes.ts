/**
 * Routes as data: what a data-plane endpoint or an admin route declares about itself (the router serves it,
 * /openapi.json documents it, pipelines.yaml attaches pipelines to data-plane paths). Core endpoints and
 * plugins' endpoints share these shapes.
 */
import type { JsonSchema } from '../json-schema.ts';
import type { ErrorEnvelope } from '../errors.ts';
import type { GatewayMiddleware } from './context.ts';
import type { PluginServices } from './services.ts';

export interface EndpointDescription {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The route's name: what pipelines.yaml `routes` lists and the capability table names. */
  path: string;
  /**
   * The router pattern, when it is not `path`: a route with parameters or a wildcard (the passthrough is named
   * `/proxy` and served at `/proxy/:provider/*path`). /openapi.json documents this pattern.
   */
  routePattern?: string;
  /** The capability a key needs, or null (GET /v1/models). */
  capability: string | null;
  summary: string;
  /** Longer text for /openapi.json. */
  description?: string;
  errorEnvelope: ErrorEnvelope;
  /** Largest accepted body; larger ones get 413 before they are read in full. Default: server.jsonBodyLimitBytes. */
  bodyLimitBytes?: number;
  requestSchema?: JsonSchema;
  /** The body is of any content type and is streamed, not parsed (the passthrough); for /openapi.json. */
  rawBody?: boolean;
  /** Response schemas by status, for /openapi.json. */
  responses: Record<string, { description: string; schema?: JsonSchema; contentType?: string }>;
}

/**
 * A plugin's data-plane endpoint: served behind the pipeline its path is attached to (the default one unless
 * pipelines.yaml names it), like the core's; its handler is that pipeline's last step and sets the response.
 */
export interface PluginEndpoint<Shared = unknown> extends EndpointDescription {
  handler(services: PluginServices, shared: Shared): GatewayMiddleware;
}

/** Who is acting on the admin side, and which tenant they may touch (null: every tenant). */
export interface AdminScope {
  actor: string;
  tenantId: string | null;
}

export interface AdminRequest {
  /** Who is asking, and which tenant they may act on. */
  scope: AdminScope;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** Reads and parses the JSON body (1 MiB at most). */
  body(): Promise<unknown>;
}

export interface AdminRouteDescription {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /admin/v1, in the router's `:param` form. */
  path: string;
  summary: string;
  status: 200 | 201;
  requestSchema?: JsonSchema;
  responseSchema?: JsonSchema;
  /** Query parameters besides limit and cursor, with what they mean. */
  filters?: Record<string, string>;
  list?: boolean;
  /**
   * `ndjson`: the answer is streamed as newline-delimited JSON (application/x-ndjson), one line per item of the
   * async iterable `handle` returns, so that an export of any size is never held in memory whole.
   */
  stream?: 'ndjson';
}

/**
 * One write (any method but GET) the admin API was asked for, once it is answered: what plugins' onAdminWrite
 * gets. Never a body, of the request or of the answer (a created key's secret is in the answer).
 */
export interface AdminWriteEvent {
  /** When the answer was decided, ms since the epoch. */
  time: number;
  requestId: string;
  /** Who asked (`admin-token`, `cli`, `jwt:<subject>`), or null when the credentials were refused. */
  actor: string | null;
  /** The tenant the admin is limited to; null for every tenant (or refused credentials). */
  tenantId: string | null;
  method: string;
  /** The path asked for (/admin/v1/...). */
  path: string;
  /** The matched route's pattern (`/admin/v1/keys/:id/revoke`). */
  route: string;
  params: Record<string, string>;
  status: number;
  /** The error code of a refused or failed write; null on success. */
  errorCode: string | null;
  clientIp: string;
}

/** A plugin's admin route: under /admin/v1, behind the admin token or an admin JWT like the core's. */
export interface PluginAdminRoute<Shared = unknown> extends AdminRouteDescription {
  handle(request: AdminRequest, services: PluginServices, shared: Shared): Promise<unknown>;
}
