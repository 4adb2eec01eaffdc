/**
 * Authentication through a KV outage: cached lookups fall back to the database, writes that cannot invalidate
 * the KV say so (503 STORE_UNAVAILABLE, the write itself saved), and everything recovers when the KV answers.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import type { KV } from '../../core/store/kv.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const SECRET = 'kv-outage-test-secret-0123456789abcdef';

describe('a KV outage', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let kv: KV;
  let restore: () => void;

  const admin = (path: string, body?: unknown) => postJson(`${gw.url}/admin/v1${path}`, body ?? {}, { authorization: `Bearer ${ADMIN_TOKEN}` });
  const chat = (headers: Record<string, string>) =>
    postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, headers);
  const breakKv = () => {
    // Every way in fails, the in-process KV's calls within the call (runNow) included, as on an unreachable Redis.
    const saved = { get: kv.get, set: kv.set, del: kv.del, mget: kv.mget, run: kv.run, runNow: kv.runNow };
    const down = () => Promise.reject(new Error('connect ECONNREFUSED (simulated)'));
    const downNow = () => {
      throw new Error('connect ECONNREFUSED (simulated)');
    };
    Object.assign(kv, { get: down, set: down, del: down, mget: down, run: down, runNow: downNow });
    restore = () => Object.assign(kv, saved);
  };
  const jwt = (jti: string) => new SignJWT({ tenantId: 'default', type: 'access' })
    .setProtectedHeader({ alg: 'HS256' }).setSubject('u1').setJti(jti).setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl), { env: { AIGW_JWT_SECRET: SECRET } });
    kv = gw.gateway.services.kv;
  });
  after(async () => {
    restore?.();
    await gw.close();
    await fake.close();
  });

  test('keys and JWTs keep authenticating from the database; revocations are saved and enforced, and say the KV missed them', async () => {
    const created = await admin('/keys', { name: 'through an outage' });
    const headers = { authorization: `Bearer ${created.body.key as string}` };
    assert.equal((await chat(headers)).status, 200, 'warm');
    const jti = randomUUID();
    const token = { authorization: `Bearer ${await jwt(jti)}` };
    assert.equal((await chat(token)).status, 200);

    breakKv();
    try {
      assert.equal((await chat(headers)).status, 200, 'a cached key, looked up in the database');
      const fresh = await admin('/keys', { name: 'made during the outage' });
      assert.equal((await chat({ authorization: `Bearer ${fresh.body.key as string}` })).status, 200);
      assert.equal((await chat(token)).status, 200, 'a JWT, its blocklist read from the database');

      const revoked = await admin(`/keys/${created.body.id as string}/revoke`);
      assert.equal(revoked.status, 503);
      assert.equal(revoked.body.error.code, 'STORE_UNAVAILABLE');
      const refused = await chat(headers);
      assert.equal(refused.status, 401, 'the database has the revocation');
      assert.equal(refused.body.error.code, 'AUTH_API_KEY_REVOKED');

      const blocked = await admin('/jwt/revocations', { jti });
      assert.equal(blocked.status, 503);
      const refusedJwt = await chat(token);
      assert.equal(refusedJwt.status, 401);
      assert.equal(refusedJwt.body.error.code, 'AUTH_INVALID_TOKEN');
    } finally {
      restore();
    }

    // The KV answers again: the cached copy of the key is still the active one, until the revoke is repeated.
    assert.equal((await admin(`/keys/${created.body.id as string}/revoke`)).status, 200);
    assert.equal((await chat(headers)).body.error.code, 'AUTH_API_KEY_REVOKED');
    assert.equal((await admin('/jwt/revocations', { jti })).status, 201);
    assert.equal((await chat(token)).body.error.code, 'AUTH_INVALID_TOKEN');
  });
});
