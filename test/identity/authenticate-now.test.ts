/**
 * Authentication within the call (Authenticator.authenticateNow): an API key whose entry, and its organization's
 * and department's, are in the in-process KV is answered without a promise, with the caller or the error
 * authenticate gives. Whatever needs I/O is left to authenticate (undefined): a key not cached yet, a key found
 * past its expiry (marked expired by authenticate), a unit not cached, a KV that answers with promises (Redis).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiKeyService, hashKey } from '../../core/identity/api-keys.ts';
import { Authenticator } from '../../core/identity/authenticate.ts';
import { Directory } from '../../core/identity/directory.ts';
import { allowsModel } from '../../core/identity/policy.ts';
import type { Credential } from '../../core/pipeline/caller.ts';
import { openKv } from '../../core/store/kv.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import type { KV } from '../../core/store/kv.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const newPrefix = redisPrefixes(REDIS_URL);

const PRESENTED = 'aigw_sk_authenticate_now_0123456789';
const credential: Credential = { kind: 'api_key', value: PRESENTED };

interface Fixture {
  status?: 'active' | 'expired' | 'revoked';
  expiresAt?: string | null;
  organizationId?: string | null;
  departmentId?: string | null;
}

/** The tables the identity services read, counting the statements that reach them. */
function fakeDb(key: Fixture) {
  const db = {
    statements: [] as string[],
    async query(sql: string) {
      db.statements.push(sql.split(' ').slice(0, 3).join(' '));
      if (sql.includes('FROM api_keys WHERE key_hash')) {
        return [{
          id: 'key_1', tenant_id: 'default', organization_id: key.organizationId ?? null, department_id: key.departmentId ?? null,
          name: 'k', key_hash: hashKey(PRESENTED), key_prefix: 'aigw_sk_auth', capabilities: ['chat'], provider_ids: [], model_ids: [],
          rate_limits: null, expires_at: key.expiresAt ?? null, allowed_ips: [], metadata: null, status: key.status ?? 'active',
          created_at: '2031-01-01T00:00:00Z', revoked_at: null, last_used_at: null,
        }];
      }
      if (sql.includes('FROM organizations')) return [{ id: 'org_1', tenant_id: 'default', name: 'o', policy: { models: ['m1', 'm2'] } }];
      if (sql.includes('FROM departments')) return [{ id: 'dept_1', tenant_id: 'default', organization_id: 'org_1', name: 'd', policy: { models: ['m2'] } }];
      if (sql.startsWith('UPDATE api_keys')) return [{ key_hash: hashKey(PRESENTED) }];
      throw new Error(`unexpected statement ${sql}`);
    },
  };
  return db;
}

function authenticator(kv: KV, key: Fixture, now = () => Date.parse('2032-01-01T00:00:00Z')) {
  const db = fakeDb(key);
  const apiKeys = new ApiKeyService(db as never, kv, 60_000);
  const directory = new Directory(db as never, kv, 60_000);
  return { db, auth: new Authenticator({ apiKeys, directory, jwt: null, jwtCapabilities: [], now }) };
}

async function withMemoryKv(fn: (kv: KV) => Promise<void>): Promise<void> {
  const kv = new MemoryKv();
  try {
    await fn(kv);
  } finally {
    await kv.close();
  }
}

describe('authentication within the call', () => {
  test('a key not cached yet is left to authenticate; once cached it is answered within the call, with the same caller', () => withMemoryKv(async (kv) => {
    const { db, auth } = authenticator(kv, {});
    assert.equal(auth.authenticateNow(credential), undefined);
    const caller = await auth.authenticate(credential);
    const now = auth.authenticateNow(credential);
    assert.ok(now && !(now instanceof Promise));
    assert.deepEqual(now, caller);
    assert.equal(db.statements.length, 1, 'the database was read once');
  }));

  test('an organization and department member: answered once both units are cached, with their narrowed policy', () => withMemoryKv(async (kv) => {
    const { auth } = authenticator(kv, { organizationId: 'org_1', departmentId: 'dept_1' });
    const caller = await auth.authenticate(credential);
    const now = auth.authenticateNow(credential);
    assert.ok(now);
    assert.deepEqual(now, caller);
    assert.equal(allowsModel(now.policy, 'm2'), true);
    assert.equal(allowsModel(now.policy, 'm1'), false, 'the department narrows the organization');
    assert.equal(auth.authenticateNow(credential)?.policy, now.policy, 'the policy is made once per pair of units');
  }));

  test('a unit not cached is left to authenticate', () => withMemoryKv(async (kv) => {
    const { auth } = authenticator(kv, { organizationId: 'org_1', departmentId: 'dept_1' });
    await auth.authenticate(credential);
    assert.ok(auth.authenticateNow(credential), 'answered while both units are cached');
    await kv.del('directory:dept:dept_1');
    assert.equal(auth.authenticateNow(credential), undefined);
  }));

  test('a revoked key is refused within the call, as authenticate refuses it', () => withMemoryKv(async (kv) => {
    const { auth } = authenticator(kv, { status: 'revoked' });
    await assert.rejects(auth.authenticate(credential), { code: 'AUTH_API_KEY_REVOKED' });
    assert.throws(() => auth.authenticateNow(credential), { code: 'AUTH_API_KEY_REVOKED' });
  }));

  test('an active key found past its expiry is left to authenticate, which marks it expired', () => withMemoryKv(async (kv) => {
    let now = Date.parse('2032-01-01T00:00:00Z');
    const { db, auth } = authenticator(kv, { expiresAt: '2032-06-01T00:00:00Z' }, () => now);
    await auth.authenticate(credential);
    now = Date.parse('2032-07-01T00:00:00Z');
    assert.equal(auth.authenticateNow(credential), undefined);
    await assert.rejects(auth.authenticate(credential), { code: 'AUTH_API_KEY_EXPIRED' });
    assert.ok(db.statements.some((s) => s.startsWith('UPDATE api_keys')), 'marked expired');
  }));

  test('on Redis nothing is answered within the call', { skip: !REDIS_URL && 'TEST_REDIS_URL is not set' }, async () => {
    const kv = await openKv({ redisUrl: REDIS_URL!, prefix: newPrefix() });
    try {
      const { auth } = authenticator(kv, {});
      await auth.authenticate(credential);
      assert.equal(auth.authenticateNow(credential), undefined);
    } finally {
      await kv.close();
    }
  });
});
