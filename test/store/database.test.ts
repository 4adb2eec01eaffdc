/**
 * The Database contract on both engines: embedded PGlite always, a Postgres server when TEST_DATABASE_URL is
 * set (each run in its own schema, dropped at the end).
 */
import { builtInMigrations } from '../helpers/config.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ApiKeyService } from '../../core/identity/api-keys.ts';
import { FULL_ADMIN } from '../../core/identity/admin-audit.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { migrate, type MigrationResult } from '../../core/store/migrate.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const NO_POSTGRES = DATABASE_URL ? false : 'TEST_DATABASE_URL not set';
const MIGRATIONS = ['0001_foundation', '0002_identity', '0003_jobs', '0004_files', '0005_batches', '0006_responses', '0007_vector_stores', '0008_video_jobs', '0009_realtime_sessions', 'usage/0001_usage_records', 'usage/0002_modality', 'usage/0003_request_count', 'usage/0004_cache_and_retrieval', 'usage/0005_audio_units', 'usage/0006_speech_characters', 'usage/0007_image_video_units', 'usage/0008_guard_verdicts', 'usage/0009_no_request_index', 'budget/0001_budgets', 'semantic-cache/0001_semantic_cache_entries', 'audit/0001_audit_records'];
/** The last version of the core and of each plugin. */
const LATEST = ['0009_realtime_sessions', 'usage/0009_no_request_index', 'budget/0001_budgets', 'semantic-cache/0001_semantic_cache_entries', 'audit/0001_audit_records'];

function newSchema(): string {
  return 'aigw_test_' + randomUUID().replace(/-/g, '');
}

/** Folders and schemas made by this file, removed when it ends. */
const dataDirs: string[] = [];
const schemas: string[] = [];

after(async () => {
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  if (DATABASE_URL && schemas.length > 0) {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  }
});

async function emptyPglite(): Promise<Database> {
  const dir = await mkdtemp(join(tmpdir(), 'aigw-test-db-'));
  dataDirs.push(dir);
  return openDatabase({ dataDir: dir });
}

async function emptyPostgres(onNoVector?: (reason: string) => void): Promise<Database> {
  const schema = newSchema();
  schemas.push(schema);
  return openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, ...(onNoVector ? { onNoVector } : {}) });
}

/**
 * The shared contract. `open` gives a database that has never been migrated; the tests run in order on it
 * (the first migration is memoised so that any test can run alone).
 */
