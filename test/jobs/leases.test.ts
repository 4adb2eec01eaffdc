/**
 * Exactly one instance runs each job: two runners racing over 200 jobs, an instance killed with SIGKILL in the
 * middle of a handler (a real child process), and an instance cut off from the database that loses its lease.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, test } from 'node:test';
import type { JobRunner } from '../../core/jobs/runner.ts';
import { StoreUnavailableError } from '../../core/store/deadline.ts';
import type { Queryable, Row } from '../../core/store/database.ts';
import { eventually } from '../helpers/eventually.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { DATABASE_URL, engines, jobRow, runner, signal, type TestDatabase } from './engines.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/hanging-runner.ts', import.meta.url));

/** A connection the test can cut, as a network partition cuts an instance off from its database. */
function cuttable(db: Queryable): { db: Queryable; cut(on: boolean): void; refused: () => number } {
  let down = false;
  let refused = 0;
  const guard = () => {
    if (!down) return;
    refused++;
    throw new StoreUnavailableError('database', 'The database could not be reached');
  };
  return {
    // Checked again when the answer comes: a statement sent just before the cut has its answer lost, as across a
    // real partition (a renewal in flight at the cut could otherwise come back after another runner's claim).
    db: {
      query: async <T = Row>(sql: string, params?: unknown[]) => {
        guard();
        const rows = await db.query<T>(sql, params);
        guard();
        return rows;
      },
      exec: async (sql) => {
        guard();
        await db.exec(sql);
        guard();
      },
    },
    cut: (on) => { down = on; },
    refused: () => refused,
  };
}

interface Effect { job_id: string; attempt: number; runner: string; at: Date }

