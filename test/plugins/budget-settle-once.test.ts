/**
 * The budget's settleOnce KV operation on both implementations: money already spent is added to the counters
 * that exist, once per settlement marker, in one step; missing counters are not created; on Redis, callers
 * racing on separate connections settle it once, and the marker carries its TTL.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openKv, type KV } from '../../core/store/kv.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { settleOnce } from '../../plugins/budget/settle-once.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const newPrefix = redisPrefixes(REDIS_URL);
const DAY = 86_400_000;

function settleSuite(name: string, open: () => Promise<KV>): void {
  describe(`settleOnce: ${name}`, () => {
    let kv: KV;
    before(async () => {
      kv = await open();
    });
    after(async () => {
      await kv.close();
    });
    const key = () => `k-${randomUUID()}`;

    test('adds to the counters that exist, leaves missing ones missing, and does nothing the second time', async () => {
      const [a, gone, b, marker] = [key(), key(), key(), key()];
      await kv.set(a, '100', 60_000);
      await kv.set(b, '-20', 60_000);
      const args = { marker, markerTtlMs: 40 * DAY, adds: [a, gone, b].map((k) => ({ key: k, amount: 250 })) };
      assert.deepEqual(await kv.run(settleOnce, args), { status: 'settled', charged: [0, 2] });
      assert.deepEqual(await kv.mget([a, gone, b, marker]), ['350', null, '230', '1']);
      assert.deepEqual(await kv.run(settleOnce, args), { status: 'already' });
      assert.deepEqual(await kv.mget([a, gone, b]), ['350', null, '230']);
    });

    test('with no counter at all the marker is still set: the work is settled (its counters rebuild with it)', async () => {
      const [gone, marker] = [key(), key()];
      assert.deepEqual(await kv.run(settleOnce, { marker, markerTtlMs: DAY, adds: [{ key: gone, amount: 5 }] }), { status: 'settled', charged: [] });
      assert.deepEqual(await kv.mget([gone, marker]), [null, '1']);
    });

    test('a counter that is not an integer is an error: nothing added and no marker, so a retry can settle', async () => {
      const [a, word, marker] = [key(), key(), key()];
      await kv.set(a, '10', 60_000);
      await kv.set(word, 'abc', 60_000);
      await assert.rejects(kv.run(settleOnce, { marker, markerTtlMs: DAY, adds: [{ key: a, amount: 1 }, { key: word, amount: 1 }] }));
      assert.deepEqual(await kv.mget([a, word, marker]), ['10', 'abc', null]);
    });
  });
}

settleSuite('memory', async () => new MemoryKv());

describe('settleOnce on Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL not set' }, () => {
  if (!REDIS_URL) return;
  settleSuite('redis', () => openKv({ redisUrl: REDIS_URL, prefix: newPrefix() }));

  test('two connections racing: one settlement, the counter charged once, the marker with its TTL', async () => {
    const prefix = newPrefix();
    const [a, b] = await Promise.all([openKv({ redisUrl: REDIS_URL, prefix }), openKv({ redisUrl: REDIS_URL, prefix })]);
    const raw = new Redis(REDIS_URL);
    try {
      await a.set('spend', '0', 60_000);
      const args = { marker: 'settled:w1', markerTtlMs: 40 * DAY, adds: [{ key: 'spend', amount: 7 }] };
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).run(settleOnce, args)));
      assert.equal(results.filter((r) => r.status === 'settled').length, 1);
      assert.equal(await b.get('spend'), '7');
      const ttl = await raw.pttl(`${prefix}settled:w1`);
      assert.ok(ttl > 39 * DAY && ttl <= 40 * DAY, `marker TTL ${ttl}`);
    } finally {
      raw.disconnect();
      await a.close();
      await b.close();
    }
  });
});
