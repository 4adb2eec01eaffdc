/**
 * ApiKeyService over real stores: PGlite + memory KV always, Postgres + Redis when TEST_DATABASE_URL and
 * TEST_REDIS_URL are both set (own schema and key prefix per run, removed at the end).
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { GatewayError } from '../../core/errors.ts';
import { ApiKeyService, hashKey, KEY_PREFIX } from '../../core/identity/api-keys.ts';
import { FULL_ADMIN } from '../../core/identity/admin-audit.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { openKv, type KV } from '../../core/store/kv.ts';
import { migrate } from '../../core/store/migrate.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const NO_SERVERS = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';

interface Stores {
  db: Database;
  kv: KV;
  /** Closes both and removes what the run left behind (folder, schema, keys). */
  dispose(): Promise<void>;
}

function assertValidationError(err: unknown, path?: string): true {
  assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
  assert.equal(err.code, 'VALIDATION_ERROR');
  assert.equal(err.status, 400);
  if (path !== undefined) {
    assert.ok(Array.isArray(err.details), 'details is a list of issues');
    const paths = (err.details as Array<{ path: string }>).map((d) => d.path);
    assert.ok(paths.includes(path), `details ${JSON.stringify(err.details)} should name ${path}`);
  }
  return true;
}

function apiKeySuite(name: string, open: () => Promise<Stores>): void {
  describe(`ApiKeyService: ${name}`, () => {
    let stores: Stores;
    let db: Database;
    let kv: KV;
    let keys: ApiKeyService;

    before(async () => {
      stores = await open();
      ({ db, kv } = stores);
      keys = new ApiKeyService(db, kv, 60_000);
    });
    after(async () => {
      await stores.dispose();
    });

    test('create returns a 256-bit aigw_sk_ key with the defaults', async () => {
      const created = await keys.create({ name: 'first' }, FULL_ADMIN('tester'));
      assert.ok(created.key.startsWith('aigw_sk_'));
      assert.equal(KEY_PREFIX, 'aigw_sk_');
      const random = created.key.slice(KEY_PREFIX.length);
      assert.match(random, /^[A-Za-z0-9_-]{43,}$/, 'at least 43 base64url characters: 256 bits');
      assert.equal(Buffer.from(random, 'base64url').length, 32);
      assert.match(created.id, /^key_[0-9a-f-]{36}$/);
      assert.equal(created.object, 'api_key');
      assert.equal(created.name, 'first');
      assert.equal(created.tenantId, 'default');
      assert.deepEqual(created.scopes, { capabilities: ['chat'], providerIds: [], modelIds: [] });
      assert.equal(created.status, 'active');
      assert.equal(created.prefix, created.key.slice(0, KEY_PREFIX.length + 4));
      assert.equal(created.rateLimits, null);
      assert.equal(created.expiresAt, null);
      assert.equal(created.metadata, null);
      assert.equal(created.lastUsedAt, null);
      assert.deepEqual(created.allowedIps, []);
      assert.ok(!Number.isNaN(Date.parse(created.createdAt)));

      const other = await keys.create({ name: 'second' }, FULL_ADMIN('tester'));
      assert.notEqual(other.key, created.key);
      assert.notEqual(other.id, created.id);
    });

    test('the database holds only the SHA-256 of the key, never the key', async () => {
      const created = await keys.create({ name: 'secret', metadata: { note: 'x' } }, FULL_ADMIN('tester'));
      const expected = createHash('sha256').update(created.key).digest('hex');
      assert.equal(hashKey(created.key), expected);
      const [row] = await db.query<{ key_hash: string; key_prefix: string }>('SELECT key_hash, key_prefix FROM api_keys WHERE id = $1', [created.id]);
      assert.equal(row?.key_hash, expected);
      assert.match(row?.key_hash ?? '', /^[0-9a-f]{64}$/);

      const random = created.key.slice(KEY_PREFIX.length);
      const rows = await db.query<{ j: string }>('SELECT row_to_json(k)::text AS j FROM api_keys k');
      assert.ok(rows.length > 0);
      for (const { j } of rows) {
        assert.ok(!j.includes(created.key), 'no column holds the plaintext key');
        assert.ok(!j.includes(random), 'no column holds the random part of the key');
      }
      const audit = await db.query<{ j: string }>('SELECT row_to_json(a)::text AS j FROM admin_audit a');
      for (const { j } of audit) assert.ok(!j.includes(random), 'the audit trail does not hold the key either');
    });

    test('lookup returns the record; a wrong key returns null', async () => {
      const created = await keys.create({ name: 'lookup me', scopes: { capabilities: ['chat', 'embeddings'] } }, FULL_ADMIN('tester'));
      const found = await keys.lookup(created.key);
      const { key: _plaintext, ...record } = created;
      assert.deepEqual(found, record);

      const random = created.key.slice(KEY_PREFIX.length);
      const flipped = KEY_PREFIX + (random[0] === 'A' ? 'B' : 'A') + random.slice(1);
      assert.equal(await keys.lookup(flipped), null);
      assert.equal(await keys.lookup(KEY_PREFIX + 'nope'), null);
      assert.equal(await keys.lookup(''), null);
      assert.equal(await keys.lookup(created.key + 'x'), null);
    });

    test('a second lookup is served from the KV until its entry is deleted', async () => {
      const created = await keys.create({ name: 'old name' }, FULL_ADMIN('tester'));
      assert.equal((await keys.lookup(created.key))?.name, 'old name');
      assert.ok(await kv.get('apikey:' + hashKey(created.key)), 'the first lookup filled the cache');

      await db.query('UPDATE api_keys SET name = $1 WHERE id = $2', ['new name', created.id]);
      assert.equal((await keys.lookup(created.key))?.name, 'old name', 'served from the KV, not the database');

      await kv.del('apikey:' + hashKey(created.key));
      assert.equal((await keys.lookup(created.key))?.name, 'new name');
    });

    test('the cache entry expires after cacheTtlMs', async () => {
      const shortLived = new ApiKeyService(db, kv, 200);
      const created = await shortLived.create({ name: 'ttl' }, FULL_ADMIN('tester'));
      await shortLived.lookup(created.key);
      assert.ok(await kv.get('apikey:' + hashKey(created.key)));
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(await kv.get('apikey:' + hashKey(created.key)), null);
    });

    test('every creation field is stored and returned', async () => {
      const created = await keys.create({
        name: 'full',
        scopes: { capabilities: ['chat', 'embeddings'], providerIds: ['openai'], modelIds: ['gpt-4o-mini'] },
        rateLimits: { requestsPerMinute: 60, requestsPerDay: 1000, tokensPerDay: 100_000 },
        expiresAt: '2099-01-02T03:04:05.000Z',
        allowedIps: ['10.0.0.0/8'],
        metadata: { team: 'ml', nested: { a: [1, 2] } },
      }, FULL_ADMIN('tester'));
      assert.deepEqual(created.scopes, { capabilities: ['chat', 'embeddings'], providerIds: ['openai'], modelIds: ['gpt-4o-mini'] });
      assert.deepEqual(created.rateLimits, { requestsPerMinute: 60, requestsPerDay: 1000, tokensPerDay: 100_000 });
      assert.equal(created.expiresAt, '2099-01-02T03:04:05.000Z');
      assert.deepEqual(created.allowedIps, ['10.0.0.0/8']);
      assert.deepEqual(created.metadata, { team: 'ml', nested: { a: [1, 2] } });
      const { key: _plaintext, ...record } = created;
      assert.deepEqual(await keys.lookup(created.key), record);
    });

    test('a name of 200 characters is accepted', async () => {
      const created = await keys.create({ name: 'n'.repeat(200) }, FULL_ADMIN('tester'));
      assert.equal(created.name.length, 200);
    });

    test('creation validation: empty and over-long names', async () => {
      await assert.rejects(keys.create({ name: '' }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/name'));
      await assert.rejects(keys.create({ name: 'n'.repeat(201) }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/name'));
      await assert.rejects(keys.create({}, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/name'));
      await assert.rejects(keys.create({ name: 42 }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/name'));
    });

    test('creation validation: unknown capability, unknown fields, bad types', async () => {
      await assert.rejects(keys.create({ name: 'x', scopes: { capabilities: ['teleport'] } }, FULL_ADMIN('tester')),
        (err) => assertValidationError(err, '/scopes/capabilities/0'));
      await assert.rejects(keys.create({ name: 'x', surprise: true }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/surprise'));
      await assert.rejects(keys.create({ name: 'x', rateLimits: { requestsPerMinute: 0 } }, FULL_ADMIN('tester')),
        (err) => assertValidationError(err, '/rateLimits/requestsPerMinute'));
      await assert.rejects(keys.create({ name: 'x', expiresAt: 'tomorrow' }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/expiresAt'));
      await assert.rejects(keys.create(null, FULL_ADMIN('tester')), (err) => assertValidationError(err));
      await assert.rejects(keys.create('name', FULL_ADMIN('tester')), (err) => assertValidationError(err));
    });

    test('creation validation: unknown tenantId, and nothing is written', async () => {
      const before = await db.query<{ n: number }>('SELECT (SELECT count(*) FROM api_keys)::int + (SELECT count(*) FROM admin_audit)::int AS n');
      await assert.rejects(keys.create({ name: 'x', tenantId: 'ghost' }, FULL_ADMIN('tester')), (err) => assertValidationError(err, '/tenantId'));
      const afterwards = await db.query<{ n: number }>('SELECT (SELECT count(*) FROM api_keys)::int + (SELECT count(*) FROM admin_audit)::int AS n');
      assert.deepEqual(afterwards, before);
    });

    test('a key can belong to another existing tenant', async () => {
      await db.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', ['acme', 'Acme']);
      const created = await keys.create({ name: 'acme key', tenantId: 'acme' }, FULL_ADMIN('tester'));
      assert.equal(created.tenantId, 'acme');
      assert.deepEqual((await keys.list('acme')).map((k) => k.id), [created.id]);
    });

    test('a name or metadata holding U+0000 is a VALIDATION_ERROR, not a database error', async () => {
      // Postgres text and jsonb cannot hold NUL: the schema accepts it, so the service must reject it itself.
      await assert.rejects(keys.create({ name: 'a\u0000b' }, FULL_ADMIN('tester')), (err) => assertValidationError(err));
      await assert.rejects(keys.create({ name: 'x', metadata: { note: '\u0000' } }, FULL_ADMIN('tester')), (err) => assertValidationError(err));
    });

    test('an admin_audit row records the creation with its actor', async () => {
      const created = await keys.create({ name: 'audited' }, FULL_ADMIN('admin-token'));
      const rows = await db.query<{ actor: string; action: string; target_type: string; target_id: string; details: unknown; at: unknown }>(
        'SELECT actor, action, target_type, target_id, details, at FROM admin_audit WHERE target_id = $1', [created.id]);
      assert.equal(rows.length, 1);
      const [row] = rows;
      assert.equal(row?.actor, 'admin-token');
      assert.equal(row?.action, 'create');
      assert.equal(row?.target_type, 'api_key');
      assert.deepEqual(row?.details, { name: 'audited', tenantId: 'default' });
      assert.ok(row?.at);
    });

    test('markExpired sets status expired and clears the cache entry', async () => {
      const created = await keys.create({ name: 'expiring' }, FULL_ADMIN('tester'));
      const record = await keys.lookup(created.key);
      assert.ok(record);
      const cacheKey = 'apikey:' + hashKey(created.key);
      assert.ok(await kv.get(cacheKey));

      await keys.markExpired(record);
      assert.equal(await kv.get(cacheKey), null);
      const [row] = await db.query<{ status: string }>('SELECT status FROM api_keys WHERE id = $1', [created.id]);
      assert.equal(row?.status, 'expired');
      assert.equal((await keys.lookup(created.key))?.status, 'expired');

      // Again: a no-op (the key is no longer active), and the fresh cache entry stays.
      await keys.markExpired(record);
      assert.equal(JSON.parse((await kv.get(cacheKey))!).record.status, 'expired');
    });

    test('markExpired leaves a revoked key revoked', async () => {
      const created = await keys.create({ name: 'revoked' }, FULL_ADMIN('tester'));
      await db.query(`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = $1`, [created.id]);
      const record = await keys.lookup(created.key);
      assert.equal(record?.status, 'revoked');
      await keys.markExpired(record!);
      const [row] = await db.query<{ status: string }>('SELECT status FROM api_keys WHERE id = $1', [created.id]);
      assert.equal(row?.status, 'revoked');
    });

    test('list returns the keys in creation order, per tenant', async () => {
      const all = await keys.list();
      const defaults = await keys.list('default');
      assert.ok(all.length >= defaults.length && defaults.length > 0);
      assert.ok(defaults.every((k) => k.tenantId === 'default'));
      const times = all.map((k) => Date.parse(k.createdAt));
      assert.deepEqual(times, [...times].sort((a, b) => a - b));
      assert.ok(all.every((k) => !('key' in k)));
    });
  });
}

apiKeySuite('pglite + memory', async () => {
  const dataDir = await freshDataDir();
  const db = await openDatabase({ dataDir });
  await migrate(db);
  const kv = await openKv({});
  return {
    db,
    kv,
    async dispose() {
      await kv.close();
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('ApiKeyService: postgres + redis', { skip: NO_SERVERS }, () => {
  if (!DATABASE_URL || !REDIS_URL) return;
  apiKeySuite('postgres + redis', async () => {
    const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
    const prefix = 'aigw-test-' + randomUUID() + ':';
    const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', schema, onNoVector: () => {} });
    await migrate(db);
    const kv = await openKv({ redisUrl: REDIS_URL, prefix });
    return {
      db,
      kv,
      async dispose() {
        await kv.close();
        await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.close();
        const redis = new Redis(REDIS_URL);
        try {
          const leftover = await redis.keys(prefix + '*');
          if (leftover.length > 0) await redis.del(...leftover);
        } finally {
          redis.disconnect();
        }
      },
    };
  });
});
