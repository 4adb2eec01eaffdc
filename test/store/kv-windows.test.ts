/**
 * The KV's limit primitives on both implementations: sliding-window logs (admit, settle) and counters with a
 * ceiling. On Redis, concurrent callers on separate connections never get more than the limit between them.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openKv, type KV } from '../../core/store/kv.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const prefixes: string[] = [];
const newPrefix = () => {
  const prefix = `aigw-test-${randomUUID()}:`;
  prefixes.push(prefix);
  return prefix;
};

after(async () => {
  if (!REDIS_URL || prefixes.length === 0) return;
  const redis = new Redis(REDIS_URL);
  try {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
});

function limitSuite(name: string, open: () => Promise<KV>): void {
  describe(`limit primitives: ${name}`, () => {
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
        const admitted = await kv.windowAdmit(k, `r${i}`, 1, 3, 60_000);
        assert.deepEqual([admitted.admitted, admitted.used], [true, i]);
        assert.ok(admitted.resetMs > 59_000 && admitted.resetMs <= 60_000, `resetMs ${admitted.resetMs}`);
      }
      const refused = await kv.windowAdmit(k, 'r4', 1, 3, 60_000);
      assert.equal(refused.admitted, false);
      assert.equal(refused.used, 3);
      assert.ok(refused.retryAfterMs > 59_000 && refused.retryAfterMs <= 60_000, `retryAfterMs ${refused.retryAfterMs}`);
    });

    test('costs count: a cost that does not fit is refused while a smaller one still fits', async () => {
      const k = key();
      assert.equal((await kv.windowAdmit(k, 'a', 70, 100, 60_000)).admitted, true);
      assert.equal((await kv.windowAdmit(k, 'b', 40, 100, 60_000)).admitted, false);
      assert.equal((await kv.windowAdmit(k, 'c', 30, 100, 60_000)).used, 100);
    });

    test('a cost above the limit can never fit: retry after the whole window', async () => {
      const refused = await kv.windowAdmit(key(), 'big', 500, 100, 10_000);
      assert.equal(refused.admitted, false);
      assert.equal(refused.retryAfterMs, 10_000);
    });

    test('entries leave the window when it has passed', async () => {
      const k = key();
      assert.equal((await kv.windowAdmit(k, 'a', 1, 1, 150)).admitted, true);
      assert.equal((await kv.windowAdmit(k, 'b', 1, 1, 150)).admitted, false);
      await sleep(200);
      const again = await kv.windowAdmit(k, 'c', 1, 1, 150);
      assert.deepEqual([again.admitted, again.used], [true, 1]);
    });

    test('adjust settles a reservation to its real cost; 0 gives it all back', async () => {
      const k = key();
      await kv.windowAdmit(k, 'reserved', 80, 100, 60_000);
      await kv.windowAdjust(k, 'reserved', 30);
      assert.equal((await kv.windowAdmit(k, 'next', 70, 100, 60_000)).admitted, true);
      await kv.windowAdjust(k, 'next', 0);
      const after = await kv.windowAdmit(k, 'probe', 70, 100, 60_000);
      assert.deepEqual([after.admitted, after.used], [true, 100]);
      await kv.windowAdjust(k, 'no-such-entry', 50); // harmless
      assert.equal((await kv.windowAdmit(k, 'full', 1, 100, 60_000)).admitted, false);
    });

    test('a counter adds up to its ceiling, refuses beyond, and takes amounts back', async () => {
      const k = key();
      assert.deepEqual(await kv.counterAdd(k, 600, 1000, 60_000), { applied: true, value: 600 });
      assert.deepEqual(await kv.counterAdd(k, 500, 1000), { applied: false, value: 600 });
      assert.deepEqual(await kv.counterAdd(k, 400, 1000), { applied: true, value: 1000 });
      assert.deepEqual(await kv.counterAdd(k, -250, 1000), { applied: true, value: 750 });
      assert.deepEqual(await kv.counterAdd(k, 5000, null), { applied: true, value: 5750 }, 'no ceiling');
      assert.deepEqual(await kv.counterAdd(k, -10_000, 1000), { applied: true, value: -4250 }, 'giving back is never refused');
    });

    test('a counter starts from a value set when absent (a total rebuilt from the database)', async () => {
      const k = key();
      assert.equal(await kv.setIfAbsent(k, '900', 60_000), true);
      assert.deepEqual(await kv.counterAdd(k, 200, 1000), { applied: false, value: 900 });
    });
  });
}

limitSuite('memory', async () => new MemoryKv());

describe('limit primitives on Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL not set' }, () => {
  if (!REDIS_URL) return;
  limitSuite('redis', () => openKv({ redisUrl: REDIS_URL, prefix: newPrefix() }));

  test('two connections racing: exactly the limit is admitted, and a counter never passes its ceiling', async () => {
    const prefix = newPrefix();
    const [a, b] = await Promise.all([openKv({ redisUrl: REDIS_URL, prefix }), openKv({ redisUrl: REDIS_URL, prefix })]);
    try {
      const attempts = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).windowAdmit('shared', `r${i}`, 1, 37, 60_000));
      const admitted = (await Promise.all(attempts)).filter((r) => r.admitted).length;
      assert.equal(admitted, 37);
      const adds = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).counterAdd('spend', 7, 500));
      const applied = (await Promise.all(adds)).filter((r) => r.applied).length;
      assert.equal(applied, Math.floor(500 / 7));
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a window larger than one script batch expires correctly', async () => {
    const kv = await openKv({ redisUrl: REDIS_URL, prefix: newPrefix() });
    try {
      await Promise.all(Array.from({ length: 1200 }, (_, i) => kv.windowAdmit('many', `e${i}`, 1, 5000, 300)));
      await sleep(350);
      const fresh = await kv.windowAdmit('many', 'after', 1, 5000, 300);
      assert.deepEqual([fresh.admitted, fresh.used], [true, 1]);
    } finally {
      await kv.close();
    }
  });
});
