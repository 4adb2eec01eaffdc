/**
 * The KV contract on both implementations: in-process memory always, Redis when TEST_REDIS_URL is set (each
 * run under its own key prefix, whose keys are deleted at the end).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openKv, type KV } from '../../core/store/kv.ts';
import { defineKvOperation } from '../../core/store/kv-operation.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const NO_REDIS = REDIS_URL ? false : 'TEST_REDIS_URL not set';

/** Prefixes used by this file; their keys are removed when it ends. */
const newPrefix = redisPrefixes(REDIS_URL);

function kvSuite(name: string, open: () => Promise<KV>): void {
  describe(`KV contract: ${name}`, () => {
    let kv: KV;
    before(async () => {
      kv = await open();
    });
    after(async () => {
      await kv.close();
    });

    test('get of a missing key is null', async () => {
      assert.equal(await kv.get('missing'), null);
    });

    test('set then get returns the value; a second set replaces it', async () => {
      await kv.set('k', 'v1');
      assert.equal(await kv.get('k'), 'v1');
      await kv.set('k', 'v2');
      assert.equal(await kv.get('k'), 'v2');
      await kv.set('empty', '');
      assert.equal(await kv.get('empty'), '');
      const text = JSON.stringify({ unicode: 'ünï€ode 🚀', newline: 'a\nb' });
      await kv.set('json', text);
      assert.equal(await kv.get('json'), text);
    });

    test('set with ttlMs expires', async () => {
      await kv.set('ttl', 'soon gone', 50);
      assert.equal(await kv.get('ttl'), 'soon gone');
      await sleep(120);
      assert.equal(await kv.get('ttl'), null);
    });

    test('set without ttlMs replaces an earlier TTL: the entry lives on', async () => {
      await kv.set('ttl-cleared', 'a', 50);
      await kv.set('ttl-cleared', 'b');
      await sleep(120);
      assert.equal(await kv.get('ttl-cleared'), 'b');
    });

    test('mget reads several keys at once, null for the missing and the expired ones, in the order asked', async () => {
      await kv.set('m1', 'one');
      await kv.set('m2', 'two');
      await kv.set('m-short', 'gone soon', 30);
      await sleep(80);
      assert.deepEqual(await kv.mget(['m2', 'm-missing', 'm1', 'm-short']), ['two', null, 'one', null]);
      assert.deepEqual(await kv.mget([]), []);
    });

    test('setIfAbsent sets once, refuses while present, and sets again after expiry', async () => {
      assert.equal(await kv.setIfAbsent('lock', 'first', 150), true);
      assert.equal(await kv.setIfAbsent('lock', 'second', 150), false);
      assert.equal(await kv.get('lock'), 'first', 'the refused call left the value alone');
      await sleep(300);
      assert.equal(await kv.get('lock'), null);
      assert.equal(await kv.setIfAbsent('lock', 'third', 50), true);
      assert.equal(await kv.get('lock'), 'third');
    });

    test('setIfAbsent refuses over a key written by set', async () => {
      await kv.set('taken', 'x');
      assert.equal(await kv.setIfAbsent('taken', 'y', 1000), false);
      assert.equal(await kv.get('taken'), 'x');
    });

    test('del removes a key; deleting a missing key is fine', async () => {
      await kv.set('doomed', 'x');
      await kv.del('doomed');
      assert.equal(await kv.get('doomed'), null);
      await kv.del('doomed');
      await kv.del('never-was');
      assert.equal(await kv.setIfAbsent('doomed', 'back', 1000), true);
    });

    test('incrBy creates the key with the increment, then adds', async () => {
      assert.equal(await kv.incrBy('counter', 5), 5);
      assert.equal(await kv.incrBy('counter', 3), 8);
      assert.equal(await kv.incrBy('counter', -10), -2);
      assert.equal(await kv.get('counter'), '-2');
    });

    test('incrBy keeps the TTL set at creation, and restarts from the increment after expiry', async () => {
      assert.equal(await kv.incrBy('window', 1, 250), 1);
      // Later calls, with or without a TTL, neither extend nor remove the first one.
      assert.equal(await kv.incrBy('window', 2, 60_000), 3);
      assert.equal(await kv.incrBy('window', 4), 7);
      await sleep(400);
      assert.equal(await kv.get('window'), null);
      assert.equal(await kv.incrBy('window', 2, 100), 2);
    });

    test('incrBy adds to a numeric value written by set', async () => {
      await kv.set('numeric', '10');
      assert.equal(await kv.incrBy('numeric', 5), 15);
    });

    test('incrBy on a non-number rejects and leaves the value alone', async () => {
      await kv.set('word', 'abc');
      await assert.rejects(kv.incrBy('word', 1));
      assert.equal(await kv.get('word'), 'abc');
    });

    test('incrBy on a blank or non-integer string rejects too (as Redis INCRBY does)', async () => {
      // Both implementations must agree on what a counter is: '' or '1e3' are not integers.
      for (const [key, value] of [['blank', ''], ['spaces', '  '], ['exponent', '1e3']] as const) {
        await kv.set(key, value);
        await assert.rejects(kv.incrBy(key, 1), Error, `incrBy over ${JSON.stringify(value)} must reject`);
        assert.equal(await kv.get(key), value);
      }
    });

    test('ping answers', async () => {
      await kv.ping();
    });
  });
}

