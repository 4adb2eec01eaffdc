/**
 * The embedded database in its worker thread (core/store/pglite.ts + pglite-worker.mjs): what the thread hop must
 * not change (transactions, errors, types) and what it adds (a free event loop, a worker that can die or end).
 * The Database contract itself is test/store/database.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { Database } from '../../core/store/database.ts';
import { PgliteDatabase } from '../../core/store/pglite.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { REPO_ROOT } from '../helpers/process.ts';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function openFresh(): Promise<PgliteDatabase> {
  const dir = await freshDataDir();
  dirs.push(dir);
  return PgliteDatabase.open(dir);
}

/** Settles with what the promise gave, and records when it did (to check what waited for what). */
function track<T>(promise: Promise<T>): { done: boolean; result: Promise<T> } {
  const state = { done: false, result: promise };
  state.result = promise.finally(() => { state.done = true; });
  return state;
}

describe('PGlite in a worker thread', () => {
  let db: Database;
  before(async () => {
    db = await openFresh();
    await db.exec(`CREATE TABLE probe (id int PRIMARY KEY, v text NOT NULL);
      CREATE TABLE parent (id int PRIMARY KEY);
      CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parent (id));
      CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL);
      INSERT INTO counter VALUES (1, 0);`);
  });
  after(async () => {
    await db.close();
  });

  test('a statement from outside a transaction waits for its commit, then sees its writes', async () => {
    let outside: ReturnType<typeof track<Array<{ n: number }>>> | undefined;
    const result = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [1, 'first']);
      outside = track(db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe WHERE id IN (1, 2)'));
      await delay(100);
      assert.equal(outside.done, false, 'the outside statement must not run inside the transaction');
      await tx.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [2, 'second']);
      return 'committed';
    });
    assert.equal(result, 'committed');
    assert.deepEqual(await outside!.result, [{ n: 2 }]);
  });

  test('a transaction whose callback throws rolls back, rethrows that error, and lets the waiting statements run', async () => {
    const boom = new Error('boom');
    let outside: ReturnType<typeof track<Array<{ n: number }>>> | undefined;
    await assert.rejects(db.transaction(async (tx) => {
      await tx.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [3, 'discarded']);
      await tx.exec("INSERT INTO probe (id, v) VALUES (4, 'discarded too')");
      outside = track(db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe WHERE id IN (3, 4)'));
      await delay(50);
      assert.equal(outside.done, false);
      throw boom;
    }), (err) => err === boom);
    assert.deepEqual(await outside!.result, [{ n: 0 }]);
  });

  test('transactions started together run one after another', async () => {
    // Read, wait, write: interleaved, two of them would read the same value and an increment would be lost.
    const increment = () => db.transaction(async (tx) => {
      const [row] = await tx.query<{ n: number }>('SELECT n FROM counter WHERE id = 1');
      await delay(10);
      await tx.query('UPDATE counter SET n = $1 WHERE id = 1', [row!.n + 1]);
    });
    await Promise.all(Array.from({ length: 5 }, increment));
    assert.deepEqual(await db.query('SELECT n FROM counter WHERE id = 1'), [{ n: 5 }]);
  });

  test('a transaction handle refuses work once its transaction has ended', async () => {
    let kept: Parameters<Parameters<Database['transaction']>[0]>[0] | undefined;
    await db.transaction(async (tx) => { kept = tx; });
    await assert.rejects(kept!.query('SELECT 1'), /Transaction is closed/);
    await assert.rejects(kept!.exec('SELECT 1'), /Transaction is closed/);
    await db.ping();
  });

  test('a Postgres error keeps its code and fields across the thread', async () => {
    await db.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [10, 'taken']);
    await assert.rejects(db.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [10, 'again']), (err: Record<string, unknown>) => {
      assert.ok(err instanceof Error);
      assert.equal(err.message, 'duplicate key value violates unique constraint "probe_pkey"');
      assert.equal(err.code, '23505');
      assert.equal(err.severity, 'ERROR');
      assert.equal(err.detail, 'Key (id)=(10) already exists.');
      assert.equal(err.constraint, 'probe_pkey');
      assert.equal(err.table, 'probe');
      assert.equal(err.schema, 'public');
      return true;
    });
    await assert.rejects(db.query('INSERT INTO child (id, parent_id) VALUES (1, 99)'), (err: Record<string, unknown>) => {
      assert.equal(err.code, '23503');
      assert.equal(err.constraint, 'child_parent_id_fkey');
      assert.equal(err.table, 'child');
      return true;
    });
    await assert.rejects(db.exec('INSERT INTO probe (id, v) VALUES (11, NULL)'), (err: Record<string, unknown>) => {
      assert.equal(err.code, '23502');
      assert.equal(err.column, 'v');
      return true;
    });
    // Inside a transaction the statement's error reaches fn, and from fn the caller.
    await assert.rejects(db.transaction(async (tx) => {
      await tx.query('INSERT INTO probe (id, v) VALUES ($1, $2)', [10, 'again']);
    }), (err: Record<string, unknown>) => err.code === '23505' && err.constraint === 'probe_pkey');
  });

  test("rows keep PGlite's parsed types, and parameters arrive as given", async () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const [row] = await db.query<Record<string, unknown>>(`SELECT $1::timestamptz AS ts, '2024-01-02'::date AS d,
        $2::bytea AS bytes, 9007199254740993::int8 AS big, 5::int8 AS small, $3::jsonb AS doc, '[1,"x"]'::json AS list,
        1.5::numeric AS num, true AS yes, ARRAY['a', 'b,c'] AS arr, '[1,2,3]'::vector AS vec, NULL::text AS nothing,
        $4::int8 AS big_param`,
      [when, new Uint8Array([0, 1, 255]), { k: ['v', 1, null], nested: { ok: true } }, 1234567890123456789n]);
    assert.ok(row);
    assert.ok(row.ts instanceof Date);
    assert.equal((row.ts as Date).toISOString(), when.toISOString());
    assert.ok(row.d instanceof Date);
    assert.ok(row.bytes instanceof Uint8Array);
    assert.deepEqual([...(row.bytes as Uint8Array)], [0, 1, 255]);
    assert.equal(row.big, 9007199254740993n);
    assert.equal(row.small, 5);
    assert.deepEqual(row.doc, { k: ['v', 1, null], nested: { ok: true } });
    assert.deepEqual(row.list, [1, 'x']);
    assert.equal(row.num, '1.5');
    assert.equal(row.yes, true);
    assert.deepEqual(row.arr, ['a', 'b,c']);
    assert.equal(row.vec, '[1,2,3]');
    assert.equal(row.nothing, null);
    assert.equal(row.big_param, 1234567890123456789n);
  });

  test('a parameter that cannot cross the thread is refused, and the database goes on', async () => {
    await assert.rejects(db.query('SELECT $1::text', [() => 'no']), { name: 'DataCloneError' });
    await db.ping();
  });

  test('the shared buffer pool is the embedded default, 16 MB', async () => {
    assert.deepEqual(await db.query('SHOW shared_buffers'), [{ shared_buffers: '16MB' }]);
  });

  test('the event loop keeps turning while a heavy statement runs', async () => {
    let last = performance.now();
    let longestGap = 0;
    const tick = () => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    };
    const timer = setInterval(tick, 1);
    const started = performance.now();
    try {
      await db.query('SELECT sum(i)::text FROM generate_series(1, 2000000) i');
    } finally {
      clearInterval(timer);
    }
    tick(); // a loop held from start to end would have had no tick at all
    const took = performance.now() - started;
    // In-process, the gap would be the statement's whole duration.
    assert.ok(took > 100, `the statement should be heavy (${took.toFixed(0)} ms)`);
    assert.ok(longestGap < took / 2, `longest gap ${longestGap.toFixed(1)} ms while the statement ran ${took.toFixed(0)} ms`);
  });
});

