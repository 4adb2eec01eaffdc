/**
 * Inputs that once reached a 500: bodies nested thousands deep, U+0000 in admin paths, queries, bodies and JWT
 * claims, dates Postgres cannot store. Each is the caller's mistake and gets a 4xx that names it; and what an
 * error echoes of the caller's input stays short.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { MAX_JSON_DEPTH } from '../../core/ingress/body.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const JWT_SECRET = 'bad-input-test-jwt-secret-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** `{"a":{"a":...{}}}` nested `depth` objects deep, built as text: JSON.stringify itself overflows on such values. */
const nested = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
/** A body whose `"@NESTED@"` placeholder is replaced by `depth` levels of nesting. */
const withNested = (body: unknown, depth: number) => JSON.stringify(body).replace('"@NESTED@"', nested(depth));

function assertCode(answer: { status: number; body: any }, status: number, code: string): void {
  const shown = JSON.stringify(answer.body).slice(0, 500);
  assert.equal(answer.status, status, shown);
  assert.equal(answer.body?.error?.code, code, shown);
}

async function get(url: string, headers: Record<string, string> = admin): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

const mint = (claims: Record<string, unknown>) => new SignJWT({ type: 'access', jti: `jti-${Math.random()}`, ...claims })
  .setProtectedHeader({ alg: 'HS256' }).setSubject(String(claims.sub ?? 'user')).setExpirationTime('1h')
  .sign(new TextEncoder().encode(JWT_SECRET));

describe('bad input gets a 4xx, never a 500', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let auth: Record<string, string>;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, `  - name: messages\n    routes: [/v1/messages]\n    plugins: [auth]\n`), { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('8,000-deep JSON in tool parameters, a response_format schema and Messages tools: 400 VALIDATION_ERROR', async () => {
    const chat = `${gw.url}/v1/chat/completions`;
    const messages = `${gw.url}/v1/messages`;
    const user = [{ role: 'user', content: 'hi' }];
    const cases: Array<[string, string]> = [
      [chat, withNested({ model: 'plain', messages: user, tools: [{ type: 'function', function: { name: 'f', parameters: '@NESTED@' } }] }, 8000)],
      [chat, withNested({ model: 'plain', messages: user, response_format: { type: 'json_schema', json_schema: { name: 's', schema: '@NESTED@' } } }, 8000)],
      [messages, withNested({ model: 'plain', max_tokens: 10, messages: user, tools: [{ name: 'f', input_schema: '@NESTED@' }] }, 8000)],
      [messages, withNested({ model: 'plain', max_tokens: 10, messages: [...user, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: '@NESTED@' }] }] }, 8000)],
      [`${gw.url}/admin/v1/keys`, withNested({ name: 'deep', metadata: '@NESTED@' }, 8000)],
    ];
    for (const [url, body] of cases) {
      const r = await postJson(url, body, url.includes('/admin/') ? admin : auth);
      assertCode(r, 400, 'VALIDATION_ERROR');
      assert.match(r.body.error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH}`));
    }
    // At the limit a body is accepted: the limit does not cut legitimate schemas short.
    const atLimit = withNested({ model: 'plain', messages: user, tools: [{ type: 'function', function: { name: 'f', parameters: '@NESTED@' } }] }, MAX_JSON_DEPTH - 4);
    assert.equal((await postJson(chat, atLimit, auth)).status, 200);
  });

  test('U+0000 or a lone surrogate in an admin path, query or body string: 400 VALIDATION_ERROR before any SQL', async () => {
    for (const path of ['/keys/%00', '/organizations/%00', '/departments/a%00b', '/budgets/%00', '/keys?tenantId=%00', '/budgets?scopeId=x%00']) {
      assertCode(await get(`${gw.url}/admin/v1${path}`), 400, 'VALIDATION_ERROR');
    }
    assertCode(await postJson(`${gw.url}/admin/v1/keys/%00/revoke`, '', admin), 400, 'VALIDATION_ERROR');
    const bodies: Array<[string, unknown]> = [
      ['/keys', { name: 'o\u0000' }],
      ['/organizations', { name: 'o\u0000' }],
      ['/jwt/revocations', { jti: 'j\u0000' }],
      ['/budgets', { scope: 'key', scopeId: 'k\u0000', period: 'daily', limitUsd: 1 }],
      // A lone surrogate: jsonb refuses its escape (the audit row of a tenant's creation held it).
      ['/tenants', { id: 'lone', name: 'x\ud83d' }],
      ['/keys', { name: 'ok', metadata: { '\udc00': 1 } }],
    ];
    for (const [path, body] of bodies) {
      const r = await postJson(`${gw.url}/admin/v1${path}`, body, admin);
      assertCode(r, 400, 'VALIDATION_ERROR');
      assert.match(r.body.error.message, /U\+0000/);
    }
  });

  test('dates out of 1970..9999 (a year-0000 expiresAt): 400 VALIDATION_ERROR naming the field', async () => {
    for (const expiresAt of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
      const key = await postJson(`${gw.url}/admin/v1/keys`, { name: 'old', expiresAt }, admin);
      assertCode(key, 400, 'VALIDATION_ERROR');
      assert.equal(key.body.error.details[0].path, '/expiresAt');
      assertCode(await postJson(`${gw.url}/admin/v1/jwt/revocations`, { jti: 'j-old', expiresAt }, admin), 400, 'VALIDATION_ERROR');
    }
    assert.equal((await postJson(`${gw.url}/admin/v1/keys`, { name: 'far', expiresAt: '9999-12-31T23:59:59Z' }, admin)).status, 201);
  });

  test('U+0000 in a JWT claim: 401 AUTH_INVALID_TOKEN naming the claim', async () => {
    const hello = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };
    for (const claims of [{ tenantId: 'a\u0000b' }, { tenantId: 'default', jti: 'j\u0000' }, { tenantId: 'default', organizationId: 'o\u0000' }]) {
      const r = await postJson(`${gw.url}/v1/chat/completions`, hello, { authorization: `Bearer ${await mint(claims)}` });
      assertCode(r, 401, 'AUTH_INVALID_TOKEN');
      assert.match(r.body.error.details.reason, /^claim_/);
    }
    const adminJwt = await mint({ tenantId: 'a\u0000b', role: 'admin' });
    assertCode(await get(`${gw.url}/admin/v1/keys`, { authorization: `Bearer ${adminJwt}` }), 401, 'AUTH_INVALID_TOKEN');
  });

  test('a 100,000-character model: every echo of it is cut to 200 characters with an ellipsis', async () => {
    const model = 'm'.repeat(100_000);
    const r = await postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, auth);
    assertCode(r, 404, 'MODEL_NOT_FOUND');
    const text = JSON.stringify(r.body);
    assert.ok(text.length < 1_000, `the error is ${text.length} characters long`);
    assert.ok(text.includes(`${'m'.repeat(200)}…`), text);
    assert.ok(!text.includes('m'.repeat(201)), text);
  });
});