kvSuite('memory', async () => {
  const kv = await openKv({});
  assert.equal(kv.kind, 'memory');
  return kv;
});

describe('KV contract: redis', { skip: NO_REDIS }, () => {
  if (!REDIS_URL) return;
  kvSuite('redis', async () => {
    const kv = await openKv({ redisUrl: REDIS_URL, prefix: newPrefix() });
    assert.equal(kv.kind, 'redis');
    return kv;
  });
});

describe('redis sharing', { skip: NO_REDIS }, () => {
  test('two instances with the same prefix see each other\'s writes; another prefix is isolated', async () => {
    const shared = newPrefix();
    const a = await openKv({ redisUrl: REDIS_URL!, prefix: shared });
    const b = await openKv({ redisUrl: REDIS_URL!, prefix: shared });
    const other = await openKv({ redisUrl: REDIS_URL!, prefix: newPrefix() });
    try {
      await a.set('greeting', 'hello');
      assert.equal(await b.get('greeting'), 'hello');
      assert.equal(await other.get('greeting'), null);

      assert.equal(await a.incrBy('hits', 1, 60_000), 1);
      assert.equal(await b.incrBy('hits', 1, 60_000), 2);
      assert.equal(await other.incrBy('hits', 1, 60_000), 1);

      assert.equal(await a.setIfAbsent('lock', 'a', 60_000), true);
      assert.equal(await b.setIfAbsent('lock', 'b', 60_000), false);
      assert.equal(await other.setIfAbsent('lock', 'other', 60_000), true);

      await other.set('greeting', 'elsewhere');
      assert.equal(await a.get('greeting'), 'hello');

      await b.del('greeting');
      assert.equal(await a.get('greeting'), null);
      assert.equal(await other.get('greeting'), 'elsewhere');
    } finally {
      await a.close();
      await b.close();
      await other.close();
    }
  });

  test('keys are stored under the prefix in Redis', async () => {
    const prefix = newPrefix();
    const kv = await openKv({ redisUrl: REDIS_URL!, prefix });
    const redis = new Redis(REDIS_URL!);
    try {
      await kv.set('visible', 'yes', 60_000);
      assert.equal(await redis.get(prefix + 'visible'), 'yes');
      assert.equal(await redis.get('visible'), null);
      const ttl = await redis.pttl(prefix + 'visible');
      assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
    } finally {
      await kv.close();
      redis.disconnect();
    }
  });
});

describe('memory instances', () => {
  test('two memory KVs do not share state (one process, one map each)', async () => {
    const a = await openKv({});
    const b = await openKv({});
    try {
      await a.set('x', '1');
      assert.equal(await b.get('x'), null);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('memory KV operations', () => {
  test('an operation\'s set without a TTL changes the value and keeps the expiry; with one it sets a new expiry', async () => {
    let now = 1_000_000;
    const kv = new MemoryKv(() => now);
    const put = defineKvOperation<{ key: string; value: string; ttlMs?: number }, string | null>({
      name: 'test.put',
      redis: { lua: 'return nil', keys: ({ key }) => [key], argv: () => [], parse: () => null },
      memory: (access, { key, value, ttlMs }) => {
        access.set(key, value, ttlMs);
        return access.get(key);
      },
    });
    try {
      kv.runNow(put, { key: 'k', value: 'a', ttlMs: 1000 });
      now += 500;
      assert.equal(kv.runNow(put, { key: 'k', value: 'b' }), 'b');
      now += 499;
      assert.equal(await kv.get('k'), 'b');
      now += 1;
      assert.equal(await kv.get('k'), null, 'gone at the expiry set first');
      kv.runNow(put, { key: 'k', value: 'c' });
      now += 10 * 86_400_000;
      assert.equal(await kv.get('k'), 'c', 'a new entry without a TTL never expires');
      kv.runNow(put, { key: 'k', value: 'd', ttlMs: 10 });
      now += 10;
      assert.equal(await kv.get('k'), null, 'a TTL given to an existing entry applies');
    } finally {
      await kv.close();
    }
  });
});