function databaseSuite(name: string, open: () => Promise<Database>): void {
  describe(`Database contract: ${name}`, () => {
    let db: Database;
    let first: Promise<MigrationResult> | undefined;
    const firstMigrate = () => (first ??= migrate(db, builtInMigrations));

    before(async () => {
      db = await open();
    });
    after(async () => {
      await db.close();
    });

    test('migrate applies every migration on an empty database', async () => {
      const result = await firstMigrate();
      assert.deepEqual(result.applied, MIGRATIONS);
      assert.deepEqual(result.current, LATEST);
      const rows = await db.query<{ version: string }>('SELECT version FROM aigw_schema_migrations');
      assert.deepEqual(rows.map((r) => r.version), MIGRATIONS);
    });

    test('a second migrate applies nothing', async () => {
      await firstMigrate();
      const again = await migrate(db, builtInMigrations);
      assert.deepEqual(again.applied, []);
      assert.deepEqual(again.current, LATEST);
      const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM aigw_schema_migrations');
      assert.equal(count?.n, MIGRATIONS.length);
    });

    test('the default tenant exists', async () => {
      await firstMigrate();
      const rows = await db.query<{ id: string; name: string }>('SELECT id, name FROM tenants');
      assert.deepEqual(rows.map((r) => r.id), ['default']);
    });

    test('query binds parameters (typed, and never interpolated)', async () => {
      await firstMigrate();
      const [row] = await db.query<{ sum: number; text: string; missing: null }>(
        'SELECT $1::int + $2::int AS sum, $3::text AS text, $4::text AS missing', [40, 2, "it's; DROP TABLE tenants; --", null]);
      assert.deepEqual(row, { sum: 42, text: "it's; DROP TABLE tenants; --", missing: null });
      const tenants = await db.query<{ id: string }>('SELECT id FROM tenants WHERE id = $1', ['default']);
      assert.equal(tenants.length, 1);
      assert.deepEqual(await db.query('SELECT id FROM tenants WHERE id = $1', ['nope']), []);
    });

    test('exec runs several statements', async () => {
      await firstMigrate();
      await db.exec(`CREATE TABLE exec_probe (id int PRIMARY KEY); INSERT INTO exec_probe VALUES (1); INSERT INTO exec_probe VALUES (2);`);
      const rows = await db.query<{ id: number }>('SELECT id FROM exec_probe ORDER BY id');
      assert.deepEqual(rows.map((r) => r.id), [1, 2]);
    });

    test('jsonb and text[] round-trip through an api_keys row', async () => {
      await firstMigrate();
      const kv = new MemoryKv();
      try {
        const keys = new ApiKeyService(db, kv, 60_000);
        const tricky = ['a,b', 'x"y', '{z}', 'NULL', 'back\\slash', 'sp ace', 'ünï€ode', ''];
        const metadata = { team: 'ml', nested: { list: [1, 'two', null, true], n: 1.5 }, emoji: '🚀', quote: 'a"b' };
        const created = await keys.create({
          name: 'round trip',
          scopes: { capabilities: ['chat', 'embeddings'], providerIds: tricky, modelIds: ['gpt-4o-mini'] },
          rateLimits: { requestsPerMinute: 10, tokensPerDay: 1000 },
          allowedIps: ['10.0.0.0/8', '::1'],
          metadata,
        }, FULL_ADMIN('tester'));
        const [row] = await db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [created.id]);
        assert.ok(row);
        assert.deepEqual(row.capabilities, ['chat', 'embeddings']);
        assert.deepEqual(row.provider_ids, tricky);
        assert.deepEqual(row.model_ids, ['gpt-4o-mini']);
        assert.deepEqual(row.allowed_ips, ['10.0.0.0/8', '::1']);
        assert.deepEqual(row.rate_limits, { requestsPerMinute: 10, tokensPerDay: 1000 });
        assert.deepEqual(row.metadata, metadata);
        // Defaults of empty arrays come back as arrays too.
        const plain = await keys.create({ name: 'defaults' }, FULL_ADMIN('tester'));
        const [plainRow] = await db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [plain.id]);
        assert.deepEqual(plainRow?.capabilities, ['chat']);
        assert.deepEqual(plainRow?.provider_ids, []);
        assert.equal(plainRow?.rate_limits, null);
        assert.equal(plainRow?.metadata, null);
      } finally {
        await kv.close();
      }
    });

    test('a transaction commits what its callback wrote', async () => {
      await firstMigrate();
      await db.exec('CREATE TABLE tx_probe (id int PRIMARY KEY, v text NOT NULL)');
      const result = await db.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe (id, v) VALUES ($1, $2)', [1, 'kept']);
        const inside = await tx.query<{ v: string }>('SELECT v FROM tx_probe WHERE id = $1', [1]);
        return inside[0]?.v;
      });
      assert.equal(result, 'kept');
      assert.deepEqual(await db.query('SELECT id, v FROM tx_probe'), [{ id: 1, v: 'kept' }]);
    });

    test('a transaction rolls back when its callback throws, and the error comes through', async () => {
      await firstMigrate();
      await db.exec('CREATE TABLE IF NOT EXISTS tx_probe (id int PRIMARY KEY, v text NOT NULL)');
      const boom = new Error('boom');
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO tx_probe (id, v) VALUES ($1, $2)', [2, 'discarded']);
          await tx.exec("INSERT INTO tx_probe (id, v) VALUES (3, 'discarded too')");
          throw boom;
        }),
        (err) => err === boom,
      );
      assert.deepEqual(await db.query('SELECT id FROM tx_probe WHERE id IN (2, 3)'), []);
      // The database is usable afterwards (no transaction left open).
      await db.query('INSERT INTO tx_probe (id, v) VALUES ($1, $2)', [4, 'after']);
      assert.deepEqual(await db.query('SELECT v FROM tx_probe WHERE id = 4'), [{ v: 'after' }]);
    });

    test('a failing statement inside a transaction rolls back the earlier ones', async () => {
      await firstMigrate();
      await db.exec('CREATE TABLE IF NOT EXISTS tx_probe (id int PRIMARY KEY, v text NOT NULL)');
      await assert.rejects(db.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe (id, v) VALUES ($1, $2)', [5, 'first']);
        await tx.query('INSERT INTO tx_probe (id, v) VALUES ($1, $2)', [5, 'duplicate']);
      }));
      assert.deepEqual(await db.query('SELECT id FROM tx_probe WHERE id = 5'), []);
    });

    test('ping answers', async () => {
      await db.ping();
    });

    test('close is idempotent, and the database refuses work afterwards', async () => {
      await db.close();
      await db.close();
      await assert.rejects(db.query('SELECT 1'));
    });
  });
}

databaseSuite('pglite', async () => {
  const db = await emptyPglite();
  assert.equal(db.kind, 'pglite');
  assert.equal(db.hasVector, true);
  return db;
});

