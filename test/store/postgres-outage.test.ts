/**
 * The database through a TCP proxy the test freezes (nothing forwarded, connections open) and cuts (connections
 * destroyed): each call answers 503 STORE_UNAVAILABLE within storage.databaseTimeoutMs or at once, Postgres
 * refusing a statement still surfaces as its own error, and the pool recovers by itself. Runs when
 * TEST_DATABASE_URL is set; the shared server is never stopped.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { BoundedDatabase } from '../../core/store/bounded.ts';
import { StoreDeadline, StoreUnavailableError, lateOutcome } from '../../core/store/deadline.ts';
import { PostgresDatabase } from '../../core/store/postgres.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { eventually } from '../helpers/eventually.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
if (!DATABASE_URL) console.log('# skipped: TEST_DATABASE_URL is not set');

const TIMEOUT_MS = 300;

describe('Postgres frozen or cut', { skip: !DATABASE_URL }, () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  let proxy: TcpProxy;
  let raw: PostgresDatabase;
  let db: BoundedDatabase;

  before(async () => {
    const url = new URL(DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    raw = await PostgresDatabase.open(url.toString(), { schema });
    db = new BoundedDatabase(raw, new StoreDeadline('database', TIMEOUT_MS));
    await db.exec('CREATE TABLE items (id text PRIMARY KEY)');
  });
  after(async () => {
    proxy?.restore();
    await raw?.close();
    await proxy?.close();
    const direct = new pg.Client({ connectionString: DATABASE_URL });
    await direct.connect();
    await direct.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => direct.end());
  });

  test('Postgres refusing a statement is its own error, not an outage', async () => {
    await db.query('INSERT INTO items (id) VALUES ($1)', ['a']);
    await assert.rejects(db.query('INSERT INTO items (id) VALUES ($1)', ['a']), (err: unknown) => !(err instanceof StoreUnavailableError) && (err as { code?: string }).code === '23505');
  });

  test('frozen: 503 within the deadline, then at once; the late answer ends the stall', async () => {
    proxy.freeze();
    const started = performance.now();
    const first = db.query('SELECT count(*)::int AS n FROM items');
    await assert.rejects(first, (err: unknown) => err instanceof StoreUnavailableError && err.status === 503 && err.message === `The database did not answer within ${TIMEOUT_MS} ms`);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < TIMEOUT_MS + 500, `${elapsed} ms`);
    const refused = performance.now();
    await assert.rejects(db.transaction((tx) => tx.query('SELECT 1')), /is not answering/);
    assert.ok(performance.now() - refused < 50, 'a stalled database fails at once');
    proxy.restore();
    assert.deepEqual(await lateOutcome(first), [{ n: 1 }]);
    assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM items'), [{ n: 1 }]);
  });

  test('cut: 503 "could not be reached" without waiting, in queries and transactions; the pool reconnects', async () => {
    proxy.cut();
    try {
      for (const call of [() => db.query('SELECT 1'), () => db.transaction((tx) => tx.query('SELECT 1')), () => db.ping()]) {
        const started = performance.now();
        await assert.rejects(call(), (err: unknown) => err instanceof StoreUnavailableError && err.code === 'STORE_UNAVAILABLE' && err.message === 'The database could not be reached');
        assert.ok(performance.now() - started < TIMEOUT_MS, 'refused, not timed out');
      }
    } finally {
      proxy.restore();
    }
    await eventually(async () => assert.deepEqual(await db.query('SELECT 2 AS two'), [{ two: 2 }]));
  });
  test('cut in the middle of a transaction: the transaction fails with 503, and nothing is thrown outside it', async () => {
    const uncaught: unknown[] = [];
    const keep = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', keep);
    try {
      let inside!: () => void;
      const begun = new Promise<void>((resolve) => { inside = resolve; });
      const transaction = db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        inside();
        // Held open until the connection is cut under it.
        await tx.query('SELECT pg_sleep(5)');
      });
      await begun;
      proxy.cut();
      await assert.rejects(transaction, (err: unknown) => err instanceof StoreUnavailableError && err.message === 'The database could not be reached');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, [], 'the lost connection is not an uncaught error');
    } finally {
      process.off('uncaughtException', keep);
      proxy.restore();
    }
    await eventually(async () => assert.deepEqual(await db.query('SELECT 3 AS three'), [{ three: 3 }]));
  });
});
