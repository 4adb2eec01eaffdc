/** Vector stores and their files (core/store/vector-stores.ts) on PGlite, and on Postgres when TEST_DATABASE_URL is set. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../core/store/database.ts';
import { pageRequest } from '../../core/store/pagination.ts';
import { expireVectorStores, insertChunks, searchChunks } from '../../core/store/vector-chunks.ts';
import {
  addStoreFiles, deleteVectorStore, findVectorStore, listStoreFiles, listVectorStores, refreshStoreStatus, removeStoreFile,
  setStoreFileResult, updateVectorStore, vectorStorePositionAfter,
} from '../../core/store/vector-stores.ts';
import { engines, fileId, isValidationError, newStore } from './vector-fixtures.ts';

const chunk = (index: number, embedding: number[]) => ({ index, content: `chunk ${index}`, embedding });
const count = async (db: Database, table: string, storeId: string) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE store_id = $1`, [storeId]))[0]!.n;

for (const engine of engines) {
  describe(`vector stores: ${engine.name}`, { skip: engine.skip }, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    before(async () => ({ db, dispose } = await engine.open()));
    after(async () => dispose());

    test('create, fetch, update and delete; another tenant sees none of it', async () => {
      const now = Date.now();
      const created = await newStore(db, 't1', { metadata: { team: 'ml' }, expiresAt: now + 3_600_000 });
      assert.match(created.id, /^vs-[0-9a-f-]{36}$/);
      assert.deepEqual([created.status, created.dims, created.chunkCount, created.metadata], ['in_progress', null, 0, { team: 'ml' }]);
      assert.deepEqual(created.fileCounts, { total: 0, in_progress: 0, completed: 0, skipped: 0, failed: 0 });
      assert.equal(created.expiresAt, now + 3_600_000);
      assert.deepEqual(await findVectorStore(db, 't1', created.id, now), created);

      assert.equal(await findVectorStore(db, 't2', created.id, now), null);
      assert.equal(await updateVectorStore(db, 't2', created.id, { name: 'stolen' }, now), null);
      assert.equal(await addStoreFiles(db, 't2', created.id, [fileId()], now), null);
      assert.equal(await deleteVectorStore(db, 't2', created.id, now), false);
      assert.equal(await findVectorStore(db, 't1', 'vs-not-a-uuid\u0000', now), null, 'a malformed id names nothing');

      const renamed = await updateVectorStore(db, 't1', created.id, { name: 'renamed', metadata: null, expiresAt: null }, now);
      assert.deepEqual([renamed!.name, renamed!.metadata, renamed!.expiresAt], ['renamed', null, null]);
      const untouched = await updateVectorStore(db, 't1', created.id, {}, now);
      assert.equal(untouched!.name, 'renamed');

      assert.equal(await deleteVectorStore(db, 't1', created.id, now), true);
      assert.equal(await findVectorStore(db, 't1', created.id, now), null);
      assert.equal(await deleteVectorStore(db, 't1', created.id, now), false);
    });

    test('the list is per tenant, oldest first, by cursor, without expired stores', async () => {
      const now = Date.now();
      const tenant = 't2';
      const earlier = (await listVectorStores(db, tenant, pageRequest({ limit: '100' }), now, (s) => s.id)).data;
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await newStore(db, tenant, { name: `s${i}` })).id);
      await newStore(db, tenant, { expiresAt: now - 1 });
      await newStore(db, 't1');
      const first = await listVectorStores(db, tenant, pageRequest({ limit: String(earlier.length + 2) }), now, (s) => s.id);
      assert.deepEqual([first.data, first.has_more], [[...earlier, ids[0], ids[1]], true]);
      const rest = await listVectorStores(db, tenant, pageRequest({ limit: '10', cursor: first.next_cursor! }), now, (s) => s.name);
      assert.deepEqual([rest.data, rest.has_more, rest.next_cursor], [['s2'], false, null]);
      const following = await listVectorStores(db, tenant, { limit: 10, after: await vectorStorePositionAfter(db, tenant, ids[1]!) }, now, (s) => s.id);
      assert.deepEqual(following.data, [ids[2]]);
      await assert.rejects(vectorStorePositionAfter(db, 't1', ids[1]!), isValidationError('/after'));
    });

    test('files: attaching is idempotent, and the store completes once no file is in progress', async () => {
      const now = Date.now();
      const store = await newStore(db, 't1');
      const [a, b, c] = [fileId(), fileId(), fileId()];
      assert.deepEqual(await addStoreFiles(db, 't1', store.id, [a, b, c, a], now), { added: [a, b, c], status: 'in_progress' });
      assert.deepEqual(await addStoreFiles(db, 't1', store.id, [a], now), { added: [], status: 'in_progress' });
      await assert.rejects(addStoreFiles(db, 't1', store.id, [a, 'file-x'], now), isValidationError('/file_ids/1'));

      assert.equal(await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: a, chunks: [chunk(0, [1, 0]), chunk(1, [0, 1])], now }), 2);
      const done = await setStoreFileResult(db, 't1', store.id, a, { status: 'completed' }, now);
      assert.deepEqual([done!.status, done!.chunkCount, done!.warning], ['completed', 2, null]);
      assert.equal((await findVectorStore(db, 't1', store.id, now))!.status, 'in_progress');
      await setStoreFileResult(db, 't1', store.id, b, { status: 'skipped', warning: 'the provider serves no content for this file' }, now);
      // A file that fails after its chunks were written keeps none of them.
      await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: c, chunks: [chunk(0, [1, 1])], now });
      await setStoreFileResult(db, 't1', store.id, c, { status: 'failed', warning: 'embedding failed' }, now);

      const completed = await findVectorStore(db, 't1', store.id, now);
      assert.equal(completed!.status, 'completed');
      assert.deepEqual(completed!.fileCounts, { total: 3, in_progress: 0, completed: 1, skipped: 1, failed: 1 });
      assert.deepEqual([completed!.chunkCount, completed!.dims], [2, 2]);
      assert.equal(await count(db, 'vector_store_chunks', store.id), 2);
      const files = await listStoreFiles(db, 't1', store.id, now);
      assert.deepEqual(new Map(files.map((f) => [f.fileId, [f.status, f.warning]])), new Map([
        [a, ['completed', null]], [b, ['skipped', 'the provider serves no content for this file']], [c, ['failed', 'embedding failed']],
      ]));
      assert.deepEqual(await listStoreFiles(db, 't2', store.id, now), []);

      const d = fileId();
      assert.deepEqual(await addStoreFiles(db, 't1', store.id, [d], now), { added: [d], status: 'in_progress' });
      assert.equal(await removeStoreFile(db, 't1', store.id, d, now), true);
      assert.equal(await removeStoreFile(db, 't1', store.id, d, now), false);
      assert.equal((await findVectorStore(db, 't1', store.id, now))!.status, 'completed');
      assert.equal(await removeStoreFile(db, 't1', store.id, a, now), true, 'detaching a file removes its chunks');
      assert.equal((await findVectorStore(db, 't1', store.id, now))!.chunkCount, 0);
      assert.equal(await count(db, 'vector_store_chunks', store.id), 0);
      assert.equal(await setStoreFileResult(db, 't1', store.id, a, { status: 'completed' }, now), null, 'a detached file records nothing');
      assert.equal(await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: a, chunks: [chunk(0, [1, 0])], now }), null);
    });

    test('a store without files, or whose files were all skipped, is completed', async () => {
      const now = Date.now();
      const empty = await newStore(db, 't1');
      assert.deepEqual(await addStoreFiles(db, 't1', empty.id, [], now), { added: [], status: 'completed' });
      const skipped = await newStore(db, 't1');
      const f = fileId();
      await addStoreFiles(db, 't1', skipped.id, [f], now);
      await setStoreFileResult(db, 't1', skipped.id, f, { status: 'skipped', warning: 'not downloadable' }, now);
      assert.equal(await refreshStoreStatus(db, 't1', skipped.id, now), 'completed');
      assert.equal(await refreshStoreStatus(db, 't2', skipped.id, now), null);
    });

    test('chunks of a file replace its earlier ones; every chunk of a store has its first length', async () => {
      const now = Date.now();
      const store = await newStore(db, 't1');
      const [a, b] = [fileId(), fileId()];
      await addStoreFiles(db, 't1', store.id, [a, b], now);
      const many = Array.from({ length: 450 }, (_, i) => chunk(i, [1, i, 0]));
      assert.equal(await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: a, chunks: many, now }), 450, 'more than one INSERT batch');
      assert.equal(await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: a, chunks: [chunk(0, [0, 0, 1])], now }), 1);
      assert.equal(await count(db, 'vector_store_chunks', store.id), 1);
      await assert.rejects(
        insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: b, chunks: [chunk(0, [1, 0])], now }), isValidationError('/chunks'));
      await assert.rejects(
        insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: b, chunks: [chunk(0, [1, 0, 0]), chunk(1, [1, 0])], now }),
        isValidationError('/chunks/1/embedding'));
      await assert.rejects(
        insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: b, chunks: [chunk(0, [0, 0, 0])], now }), isValidationError('/chunks/0/embedding'));
      await assert.rejects(
        insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: b, chunks: [chunk(0, [1, 0, 0]), chunk(0, [0, 1, 0])], now }),
        isValidationError('/chunks/1/index'));
      assert.equal(await insertChunks(db, { tenantId: 't2', storeId: store.id, fileId: b, chunks: [chunk(0, [1, 0, 0])], now }), null);
      const [row] = await db.query<{ document_id: string; tenant_id: string; content: string }>(
        'SELECT document_id, tenant_id, content FROM vector_store_chunks WHERE store_id = $1', [store.id]);
      assert.deepEqual(row, { document_id: a, tenant_id: 't1', content: 'chunk 0' });
    });

    test('an expired store is gone for every reader; moving its expiry moves its chunks; the sweep deletes it all', async () => {
      const now = Date.now();
      const later = now + 60_000;
      const store = await newStore(db, 't1', { expiresAt: now + 1000 });
      const f = fileId();
      await addStoreFiles(db, 't1', store.id, [f], now);
      await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: f, chunks: [chunk(0, [1, 0]), chunk(1, [0, 1])], now });
      const search = (at: number) => searchChunks(db, { tenantId: 't1', storeIds: [store.id], vector: [1, 0], topK: 5, now: at });
      assert.equal((await search(now)).length, 2);
      assert.equal(await findVectorStore(db, 't1', store.id, later), null);
      assert.deepEqual(await search(later), []);
      assert.equal(await updateVectorStore(db, 't1', store.id, { name: 'late' }, later), null);
      assert.equal(await addStoreFiles(db, 't1', store.id, [fileId()], later), null);
      assert.equal(await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: f, chunks: [chunk(0, [1, 0])], now: later }), null);
      assert.equal(await deleteVectorStore(db, 't1', store.id, later), false);
      const listed = await listVectorStores(db, 't1', pageRequest({ limit: '100' }), later, (s) => s.id);
      assert.ok(!listed.data.includes(store.id));

      const extended = await updateVectorStore(db, 't1', store.id, { expiresAt: now + 120_000 }, now);
      assert.equal(extended!.expiresAt, now + 120_000);
      assert.equal((await search(later)).length, 2, "the chunks' expiry moved with the store's");
      const [expiry] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM vector_store_chunks WHERE store_id = $1 AND expires_at = to_timestamp($2::double precision / 1000)`,
        [store.id, now + 120_000]);
      assert.equal(expiry!.n, 2);

      const keep = await newStore(db, 't1', { expiresAt: now + 10_000_000 });
      const swept = await expireVectorStores(db, now + 200_000, 100);
      assert.ok(swept.stores >= 1 && swept.chunks >= 2);
      assert.equal(await count(db, 'vector_store_chunks', store.id), 0);
      assert.equal(await count(db, 'vector_store_files', store.id), 0);
      assert.deepEqual(await db.query('SELECT id FROM vector_stores WHERE id = $1', [store.id]), []);
      assert.ok(await findVectorStore(db, 't1', keep.id, now + 200_000));
      assert.deepEqual(await expireVectorStores(db, now + 200_000, 100), { stores: 0, chunks: 0 });
    });

    test('deleting a store deletes its files and chunks', async () => {
      const now = Date.now();
      const store = await newStore(db, 't1');
      const f = fileId();
      await addStoreFiles(db, 't1', store.id, [f], now);
      await insertChunks(db, { tenantId: 't1', storeId: store.id, fileId: f, chunks: [chunk(0, [1, 2]), chunk(1, [2, 1])], now });
      assert.equal(await deleteVectorStore(db, 't1', store.id, now), true);
      assert.equal(await count(db, 'vector_store_files', store.id), 0);
      assert.equal(await count(db, 'vector_store_chunks', store.id), 0);
    });
  });
}
