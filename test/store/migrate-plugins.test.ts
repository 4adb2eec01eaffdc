/**
 * Plugins' migrations: applied after the core's, each once, as `<plugin>/<version>`; a data folder made while
 * budgets and usage were core migrations (0003-0005) takes the plugins' versions without losing a row; a
 * failing or unreadable plugin migration stops the start with the plugin named, and leaves nothing half applied.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { builtInMigrations } from '../helpers/config.ts';

describe('plugin migrations', () => {
  let dir: string;
  let db: Database;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aigw-migrate-plugins-'));
    db = await openDatabase({ dataDir: join(dir, 'data') });
  });
  after(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const sql = (namespace: string, file: string) =>
    readFile(join(builtInMigrations.find((m) => m.namespace === namespace)!.dir, file), 'utf8');
  const versions = async () => (await db.query<{ version: string }>('SELECT version FROM aigw_schema_migrations ORDER BY applied_at, version')).map((r) => r.version);

  test('a database migrated when budgets and usage were core migrations takes the plugins\' versions, rows kept', async () => {
    // The core's own migrations, then the tables as core migrations 0003-0005 left them, with data in them.
    assert.deepEqual((await migrate(db)).applied, ['0001_foundation', '0002_identity', '0003_jobs', '0004_files', '0005_batches', '0006_responses', '0007_vector_stores', '0008_video_jobs', '0009_realtime_sessions']);
    for (const [namespace, file] of [['usage', '0001_usage_records.sql'], ['budget', '0001_budgets.sql'], ['usage', '0002_modality.sql']] as const) {
      await db.exec(await sql(namespace, file));
    }
    await db.query(`INSERT INTO aigw_schema_migrations (version) VALUES ('0003_usage'), ('0004_budgets'), ('0005_usage_modality')`);
    await db.query(`INSERT INTO tenants (id, name) VALUES ('t1', 'one')`);
    await db.query(`INSERT INTO budgets (id, tenant_id, scope, scope_id, period, limit_usd) VALUES ('b1', 't1', 'deployment', NULL, 'daily', 5)`);
    await db.query(`INSERT INTO usage_records (id, request_id, created_at, tenant_id, endpoint, stream, latency_ms, status, modality)
      VALUES ('00000000-0000-4000-8000-000000000001', 'r1', now(), 't1', '/v1/embeddings', false, 1, 'completed', 'embeddings')`);

    const result = await migrate(db, builtInMigrations);
    assert.deepEqual(result.applied, [
      'usage/0001_usage_records', 'usage/0002_modality', 'usage/0003_request_count', 'usage/0004_cache_and_retrieval', 'usage/0005_audio_units', 'usage/0006_speech_characters', 'usage/0007_image_video_units', 'usage/0008_guard_verdicts', 'usage/0009_no_request_index', 'budget/0001_budgets',
      'semantic-cache/0001_semantic_cache_entries',
      'audit/0001_audit_records',
    ]);
    assert.deepEqual(result.current, ['0009_realtime_sessions', 'usage/0009_no_request_index', 'budget/0001_budgets', 'semantic-cache/0001_semantic_cache_entries', 'audit/0001_audit_records']);
    assert.deepEqual(await db.query('SELECT id, limit_usd::text AS limit FROM budgets'), [{ id: 'b1', limit: '5.000000' }]);
    assert.deepEqual(await db.query('SELECT request_id, modality FROM usage_records'), [{ request_id: 'r1', modality: 'embeddings' }]);
    assert.deepEqual((await migrate(db, builtInMigrations)).applied, [], 'applied once');
  });

  test('a failing plugin migration names the plugin and its version, and nothing of it stays', async () => {
    const folder = join(dir, 'broken');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, '0001_first.sql'), 'CREATE TABLE broken_first (id int);');
    await writeFile(join(folder, '0002_bad.sql'), 'CREATE TABLE broken_bad (id int); SELECT no_such_function();');
    const before = await versions();
    await assert.rejects(migrate(db, [...builtInMigrations, { namespace: 'broken', dir: folder }]), /migration broken\/0002_bad failed: .*no_such_function/);
    assert.deepEqual(await versions(), before, 'the whole run is one transaction');
    assert.deepEqual(await db.query(`SELECT to_regclass('broken_first')::text AS t`), [{ t: null }]);
  });

  test('a plugin whose migrations folder cannot be read stops the migration, naming the plugin', async () => {
    await assert.rejects(
      migrate(db, [{ namespace: 'ghost', dir: join(dir, 'no-such-folder') }]),
      /cannot read the migrations of plugin "ghost" in .*no-such-folder/,
    );
  });
});
