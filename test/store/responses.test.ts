/** The stored responses (core/store/responses.ts) on PGlite, and on Postgres when TEST_DATABASE_URL is set. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { pageRequest } from '../../core/store/pagination.ts';
import {
  cancelResponse, deleteResponse, findResponse, finishResponse, insertResponse, listResponses, newResponseId, responseChain, type NewResponse,
} from '../../core/store/responses.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

function suite(name: string, open: () => Promise<{ db: Database; dispose(): Promise<void> }>) {
  describe(`stored responses: ${name}`, () => {
    let db: Database;
    let dispose: () => Promise<void>;
    const turn = (tenantId: string, previousResponseId: string | null, text: string): NewResponse => ({
      tenantId, provider: 'anthropic', requestedModel: 'claude', previousResponseId, instructions: null,
      input: [{ role: 'user', content: text }], metadata: null, callerKind: 'api_key', apiKeyId: 'key-1', userId: null,
    });
    const end = (text: string) => ({
      status: 'completed' as const, output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }],
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 }, model: 'claude-x', providerResponseId: 'msg_1', completedAt: Date.now(),
    });

    before(async () => {
      ({ db, dispose } = await open());
      await db.query("INSERT INTO tenants (id, name) VALUES ('t1', 'One'), ('t2', 'Two'), ('t3', 'Three') ON CONFLICT DO NOTHING");
    });
    after(async () => dispose());

    test('a chain is read oldest first, stops at a deleted link, and belongs to its tenant', async () => {
      const a = newResponseId(); const b = newResponseId(); const c = newResponseId();
      await insertResponse(db, a, turn('t1', null, 'one'));
      assert.ok(await finishResponse(db, a, end('first')));
      await insertResponse(db, b, turn('t1', a, 'two'));
      await finishResponse(db, b, end('second'));
      await insertResponse(db, c, turn('t1', b, 'three'));
      const chain = await responseChain(db, 't1', c, 100);
      assert.deepEqual(chain.map((r) => r.id), [a, b, c]);
      assert.deepEqual(chain[0]!.output, end('first').output);
      assert.deepEqual((await responseChain(db, 't1', c, 2)).map((r) => r.id), [b, c], 'at most maxDepth links');
      assert.deepEqual(await responseChain(db, 't2', c, 100), [], "another tenant's id is none of its own");
      assert.equal(await findResponse(db, 't2', c), null);
      assert.equal(await deleteResponse(db, 't2', a), false);
      assert.equal(await deleteResponse(db, 't1', a), true);
      assert.deepEqual((await responseChain(db, 't1', c, 100)).map((r) => r.id), [b, c]);
    });

    test('a cancel wins over a later end; a finished response is returned unchanged by a cancel', async () => {
      const id = newResponseId();
      await insertResponse(db, id, turn('t1', null, 'x'));
      const cancelled = await cancelResponse(db, 't1', id, Date.now(), { output: [{ type: 'message', partial: true }], usage: null });
      assert.equal(cancelled!.status, 'cancelled');
      assert.deepEqual(cancelled!.output, [{ type: 'message', partial: true }]);
      assert.equal(await finishResponse(db, id, end('late')), null, 'the end came after the cancel');
      assert.equal((await findResponse(db, 't1', id))!.status, 'cancelled');
      const done = newResponseId();
      await insertResponse(db, done, turn('t1', null, 'y'));
      await finishResponse(db, done, end('ok'));
      const again = await cancelResponse(db, 't1', done, Date.now());
      assert.deepEqual([again!.status, again!.usage], ['completed', { input_tokens: 3, output_tokens: 2, total_tokens: 5 }]);
      assert.equal(await cancelResponse(db, 't2', done, Date.now()), null);
    });

    test('the list is per tenant, in creation order, by cursor', async () => {
      for (let i = 0; i < 3; i++) await insertResponse(db, newResponseId(), turn('t2', null, `l${i}`));
      const first = await listResponses(db, 't2', pageRequest({ limit: '2' }), (r) => r.input);
      assert.deepEqual([first.data.length, first.has_more], [2, true]);
      const rest = await listResponses(db, 't2', pageRequest({ limit: '2', cursor: first.next_cursor! }), (r) => r.input);
      assert.deepEqual(rest.data, [[{ role: 'user', content: 'l2' }]]);
    });

    test('responses made within one millisecond of the clock list in the order they were made', async () => {
      // PGlite's clock counts milliseconds: rows made in a burst share created_at and are ordered by their ids.
      const texts = Array.from({ length: 30 }, (_, i) => `b${i}`);
      for (const text of texts) await insertResponse(db, newResponseId(), turn('t3', null, text));
      const listed = await listResponses(db, 't3', pageRequest({ limit: '100' }), (r) => (r.input as Array<{ content: string }>)[0]!.content);
      assert.deepEqual(listed.data, texts);
    });
  });
}

suite('pglite', async () => {
  const dataDir = await freshDataDir();
  const db = await openDatabase({ dataDir });
  await migrate(db);
  return { db, async dispose() { await db.close(); await rm(dataDir, { recursive: true, force: true }); } };
});

describe('stored responses on postgres', { skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set' }, () => {
  if (!DATABASE_URL) return;
  suite('postgres', async () => {
    const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
    const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', schema, onNoVector: () => {} });
    await migrate(db);
    return { db, async dispose() { await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); await db.close(); } };
  });
});
