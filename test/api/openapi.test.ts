/** GET /openapi.json: a valid OpenAPI 3.0 document, built from the very schemas that validate requests. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type Router from '@koa/router';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createApiKeySchema } from '../../core/identity/schemas.ts';
import { endpoints } from '../../core/api/endpoints.ts';
import { chatRequestSchema } from '../../core/ingress/schemas/chat.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> }; responses?: Record<string, unknown> };
type Doc = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, Operation>> };

/** Koa's `:param` (and a wildcard `*rest`) is OpenAPI's `{param}`. */
const toOpenApiPath = (path: string) => path.replace(/[:*](\w+)/g, '{$1}');

describe('GET /openapi.json', () => {
  let gw: TestGateway;
  let status: number;
  let contentType: string | null;
  let doc: Doc;

  before(async () => {
    gw = await startTestGateway(chatConfig('http://127.0.0.1:9/v1'));
    const response = await fetch(`${gw.url}/openapi.json`);
    status = response.status;
    contentType = response.headers.get('content-type');
    doc = (await response.json()) as Doc;
  });
  after(async () => {
    await gw.close();
  });

  test('answers 200 with JSON, without credentials', () => {
    assert.equal(status, 200);
    assert.match(contentType ?? '', /^application\/json/);
    assert.equal(typeof doc, 'object');
  });

  test('is a valid OpenAPI 3.0 document', async () => {
    assert.ok(doc.openapi.startsWith('3.0'), `openapi is ${doc.openapi}`);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.ok(validator.version.startsWith('3.0'), `validated as ${validator.version}`);
    assert.equal(doc.info.title, 'aigw');
    assert.equal(typeof doc.info.version, 'string');
  });

  test('has the data-plane, admin, health and document paths', () => {
    assert.ok(doc.paths['/v1/chat/completions']?.post, 'POST /v1/chat/completions');
    assert.ok(doc.paths['/admin/v1/keys']?.post, 'POST /admin/v1/keys');
    assert.ok(doc.paths['/healthz']?.get, 'GET /healthz');
    assert.ok(doc.paths['/readyz']?.get, 'GET /readyz');
    assert.ok(doc.paths['/openapi.json']?.get, 'GET /openapi.json');
  });

  test('the chat request body is chatRequestSchema, the one that validates requests', () => {
    const body = doc.paths['/v1/chat/completions']?.post?.requestBody;
    assert.equal(body?.required, true);
    assert.deepEqual(body?.content?.['application/json']?.schema, chatRequestSchema);
  });

  test('the key creation body is createApiKeySchema, the one that validates admin input', () => {
    const body = doc.paths['/admin/v1/keys']?.post?.requestBody;
    assert.equal(body?.required, true);
    assert.deepEqual(body?.content?.['application/json']?.schema, createApiKeySchema);
  });

  test('every endpoint is documented with its method and its request schema', () => {
    assert.ok(endpoints.length > 0);
    for (const endpoint of endpoints) {
      const path = toOpenApiPath(endpoint.routePattern ?? endpoint.path);
      const operation = doc.paths[path]?.[endpoint.method.toLowerCase()];
      assert.ok(operation, `${endpoint.method} ${path} is in the document`);
      if (endpoint.requestSchema) {
        assert.deepEqual(operation.requestBody?.content?.['application/json']?.schema, endpoint.requestSchema, `${endpoint.method} ${path} body`);
      }
      for (const status of Object.keys(endpoint.responses).map((key) => key.split('-')[0]!)) {
        assert.ok(operation.responses?.[status], `${endpoint.method} ${path} documents ${status}`);
      }
    }
  });

  test('every route the gateway serves is documented, and every documented route is served', () => {
    // The routers mounted on the app, as @koa/router exposes them on their dispatch middleware.
    const served = new Set<string>();
    for (const middleware of gw.gateway.app.middleware) {
      const router = (middleware as { router?: Router }).router;
      for (const layer of router?.stack ?? []) {
        if (typeof layer.path !== 'string') continue;
        for (const method of layer.methods) {
          if (method !== 'HEAD') served.add(`${method} ${toOpenApiPath(layer.path)}`);
        }
      }
    }
    assert.ok(served.size > 0, 'found the routers');
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    assert.deepEqual([...served].sort(), [...documented].sort());
  });
});