for (const engine of engines) {
  describe(`job leases: ${engine.name}`, { skip: engine.skip }, () => {
    let t: TestDatabase;
    const runners: JobRunner[] = [];
    const make = (...args: Parameters<typeof runner>) => {
      const r = runner(...args);
      runners.push(r);
      return r;
    };
    const effects = (id?: string) => t.db.query<Effect>(
      `SELECT job_id, attempt, runner, at FROM job_effects ${id ? 'WHERE job_id = $1' : ''} ORDER BY at`, id ? [id] : []);
    const effect = (db: Queryable, r: JobRunner) => async (ctx: { job: { id: string; attempts: number } }) => {
      await db.query('INSERT INTO job_effects (job_id, attempt, runner) VALUES ($1, $2, $3)', [ctx.job.id, ctx.job.attempts, r.owner]);
    };

    before(async () => { t = await engine.open(); });
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
      await t.db.query('DELETE FROM jobs');
      await t.db.query('DELETE FROM job_effects');
    });
    after(async () => { await t.close(); });

    test('two runners racing over 200 jobs run each exactly once', async () => {
      const [dbA, dbB] = [await t.connect(), await t.connect()];
      const a = make(dbA, { concurrency: 8, pollIntervalMs: 2 });
      const b = make(dbB, { concurrency: 8, pollIntervalMs: 2 });
      for (const [r, db] of [[a, dbA], [b, dbB]] as const) {
        const record = effect(db, r);
        r.register('test.count', async (ctx) => {
          await record(ctx);
          await new Promise((done) => setTimeout(done, 1));
          return { status: 'done' };
        });
      }
      for (let i = 0; i < 200; i++) await t.db.query(`INSERT INTO jobs (id, kind, payload) VALUES (gen_random_uuid(), 'test.count', $1::jsonb)`, [JSON.stringify({ i })]);
      a.start();
      b.start();
      await eventually(async () => {
        const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'done'`);
        assert.equal(row!.n, 200);
      }, 30_000, 20);
      const [counts] = await t.db.query<{ runs: number; jobs: number; attempts: number }>(
        `SELECT count(*)::int AS runs, count(DISTINCT job_id)::int AS jobs, max(attempt)::int AS attempts FROM job_effects`);
      assert.deepEqual(counts, { runs: 200, jobs: 200, attempts: 1 });
      const byRunner = await t.db.query<{ runner: string; n: number }>('SELECT runner, count(*)::int AS n FROM job_effects GROUP BY runner');
      assert.equal(byRunner.length, 2, `both runners took jobs: ${JSON.stringify(byRunner)}`);
    });

    test('a runner cut off from the database loses its lease: another runs the job, the first is aborted', async () => {
      const link = cuttable(await t.connect());
      const a = make(link.db, { leaseMs: 150 });
      const started = signal<AbortSignal>();
      const record = effect(t.db, a);
      let lateAnswer = false;
      a.register('test.partitioned', async (ctx) => {
        await record(ctx);
        started.resolve(ctx.signal);
        await new Promise((done) => ctx.signal.addEventListener('abort', done));
        lateAnswer = true;
        return { status: 'failed', error: 'a late answer, written by nobody' };
      });
      a.start();
      const id = await a.enqueue({ kind: 'test.partitioned', payload: {} });
      const aborted = await started.promise;
      link.cut(true);

      const b = make(await t.connect(), { leaseMs: 5000 });
      const recordB = effect(t.db, b);
      b.register('test.partitioned', async (ctx) => { await recordB(ctx); return { status: 'done' }; });
      b.start();
      await eventually(async () => assert.equal((await jobRow(t.db, id)).status, 'done'), 10_000, 10);
      assert.equal(aborted.aborted, false, 'the cut-off runner does not know yet');

      link.cut(false);
      await eventually(async () => assert.ok(aborted.aborted, 'its next renewal finds the lease gone'), 5000, 10);
      await eventually(async () => assert.ok(lateAnswer));
      const row = await jobRow(t.db, id);
      assert.deepEqual([row.status, row.attempts, row.last_error], ['done', 2, null], 'the late answer was not written');
      assert.deepEqual((await effects(id)).map((e) => [e.attempt, e.runner]), [[1, a.owner], [2, b.owner]]);
    });

    test('a database outage is logged once and waited out: jobs run when it answers again', async () => {
      const link = cuttable(await t.connect());
      const lines: Array<{ level: string; context: Record<string, unknown>; message?: string }> = [];
      const capture = (level: string) => (context: object | string, message?: string) => {
        lines.push(typeof context === 'string' ? { level, context: {}, message: context } : { level, context: context as Record<string, unknown>, ...(message ? { message } : {}) });
      };
      const logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') };
      const r = make(link.db, { logger, pollIntervalMs: 2 });
      const ran = signal<string>();
      r.register('test.after-outage', async (ctx) => { ran.resolve(ctx.job.id); return { status: 'done' }; });
      link.cut(true);
      r.start();
      await eventually(async () => assert.ok(link.refused() >= 10, `${link.refused()} claims refused`), 5000, 5);
      assert.deepEqual(lines.map((l) => [l.level, l.message, l.context.events]), [['warn', 'jobs: claiming jobs failed; retrying at the next poll', 1]]);
      link.cut(false);
      const id = await t.db.transaction((tx) => r.enqueue({ kind: 'test.after-outage', payload: {} }, tx));
      assert.equal(await ran.promise, id);
    });

    test('a job whose last allowed attempt never finished fails instead of running again', async () => {
      const link = cuttable(await t.connect());
      const a = make(link.db, { leaseMs: 100 });
      const started = signal();
      a.register('test.poison', async () => { started.resolve(); return new Promise(() => {}); }, { maxAttempts: 1 });
      a.start();
      const id = await a.enqueue({ kind: 'test.poison', payload: {} });
      await started.promise;
      link.cut(true); // as if the handler had taken its instance down

      const b = make(await t.connect());
      let ran = false;
      b.register('test.poison', async () => { ran = true; return { status: 'done' }; }, { maxAttempts: 1 });
      b.start();
      await eventually(async () => assert.equal((await jobRow(t.db, id)).status, 'failed'), 10_000, 10);
      assert.equal(ran, false);
      assert.equal((await jobRow(t.db, id)).last_error, 'attempt 1 of 1 never finished (its instance stopped or lost the lease)');
      link.cut(false);
    });

    test('a runner killed with SIGKILL mid-handler: its job is run by another after the lease, both attempts counted', async () => {
      const leaseMs = 400;
      const id = await make(t.db).enqueue({ kind: 'test.hang', payload: { n: 1 } });
      // PGlite is one process's folder: the job is picked up by the next start, after the kill.
      if (engine.name === 'PGlite') await t.db.close();
      const env = engine.name === 'PGlite'
        ? { DATA_DIR: t.dataDir! }
        : { DATABASE_URL: DATABASE_URL!, DB_SCHEMA: t.schema! };
      const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
        cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEASE_MS: String(leaseMs), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const exited = new Promise<string | number>((resolve) => child.once('exit', (code, sig) => resolve(sig ?? code ?? -1)));
      const owner = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => {
          out += text;
          const match = /^started (\S+) (\S+)$/m.exec(out);
          if (match) resolve(match[2]!);
        });
        void exited.then((code) => reject(new Error(`the child exited (${code}) before its handler started: ${stderr}`)));
      });
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');
      if (engine.name === 'PGlite') await t.reopen!();
      const held = await jobRow(t.db, id);
      assert.deepEqual([held.status, held.lease_owner, held.attempts], ['running', owner, 1], 'the dead instance still holds the lease');

      const b = make(t.db, { leaseMs });
      const recordB = effect(t.db, b);
      b.register('test.hang', async (ctx) => { await recordB(ctx); return { status: 'done' }; });
      b.start();
      await eventually(async () => assert.equal((await jobRow(t.db, id)).status, 'done'), 10_000, 10);
      const runs = await effects(id);
      assert.deepEqual(runs.map((e) => [e.attempt, e.runner]), [[1, owner], [2, b.owner]]);
      assert.ok(runs[1]!.at.getTime() >= held.lease_until!.getTime(), 'not before the dead lease expired');
      assert.equal((await jobRow(t.db, id)).attempts, 2);
    });
  });
}
