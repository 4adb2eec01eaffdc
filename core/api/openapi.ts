/**
 * GET /openapi.json: OpenAPI 3.0, generated from the very schemas that validate requests, so the document
 * cannot drift from what the gateway accepts.
 */
import Router from '@koa/router';
import type { JsonSchema } from '../json-schema.ts';
import { errorCatalogue, type ErrorEnvelope } from '../errors.ts';
import type { AdminRouteDescription, EndpointDescription } from '../pipeline/routes.ts';
import { ADMIN_PREFIX } from './admin/index.ts';
import { adminRoutes } from './admin/routes.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../store/pagination.ts';

const errorSchema = (): JsonSchema => ({
  type: 'object', required: ['error'],
  properties: {
    error: {
      type: 'object', required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorCatalogue()) },
        message: { type: 'string' },
        details: { nullable: true, description: 'Per code: for VALIDATION_ERROR a list of {path, message}.' },
      },
    },
  },
});

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The Messages-style and legacy envelopes (core/errors.ts renderError), for the endpoints that answer in them. */
const envelopeSchemas: Record<Exclude<ErrorEnvelope, 'canonical'>, JsonSchema> = {
  messages: {
    type: 'object', required: ['type', 'error'],
    properties: { type: { type: 'string', enum: ['error'] }, error: { type: 'object', required: ['type', 'message'], properties: { type: { type: 'string' }, message: { type: 'string' } } } },
  },
  legacy: {
    type: 'object', required: ['error'],
    properties: { error: { type: 'object', required: ['message', 'type'], properties: { message: { type: 'string' }, type: { type: 'string' } } } },
  },
};
const envelopeRef = { messages: 'MessagesError', legacy: 'LegacyError' } as const;

/** A runtime error in the endpoint's envelope; with `orCanonical`, also the canonical one (400: validation). */
function envelopeResponse(description: string, envelope: ErrorEnvelope, orCanonical = false) {
  if (envelope === 'canonical') return errorResponse(description);
  const own = { $ref: `#/components/schemas/${envelopeRef[envelope]}` };
  const schema = orCanonical ? { oneOf: [{ $ref: '#/components/schemas/Error' }, own] } : own;
  return { description, content: { 'application/json': { schema } } };
}

const jsonContent = (schema: JsonSchema) => ({ 'application/json': { schema } });

function endpointOperation(endpoint: EndpointDescription) {
  // Keys like "200-stream" add another content type to the same status.
  const responses: Record<string, { description: string; content: Record<string, unknown> }> = {};
  for (const [key, response] of Object.entries(endpoint.responses)) {
    const status = key.split('-')[0]!;
    const entry = (responses[status] ??= { description: response.description, content: {} });
    if (response.schema) entry.content[response.contentType ?? 'application/json'] = { schema: response.schema };
  }
  const errors = {
    '400': envelopeResponse('Validation failed (VALIDATION_ERROR, always the canonical envelope) or the provider cannot do this (CAPABILITY_NOT_SUPPORTED).', endpoint.errorEnvelope, true),
    '401': errorResponse('No or invalid credential.'),
    '403': errorResponse('The credential lacks the capability.'),
    '404': envelopeResponse('Unknown model.', endpoint.errorEnvelope),
    '413': envelopeResponse('Body over the route limit.', endpoint.errorEnvelope),
    '502': envelopeResponse('The provider failed.', endpoint.errorEnvelope),
    '503': envelopeResponse('The provider is unavailable (breaker open).', endpoint.errorEnvelope),
    '504': envelopeResponse('The provider timed out.', endpoint.errorEnvelope),
  };
  const description = [endpoint.capability ? `Requires the \`${endpoint.capability}\` capability.` : '', endpoint.description ?? ''].filter(Boolean).join(' ');
  const parameters = [...toOpenApiPath(endpoint.routePattern ?? endpoint.path).matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1], in: 'path', required: true, schema: { type: 'string' },
    ...(endpoint.routePattern?.includes(`*${m[1]}`) ? { description: 'The rest of the path, slashes included, as sent.' } : {}),
  }));
  return {
    summary: endpoint.summary,
    ...(description ? { description } : {}),
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { cookieAuth: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.requestSchema ? { requestBody: { required: true, content: jsonContent(endpoint.requestSchema) } } : {}),
    ...(endpoint.rawBody ? { requestBody: { required: false, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } } : {}),
    responses: { ...responses, ...errors },
  };
}

/** `/keys/:id` -> `/keys/{id}`; a wildcard `/*rest` -> `/{rest}` (OpenAPI has no wildcard: see its description). */
export function toOpenApiPath(path: string): string {
  return path.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}');
}

