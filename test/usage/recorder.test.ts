/**
 * The buffered recorder on its own, with a scripted writer: batching, retries that never drop, the bounded queue
 * and its back-pressure, and shutdown.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { ArrayQueue, BufferedRecorder, type RecorderOptions } from '../../core/store/buffered-recorder.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function captureLogger() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** A writer that fails while `failing` is set (or for its first `failFirst` calls) and remembers every batch. */
function scriptedWriter(failFirst = 0) {
  const state = { calls: 0, failing: false, batches: [] as number[][], written: [] as number[] };
  const write = async (batch: readonly number[]) => {
    state.calls++;
    await sleep(1);
    if (state.failing || state.calls <= failFirst) throw new Error('database unreachable');
    state.batches.push([...batch]);
    state.written.push(...batch);
  };
  return { state, write };
}

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
}

function recorder(options: Partial<RecorderOptions<number>> & Pick<RecorderOptions<number>, 'write' | 'logger'>) {
  return new BufferedRecorder<number>({ label: 'usage', flushIntervalMs: 60_000, batchSize: 100, maxPending: 1000, retryBaseMs: 10, retryMaxMs: 40, ...options });
}

/** admit + record, as the plugin does for every request. */
function recordAll(r: BufferedRecorder<number>, items: number[]): void {
  for (const item of items) {
    assert.equal(r.admit(), null, 'there is room');
    r.record(item);
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('BufferedRecorder', () => {
  // The recorder's timers do not hold a process open (a gateway's server does): these tests hold it themselves.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1000);
  });
  after(() => clearInterval(keepAlive));

  test('as soon as batchSize records are queued, full batches are written; a partial one waits for the interval or to fill', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    const r = recorder({ write, logger, batchSize: 5 }).start(); // the interval (60 s) never fires here
    recordAll(r, range(0, 12));
    await until(() => state.written.length === 10, 'two full batches written');
    await sleep(30);
    assert.deepEqual(state.batches, [range(0, 5), range(5, 10)]);
    assert.equal(r.pending, 2, 'the two records left over wait');
    recordAll(r, range(12, 15));
    await until(() => state.written.length === 15, 'the third batch, once full');
    assert.deepEqual(state.batches, [range(0, 5), range(5, 10), range(10, 15)]);
    recordAll(r, [15, 16]);
    await sleep(30);
    assert.equal(r.pending, 2, 'a partial batch waits for the interval');
    await r.close(1000);
    assert.deepEqual(state.written, range(0, 17));
  });

  test('under steady arrivals, a write the interval started takes what was queued then; what arrives during it waits', async () => {
    const { logger } = captureLogger();
    const batches: number[][] = [];
    const releases: Array<() => void> = [];
    const write = (batch: readonly number[]) => new Promise<void>((resolve) => {
      batches.push([...batch]);
      releases.push(resolve);
    });
    const r = recorder({ write, logger, batchSize: 5, flushIntervalMs: 150 }).start();
    recordAll(r, [0, 1, 2]);
    await until(() => batches.length === 1, 'the interval wrote the partial batch');
    recordAll(r, [3, 4, 5]);
    releases.shift()!();
    await sleep(30);
    assert.deepEqual(batches, [[0, 1, 2]], 'the records that arrived during the write were not written right after it');
    assert.equal(r.pending, 3);
    await until(() => batches.length === 2, 'the next interval wrote them');
    assert.deepEqual(batches[1], [3, 4, 5]);
    releases.shift()!();
    await r.close(1000);
  });

  test('with maxPending below batchSize, a queue that takes every slot is written without waiting for the interval', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    const r = recorder({ write, logger, batchSize: 100, maxPending: 3 }).start();
    recordAll(r, range(0, 3));
    await until(() => state.written.length === 3, 'the full queue written');
    assert.deepEqual(state.batches, [range(0, 3)]);
    assert.equal(r.admit(), null, 'its slots are free again');
    r.record(3);
    await r.close(1000);
    assert.deepEqual(state.written, range(0, 4));
  });

  test('the interval writes what is queued, several batches in a row', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    const r = recorder({ write, logger, batchSize: 4, flushIntervalMs: 20 }).start();
    for (const item of range(0, 3)) {
      r.admit();
      r.record(item);
    }
    await until(() => state.written.length === 3, 'written by the timer');
    assert.deepEqual(state.batches, [[0, 1, 2]]);
    await r.close(1000);
  });

  test('a failed write keeps its batch and retries with backoff; nothing is dropped, order is kept', async () => {
    const { logger, lines } = captureLogger();
    const { state, write } = scriptedWriter(3);
    const r = recorder({ write, logger, batchSize: 10, flushIntervalMs: 5 }).start();
    recordAll(r, range(0, 25));
    await until(() => state.written.length === 25, 'everything written after the failures');
    assert.deepEqual(state.written, range(0, 25));
    assert.equal(state.calls, 3 + 3, 'three failures, then three batches');
    const failures = lines.filter((l) => l.msg === 'writing usage records failed: the batch is kept and retried');
    assert.equal(failures.length, 3);
    assert.deepEqual(failures.map((l) => l.attempt), [1, 2, 3]);
    assert.ok(failures.every((l) => l.level === 40 && typeof l.retryInMs === 'number' && l.err?.message === 'database unreachable'));
    assert.ok(lines.some((l) => l.msg === 'usage records are written again' && l.failedAttempts === 3));
    assert.equal(r.failedWrites, 0);
    await r.close(1000);
  });

  test('flush() writes now and rejects when the write fails, keeping the records', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    const r = recorder({ write, logger });
    recordAll(r, [1, 2, 3]);
    state.failing = true;
    await assert.rejects(r.flush(), /database unreachable/);
    assert.equal(r.pending, 3);
    state.failing = false;
    await r.flush();
    assert.deepEqual(state.written, [1, 2, 3]);
    assert.equal(r.pending, 0);
    await r.close(1000);
  });

  test('a full queue makes new requests wait (one error line), and admits them in order once writes succeed', async () => {
    const { logger, lines } = captureLogger();
    const { state, write } = scriptedWriter();
    state.failing = true;
    const r = recorder({ write, logger, batchSize: 2, maxPending: 4, flushIntervalMs: 5, retryMaxMs: 20 }).start();
    recordAll(r, [1, 2, 3]);
    assert.equal(r.admit(), null, 'the fourth slot is free'); // an admitted request still in flight
    const admitted: number[] = [];
    const waits = [10, 11, 12].map((n) => {
      const wait = r.admit();
      assert.ok(wait, 'no room: the request waits');
      return wait.then(() => admitted.push(n));
    });
    assert.equal(r.waiting, 3);
    await sleep(100);
    assert.deepEqual(admitted, [], 'nobody is admitted while the database refuses writes');
    const full = lines.filter((l) => /^usage queue full/.test(l.msg));
    assert.equal(full.length, 1, 'one line when the queue fills, not one per request');
    assert.equal(full[0]!.level, 50);
    assert.equal(full[0]!.maxPending, 4);
    assert.match(full[0]!.msg, /new requests wait for room \(back-pressure\)/);

    r.record(4); // the request in flight finishes: its record still fits, nothing is dropped
    state.failing = false;
    await Promise.all(waits);
    assert.deepEqual(admitted, [10, 11, 12]);
    for (const n of [10, 11, 12]) r.record(n);
    await r.close(1000);
    assert.deepEqual(state.written, [1, 2, 3, 4, 10, 11, 12]);
    assert.ok(lines.some((l) => l.msg === 'usage queue has room again: requests are admitted without waiting' && l.waited === 3));
  });

  test('a waiting request whose client leaves is removed from the line', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    state.failing = true;
    const r = recorder({ write, logger, maxPending: 1 });
    recordAll(r, [1]);
    const controller = new AbortController();
    const wait = r.admit(controller.signal);
    assert.ok(wait);
    assert.equal(r.waiting, 1);
    controller.abort(new Error('client left'));
    await assert.rejects(wait, /client left/);
    assert.equal(r.waiting, 0);
    state.failing = false;
    await r.close(1000);
    assert.deepEqual(state.written, [1]);
  });

  test('close() waits for admitted requests to hand in their records, then writes them', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    const r = recorder({ write, logger }).start();
    assert.equal(r.admit(), null);
    assert.equal(r.admit(), null);
    r.record(1);
    setTimeout(() => r.record(2), 50); // a stream still finishing when the shutdown starts
    await r.close(2000);
    assert.deepEqual(state.written, [1, 2]);
    assert.equal(r.inFlight, 0);
  });

  test('close() retries a failing database until the deadline, then logs every unwritten record', async () => {
    const { logger, lines } = captureLogger();
    const { state, write } = scriptedWriter();
    state.failing = true;
    const r = recorder({ write, logger }).start();
    recordAll(r, range(0, 150));
    const started = Date.now();
    await r.close(300);
    assert.ok(Date.now() - started >= 250, 'it kept trying until the deadline');
    assert.ok(state.calls >= 3, `retried (${state.calls} attempts)`);
    const summary = lines.find((l) => /records could not be written before shutdown/.test(l.msg));
    assert.equal(summary?.unwritten, 150);
    const logged = lines.filter((l) => l.msg === 'unwritten usage records').flatMap((l) => l.records as number[]);
    assert.deepEqual(logged, range(0, 150), 'every record is in the log');
  });

  test('close() on a database that comes back within the deadline writes everything', async () => {
    const { logger } = captureLogger();
    const { state, write } = scriptedWriter();
    state.failing = true;
    const r = recorder({ write, logger }).start();
    recordAll(r, range(0, 10));
    setTimeout(() => (state.failing = false), 100);
    await r.close(5000);
    assert.deepEqual(state.written, range(0, 10));
  });

  test('a record its queue refuses is logged in full, and the others are written', async () => {
    const { logger, lines } = captureLogger();
    const { state, write } = scriptedWriter();
    // As the usage plugin's row queue refuses a value its column cannot hold.
    class RefusingQueue extends ArrayQueue<number> {
      override push(record: number): void {
        if (record < 0) throw new RangeError(`${record} is not a count`);
        super.push(record);
      }
    }
    const r = recorder({ write, logger, queue: new RefusingQueue() }).start();
    recordAll(r, [1, -2, 3]);
    assert.equal(r.inFlight, 0, 'the refused record gave its slot back');
    assert.equal(r.pending, 2);
    const refused = lines.find((l) => l.msg === 'a usage record cannot be written: it is in this log line');
    assert.deepEqual(refused?.records, [-2]);
    assert.match(refused?.err?.message, /-2 is not a count/);
    await r.close(2000);
    assert.deepEqual(state.written, [1, 3]);
  });
});
