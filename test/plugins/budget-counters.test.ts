/**
 * The KV's counters with a ceiling on both implementations: several counters added to at once, all or nothing
 * (what a budget reservation across every applicable budget relies on). On Redis, concurrent callers on separate
 * connections never take a counter past its ceiling.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openKv, type KV } from '../../core/store/kv.ts';
import { countersAdd } from '../../plugins/budget/counters.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const newPrefix = redisPrefixes(REDIS_URL);

function counterSuite(name: string, open: () => Promise<KV>): void {
  describe(`counters: ${name}`, () => {
    let kv: KV;
    before(async () => {
      kv = await open();
    });
    after(async () => {
      await kv.close();
    });
    const key = () => `c-${randomUUID()}`;
    const created = async (value: number) => {
      const k = key();
      assert.equal(await kv.setIfAbsent(k, String(value), 60_000), true);
      return k;
    };

    test('a counter adds up to its ceiling, refuses beyond, and takes amounts back', async () => {
      const k = await created(0);
      const add = (amount: number, ceiling: number | null) => kv.run(countersAdd, [{ key: k, amount, ceiling }]);
      assert.deepEqual(await add(600, 1000), { status: 'applied', values: [600] });
      assert.deepEqual(await add(500, 1000), { status: 'refused', index: 0, value: 600 });
      assert.deepEqual(await add(400, 1000), { status: 'applied', values: [1000] });
      assert.deepEqual(await add(0, 1000), { status: 'applied', values: [1000] }, 'nothing more fits exactly');
      assert.deepEqual(await add(-250, 1000), { status: 'applied', values: [750] });
      assert.deepEqual(await add(5000, null), { status: 'applied', values: [5750] }, 'no ceiling');
      assert.deepEqual(await add(0, 1000), { status: 'refused', index: 0, value: 5750 }, 'over its ceiling: even 0 does not fit');
      assert.deepEqual(await add(-10_000, 1000), { status: 'applied', values: [-4250] }, 'giving back is never refused');
    });

    test('several counters: one refusal adds nothing anywhere and names the first refusing counter', async () => {
      const [a, b, c] = [await created(100), await created(900), await created(950)];
      const adds = (amount: number) => [a, b, c].map((k) => ({ key: k, amount, ceiling: 1000 }));
      assert.deepEqual(await kv.run(countersAdd, adds(150)), { status: 'refused', index: 1, value: 900 });
      assert.deepEqual(await kv.mget([a, b, c]), ['100', '900', '950']);
      assert.deepEqual(await kv.run(countersAdd, adds(50)), { status: 'applied', values: [150, 950, 1000] });
      assert.deepEqual(await kv.run(countersAdd, [{ key: a, amount: -50, ceiling: null }, { key: c, amount: -50, ceiling: null }]), { status: 'applied', values: [100, 950] });
    });

    test('a counter named twice: the second entry is checked with the first one added', async () => {
      const a = await created(100);
      const twice = (second: number) => [{ key: a, amount: 400, ceiling: 1000 }, { key: a, amount: second, ceiling: 1000 }];
      assert.deepEqual(await kv.run(countersAdd, twice(600)), { status: 'refused', index: 1, value: 500 });
      assert.equal(await kv.get(a), '100');
      assert.deepEqual(await kv.run(countersAdd, twice(500)), { status: 'applied', values: [500, 1000] });
    });

    test('missing counters are reported and nothing is added, nor created', async () => {
      const a = await created(10);
      const [gone, alsoGone] = [key(), key()];
      const adds = [gone, a, alsoGone].map((k) => ({ key: k, amount: 5, ceiling: 100 }));
      assert.deepEqual(await kv.run(countersAdd, adds), { status: 'missing', missing: [0, 2] });
      assert.deepEqual(await kv.mget([gone, a, alsoGone]), [null, '10', null]);
      assert.deepEqual(await kv.run(countersAdd, [{ key: gone, amount: -5, ceiling: null }]), { status: 'missing', missing: [0] });
      assert.equal(await kv.get(gone), null);
    });

    test('a value that is not an integer is an error, and nothing is added', async () => {
      const a = await created(10);
      const word = key();
      await kv.set(word, 'abc');
      await assert.rejects(kv.run(countersAdd, [{ key: a, amount: 1, ceiling: null }, { key: word, amount: 1, ceiling: null }]));
      assert.deepEqual(await kv.mget([a, word]), ['10', 'abc']);
    });
  });
}

counterSuite('memory', async () => new MemoryKv());

describe('counters on Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL not set' }, () => {
  if (!REDIS_URL) return;
  counterSuite('redis', () => openKv({ redisUrl: REDIS_URL, prefix: newPrefix() }));

  test('two connections racing over two counters: the tighter ceiling holds exactly, on both', async () => {
    const prefix = newPrefix();
    const [a, b] = await Promise.all([openKv({ redisUrl: REDIS_URL, prefix }), openKv({ redisUrl: REDIS_URL, prefix })]);
    try {
      await a.set('daily', '0', 60_000);
      await a.set('monthly', '300', 60_000);
      const adds = [{ key: 'daily', amount: 7, ceiling: 1000 }, { key: 'monthly', amount: 7, ceiling: 500 }];
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).run(countersAdd, adds)));
      const applied = results.filter((r) => r.status === 'applied').length;
      assert.equal(applied, Math.floor(200 / 7));
      assert.deepEqual(await b.mget(['daily', 'monthly']), [String(7 * applied), String(300 + 7 * applied)]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