const listSchema = (items: JsonSchema | undefined): JsonSchema => ({
  type: 'object', required: ['object', 'data', 'has_more', 'next_cursor'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: { type: 'array', items: items ?? { type: 'object' } },
    has_more: { type: 'boolean' },
    next_cursor: { type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' },
  },
});

function adminOperation(route: AdminRouteDescription) {
  const parameters = [
    ...[...route.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
    ...Object.entries(route.filters ?? {}).map(([name, description]) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } })),
    ...(route.list ? [
      { name: 'limit', in: 'query', required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE } },
      { name: 'cursor', in: 'query', required: false, description: 'next_cursor of the previous page.', schema: { type: 'string' } },
    ] : []),
  ];
  const schema = route.list ? listSchema(route.responseSchema) : route.responseSchema;
  // A streamed answer is one JSON value per line, each of the response schema.
  const content = route.stream === 'ndjson'
    ? { 'application/x-ndjson': { schema: route.responseSchema ?? { type: 'object' } } }
    : schema ? jsonContent(schema) : undefined;
  return {
    summary: route.summary,
    security: [{ adminToken: [] }, { bearerAuth: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.requestSchema ? { requestBody: { required: true, content: jsonContent(route.requestSchema) } } : {}),
    responses: {
      [String(route.status)]: { description: 'Success.', ...(content ? { content } : {}) },
      '400': errorResponse('Validation failed.'),
      '401': errorResponse('Missing or wrong admin token, or an invalid JWT.'),
      '403': errorResponse('A JWT without role admin, or a tenant outside the admin JWT\'s own.'),
      '404': errorResponse('No such record, or the admin API is off.'),
    },
  };
}

/** `metrics`: the gateway serves GET /metrics (server.metrics.enabled). */
export function buildOpenApiDocument(
  endpoints: readonly EndpointDescription[], version: string, extraAdminRoutes: readonly AdminRouteDescription[] = [], options: { metrics?: boolean } = {},
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const path = toOpenApiPath(endpoint.routePattern ?? endpoint.path);
    paths[path] = { ...(paths[path] ?? {}), [endpoint.method.toLowerCase()]: endpointOperation(endpoint) };
  }
  for (const route of [...adminRoutes, ...extraAdminRoutes]) {
    const path = ADMIN_PREFIX + toOpenApiPath(route.path);
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: adminOperation(route) };
  }
  paths['/healthz'] = { get: { summary: 'The process is up.', responses: { '200': { description: 'ok' } } } };
  paths['/readyz'] = {
    get: {
      summary: 'The stores answer; details per store and breaker states.',
      responses: { '200': { description: 'ready' }, '503': { description: 'not ready' } },
    },
  };
  // The admin UI's static files (core/api/admin-ui.ts): served only while the admin API is on.
  const uiPage = {
    get: {
      summary: 'The admin UI (a browser page; it calls /admin/v1 with the token signed in with).',
      responses: { '200': { description: 'index.html' }, '404': errorResponse('The admin API is off.'), '503': { description: 'The UI is not built: run npm run build.' } },
    },
  };
  paths['/ui'] = uiPage;
  paths['/ui/'] = uiPage;
  paths['/ui/assets/{name}'] = {
    get: {
      summary: "One of the admin UI's script, style or image files.",
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: 'The file.' }, '304': { description: 'Unchanged since the ETag sent in If-None-Match.' }, '404': errorResponse('No such file, or the admin API is off.') },
    },
  };
  if (options.metrics) {
    paths['/metrics'] = {
      get: {
        summary: 'Prometheus metrics (text exposition format). Loopback scrapers need no credential; others send server.metrics.token as a Bearer token.',
        responses: {
          '200': { description: 'the series listed in docs/operations.md' },
          '401': { description: 'AUTH_REQUIRED or AUTH_INVALID_TOKEN: a non-loopback scraper without the metrics token' },
          '403': { description: 'AUTH_FORBIDDEN: a non-loopback scraper, and no server.metrics.token is configured' },
        },
      },
    };
  }
  paths['/openapi.json'] = { get: { summary: 'This document.', responses: { '200': { description: 'OpenAPI 3.0 document' } } } };

  return {
    openapi: '3.0.3',
    info: { title: 'aigw', version, description: 'One OpenAI-compatible API in front of many model providers.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorSchema(), MessagesError: envelopeSchemas.messages, LegacyError: envelopeSchemas.legacy },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (aigw_sk_...) or a JWT.' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'AIGW_ADMIN_TOKEN, or a JWT with role admin.' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'A JWT in the HttpOnly access_token cookie.' },
      },
    },
  };
}

export function openApiRouter(document: Record<string, unknown>): Router {
  const router = new Router();
  const body = JSON.stringify(document);
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return router;
}
