/**
 * The fuzz suite: generated bad bodies, paths, queries, content types and credentials sent to every route the
 * gateway serves, read from its routers (so a new endpoint is fuzzed without touching this file), the admin API
 * with a valid admin token included. The provider is a loopback fake that answers correctly, so any 5xx is the
 * gateway's own. It asserts no 5xx, no `unhandled error` log line, no unhandled rejection, no polluted
 * prototype, and that /healthz still answers at the end. The seed is printed: FUZZ_SEED=<seed> repeats a run;
 * FUZZ_ROUNDS=<n> sends n times as many.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import type Router from '@koa/router';
import { adminRoutes } from '../../core/api/admin/routes.ts';
import { endpoints } from '../../core/api/endpoints.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { BODY_KINDS, fuzzBody, PARAM_VALUES, pick, prng, QUERIES, sampleFromSchema, type Random } from '../helpers/fuzz-inputs.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const JWT_SECRET = 'fuzz-test-jwt-secret-0123456789-abcdefghij';
const CONCURRENCY = 6;
/** Every body kind once per route per round: one round is about 400 requests; FUZZ_ROUNDS=50 for a long local run. */
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1);

/** Hand-written bases for the dispatch endpoints: their schemas' unions make poor samples. */
const DISPATCH_BASES: Record<string, unknown> = {
  '/v1/chat/completions': {
    model: 'plain', max_tokens: 5, stream: false, messages: [{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }],
    response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
  },
  '/v1/messages': {
    model: 'plain', max_tokens: 5, system: 's', metadata: { user_id: 'u' },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }],
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
  },
  '/v1/completions': { model: 'plain', prompt: 'hi', max_tokens: 5, stream: false },
};

interface Route {
  method: string;
  /** The router's pattern, parameters and wildcards included. */
  pattern: string;
  admin: boolean;
  base: unknown;
}

/** Every (method, pattern) the gateway's routers serve: read from the Koa app, not listed here. */
function servedRoutes(tg: TestGateway, random: Random): Route[] {
  const schemas = new Map<string, unknown>();
  for (const e of endpoints) schemas.set(`${e.method} ${e.routePattern ?? e.path}`, DISPATCH_BASES[e.path] ?? sampleFromSchema(e.requestSchema, random));
  for (const r of adminRoutes) schemas.set(`${r.method} /admin/v1${r.path}`, sampleFromSchema(r.requestSchema, random));
  const routes: Route[] = [];
  for (const middleware of tg.gateway.app.middleware) {
    const router = (middleware as { router?: Router }).router;
    for (const layer of router?.stack ?? []) {
      const pattern = String(layer.path);
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        routes.push({ method, pattern, admin: pattern.startsWith('/admin/'), base: schemas.get(`${method} ${pattern}`) ?? {} });
      }
    }
  }
  return routes;
}

/** The pattern with its parameters filled: mostly fuzzed values, the provider mostly the configured one. */
function fillPath(pattern: string, random: Random): string {
  return pattern
    .replace(/:provider\b/, () => (random() < 0.8 ? 'openai' : pick(random, PARAM_VALUES)))
    .replace(/\*\w+/, () => pick(random, ['models', 'chat/completions', 'files/x/content', 'a//b', '%2e%2e/%2e%2e/admin', '..%5C..%5Cadmin', 'x%00y', `${'p/'.repeat(300)}end`]))
    .replace(/:\w+/g, () => pick(random, PARAM_VALUES));
}

interface Credentials {
  key: string;
  adminCookie: string;
  badJwts: string[];
}

function headersFor(route: Route, credentials: Credentials, random: Random): Record<string, string> {
  if (random() < 0.85) return { authorization: `Bearer ${route.admin ? ADMIN_TOKEN : credentials.key}` };
  return pick<Record<string, string>>(random, [
    {},
    { cookie: `access_token=${credentials.adminCookie}`, 'sec-fetch-site': 'same-origin' },
    { cookie: `access_token=${credentials.adminCookie}`, origin: 'https://evil.example' },
    { authorization: `Bearer ${pick(random, credentials.badJwts)}` },
    { cookie: `access_token=${pick(random, credentials.badJwts)}`, 'sec-fetch-site': 'same-origin' },
    { 'x-api-key': pick(random, ['aigw_sk_', 'aigw_sk_%00', `aigw_sk_${'k'.repeat(4000)}`, 'a.b.c']) },
    { authorization: pick(random, ['Bearer', 'Basic x', `Bearer ${'t'.repeat(8000)}`, 'Bearer a b']) },
  ]);
}

interface Outcome {
  status: number | 'error';
  text: string;
}

function send(url: string, method: string, path: string, headers: Record<string, string>, body: Buffer | string | undefined): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest(url + path, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8').slice(0, 300) }));
      res.on('error', (err) => resolve({ status: 'error', text: err.message }));
    });
    req.on('error', (err) => resolve({ status: 'error', text: err.message }));
    req.end(body);
  });
}