describe('Database contract: postgres', { skip: NO_POSTGRES }, () => {
  // Nested so that the whole suite reports the skip reason when TEST_DATABASE_URL is absent.
  if (!DATABASE_URL) return;
  databaseSuite('postgres', async () => {
    const db = await emptyPostgres(() => {});
    assert.equal(db.kind, 'postgres');
    return db;
  });
});

describe('postgres only', { skip: NO_POSTGRES }, () => {
  test('two instances migrating the same fresh schema at once both succeed, and each migration is recorded once', async () => {
    const schema = newSchema();
    schemas.push(schema);
    const options = { databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} };
    const a = await openDatabase(options);
    const b = await openDatabase(options);
    try {
      const [ra, rb] = await Promise.all([migrate(a, builtInMigrations), migrate(b, builtInMigrations)]);
      // Exactly one of them applied it; both report the same current version.
      assert.deepEqual([...ra.applied, ...rb.applied], MIGRATIONS);
      assert.deepEqual(ra.current, LATEST);
      assert.deepEqual(rb.current, LATEST);
      const [count] = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM aigw_schema_migrations');
      assert.equal(count?.n, MIGRATIONS.length);
      const tenants = await b.query<{ id: string }>('SELECT id FROM tenants');
      assert.deepEqual(tenants.map((t) => t.id), ['default']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('two instances opening and migrating the same fresh schema at once both succeed', async () => {
    // Two gateways started together on one schema. The race (CREATE SCHEMA IF NOT EXISTS is not safe
    // against a concurrent creator) does not show every time, so a few rounds make it reliable.
    for (let round = 0; round < 8; round++) {
      const schema = newSchema();
      schemas.push(schema);
      const options = { databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} };
      const opened = await Promise.allSettled([openDatabase(options), openDatabase(options), openDatabase(options)]);
      const dbs = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      try {
        const failures = opened.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
        assert.deepEqual(failures, [], `round ${round}: concurrent openDatabase on schema ${schema} failed`);
        const results = await Promise.all(dbs.map((db) => migrate(db, builtInMigrations)));
        assert.deepEqual(results.flatMap((r) => r.applied), MIGRATIONS);
      } finally {
        for (const db of dbs) await db.close();
      }
    }
  });

  test('the tables land in the chosen schema, not in public', async () => {
    const schema = newSchema();
    schemas.push(schema);
    const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
    try {
      await migrate(db, builtInMigrations);
      const rows = await db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [schema]);
      assert.deepEqual(rows.map((r) => r.table_name), ['admin_audit', 'aigw_schema_migrations', 'api_keys', 'audit_checkpoints', 'audit_head', 'audit_records', 'batches', 'budgets', 'departments', 'files', 'jobs', 'jwt_revocations', 'organizations', 'realtime_sessions', 'responses', 'semantic_cache_entries', 'tenants', 'usage_records', 'vector_store_chunks', 'vector_store_files', 'vector_store_summaries', 'vector_stores', 'video_jobs']);
    } finally {
      await db.close();
    }
  });

  test('pgvector absence is reported once through onNoVector', async () => {
    const reasons: string[] = [];
    const db = await emptyPostgres((reason) => reasons.push(reason));
    try {
      if (db.hasVector) {
        // This server happens to have pgvector installed: nothing to report.
        assert.deepEqual(reasons, []);
      } else {
        assert.equal(reasons.length, 1);
        assert.equal(typeof reasons[0], 'string');
        assert.ok(reasons[0]!.length > 0, 'the reason says why');
      }
      // The database still works either way.
      await db.ping();
      assert.deepEqual((await migrate(db, builtInMigrations)).applied, MIGRATIONS);
    } finally {
      await db.close();
    }
  });
});

describe('pglite only', () => {
  test('reopening a closed data folder keeps the data', async () => {
    const dir = await freshDataDir();
    dataDirs.push(dir);
    const first = await openDatabase({ dataDir: dir });
    try {
      assert.deepEqual((await migrate(first, builtInMigrations)).applied, [], 'the template is already migrated');
      await first.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', ['acme', 'Acme']);
    } finally {
      await first.close();
    }
    const second = await openDatabase({ dataDir: dir });
    try {
      assert.deepEqual((await migrate(second, builtInMigrations)).applied, []);
      const rows = await second.query<{ id: string; name: string }>('SELECT id, name FROM tenants ORDER BY id');
      assert.deepEqual(rows, [{ id: 'acme', name: 'Acme' }, { id: 'default', name: 'Default deployment' }]);
    } finally {
      await second.close();
    }
  });
});
