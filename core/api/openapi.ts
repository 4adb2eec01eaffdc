/**
 * GET /openapi.json: OpenAPI 3.0, generated from the very schemas that validate requests, so the document
 * cannot drift from what the gateway accepts.
 */
import Router from '@koa/router';
import type { JsonSchema } from '../config/schema.ts';
import { ERROR_CATALOGUE } from '../errors.ts';
import { apiKeyRecordSchema, createApiKeySchema } from '../identity/schemas.ts';
import type { EndpointDefinition } from '../ingress/endpoint.ts';

const errorSchema: JsonSchema = {
  type: 'object', required: ['error'],
  properties: {
    error: {
      type: 'object', required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
        message: { type: 'string' },
        details: { nullable: true, description: 'Per code: for VALIDATION_ERROR a list of {path, message}.' },
      },
    },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const jsonContent = (schema: JsonSchema) => ({ 'application/json': { schema } });

function endpointOperation(endpoint: EndpointDefinition) {
  // Keys like "200-stream" add another content type to the same status.
  const responses: Record<string, { description: string; content: Record<string, unknown> }> = {};
  for (const [key, response] of Object.entries(endpoint.responses)) {
    const status = key.split('-')[0]!;
    const entry = (responses[status] ??= { description: response.description, content: {} });
    if (response.schema) entry.content[response.contentType ?? 'application/json'] = { schema: response.schema };
  }
  const errors = {
    '400': errorResponse('Validation failed (VALIDATION_ERROR) or the provider cannot do this (CAPABILITY_NOT_SUPPORTED).'),
    '401': errorResponse('No or invalid credential.'),
    '403': errorResponse('The credential lacks the capability.'),
    '404': errorResponse('Unknown model.'),
    '413': errorResponse('Body over the route limit.'),
    '502': errorResponse('The provider failed.'),
    '503': errorResponse('The provider is unavailable (breaker open).'),
    '504': errorResponse('The provider timed out.'),
  };
  return {
    summary: endpoint.summary,
    ...(endpoint.capability ? { description: `Requires the \`${endpoint.capability}\` capability.` } : {}),
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    ...(endpoint.requestSchema ? { requestBody: { required: true, content: jsonContent(endpoint.requestSchema) } } : {}),
    responses: { ...responses, ...errors },
  };
}

export function buildOpenApiDocument(endpoints: readonly EndpointDefinition[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    paths[endpoint.path] = { ...(paths[endpoint.path] ?? {}), [endpoint.method.toLowerCase()]: endpointOperation(endpoint) };
  }
  paths['/admin/v1/keys'] = {
    post: {
      summary: 'Create an API key; the plaintext key is in the response, once.',
      security: [{ adminToken: [] }],
      requestBody: { required: true, content: jsonContent(createApiKeySchema) },
      responses: {
        '201': { description: 'The key record, with `key`.', content: jsonContent(apiKeyRecordSchema) },
        '400': errorResponse('Validation failed.'),
        '401': errorResponse('Missing or wrong admin token.'),
        '404': errorResponse('The admin API is off.'),
      },
    },
  };
  paths['/healthz'] = { get: { summary: 'The process is up.', responses: { '200': { description: 'ok' } } } };
  paths['/readyz'] = {
    get: {
      summary: 'The stores answer; details per store and breaker states.',
      responses: { '200': { description: 'ready' }, '503': { description: 'not ready' } },
    },
  };
  paths['/openapi.json'] = { get: { summary: 'This document.', responses: { '200': { description: 'OpenAPI 3.0 document' } } } };

  return {
    openapi: '3.0.3',
    info: { title: 'aigw', version, description: 'One OpenAI-compatible API in front of many model providers.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (aigw_sk_...) or a JWT.' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'AIGW_ADMIN_TOKEN.' },
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
