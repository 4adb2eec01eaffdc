/**
 * The job runner on both engines: enqueue and dedupe, each result a handler can give, unknown kinds, handlers
 * that throw, and stop() handing a running job back.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { JobRunner } from '../../core/jobs/runner.ts';
import type { JobContext } from '../../core/jobs/types.ts';
import { eventually } from '../helpers/eventually.ts';
import { engines, jobRow, runner, signal, type TestDatabase } from './engines.ts';

for (const engine of engines) {
  describe(`job runner: ${engine.name}`, { skip: engine.skip }, () => {
    let t: TestDatabase;
    const runners: JobRunner[] = [];
    const make = (...args: Parameters<typeof runner>) => {
      const r = runner(...args);
      runners.push(r);
      return r;
    };
    const status = async (id: string, expected: string) => eventually(async () => assert.equal((await jobRow(t.db, id)).status, expected), 10_000, 5);

    before(async () => { t = await engine.open(); });
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
      await t.db.query('DELETE FROM jobs'); // each test sees only its own jobs
    });
    after(async () => { await t.close(); });

    test('enqueue with a live key returns the live job; a finished job frees its key', async () => {
      const r = make(t.db);
      const first = await r.enqueue({ kind: 'test.noop', key: 'dedupe-1', payload: { n: 1 } });
      assert.equal(await r.enqueue({ kind: 'test.noop', key: 'dedupe-1', payload: { n: 2 } }), first);
      assert.notEqual(await r.enqueue({ kind: 'test.noop', payload: { n: 3 } }), await r.enqueue({ kind: 'test.noop', payload: { n: 3 } }), 'no key, no dedupe');
      const row = await jobRow(t.db, first);
      assert.deepEqual([row.status, row.attempts, row.payload, row.key], ['pending', 0, { n: 1 }, 'dedupe-1']);
      r.register('test.noop', async () => ({ status: 'done' }));
      r.start();
      await status(first, 'done');
      const next = await r.enqueue({ kind: 'test.noop', key: 'dedupe-1', payload: {} });
      assert.notEqual(next, first);
    });

    test('a job enqueued in a transaction that rolls back does not exist', async () => {
      const r = make(t.db);
      let id = '';
      await assert.rejects(t.db.transaction(async (tx) => {
        id = await r.enqueue({ kind: 'test.noop', payload: {} }, tx);
        throw new Error('rolled back');
      }), /rolled back/);
      assert.deepEqual(await t.db.query('SELECT id FROM jobs WHERE id = $1', [id]), []);
    });

    test('a job runs once, with its payload and attempts 1, and is done', async () => {
      const r = make(t.db);
      const seen: JobContext[] = [];
      r.register('test.once', async (ctx) => { seen.push(ctx); return { status: 'done' }; });
      r.start();
      const id = await r.enqueue({ kind: 'test.once', payload: { hello: 'world' } });
      await status(id, 'done');
      assert.equal(seen.length, 1);
      assert.deepEqual([seen[0]!.job.id, seen[0]!.job.payload, seen[0]!.job.attempts], [id, { hello: 'world' }, 1]);
      const row = await jobRow(t.db, id);
      assert.deepEqual([row.attempts, row.lease_owner, row.lease_until], [1, null, null]);
    });

    test('a job due later does not run before its time', async () => {
      const r = make(t.db);
      const ran = signal<number>();
      r.register('test.later', async (ctx) => { ran.resolve(ctx.now()); return { status: 'done' }; });
      r.start();
      const runAt = Date.now() + 150;
      await r.enqueue({ kind: 'test.later', payload: null, runAt });
      assert.ok(await ran.promise >= runAt);
    });

    test('retry runs the job again at the time asked, its error kept, attempts counted', async () => {
      const r = make(t.db);
      const runs: Array<{ at: number; attempts: number }> = [];
      let retryAt = 0;
      r.register('test.retry', async (ctx) => {
        runs.push({ at: ctx.now(), attempts: ctx.job.attempts });
        if (ctx.job.attempts === 1) {
          retryAt = ctx.now() + 120;
          return { status: 'retry', at: retryAt, error: 'upstream said 503' };
        }
        return { status: 'done' };
      });
      r.start();
      const id = await r.enqueue({ kind: 'test.retry', payload: {} });
      await eventually(async () => {
        const row = await jobRow(t.db, id);
        assert.equal(row.status, 'pending');
        assert.equal(row.last_error, 'upstream said 503');
        assert.equal(row.run_at.getTime(), retryAt);
      }, 5000, 5);
      await status(id, 'done');
      assert.deepEqual(runs.map((run) => run.attempts), [1, 2]);
      assert.ok(runs[1]!.at >= retryAt, `second run at ${runs[1]!.at}, asked for ${retryAt}`);
      assert.equal((await jobRow(t.db, id)).attempts, 2);
    });

    test('reschedule runs again with the new payload and attempts reset', async () => {
      const r = make(t.db);
      const runs: Array<{ payload: unknown; attempts: number }> = [];
      r.register('test.poll', async (ctx) => {
        const { round } = ctx.job.payload as { round: number };
        runs.push({ payload: ctx.job.payload, attempts: ctx.job.attempts });
        return round < 3 ? { status: 'reschedule', at: ctx.now() + 20, payload: { round: round + 1 } } : { status: 'done' };
      });
      r.start();
      const id = await r.enqueue({ kind: 'test.poll', key: 'poll-1', payload: { round: 1 } });
      await status(id, 'done');
      assert.deepEqual(runs, [{ payload: { round: 1 }, attempts: 1 }, { payload: { round: 2 }, attempts: 1 }, { payload: { round: 3 }, attempts: 1 }]);
      const row = await jobRow(t.db, id);
      assert.deepEqual([row.attempts, row.payload], [1, { round: 3 }]);
    });

    test('failed is terminal and kept with its error; the key is free again', async () => {
      const r = make(t.db);
      let calls = 0;
      r.register('test.fail', async () => { calls++; return { status: 'failed', error: 'the batch was deleted upstream' }; });
      r.start();
      const id = await r.enqueue({ kind: 'test.fail', key: 'fail-1', payload: {} });
      await status(id, 'failed');
      assert.equal((await jobRow(t.db, id)).last_error, 'the batch was deleted upstream');
      assert.notEqual(await r.enqueue({ kind: 'test.fail', key: 'fail-1', payload: {} }), id);
      await r.stop();
      assert.equal((await jobRow(t.db, id)).status, 'failed', 'never run again');
      assert.ok(calls >= 1);
    });

    test('a job of a kind nobody registered fails with an error naming the kind', async () => {
      const r = make(t.db);
      r.start();
      const id = await r.enqueue({ kind: 'test.nobody', payload: {} });
      await status(id, 'failed');
      assert.equal((await jobRow(t.db, id)).last_error, 'no handler is registered for job kind "test.nobody"');
    });

    test('a handler that throws is retried with backoff, then fails after maxAttempts', async () => {
      const r = make(t.db);
      const runs: number[] = [];
      r.register('test.throws', async (ctx) => { runs.push(ctx.now()); throw new Error(`boom ${ctx.job.attempts}`); }, { maxAttempts: 3, backoffMs: 40 });
      r.register('test.bad-result', async () => ({ status: 'later' }) as never, { maxAttempts: 1 });
      r.start();
      const id = await r.enqueue({ kind: 'test.throws', payload: {} });
      const bad = await r.enqueue({ kind: 'test.bad-result', payload: {} });
      await status(id, 'failed');
      const row = await jobRow(t.db, id);
      assert.deepEqual([row.attempts, row.last_error], [3, 'boom 3 (attempt 3 of 3)']);
      assert.equal(runs.length, 3);
      assert.ok(runs[1]! - runs[0]! >= 40 && runs[2]! - runs[1]! >= 80, `backoff doubles: ${runs.map((at) => at - runs[0]!)}`);
      await status(bad, 'failed');
      assert.match((await jobRow(t.db, bad)).last_error!, /returned \{"status":"later"\}, which is not a job result/);
    });

    test('stop() waits for a handler that finishes in time and saves its result', async () => {
      const r = make(t.db);
      const started = signal();
      r.register('test.short', async () => { started.resolve(); await new Promise((done) => setTimeout(done, 50)); return { status: 'done' }; });
      r.start();
      const id = await r.enqueue({ kind: 'test.short', payload: {} });
      await started.promise;
      await r.stop();
      assert.equal((await jobRow(t.db, id)).status, 'done');
    });

    test('stop() aborts a handler past the deadline and hands its job back for the next start', async () => {
      const first = make(t.db, { shutdownTimeoutMs: 50 });
      const started = signal<AbortSignal>();
      first.register('test.long', (ctx) => {
        started.resolve(ctx.signal);
        return new Promise(() => {}); // never answers, as a handler stuck on a dead upstream
      });
      first.start();
      const id = await first.enqueue({ kind: 'test.long', payload: {} });
      const aborted = await started.promise;
      const before = Date.now();
      await first.stop();
      assert.ok(aborted.aborted, 'the handler was told');
      const row = await jobRow(t.db, id);
      assert.deepEqual([row.status, row.lease_owner, row.lease_until, row.attempts], ['pending', null, null, 1]);
      assert.ok(row.run_at.getTime() <= Date.now() && row.run_at.getTime() >= before - 1, 'due at once');

      const second = make(t.db);
      const again = signal<number>();
      second.register('test.long', async (ctx) => { again.resolve(ctx.job.attempts); return { status: 'done' }; });
      second.start();
      assert.equal(await again.promise, 2);
      await status(id, 'done');
    });
  });
}
