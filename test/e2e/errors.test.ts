/** Every error a caller can cause on the foundation's routes, with its exact status, code and envelope. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const LIMIT = 4096;
const hello = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };

function assertEnvelope(body: any, code: string): void {
  assert.deepEqual(Object.keys(body), ['error'], JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message']);
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, 'string');
}

describe('errors on the chat route', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let auth: Record<string, string>;
  let chat: string;

  before(async () => {
    fake = await startFakeOpenAI();
    // No retries: each case below is one upstream answer, mapped once.
    gw = await startTestGateway(chatConfig(fake.baseUrl, `server:\n  jsonBodyLimitBytes: ${LIMIT}\nrouting:\n  retries: 0\n`));
    key = await gw.createKey();
    auth = { authorization: `Bearer ${key}` };
    chat = `${gw.url}/v1/chat/completions`;
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('unknown route: 404 NOT_FOUND in the canonical envelope, with a request id', async () => {
    const response = await fetch(`${gw.url}/v1/nothing-here`);
    assert.equal(response.status, 404);
    assert.ok(response.headers.get('x-request-id'));
    assertEnvelope(await response.json(), 'NOT_FOUND');
  });

  test('wrong method on a known route: 405 METHOD_NOT_ALLOWED', async () => {
    const response = await fetch(chat, { method: 'GET' });
    assert.equal(response.status, 405);
    assertEnvelope(await response.json(), 'METHOD_NOT_ALLOWED');
  });

  test('no credential: 401 AUTH_REQUIRED, before the body is even looked at', async () => {
    const r = await postJson(chat, '{not json');
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'AUTH_REQUIRED');
  });

  test('unknown or malformed API key: 401 AUTH_INVALID_API_KEY; a JWT while JWT auth is off: AUTH_INVALID_TOKEN', async () => {
    const variants: Array<Record<string, string>> = [{ authorization: 'Bearer aigw_sk_nope' }, { 'x-api-key': 'aigw_sk_nope' }, { authorization: 'Basic abc' }, { authorization: 'Bearer some-other-token' }];
    for (const headers of variants) {
      const r = await postJson(chat, hello, headers);
      assert.equal(r.status, 401, JSON.stringify(headers));
      assertEnvelope(r.body, 'AUTH_INVALID_API_KEY');
    }
    const jwt = await postJson(chat, hello, { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' });
    assert.equal(jwt.status, 401);
    assertEnvelope(jwt.body, 'AUTH_INVALID_TOKEN');
  });

  test('Authorization wins over x-api-key when both are sent', async () => {
    const r = await postJson(chat, hello, { authorization: 'Bearer aigw_sk_wrong', 'x-api-key': key });
    assert.equal(r.status, 401);
    const ok = await postJson(chat, hello, { authorization: `Bearer ${key}`, 'x-api-key': 'aigw_sk_wrong' });
    assert.equal(ok.status, 200);
  });

  test('a key without the chat capability: 403 AUTH_FORBIDDEN naming it', async () => {
    const embeddingsOnly = await gw.createKey({ scopes: { capabilities: ['embeddings'] } });
    const r = await postJson(chat, hello, { authorization: `Bearer ${embeddingsOnly}` });
    assert.equal(r.status, 403);
    assertEnvelope(r.body, 'AUTH_FORBIDDEN');
    assert.deepEqual(r.body.error.details, { requiredCapability: 'chat' });
  });

  test('an expired key: 401 AUTH_API_KEY_EXPIRED, and the status is persisted', async () => {
    const expired = await gw.createKey({ name: 'old', expiresAt: '2020-01-01T00:00:00Z' });
    const r = await postJson(chat, hello, { authorization: `Bearer ${expired}` });
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'AUTH_API_KEY_EXPIRED');
    const rows = await gw.gateway.services.db.query<{ status: string }>(`SELECT status FROM api_keys WHERE name = 'old'`);
    assert.equal(rows[0]?.status, 'expired');
    const again = await postJson(chat, hello, { authorization: `Bearer ${expired}` });
    assertEnvelope(again.body, 'AUTH_API_KEY_EXPIRED');
  });

  test('malformed JSON: 400 VALIDATION_ERROR', async () => {
    const r = await postJson(chat, '{"model": "plain", ', auth);
    assert.equal(r.status, 400);
    assertEnvelope(r.body, 'VALIDATION_ERROR');
  });

  test('a body that is not JSON: 400 VALIDATION_ERROR', async () => {
    const response = await fetch(chat, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'hello' });
    assert.equal(response.status, 400);
    assertEnvelope(await response.json(), 'VALIDATION_ERROR');
  });

  test('schema violations: 400 VALIDATION_ERROR with [{path, message}] details; out-of-range values are refused, not clamped', async () => {
    const cases: Array<[unknown, string]> = [
      [{ messages: [{ role: 'user', content: 'x' }] }, '/model'],
      [{ model: 'plain', messages: [] }, '/messages'],
      [{ ...hello, temperature: 2.5 }, '/temperature'],
      [{ ...hello, top_p: -0.1 }, '/top_p'],
      [{ ...hello, n: 11 }, '/n'],
      [{ ...hello, messages: [{ role: 'robot', content: 'x' }] }, '/messages/0/role'],
      [{ ...hello, top_logprobs: 3 }, '/top_logprobs'],
      [{ ...hello, frequency_penalty: 2.1 }, '/frequency_penalty'],
      [{ ...hello, logit_bias: { '50256': -101 } }, '/logit_bias/50256'],
    ];
    for (const [body, path] of cases) {
      const r = await postJson(chat, body, auth);
      assert.equal(r.status, 400, JSON.stringify(body));
      assertEnvelope(r.body, 'VALIDATION_ERROR');
      assert.ok(Array.isArray(r.body.error.details));
      assert.ok(r.body.error.details.some((d: { path: string }) => d.path === path), `${path} in ${JSON.stringify(r.body.error.details)}`);
    }
  });

  test('a body over the route limit: 413 PAYLOAD_TOO_LARGE from Content-Length, before the body is sent', async () => {
    // Announce a large body but send none of it: the answer must come without waiting for the bytes.
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(chat, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"model":"plain","messages":[');
    });
    assert.equal(result.status, 413);
    assertEnvelope(JSON.parse(result.body), 'PAYLOAD_TOO_LARGE');
  });

  test('a chunked body that grows past the limit: 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ ...hello, messages: [{ role: 'user', content: 'x'.repeat(LIMIT * 2) }] });
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const response = await fetch(chat, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(response.status, 413);
    assertEnvelope(await response.json(), 'PAYLOAD_TOO_LARGE');
  });

  test('an unknown model: 404 MODEL_NOT_FOUND', async () => {
    const r = await postJson(chat, { ...hello, model: 'gpt-9' }, auth);
    assert.equal(r.status, 404);
    assertEnvelope(r.body, 'MODEL_NOT_FOUND');
  });

  test('a built-in tool the provider lacks: 400 CAPABILITY_NOT_SUPPORTED before any upstream call', async () => {
    const before = fake.requests.length;
    const r = await postJson(chat, { ...hello, tools: [{ type: 'built_in', built_in: 'code_execution' }] }, auth);
    assert.equal(r.status, 400);
    assertEnvelope(r.body, 'CAPABILITY_NOT_SUPPORTED');
    assert.deepEqual(r.body.error.details, { provider: 'openai', tools: ['code_execution'] });
    // file_search is the gateway's own tool for every provider: a store the caller's tenant lacks is 404.
    const fileSearch = await postJson(chat, { ...hello, tools: [{ type: 'built_in', built_in: 'file_search', config: { vectorStoreIds: ['vs-1'] } }] }, auth);
    assert.equal(fileSearch.status, 404);
    assertEnvelope(fileSearch.body, 'NOT_FOUND');
    assert.equal(fake.requests.length, before);
  });

  test('web_search on OpenAI becomes web_search_options and leaves the tools list', async () => {
    const r = await postJson(chat, { ...hello, tools: [{ type: 'built_in', built_in: 'web_search', config: { search_context_size: 'low' } }] }, auth);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const sent = fake.requests.at(-1)!.body;
    assert.deepEqual(sent.web_search_options, { search_context_size: 'low' });
    assert.equal(sent.tools, undefined);
  });

  test('upstream failures map to the catalogue: 500 -> 502 UPSTREAM_ERROR, 400 -> 400 UPSTREAM_BAD_REQUEST, 429 -> 429, 401 -> 502', async () => {
    const cases: Array<[number, number, string]> = [[500, 502, 'UPSTREAM_ERROR'], [400, 400, 'UPSTREAM_BAD_REQUEST'], [429, 429, 'UPSTREAM_RATE_LIMITED'], [401, 502, 'UPSTREAM_ERROR']];
    try {
      for (const [upstreamStatus, status, code] of cases) {
        fake.handle((_, res) => {
          res.writeHead(upstreamStatus, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `upstream said ${upstreamStatus}`, type: 'x' } }));
        });
        const r = await postJson(chat, hello, auth);
        assert.equal(r.status, status, `${upstreamStatus}`);
        assertEnvelope(r.body, code);
        assert.match(r.body.error.message, new RegExp(`upstream said ${upstreamStatus}`));
        assert.equal(r.body.error.details.upstreamStatus, upstreamStatus);
      }
      fake.handle((_, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>not json</html>');
      });
      const r = await postJson(chat, hello, auth);
      assert.equal(r.status, 502);
      assertEnvelope(r.body, 'UPSTREAM_ERROR');
    } finally {
      fake.reset();
    }
  });

  test('an unreachable upstream: 502 UPSTREAM_ERROR', async () => {
    const other = await startTestGateway(chatConfig('http://127.0.0.1:9/v1'));
    try {
      const otherKey = await other.createKey();
      const r = await postJson(`${other.url}/v1/chat/completions`, hello, { authorization: `Bearer ${otherKey}` });
      assert.equal(r.status, 502);
      assertEnvelope(r.body, 'UPSTREAM_ERROR');
    } finally {
      await other.close();
    }
  });
});

describe('errors on the admin API', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(chatConfig('http://127.0.0.1:9/v1'));
  });
  after(() => gw.close());

  test('no token 401 AUTH_REQUIRED; a wrong token 401 AUTH_INVALID_TOKEN', async () => {
    const none = await postJson(`${gw.url}/admin/v1/keys`, { name: 'x' });
    assert.equal(none.status, 401);
    assertEnvelope(none.body, 'AUTH_REQUIRED');
    const wrong = await postJson(`${gw.url}/admin/v1/keys`, { name: 'x' }, { authorization: 'Bearer nope' });
    assert.equal(wrong.status, 401);
    assertEnvelope(wrong.body, 'AUTH_INVALID_TOKEN');
  });

  test('an API key is not an admin token', async () => {
    const key = await gw.createKey();
    const r = await postJson(`${gw.url}/admin/v1/keys`, { name: 'x' }, { authorization: `Bearer ${key}` });
    assert.equal(r.status, 401);
  });

  test('invalid creation fields: 400 VALIDATION_ERROR with pointers', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const cases: Array<[unknown, string]> = [
      [{}, '/name'],
      [{ name: '' }, '/name'],
      [{ name: 'x'.repeat(201) }, '/name'],
      [{ name: 'x', scopes: { capabilities: ['teleport'] } }, '/scopes/capabilities/0'],
      [{ name: 'x', rateLimits: { requestsPerMinute: 0 } }, '/rateLimits/requestsPerMinute'],
      [{ name: 'x', expiresAt: 'tomorrow' }, '/expiresAt'],
      [{ name: 'x', colour: 'blue' }, '/colour'],
      [{ name: 'x', tenantId: 'nobody' }, '/tenantId'],
    ];
    for (const [body, path] of cases) {
      const r = await postJson(`${gw.url}/admin/v1/keys`, body, admin);
      assert.equal(r.status, 400, JSON.stringify(body));
      assertEnvelope(r.body, 'VALIDATION_ERROR');
      assert.ok(r.body.error.details.some((d: { path: string }) => d.path === path), `${path} in ${JSON.stringify(r.body.error.details)}`);
    }
  });

  test('a created key: 201, the record and the plaintext once; only its hash is stored', async () => {
    const r = await postJson(`${gw.url}/admin/v1/keys`, {
      name: 'full', scopes: { capabilities: ['chat', 'embeddings'], providerIds: ['openai'], modelIds: ['gpt-4o-mini'] },
      rateLimits: { requestsPerMinute: 60, requestsPerDay: 1000, tokensPerDay: 100000 },
      expiresAt: '2099-01-01T00:00:00.000Z', allowedIps: ['10.0.0.0/8'], metadata: { team: 'search' },
    }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(r.status, 201);
    assert.match(r.body.key, /^aigw_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(r.body.status, 'active');
    assert.equal(r.body.tenantId, 'default');
    assert.deepEqual(r.body.scopes, { capabilities: ['chat', 'embeddings'], providerIds: ['openai'], modelIds: ['gpt-4o-mini'] });
    assert.deepEqual(r.body.rateLimits, { requestsPerMinute: 60, requestsPerDay: 1000, tokensPerDay: 100000 });
    assert.equal(r.body.expiresAt, '2099-01-01T00:00:00.000Z');
    assert.deepEqual(r.body.allowedIps, ['10.0.0.0/8']);
    assert.deepEqual(r.body.metadata, { team: 'search' });
    const rows = await gw.gateway.services.db.query<{ dump: string }>('SELECT row_to_json(k)::text AS dump FROM api_keys k');
    assert.ok(rows.length > 0);
    for (const row of rows) assert.ok(!row.dump.includes(r.body.key), 'plaintext key stored');
  });
});

describe('admin API off', () => {
  test('without an admin token the admin API answers 404 NOT_FOUND saying how to turn it on', async () => {
    const gw = await startTestGateway(chatConfig('http://127.0.0.1:9/v1'), { env: { AIGW_ADMIN_TOKEN: '' } });
    try {
      const r = await postJson(`${gw.url}/admin/v1/keys`, { name: 'x' }, { authorization: 'Bearer anything' });
      assert.equal(r.status, 404);
      assertEnvelope(r.body, 'NOT_FOUND');
      assert.match(r.body.error.message, /AIGW_ADMIN_TOKEN/);
    } finally {
      await gw.close();
    }
  });
});
