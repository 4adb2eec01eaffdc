/**
 * The KV's sliding windows on both implementations: admission of several windows at once (all or nothing),
 * settlement into the bucket an admission landed in, expiry, and bounded memory. On Redis, concurrent callers on
 * separate connections never get more than the limit between them. The memory KV's clock is injectable, which
 * pins down the bucket semantics exactly.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openKv, type KV } from '../../core/store/kv.ts';
import { bucketMs, memoryWindowSize, windowsAddOnce, windowsAdmit, windowsSettle, type WindowCheck } from '../../plugins/ratelimit/windows.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const DAY = 86_400_000;
const MINUTE = 60_000;
const newPrefix = redisPrefixes(REDIS_URL);

/** One window; throws unless admitted. */
async function admit(kv: KV, key: string, cost: number, limit: number, windowMs = MINUTE) {
  const result = await kv.run(windowsAdmit, [{ key, cost, limit, windowMs }]);
  assert.ok(result.admitted, `refused: ${JSON.stringify(result)}`);
  return result.windows[0]!;
}

/** What a window holds now: a zero-cost probe is admitted and reports the total. */
async function used(kv: KV, key: string, windowMs = MINUTE): Promise<number> {
  return (await admit(kv, key, 0, Number.MAX_SAFE_INTEGER, windowMs)).used;
}

