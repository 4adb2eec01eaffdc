/**
 * The realtime KV operations on both KVs (memory always, Redis when TEST_REDIS_URL is set): a ticket redeemed
 * once only, even by concurrent redeemers; slots taken up to the cap, lapsing at their time, renewed, released.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openKv, type KV } from '../../core/store/kv.ts';
import { liveSlots, redeemTicket, releaseSlot, renewSlot, takeSlot, ticketKey } from '../../core/realtime/kv-ops.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const newPrefix = redisPrefixes(REDIS_URL);

function suite(name: string, open: () => Promise<KV>, skip: string | false = false): void {
  describe(`realtime KV operations: ${name}`, { skip }, () => {
    let kv: KV;
    before(async () => {
      kv = await open();
    });
    after(async () => {
      await kv?.close();
    });

    test('a ticket is redeemed once, whoever asks at the same time', async () => {
      await kv.set(ticketKey('t1'), 'rt-1', 60_000);
      const answers = await Promise.all(Array.from({ length: 8 }, () => kv.run(redeemTicket, { ticket: 't1' })));
      assert.deepEqual(answers.filter((a) => a !== null), ['rt-1']);
      assert.equal(await kv.run(redeemTicket, { ticket: 'never-issued' }), null);
    });

    test('slots: taken up to the cap, lapsed ones dropped, renewed while live, released', async () => {
      const now = Date.now();
      const took = await Promise.all(['a', 'b', 'c'].map((id) => kv.run(takeSlot, { id, cap: 2, now, until: now + 1000 })));
      assert.equal(took.filter(Boolean).length, 2, 'two of three concurrent takers get a slot');
      assert.equal(await kv.run(liveSlots, { now }), 2);
      const holder = took[0] ? 'a' : 'b';
      assert.equal(await kv.run(renewSlot, { id: holder, now, until: now + 5000 }), true);
      // Later than the first lapse: the renewed slot lives on, the other lapsed and frees its place.
      assert.equal(await kv.run(liveSlots, { now: now + 2000 }), 1);
      assert.equal(await kv.run(takeSlot, { id: 'd', cap: 2, now: now + 2000, until: now + 3000 }), true);
      assert.equal(await kv.run(takeSlot, { id: 'e', cap: 2, now: now + 2000, until: now + 3000 }), false);
      assert.equal(await kv.run(renewSlot, { id: 'c', now: now + 2000, until: now + 9000 }), false, 'a slot never taken is not renewed');
      assert.equal(await kv.run(releaseSlot, { id: 'd' }), true);
      assert.equal(await kv.run(releaseSlot, { id: holder }), true);
      assert.equal(await kv.run(liveSlots, { now: now + 2000 }), 0);
    });
  });
}

suite('memory', () => openKv({}));
suite('redis', () => openKv({ redisUrl: REDIS_URL!, prefix: newPrefix() }), REDIS_URL ? false : 'TEST_REDIS_URL not set');
