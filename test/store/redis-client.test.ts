/**
 * The Redis KV's client settings (core/store/redis-kv.ts) against a private redis-server: a dead Redis fails each
 * call at once as 503 STORE_UNAVAILABLE (no offline queue), a command in flight when the connection drops fails
 * then and is never sent again (it may have run: a reservation must not count twice), Redis's own errors pass
 * through as they are, the client reconnects by itself, and a Redis frozen at start fails the start in time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StoreUnavailableError } from '../../core/store/deadline.ts';
import { openKv, type KV } from '../../core/store/kv.ts';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.ts';
import { eventually } from '../helpers/eventually.ts';

const available = await hasRedisServer();
if (!available) console.log('# skipped: no redis-server on PATH');

describe('the Redis client', { skip: !available }, () => {
  let redis: OwnRedis;
  let kv: KV;

  before(async () => {
    redis = await startOwnRedis();
    kv = await openKv({ redisUrl: redis.url, prefix: 'client-test:', timeoutMs: 300 });
  });
  after(async () => {
    await kv?.close();
    await redis?.stop();
  });

  test('Redis refusing a command is an answer, not an outage', async () => {
    await kv.set('text', 'not a number');
    await assert.rejects(kv.incrBy('text', 1), (err: unknown) => !(err instanceof StoreUnavailableError) && /not an integer|ERR/.test(String(err)));
  });

  test('a command in flight when the connection drops fails then and is not sent again to the Redis that comes back', async () => {
    await redis.freeze();
    // Written to the socket; the frozen server has not read it.
    const inFlight = kv.incrBy('counted-once', 1).then(() => assert.fail('answered'), (err: unknown) => err);
    await redis.kill();
    // Back before ioredis's first reconnection (200 ms): a client that resends would run the command here.
    await redis.start();
    const err = await inFlight;
    assert.ok(err instanceof StoreUnavailableError, String(err));
    assert.equal(err.code, 'STORE_UNAVAILABLE');
    assert.equal(err.message, 'The KV could not be reached');
    await eventually(() => kv.ping());
    assert.equal(await kv.get('counted-once'), null, 'the dropped command was not sent to the new server');
  });

  test('a Redis frozen at start fails the open in 5 s instead of holding the start', async () => {
    await redis.freeze();
    const started = performance.now();
    try {
      await assert.rejects(openKv({ redisUrl: redis.url, timeoutMs: 300 }), /Redis did not answer within 5000 ms of connecting/);
    } finally {
      redis.thaw();
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 4900 && elapsed < 7000, `${elapsed} ms`);
    await kv.ping();
  });

  test('while Redis is down every call fails at once: nothing waits in a queue for it', async () => {
    await kv.set('before', '1');
    await redis.kill();
    try {
      await eventually(async () => {
        const started = performance.now();
        await assert.rejects(kv.get('before'), StoreUnavailableError);
        assert.ok(performance.now() - started < 50, `${performance.now() - started} ms`);
      });
    } finally {
      await redis.start();
    }
    await eventually(() => kv.ping());
  });
});