describe('the worker thread ending', () => {
  test('close is idempotent: calls made before it are answered, calls after it are refused', async () => {
    const db = await openFresh();
    const before = db.query<{ n: number }>('SELECT 41 + 1 AS n');
    const first = db.close();
    const second = db.close();
    assert.equal(first, second);
    assert.deepEqual(await before, [{ n: 42 }]);
    await first;
    await db.close();
    await assert.rejects(db.query('SELECT 1'), /the embedded database is closed/);
    await assert.rejects(db.transaction(async () => {}), /the embedded database is closed/);
  });

  test('close rolls back a transaction still open, rather than waiting for it', async () => {
    const db = await openFresh();
    await db.exec('CREATE TABLE left_open (id int)');
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => { entered = resolve; });
    const pending = db.transaction(async (tx) => {
      await tx.query('INSERT INTO left_open VALUES (1)');
      entered();
      await delay(200);
      await tx.query('INSERT INTO left_open VALUES (2)');
    });
    await inside;
    // Expect the rejection before closing: on a slow machine the close outlasts the 200 ms and the transaction's
    // second statement is refused while close() is still being awaited.
    const refused = assert.rejects(pending);
    await db.close();
    await refused;
  });

  test('a worker that dies rejects the call it was serving and every later one; close still resolves', async () => {
    const db = await openFresh();
    const worker = (db as unknown as { worker: Worker }).worker;
    const pending = db.query('SELECT sum(i) FROM generate_series(1, 5000000) i');
    await delay(20);
    await worker.terminate();
    await assert.rejects(pending, /the embedded database worker stopped \(exit code 1\)/);
    // Callers see a store outage (503 STORE_UNAVAILABLE), not an internal error.
    await assert.rejects(db.query('SELECT 1'), { code: 'STORE_UNAVAILABLE', status: 503 });
    await assert.rejects(db.query('SELECT 1'), /the embedded database worker stopped/);
    await assert.rejects(db.transaction(async () => {}), /the embedded database worker stopped/);
    await db.close();
    await db.close();
  });

  test("a corrupt data folder fails open() with Postgres's reason", async () => {
    const dir = await freshDataDir();
    dirs.push(dir);
    await writeFile(join(dir, 'PG_VERSION'), 'garbage\n');
    await assert.rejects(PgliteDatabase.open(dir), (err: Error) => {
      assert.match(err.message, /PGlite failed to initialize properly/);
      assert.match(err.message, /is not a valid data directory/);
      assert.ok(err.message.includes(join(dir, 'PG_VERSION')), err.message);
      return true;
    });
  });

  test('a process exits on its own: a waiting query keeps it alive, an idle database does not', async () => {
    const dir = await freshDataDir();
    const scriptDir = await mkdtemp(join(tmpdir(), 'aigw-pglite-exit-'));
    dirs.push(dir, scriptDir);
    const script = join(scriptDir, 'script.mts');
    // No close(): the top-level await needs the worker referenced while it answers, and unreferenced afterwards.
    await writeFile(script, `import { PgliteDatabase } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'core/store/pglite.ts')).href)};
const db = await PgliteDatabase.open(${JSON.stringify(dir)});
await new Promise((resolve) => setTimeout(resolve, 50));
process.stdout.write(JSON.stringify(await db.query('SELECT 41 + 1 AS n')));
`);
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const code = await new Promise<number | string>((resolve, reject) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`still running after 60 s; stderr: ${stderr}`)); }, 60_000);
      child.once('exit', (exitCode, signal) => { clearTimeout(timer); resolve(exitCode ?? signal ?? -1); });
    });
    assert.equal(code, 0, stderr);
    assert.equal(stdout, '[{"n":42}]');
  });
});
