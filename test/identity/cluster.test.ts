/**
 * Two gateway instances sharing one Postgres and one Redis: a revocation or a policy change made through one
 * holds on the other at once. Runs when TEST_DATABASE_URL and TEST_REDIS_URL are set (CI sets both).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import { openDatabase } from '../../core/store/database.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';
const SECRET = 'cluster-test-secret-0123456789abcdefgh';

describe('two instances on one Postgres and one Redis', { skip: SKIP }, () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  const prefix = `aigw-test-${randomUUID()}:`;
  let fake: FakeOpenAI;
  let a: TestGateway;
  let b: TestGateway;

  const admin = (gw: TestGateway, method: string, path: string, body?: unknown) => fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
  const chat = (gw: TestGateway, headers: Record<string, string>, model = 'plain') =>
    postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, headers);

  before(async () => {
    fake = await startFakeOpenAI();
    const options = {
      env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL!, AIGW_JWT_SECRET: SECRET },
      dbSchema: schema,
      kvPrefix: prefix,
    };
    [a, b] = await Promise.all([startTestGateway(chatConfig(fake.baseUrl), options), startTestGateway(chatConfig(fake.baseUrl), options)]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await fake.close();
    const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', onNoVector: () => {} });
    await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
    const redis = new Redis(REDIS_URL!);
    try {
      const leftover = await redis.keys(prefix + '*');
      if (leftover.length > 0) await redis.del(...leftover);
    } finally {
      redis.disconnect();
    }
  });

  test('a key revoked on one instance is refused on the other at once, though the other had it cached', async () => {
    const created = await admin(a, 'POST', '/keys', { name: 'shared' });
    assert.equal(created.status, 201);
    const headers = { authorization: `Bearer ${created.body.key as string}` };
    assert.equal((await chat(b, headers)).status, 200); // B resolves and caches the key
    assert.equal((await chat(a, headers)).status, 200);

    const revoked = await admin(a, 'POST', `/keys/${created.body.id as string}/revoke`);
    assert.equal(revoked.status, 200);
    const refused = await chat(b, headers);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'AUTH_API_KEY_REVOKED');
    assert.equal((await chat(a, headers)).body.error.code, 'AUTH_API_KEY_REVOKED');
  });

  test('a JWT revoked through one instance is refused by the other', async () => {
    const jti = randomUUID();
    const token = await new SignJWT({ tenantId: 'default', type: 'access' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('user-9').setJti(jti).setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));
    const headers = { authorization: `Bearer ${token}` };
    assert.equal((await chat(b, headers)).status, 200);
    assert.equal((await admin(a, 'POST', '/jwt/revocations', { jti })).status, 201);
    const refused = await chat(b, headers);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'AUTH_INVALID_TOKEN');
  });

  test('a policy written through one instance narrows the other on its next request', async () => {
    const org = await admin(a, 'POST', '/organizations', { name: 'Shared org' });
    const created = await admin(a, 'POST', '/keys', { name: 'org key', organizationId: org.body.id });
    const headers = { authorization: `Bearer ${created.body.key as string}` };
    assert.equal((await chat(b, headers, 'gpt-4o-mini')).status, 200);
    assert.equal((await admin(a, 'PUT', `/organizations/${org.body.id as string}/policy`, { models: ['plain'] })).status, 200);
    const refused = await chat(b, headers, 'gpt-4o-mini');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'MODEL_NOT_ALLOWED');
    assert.equal((await chat(b, headers, 'plain')).status, 200);
  });

  test('both instances write last-used times without losing the newer one', async () => {
    const created = await admin(a, 'POST', '/keys', { name: 'busy' });
    const headers = { authorization: `Bearer ${created.body.key as string}` };
    assert.equal((await chat(a, headers)).status, 200);
    assert.equal((await chat(b, headers)).status, 200);
    await b.gateway.services.apiKeys.flushLastUsed();
    await a.gateway.services.apiKeys.flushLastUsed();
    const shown = await admin(b, 'GET', `/keys/${created.body.id as string}`);
    assert.ok(shown.body.lastUsedAt, 'lastUsedAt is set');
    assert.ok(Date.parse(shown.body.lastUsedAt as string) >= Date.parse(created.body.createdAt as string));
  });
});