describe(`fuzz: every route, generated bad input (FUZZ_SEED=${SEED})`, () => {
  let fake: FakeOpenAI;
  let tg: TestGateway;
  const logged: Array<{ msg?: string; path?: string; err?: { message?: string } }> = [];
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  before(async () => {
    process.on('unhandledRejection', onRejection);
    fake = await startFakeOpenAI();
    const sink = new Writable({ write(line, _encoding, done) { logged.push(JSON.parse(String(line))); done(); } });
    // No pipelines: every route gets the whole implicit chain (auth, ip-allow, ratelimit, budget, usage).
    tg = await startTestGateway(`providers:
  openai:
    baseUrl: ${fake.baseUrl}
    apiKey: sk-upstream
models:
  - id: plain
    provider: openai
auth:
  jwt:
    capabilities: [chat, completions, proxy, usage:read, budget:read]
`, { env: { AIGW_JWT_SECRET: JWT_SECRET }, logger: pino({ level: 'error' }, sink) });
  });
  after(async () => {
    process.off('unhandledRejection', onRejection);
    await tg?.close();
    await fake?.close();
  });

  test('no 5xx and no crash', async () => {
    console.log(`fuzz seed: ${SEED} (repeat with FUZZ_SEED=${SEED})`);
    const random = prng(SEED);
    const secret = new TextEncoder().encode(JWT_SECRET);
    const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    const credentials: Credentials = {
      key: await tg.createKey({ scopes: { capabilities: ['chat', 'completions', 'proxy', 'usage:read', 'budget:read'] } }),
      adminCookie: await sign({ sub: 'fuzz', tenantId: 'default', jti: 'fuzz-admin', type: 'access', role: 'admin' }),
      badJwts: await Promise.all([
        { sub: 'u', tenantId: 'a\u0000b', jti: 'j', type: 'access' },
        { sub: 'u\ud800', tenantId: 'default', jti: 'j\u0000', type: 'access' },
        { sub: 1, tenantId: ['default'], jti: {}, type: 'access' },
        { sub: 'u', tenantId: 'x'.repeat(20_000), jti: 'j', type: 'access', organizationId: '__proto__' },
        { sub: 'u', tenantId: 'default', jti: 'j2', type: 'access', exp: 1e300, nbf: -1e20 },
      ].map(sign)),
    };
    const routes = servedRoutes(tg, random);
    // The routers really were read: each family of route is there.
    for (const expected of ['/v1/chat/completions', '/v1/messages', '/v1/completions', '/v1/models', '/v1/usage', '/v1/budget', '/proxy/', '/admin/v1/keys', '/admin/v1/budgets/:id', '/healthz', '/readyz', '/openapi.json']) {
      assert.ok(routes.some((r) => r.pattern.includes(expected)), `no route ${expected} among ${routes.map((r) => r.pattern).join(', ')}`);
    }

    const cases = Array.from({ length: ROUNDS }, () => routes).flat().flatMap((route) => BODY_KINDS.map((kind) => {
      const { body, contentType } = fuzzBody(kind, route.base, random);
      const headers = headersFor(route, credentials, random);
      if (contentType) headers['content-type'] = contentType;
      const withBody = route.method !== 'GET' || random() < 0.2;
      return { route, kind, path: fillPath(route.pattern, random) + pick(random, QUERIES), headers, body: withBody ? body : undefined };
    }));
    const failures: string[] = [];
    const statuses = new Map<string, number>();
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const outcome = await send(tg.url, c.route.method, c.path, c.headers, c.body);
        statuses.set(String(outcome.status), (statuses.get(String(outcome.status)) ?? 0) + 1);
        const bodySize = c.body === undefined ? 0 : Buffer.byteLength(c.body);
        // A refused oversized body may close the socket while the client is still writing: that is the 413's doing.
        const oversized = bodySize > 1024 * 1024 && c.route.admin;
        if (outcome.status === 'error' ? !oversized : outcome.status >= 500) {
          const sent = c.body === undefined ? '' : String(c.body).slice(0, 160);
          failures.push(`${outcome.status} ${c.route.method} ${c.path.slice(0, 120)} [${c.kind}, ${bodySize} bytes: ${sent}] ${outcome.text}`);
        }
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const answers = [...statuses].sort().map(([status, n]) => `${status}: ${n}`).join(', ');
    console.log(`fuzz: ${cases.length} requests to ${routes.length} routes in ${seconds.toFixed(1)} s (${answers})`);

    const internal = logged.filter((l) => l.msg === 'unhandled error').map((l) => `${l.path}: ${l.err?.message}`);
    assert.deepEqual({ failures, internal }, { failures: [], internal: [] }, `seed ${SEED}: ${failures.length} of ${cases.length} requests failed`);
    assert.deepEqual(rejections.map(String), [], `seed ${SEED}: unhandled rejections`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
    const health = await fetch(`${tg.url}/healthz`);
    assert.equal(health.status, 200);
  });
});
