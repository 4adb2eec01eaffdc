/**
 * A data-plane endpoint: its route, the capability it needs and its error envelope. A dispatch endpoint turns
 * its body into a canonical request for the dispatcher and writes the canonical answer back; a local endpoint
 * (GET /v1/models, ...) answers itself at the end of its pipeline. Pipelines are attached per endpoint.
 */
import type { ImageProgressHub } from '../dispatch/image-progress.ts';
import type { CanonicalRequest } from '../canonical/chat.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Breakers } from '../dispatch/breakers.ts';
import type { ProviderIO } from '../dispatch/provider.ts';
import type { ProviderRegistry } from '../dispatch/provider-registry.ts';
import type { RoutingTable } from '../dispatch/routing.ts';
import type { UpstreamClient } from '../dispatch/upstream.ts';
import type { JobQueue } from '../jobs/types.ts';
import type { GatewayContext, GatewayMiddleware } from '../pipeline/context.ts';
import type { RetrievalService } from '../pipeline/retrieval.ts';
import type { MeteredWork } from '../pipeline/metered.ts';
import type { EndpointDescription } from '../pipeline/routes.ts';
import type { Clock } from '../pipeline/plugin.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';

/** What every endpoint declares (core/pipeline/routes.ts): method, path, capability, envelope, docs. */
type EndpointBase = EndpointDescription;

export interface DispatchEndpoint extends EndpointBase {
  kind: 'dispatch';
  /**
   * Validated body -> canonical request (throws VALIDATION_ERROR for rules a schema cannot say). Called when the
   * pipeline first asks for the request (gw.request()), so after the plugins that run before it (auth: the caller
   * is known); an endpoint whose request depends on stored state (a Responses continuation) reads it here.
   */
  parse(body: unknown, ctx: GatewayContext, deps: LocalEndpointDeps): CanonicalRequest | Promise<CanonicalRequest>;
  /**
   * Writes the canonical answer (gw.result or gw.stream, already passed through the response stages) in this
   * endpoint's wire format; may first record it (a stored response).
   */
  respond(ctx: GatewayContext, deps: LocalEndpointDeps): void | Promise<void>;
  /** Reads the body for parse(), within the limit; default: JSON only. Audio endpoints also take multipart forms. */
  readBody?(ctx: GatewayContext, limitBytes: number): Promise<unknown>;
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
  /** Background work that must outlive the request (polling, webhook delivery): enqueued in the database. */
  jobs: JobQueue;
  /** Reports work metered outside a request (a batch that ended) to the plugins: gateway.meterWork. */
  meterWork(work: MeteredWork): Promise<void>;
  /** Search of the gateway's vector stores, its query embedded and metered in the caller's name. */
  retrieval: RetrievalService;
  /** Progress of running image requests, for the /image-progress WebSocket. */
  imageProgress: ImageProgressHub;
}

export interface LocalEndpoint extends EndpointBase {
  kind: 'local';
  /** The last step of the pipeline: sets the response itself. */
  handler(deps: LocalEndpointDeps): GatewayMiddleware;
}

export type EndpointDefinition = DispatchEndpoint | LocalEndpoint;
