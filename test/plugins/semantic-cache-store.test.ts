/**
 * The semantic-cache table through SemanticStore on a migrated database (PGlite always, Postgres when
 * TEST_DATABASE_URL is set), with the pgvector lookup and the plain SQL one: the nearest live entry of the
 * tenant and partition only, the newest maxScanRows only, vectors of another length never compared, the same
 * request written again in place, and expired rows pruned.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import type { PluginDatabase } from '../../core/pipeline/services.ts';
import { normalized, SemanticStore, type StoredEntry } from '../../plugins/semantic-cache/stores.ts';
import { builtInMigrations } from '../helpers/config.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

const entry = (tenant: string, content: string, expiresAt: number): StoredEntry => ({
  v: 1, tenant, native: false, expiresAt,
  answer: { id: content, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] },
});

function storeSuite(name: string, open: () => Promise<{ db: Database; cleanup(): Promise<void> }>, skip: string | false): void {
  for (const pgvector of [true, false]) {
    describe(`semantic-cache table (${name}, ${pgvector ? 'pgvector' : 'plain SQL'} lookup)`, { skip }, () => {
      let opened: { db: Database; cleanup(): Promise<void> };
      let now = 1_800_000_000_000;
      let store: SemanticStore;
      before(async () => {
        opened = await open();
        await migrate(opened.db, builtInMigrations);
        if (pgvector && !opened.db.hasVector) return;
        // The plain lookup on a database that has pgvector too: the store reads hasVector.
        const db = pgvector ? opened.db : Object.assign(Object.create(opened.db) as PluginDatabase, { hasVector: false });
        store = new SemanticStore(db as PluginDatabase, { now: () => now });
      });
      after(async () => {
        await opened?.cleanup();
      });

      const put = async (key: string, tenant: string, partition: string, vector: number[], ttlMs = 60_000) => {
        const stored = entry(tenant, key, now + ttlMs);
        await store.put(key, partition, normalized(vector)!, stored, JSON.stringify(stored));
      };

      test('the nearest live entry of the tenant and partition, with its cosine', async (t) => {
        if (!store) return t.skip('this Postgres has no pgvector');
        await put('a', 't1', 'p', [1, 0, 0]);
        await put('b', 't1', 'p', [1, 1, 0]);
        await put('other-tenant', 't2', 'p', [1, 0.1, 0]);
        await put('other-partition', 't1', 'q', [1, 0.1, 0]);
        await put('other-length', 't1', 'p', [1, 0.1, 0, 0]);
        const match = await store.nearest('t1', 'p', normalized([1, 0.1, 0])!, 100);
        assert.equal(match?.entry.answer.id, 'a');
        assert.ok(Math.abs(match!.similarity - 1 / Math.hypot(1, 0.1)) < 1e-5, String(match!.similarity));
        assert.equal((await store.nearest('t3', 'p', normalized([1, 0, 0])!, 100)), null);
      });

      test('only the newest maxScanRows entries are compared', async (t) => {
        if (!store) return t.skip('this Postgres has no pgvector');
        await put('old-best', 't1', 'scan', [0, 0, 1], 60_000);
        await put('new-worse', 't1', 'scan', [0, 1, 1], 120_000);
        assert.equal((await store.nearest('t1', 'scan', normalized([0, 0, 1])!, 1))?.entry.answer.id, 'new-worse');
        assert.equal((await store.nearest('t1', 'scan', normalized([0, 0, 1])!, 2))?.entry.answer.id, 'old-best');
      });

      test('the same request is written again in place; expired entries are skipped, then pruned', async (t) => {
        if (!store) return t.skip('this Postgres has no pgvector');
        await put('again', 't1', 'again', [1, 2, 3], 1000);
        await put('again', 't1', 'again', [1, 2, 3], 5000);
        const count = async () => (await opened.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM semantic_cache_entries WHERE partition = 'again'`))[0]!.n;
        assert.equal(await count(), 1);
        now += 2000;
        assert.equal((await store.nearest('t1', 'again', normalized([1, 2, 3])!, 10))?.entry.answer.id, 'again', 'the second write moved its expiry');
        now += 4000;
        assert.equal(await store.nearest('t1', 'again', normalized([1, 2, 3])!, 10), null);
        assert.ok(await store.prune() >= 1);
        assert.equal(await count(), 0);
      });
    });
  }
}

storeSuite('PGlite', async () => {
  const dataDir = await freshDataDir();
  const db = await openDatabase({ dataDir });
  return { db, cleanup: async () => {
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  } };
}, false);

storeSuite('Postgres', async () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
  return { db, cleanup: async () => {
    await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.close();
  } };
}, DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
