/**
 * A dead Redis (SIGKILL: connections refused) refuses only what needs it. With budget and ratelimit both
 * `onStoreError: closed`, a key that no budget and no limit applies to is served, a key under a budget or a rate
 * limit gets 503 STORE_UNAVAILABLE naming the plugin. A Redis started again (empty) is used again without a
 * restart: budget counters are rebuilt from the usage records. The Redis is the test's own, never the shared one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.ts';
import { startStoreFailureRig, type StoreFailureRig } from '../helpers/store-failure.ts';
import { eventually } from '../helpers/eventually.ts';

const available = await hasRedisServer();
if (!available) console.log('# skipped: no redis-server on PATH to kill');

describe('a dead Redis', { skip: !available }, () => {
  let redis: OwnRedis;
  let rig: StoreFailureRig;

  before(async () => {
    redis = await startOwnRedis();
    rig = await startStoreFailureRig(redis, '  kvTimeoutMs: 300');
  });
  after(async () => {
    await rig?.close();
    await redis?.stop();
  });

  test('a key without budget or limit is served; budgeted and limited keys get 503 under closed; Redis back, all served', async () => {
    const { plain, budgeted, limited } = rig;
    for (const key of [plain.key, budgeted.key, limited.key]) assert.equal((await rig.chat(key)).status, 200, 'warm');
    const spentBefore = (await rig.admin('GET', `/budgets/${budgeted.budgetId}`)).body.spentUsd as number;
    assert.ok(spentBefore > 0);

    await redis.kill();
    const served = await rig.chat(plain.key);
    assert.equal(served.status, 200, JSON.stringify(served.body));
    assert.equal((await rig.models(plain.key)).status, 200);

    const overBudget = await rig.chat(budgeted.key);
    assert.equal(overBudget.status, 503, JSON.stringify(overBudget.body));
    assert.deepEqual(overBudget.body.error.details, { plugin: 'budget' });
    assert.equal(overBudget.body.error.code, 'STORE_UNAVAILABLE');

    const overLimit = await rig.chat(limited.key);
    assert.equal(overLimit.status, 503, JSON.stringify(overLimit.body));
    assert.deepEqual(overLimit.body.error.details, { plugin: 'ratelimit' });

    // A budget on the key's whole tenant now applies to the plain key too, read from the database at once.
    const tenantBudget = await rig.admin('POST', '/budgets', { scope: 'deployment', period: 'monthly', limitUsd: 1000 });
    assert.equal(tenantBudget.status, 503, 'saved, but the KV could not drop the cached list');
    assert.match(tenantBudget.body.error.message, /is saved/);
    assert.equal((await rig.chat(plain.key)).status, 503, 'the deployment budget applies: closed refuses');
    const ready = await rig.readyz();
    assert.equal(ready.status, 503);

    await redis.start();
    await eventually(async () => assert.equal((await rig.readyz()).status, 200));
    // The cached budget lists died with Redis: every key is read afresh, the new budget included.
    await eventually(async () => assert.equal((await rig.chat(budgeted.key)).status, 200));
    assert.equal((await rig.chat(limited.key)).status, 200);
    assert.equal((await rig.chat(plain.key)).status, 200);
    // The key budget's counter was lost with Redis and rebuilt from the usage records: nothing spent is forgotten.
    const spentAfter = (await rig.admin('GET', `/budgets/${budgeted.budgetId}`)).body.spentUsd as number;
    assert.ok(spentAfter > spentBefore, `${spentAfter} > ${spentBefore}`);
  });
});
