/**
 * A data-plane endpoint: its route, the capability it needs, how its body is validated and turned into a
 * canonical request, and how the canonical answer goes back on the wire. Pipelines are attached per endpoint.
 */
import type { CanonicalRequest } from '../canonical/chat.ts';
import type { JsonSchema } from '../config/schema.ts';
import type { ErrorEnvelope } from '../errors.ts';
import type { GatewayContext } from '../pipeline/context.ts';

export interface EndpointDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** The capability a key needs, or null (GET /v1/models). */
  capability: string | null;
  summary: string;
  errorEnvelope: ErrorEnvelope;
  /** Largest accepted body; larger ones get 413 before they are read in full. Default: server.jsonBodyLimitBytes. */
  bodyLimitBytes?: number;
  requestSchema?: JsonSchema;
  /** Response schemas by status, for /openapi.json. */
  responses: Record<string, { description: string; schema?: JsonSchema; contentType?: string }>;
  /** Validated body -> canonical request (throws VALIDATION_ERROR for rules a schema cannot say). */
  parse(body: unknown): CanonicalRequest;
  /** Writes the canonical answer (gw.result or gw.stream, already tapped) in this endpoint's wire format. */
  respond(ctx: GatewayContext): void;
}