function windowSuite(name: string, open: () => Promise<KV>): void {
  describe(`windows: ${name}`, () => {
    let kv: KV;
    before(async () => {
      kv = await open();
    });
    after(async () => {
      await kv.close();
    });
    const key = () => `w-${randomUUID()}`;

    test('a window admits up to its limit, then refuses with the time until room', async () => {
      const k = key();
      for (let i = 1; i <= 3; i++) {
        const admitted = await admit(kv, k, 1, 3);
        assert.equal(admitted.used, i);
        assert.ok(admitted.resetMs > 59_000 && admitted.resetMs <= MINUTE + bucketMs(MINUTE), `resetMs ${admitted.resetMs}`);
      }
      const refused = await kv.run(windowsAdmit, [{ key: k, cost: 1, limit: 3, windowMs: MINUTE }]);
      assert.ok(!refused.admitted);
      assert.deepEqual([refused.refused, refused.used], [0, 3]);
      assert.ok(refused.retryAfterMs > 59_000 && refused.retryAfterMs <= MINUTE + bucketMs(MINUTE), `retryAfterMs ${refused.retryAfterMs}`);
    });

    test('costs count: a cost that does not fit is refused while a smaller one still fits', async () => {
      const k = key();
      await admit(kv, k, 70, 100);
      assert.equal((await kv.run(windowsAdmit, [{ key: k, cost: 40, limit: 100, windowMs: MINUTE }])).admitted, false);
      assert.equal((await admit(kv, k, 30, 100)).used, 100);
    });

    test('a cost above the limit can never fit: retry after the whole window', async () => {
      const refused = await kv.run(windowsAdmit, [{ key: key(), cost: 500, limit: 100, windowMs: 10_000 }]);
      assert.deepEqual(refused, { admitted: false, refused: 0, used: 0, retryAfterMs: 10_000, resetMs: 0 });
    });

    test('entries leave the window when it has passed', async () => {
      const k = key();
      await admit(kv, k, 1, 1, 150);
      assert.equal((await kv.run(windowsAdmit, [{ key: k, cost: 1, limit: 1, windowMs: 150 }])).admitted, false);
      await sleep(200);
      assert.equal((await admit(kv, k, 1, 1, 150)).used, 1);
    });

    test('several windows at once: a refusal by any leaves every window untouched and names the first refusing one', async () => {
      const [a, b, c] = [key(), key(), key()];
      await admit(kv, b, 4, 5, DAY);
      await admit(kv, c, 9, 10);
      const windows = (cost: number): WindowCheck[] => [
        { key: a, cost, limit: 100, windowMs: MINUTE },
        { key: b, cost, limit: 5, windowMs: DAY },
        { key: c, cost, limit: 10, windowMs: MINUTE },
      ];
      const refused = await kv.run(windowsAdmit, windows(2));
      assert.ok(!refused.admitted);
      assert.deepEqual([refused.refused, refused.used], [1, 4], 'b refuses first; c would too');
      assert.ok(refused.retryAfterMs > DAY - 5_000 && refused.retryAfterMs <= DAY + bucketMs(DAY), `retryAfterMs ${refused.retryAfterMs}`);
      assert.deepEqual([await used(kv, a), await used(kv, b, DAY), await used(kv, c)], [0, 4, 9]);

      const admitted = await kv.run(windowsAdmit, windows(1));
      assert.ok(admitted.admitted);
      assert.deepEqual(admitted.windows.map((w) => w.used), [1, 5, 10]);
      assert.deepEqual([await used(kv, a), await used(kv, b, DAY), await used(kv, c)], [1, 5, 10]);
    });

    test('one key twice in an admission: the second check counts the first one\'s cost, and a refusal adds neither', async () => {
      const k = key();
      const refused = await kv.run(windowsAdmit, [{ key: k, cost: 3, limit: 5, windowMs: MINUTE }, { key: k, cost: 3, limit: 5, windowMs: MINUTE }]);
      assert.ok(!refused.admitted);
      assert.deepEqual([refused.refused, refused.used], [1, 3]);
      assert.equal(await used(kv, k), 0);
      const admitted = await kv.run(windowsAdmit, [{ key: k, cost: 3, limit: 5, windowMs: MINUTE }, { key: k, cost: 2, limit: 5, windowMs: MINUTE }]);
      assert.ok(admitted.admitted);
      assert.deepEqual(admitted.windows.map((w) => w.used), [3, 5]);
      assert.equal(await used(kv, k), 5);
    });

    test('settlement adjusts the bucket the admission landed in; minus the cost gives it back', async () => {
      const k = key();
      const reserved = await admit(kv, k, 80, 100, DAY);
      await kv.run(windowsSettle, [{ key: k, bucket: reserved.bucket, delta: 30 - 80 }]);
      assert.equal(await used(kv, k, DAY), 30);
      const next = await admit(kv, k, 70, 100, DAY);
      await kv.run(windowsSettle, [{ key: k, bucket: next.bucket, delta: -70 }]);
      assert.equal((await admit(kv, k, 70, 100, DAY)).used, 100);
      await kv.run(windowsSettle, [{ key: `${k}-none`, bucket: next.bucket, delta: 50 }, { key: k, bucket: next.bucket - bucketMs(DAY) * 5, delta: 50 }]);
      assert.equal(await used(kv, k, DAY), 100, 'a bucket or window that is not there is not created');
      assert.equal(await used(kv, `${k}-none`, DAY), 0);
    });

    test('addOnce: amounts land in the current bucket of each window past any limit, once per marker', async () => {
      const [a, b] = [key(), key()];
      await admit(kv, a, 90, 100, DAY);
      const args = { marker: `m-${randomUUID()}`, markerTtlMs: 60_000, adds: [{ key: a, windowMs: DAY, amount: 30 }, { key: b, windowMs: MINUTE, amount: 7 }] };
      assert.equal(await kv.run(windowsAddOnce, args), true);
      assert.equal(await kv.run(windowsAddOnce, args), false);
      assert.deepEqual(await Promise.all([kv.run(windowsAddOnce, args), kv.run(windowsAddOnce, args)]), [false, false]);
      assert.deepEqual([await used(kv, a, DAY), await used(kv, b)], [120, 7]);
      assert.equal(await kv.get(args.marker), '1');
      // What was added counts against the limit like any admission.
      assert.equal((await kv.run(windowsAdmit, [{ key: a, cost: 1, limit: 120, windowMs: DAY }])).admitted, false);
      // A new marker adds again; the bucket is the current one, so settlement of an admission in it still applies.
      const reserved = await admit(kv, b, 3, 100);
      assert.equal(await kv.run(windowsAddOnce, { ...args, marker: `m-${randomUUID()}`, adds: [{ key: b, windowMs: MINUTE, amount: 5 }] }), true);
      await kv.run(windowsSettle, [{ key: b, bucket: reserved.bucket, delta: -3 }]);
      assert.equal(await used(kv, b), 12);
    });

    test('addOnce: what it added leaves the window when it has passed', async () => {
      const k = key();
      await kv.run(windowsAddOnce, { marker: `m-${randomUUID()}`, markerTtlMs: 60_000, adds: [{ key: k, windowMs: 150, amount: 4 }] });
      assert.equal(await used(kv, k, 150), 4);
      await sleep(200);
      assert.equal(await used(kv, k, 150), 0);
      assert.equal((await admit(kv, k, 5, 5, 150)).used, 5);
    });
  });
}

windowSuite('memory', async () => new MemoryKv());

