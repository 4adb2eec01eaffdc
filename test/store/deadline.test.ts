/**
 * Store deadlines (core/store/deadline.ts, bounded.ts): a call past its deadline is a 503 STORE_UNAVAILABLE whose
 * late outcome can still be read; a store that answers nothing for a whole deadline is stalled, and its calls
 * fail at once (not sent) with one probe per deadline, until something answers. On the embedded database too.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { GatewayError } from '../../core/errors.ts';
import { BoundedDatabase } from '../../core/store/bounded.ts';
import { openDatabase } from '../../core/store/database.ts';
import { lateOutcome, StoreDeadline, StoreUnavailableError } from '../../core/store/deadline.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const TIMEOUT_MS = 40;

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A deadline whose stall events are recorded. */
function recorded(timeoutMs = TIMEOUT_MS) {
  const events: boolean[] = [];
  const deadline = new StoreDeadline('kv', timeoutMs, { onStall: (_, stalled) => events.push(stalled) });
  return { deadline, events };
}

describe('StoreDeadline', () => {
  test('a call past its deadline: 503 STORE_UNAVAILABLE in time, its late result still readable', async () => {
    const { deadline } = recorded();
    const call = deferred<string>();
    const started = performance.now();
    const bounded = deadline.run(() => call.promise);
    const err = await bounded.then(() => assert.fail('resolved'), (e: unknown) => e);
    const elapsed = performance.now() - started;
    assert.ok(err instanceof StoreUnavailableError && err instanceof GatewayError);
    assert.equal(err.code, 'STORE_UNAVAILABLE');
    assert.equal(err.status, 503);
    assert.deepEqual(err.details, { store: 'kv' });
    assert.equal(err.message, `The KV did not answer within ${TIMEOUT_MS} ms`);
    assert.ok(elapsed >= TIMEOUT_MS - 2 && elapsed < TIMEOUT_MS + 500, `${elapsed} ms`);
    call.resolve('late');
    assert.equal(await lateOutcome(bounded), 'late');
  });

  test('a late failure, or a call never sent, has no late outcome; a call in time is its own outcome', async () => {
    const { deadline } = recorded();
    const call = deferred<string>();
    const bounded = deadline.run(() => call.promise);
    await assert.rejects(bounded, StoreUnavailableError);
    call.reject(new Error('connection reset'));
    assert.equal(await lateOutcome(bounded), undefined);
    // The store is stalled now: the next call is refused before it is sent.
    let sent = false;
    const refused = deadline.run(async () => { sent = true; return 'x'; });
    assert.equal(await lateOutcome(refused), undefined);
    assert.equal(sent, false);
    assert.equal(await lateOutcome(Promise.resolve(7)), 7);
    assert.equal(await lateOutcome(Promise.reject(new Error('refused'))), undefined);
  });

  test('stalled: calls fail at once, one probe per deadline, and the first answer ends it', async () => {
    const { deadline, events } = recorded();
    const frozen = deferred<string>();
    await assert.rejects(deadline.run(() => frozen.promise), StoreUnavailableError);
    assert.equal(deadline.isStalled, true);
    assert.deepEqual(events, [true]);

    let sent = 0;
    const started = performance.now();
    for (let i = 0; i < 50; i++) {
      await assert.rejects(deadline.run(async () => { sent++; return 'x'; }), /is not answering/);
    }
    assert.equal(sent, 0, 'nothing is sent within the deadline after a miss');
    assert.ok(performance.now() - started < TIMEOUT_MS, 'and nothing waits');

    // After a deadline one call probes; the others still fail at once while it is out. Waited with a margin: a timer
    // of TIMEOUT_MS can fire a fraction of a ms before performance.now() has moved that far.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 10));
    const probe = deferred<string>();
    const probing = deadline.run(() => probe.promise);
    await assert.rejects(deadline.run(async () => { sent++; return 'x'; }), /is not answering/);
    assert.equal(sent, 0);
    probe.resolve('pong');
    assert.equal(await probing, 'pong');
    assert.equal(deadline.isStalled, false);
    assert.deepEqual(events, [true, false]);
    assert.equal(await deadline.run(async () => 'served'), 'served');
  });

  test('a late answer ends a stall too (the store woke up)', async () => {
    const { deadline, events } = recorded();
    const frozen = deferred<string>();
    const first = deadline.run(() => frozen.promise);
    await assert.rejects(first, StoreUnavailableError);
    assert.equal(deadline.isStalled, true);
    frozen.resolve('woke');
    await lateOutcome(first);
    assert.equal(deadline.isStalled, false);
    assert.deepEqual(events, [true, false]);
  });

  test('one slow call while others answer is only that call\'s failure: no stall', async () => {
    const { deadline, events } = recorded();
    const slow = deferred<string>();
    const slowCall = deadline.run(() => slow.promise);
    assert.equal(await deadline.run(async () => 'quick'), 'quick');
    await assert.rejects(slowCall, StoreUnavailableError);
    assert.equal(deadline.isStalled, false);
    assert.deepEqual(events, []);
    slow.resolve('done');
  });

  test('errors pass through unchanged and are no proof of life: a stall stays until a success', async () => {
    const { deadline } = recorded();
    await assert.rejects(deadline.run(() => Promise.reject(new Error('WRONGTYPE'))), /WRONGTYPE/);
    assert.equal(deadline.isStalled, false, 'an error is not a missed deadline');
    await assert.rejects(deadline.run(() => new Promise<never>(() => {})), StoreUnavailableError);
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 10));
    await assert.rejects(deadline.run(() => Promise.reject(new Error('ECONNREFUSED'))), /ECONNREFUSED/);
    assert.equal(deadline.isStalled, true);
    assert.equal(await deadline.run(async () => 'ok'), 'ok');
    assert.equal(deadline.isStalled, false);
  });
});

describe('BoundedDatabase on the embedded database', () => {
  test('a statement past databaseTimeoutMs is a 503 in time; the database is used again once it answers', async () => {
    const dataDir = await freshDataDir();
    const raw = await openDatabase({ dataDir });
    // Its first statement warms the worker up (hundreds of ms); the gateway's are migrations, never bounded.
    await raw.query('SELECT 1');
    const db = new BoundedDatabase(raw, new StoreDeadline('database', 200));
    try {
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
      const started = performance.now();
      const sleeping = db.query('SELECT pg_sleep(1.5)');
      await assert.rejects(sleeping, (err: unknown) => err instanceof StoreUnavailableError && err.message === 'The database did not answer within 200 ms');
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1000, `${elapsed} ms`);
      // PGlite runs one statement at a time: the next waits behind the sleep and fails at once (stalled)...
      await assert.rejects(db.transaction((tx) => tx.query('SELECT 1')), /is not answering/);
      await assert.rejects(db.ping(), /is not answering/);
      // ...until the sleep's late answer shows that the database answers again.
      await lateOutcome(sleeping);
      await db.ping();
      assert.deepEqual(await db.transaction((tx) => tx.query('SELECT 2 AS two')), [{ two: 2 }]);
    } finally {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
