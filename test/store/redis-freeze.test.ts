/**
 * A frozen Redis (SIGSTOP: the socket stays open and nothing answers) must not hang the gateway: with
 * storage.kvTimeoutMs every KV call gives up in time, authentication falls back to the database, a request that
 * needs nothing from the KV is served, one that does gets its plugin's onStoreError answer, admin writes are saved
 * and say the KV missed them, and /readyz answers 503. After SIGCONT everything recovers by itself. The Redis is
 * the test's own (test/helpers/own-redis.ts), never the shared one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.ts';
import { startStoreFailureRig, type Answer, type StoreFailureRig } from '../helpers/store-failure.ts';
import { eventually } from '../helpers/eventually.ts';

const KV_TIMEOUT_MS = 300;
/** The deadline, a second fail-fast call, and room for a loaded 2-core machine. */
const BOUND_MS = 2 * KV_TIMEOUT_MS + 1000;

const available = await hasRedisServer();
if (!available) console.log('# skipped: no redis-server on PATH to freeze');

function within(answer: Answer, what: string, status: number, code?: string): void {
  assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
  if (code) assert.equal(answer.body.error.code, code, what);
  assert.ok(answer.ms < BOUND_MS, `${what} took ${Math.round(answer.ms)} ms (bound ${BOUND_MS} ms)`);
}

describe('a frozen Redis', { skip: !available }, () => {
  let redis: OwnRedis;
  let rig: StoreFailureRig;

  before(async () => {
    redis = await startOwnRedis();
    rig = await startStoreFailureRig(redis, `  kvTimeoutMs: ${KV_TIMEOUT_MS}`);
  });
  after(async () => {
    if (redis?.pid) redis.thaw();
    await rig?.close();
    await redis?.stop();
  });

  test('every request answers within the deadline, per plugin policy; recovery after SIGCONT needs nothing', async () => {
    const { plain, budgeted, limited } = rig;
    const revokedDuring = await rig.admin('POST', '/keys', { name: 'revoked while frozen' });
    const doomed = { key: revokedDuring.body.key as string, id: revokedDuring.body.id as string };
    // Warm: every key is cached in the KV and every budget list read once.
    for (const key of [plain.key, budgeted.key, limited.key, doomed.key]) assert.equal((await rig.chat(key)).status, 200);
    within(await rig.readyz(), 'readyz before', 200);

    await redis.freeze();
    try {
      const frozenAt = performance.now();
      within(await rig.models(plain.key), 'GET /v1/models', 200);
      within(await rig.chat(plain.key), 'chat, no budget and no limit', 200);
      within(await rig.chat(budgeted.key), 'chat under a budget (closed)', 503, 'STORE_UNAVAILABLE');
      within(await rig.chat(limited.key), 'chat under a rate limit (closed)', 503, 'STORE_UNAVAILABLE');

      const revoked = await rig.admin('POST', `/keys/${doomed.id}/revoke`);
      within(revoked, 'revoke', 503, 'STORE_UNAVAILABLE');
      assert.match(revoked.body.error.message, /is saved/);
      within(await rig.chat(doomed.key), 'the revoked key, read from the database', 401, 'AUTH_API_KEY_REVOKED');

      const ready = await rig.readyz();
      within(ready, 'readyz', 503);
      assert.equal(ready.body.checks.find((c: { name: string }) => c.name === 'kv').ok, false);
      assert.equal(ready.body.checks.find((c: { name: string }) => c.name === 'database').ok, true);

      // Twenty at once, as the issue reproduced: none waits for the freeze to end.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? rig.chat(plain.key) : rig.models(plain.key))));
      for (const answer of burst) within(answer, 'a request of the burst', 200);
      assert.ok(performance.now() - frozenAt < 20_000);
    } finally {
      redis.thaw();
    }

    await eventually(async () => assert.equal((await rig.readyz()).status, 200));
    // One line when the KV stalls and one when it answers again, not one per failed call.
    const stalls = rig.logs.filter((l) => l.store === 'kv' && String(l.msg).startsWith('the kv answered nothing'));
    assert.equal(stalls.length, 1, JSON.stringify(stalls));
    assert.equal(stalls[0]!.level, 40);
    assert.equal(rig.logs.filter((l) => l.store === 'kv' && l.msg === 'the kv answers again').length, 1);
    assert.ok(rig.logs.some((l) => l.msg === 'The revocation of ' + doomed.id + ' is saved, but its cached copy could not be dropped from the KV'));
    assert.equal((await rig.chat(budgeted.key)).status, 200, 'budgets are checked again');
    assert.equal((await rig.chat(limited.key)).status, 200, 'limits are checked again');
    // The KV's cached copy still says active: repeating the revocation now drops it.
    assert.equal((await rig.admin('POST', `/keys/${doomed.id}/revoke`)).status, 200);
    assert.equal((await rig.chat(doomed.key)).body.error.code, 'AUTH_API_KEY_REVOKED');
  });

  test('a reservation the frozen KV ran late is given back: the budget shows only what was served', async () => {
    const { budgeted } = rig;
    const spent = async () => (await rig.admin('GET', `/budgets/${budgeted.budgetId}`)).body.spentUsd as number;
    const before = await spent();
    await redis.freeze();
    try {
      within(await rig.chat(budgeted.key), 'chat under a budget (closed)', 503, 'STORE_UNAVAILABLE');
    } finally {
      redis.thaw();
    }
    // Redis runs the reservation when it wakes; the gateway gives it back when the late answer arrives.
    await eventually(async () => assert.equal(await spent(), before));
    const served = await rig.chat(budgeted.key);
    assert.equal(served.status, 200);
    await eventually(async () => assert.ok((await spent()) > before));
  });
});