describe('windows on Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL not set' }, () => {
  if (!REDIS_URL) return;
  windowSuite('redis', () => openKv({ redisUrl: REDIS_URL, prefix: newPrefix() }));

  test('two connections racing over two windows: exactly the tighter limit is admitted, in both', async () => {
    const prefix = newPrefix();
    const [a, b] = await Promise.all([openKv({ redisUrl: REDIS_URL, prefix }), openKv({ redisUrl: REDIS_URL, prefix })]);
    try {
      const windows: WindowCheck[] = [{ key: 'wide', cost: 1, limit: 50, windowMs: MINUTE }, { key: 'tight', cost: 1, limit: 37, windowMs: DAY }];
      const attempts = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).run(windowsAdmit, windows));
      const results = await Promise.all(attempts);
      assert.equal(results.filter((r) => r.admitted).length, 37);
      assert.ok(results.every((r) => r.admitted || r.refused === 1));
      assert.deepEqual([await used(a, 'wide'), await used(b, 'tight', DAY)], [37, 37]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a window keeps at most 1,441 buckets, and they all expire together with the window', async () => {
    const prefix = newPrefix();
    const kv = await openKv({ redisUrl: REDIS_URL, prefix });
    const redis = new Redis(REDIS_URL);
    try {
      // A window of 1,440 ms has 1 ms buckets: 2 s of admissions cross every bucket of it.
      const started = Date.now();
      let admitted = 0;
      while (Date.now() - started < 2_000) {
        await Promise.all(Array.from({ length: 20 }, () => admit(kv, 'busy', 1, 1e9, 1_440)));
        admitted += 20;
      }
      const buckets = await redis.zcard(`${prefix}busy:starts`);
      assert.ok(buckets > 200 && buckets <= 1_441, `${buckets} buckets after ${admitted} admissions`);
      assert.equal(await redis.hlen(`${prefix}busy:buckets`), buckets + 1, 'the buckets and their sum');
      const total = await used(kv, 'busy', 1_440);
      assert.ok(total > 0 && total < admitted, `${total} of ${admitted}`);
      await sleep(1_600);
      assert.equal(await redis.exists(`${prefix}busy:buckets`, `${prefix}busy:starts`), 0, 'both keys expired');
      assert.equal(await used(kv, 'busy', 1_440), 0);
    } finally {
      redis.disconnect();
      await kv.close();
    }
  });
});

describe('windows on the memory KV, on its clock', () => {
  const T0 = 1_800_000_000_000; // a multiple of one minute: the start of a day window's bucket
  let now = T0;
  const kv = new MemoryKv(() => now);
  after(() => kv.close());

  test('an entry counts until its whole bucket has left the window: up to one bucket late, never early', async () => {
    const width = bucketMs(DAY);
    assert.equal(width, 60_000, 'a day is 1,440 one-minute buckets');
    now = T0 + 30_000;
    const first = await admit(kv, 'day', 1, 1, DAY);
    assert.deepEqual(first, { used: 1, resetMs: DAY + 30_000, bucket: T0 });
    now = T0 + 30_000 + DAY; // its exact expiry: still counted, conservatively
    const refused = await kv.run(windowsAdmit, [{ key: 'day', cost: 1, limit: 1, windowMs: DAY }]);
    assert.deepEqual(refused, { admitted: false, refused: 0, used: 1, retryAfterMs: 30_000, resetMs: 30_000 });
    now = T0 + width + DAY - 1;
    assert.equal((await kv.run(windowsAdmit, [{ key: 'day', cost: 1, limit: 1, windowMs: DAY }])).admitted, false);
    now = T0 + width + DAY; // the bucket has left
    assert.equal((await admit(kv, 'day', 1, 1, DAY)).used, 1);
  });

  test('retry after: when the oldest buckets free enough for the cost', async () => {
    now = T0;
    await admit(kv, 'retry', 3, 10, DAY);
    now += 10 * 60_000;
    await admit(kv, 'retry', 3, 10, DAY);
    now += 10 * 60_000;
    await admit(kv, 'retry', 3, 10, DAY);
    const refused = await kv.run(windowsAdmit, [{ key: 'retry', cost: 5, limit: 10, windowMs: DAY }]);
    assert.ok(!refused.admitted);
    assert.equal(refused.retryAfterMs, T0 + 10 * 60_000 + 60_000 + DAY - now, 'two buckets must leave to free 4');
    assert.equal(refused.resetMs, T0 + 60_000 + DAY - now);
  });

  test('settlement goes into its own bucket, and not at all once that bucket has left', async () => {
    now = T0;
    const early = await admit(kv, 'settle', 100, 1_000, DAY);
    now += 5 * 60_000;
    const late = await admit(kv, 'settle', 50, 1_000, DAY);
    await kv.run(windowsSettle, [{ key: 'settle', bucket: early.bucket, delta: -70 }]);
    assert.equal(await used(kv, 'settle', DAY), 80);
    now = T0 + 60_000 + DAY; // the early bucket leaves, with its settled 30
    assert.equal(await used(kv, 'settle', DAY), 50);
    await kv.run(windowsSettle, [{ key: 'settle', bucket: early.bucket, delta: 500 }, { key: 'settle', bucket: late.bucket, delta: 10 }]);
    assert.equal(await used(kv, 'settle', DAY), 60);
  });

  test('memory is bounded: 100,000 admissions over a day keep at most 1,441 buckets', async () => {
    now = T0;
    for (let i = 0; i < 100_000; i++) {
      now += 1_000 + (i % 7) * 100; // about 1.3 days in all
      await admit(kv, 'bounded', 1, 1e9, DAY);
      if (i % 10_000 === 0) assert.ok((await kv.run(memoryWindowSize, 'bounded')) <= 1_441);
    }
    assert.ok((await kv.run(memoryWindowSize, 'bounded')) <= 1_441 && (await kv.run(memoryWindowSize, 'bounded')) >= 1_440, `${(await kv.run(memoryWindowSize, 'bounded'))} buckets`);
    const total = await used(kv, 'bounded', DAY);
    assert.ok(total >= 66_000 && total <= 67_000, `about a day of admissions: ${total}`);
  });
});
