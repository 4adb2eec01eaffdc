/**
 * A data-plane endpoint: its route, the capability it needs and its error envelope. A dispatch endpoint turns
 * its body into a canonical request for the dispatcher and writes the canonical answer back; a local endpoint
 * (GET /v1/models, ...) answers itself at the end of its pipeline. Pipelines are attached per endpoint.
 */
import type { CanonicalRequest } from '../canonical/chat.ts';
import type { JsonSchema } from '../json-schema.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Breakers } from '../dispatch/breakers.ts';
import type { ProviderIO } from '../dispatch/provider.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { RoutingTable } from '../dispatch/routing.ts';
import type { UpstreamClient } from '../dispatch/upstream.ts';
import type { ErrorEnvelope } from '../errors.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import type { Clock } from '../pipeline/plugin.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';

interface EndpointBase {
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

export interface DispatchEndpoint extends EndpointBase {
  kind: 'dispatch';
  /** Validated body -> canonical request (throws VALIDATION_ERROR for rules a schema cannot say). */
  parse(body: unknown): CanonicalRequest;
  /** Writes the canonical answer (gw.result or gw.stream, already passed through the response stages) in this endpoint's wire format. */
  respond(ctx: GatewayContext): void;
}

/** What local endpoints may use to answer. */
export interface LocalEndpointDeps {
  routing: RoutingTable;
  providers: ProviderRegistry;
  /** When the configuration was loaded (ms since the epoch). */
  loadedAt: number;
  config: GatewayConfig;
  /** The database (GET /v1/usage reads the usage records). */
  db: Database;
  /** The KV and the gateway's clock (GET /v1/budget reads the budget counters). */
  kv: KV;
  clock: Clock;
  /** The dispatcher's own upstream client, breakers and provider I/O, for endpoints that call providers. */
  upstream: UpstreamClient;
  breakers: Breakers;
  io: ProviderIO;
}

export interface LocalEndpoint extends EndpointBase {
  kind: 'local';
  /** The last step of the pipeline: sets the response itself. */
  handler(deps: LocalEndpointDeps): GatewayMiddleware;
}

export type EndpointDefinition = DispatchEndpoint | LocalEndpoint;
