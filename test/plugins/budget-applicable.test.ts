/**
 * Which budgets apply to a caller, on the request path: on the in-process KV, with every list cached, the answer
 * comes within the call (no promise, so no store timer), the same array while the cached texts stay the same, and
 * a new one as soon as a list changes or the caller moves to another organization. The identity caches' MGET
 * operation answers alike on both KVs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readMany } from '../../core/identity/cache.ts';
import { openKv } from '../../core/store/kv.ts';
import { MemoryKv } from '../../core/store/memory-kv.ts';
import { BudgetService } from '../../plugins/budget/budgets.ts';
import type { ApplicableBudget } from '../../plugins/budget/ledger.ts';
import { redisPrefixes } from '../helpers/redis-prefixes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;
const newPrefix = redisPrefixes(REDIS_URL);

interface Row { id: string; tenant_id: string; scope: string; scope_id: string | null; period: string; limit_usd: number; created_at: string; updated_at: string }

/** The budgets table as BudgetService reads it (tenant, scope, scope id), counting the reads. */
function fakeDb(rows: Row[]) {
  const db = {
    reads: 0,
    async query(_sql: string, params: unknown[]) {
      db.reads++;
      const [tenant, scope, scopeId] = params as [string, string, string];
      return rows.filter((r) => r.tenant_id === tenant && r.scope === scope && (r.scope_id ?? '') === scopeId);
    },
  };
  return db;
}

const row = (id: string, scope: string, scopeId: string | null, limitUsd: number): Row => ({
  id, tenant_id: 'default', scope, scope_id: scopeId, period: 'monthly', limit_usd: limitUsd, created_at: '2031-01-01T00:00:00Z', updated_at: '2031-01-01T00:00:00Z',
});

const caller = (organizationId: string | null) => ({ kind: 'api_key' as const, id: 'key_1', tenantId: 'default', organizationId, departmentId: null });

const ids = (budgets: readonly ApplicableBudget[]) => budgets.map((b) => b.id);

describe('budgets that apply to a caller', () => {
  test('cached lists answer within the call, the same array while they stay the same', async () => {
    const kv = new MemoryKv();
    const db = fakeDb([row('b_deploy', 'deployment', null, 100), row('b_key', 'key', 'key_1', 5)]);
    const budgets = new BudgetService(db as never, kv, Date.now, 60_000);
    try {
      const first = budgets.applicable(caller(null));
      assert.ok(first instanceof Promise, 'the first read goes to the database');
      assert.deepEqual(ids(await first), ['b_deploy', 'b_key']);
      const cached = budgets.applicable(caller(null));
      assert.ok(Array.isArray(cached), 'with every list cached, no promise');
      assert.deepEqual(ids(cached as ApplicableBudget[]), ['b_deploy', 'b_key']);
      assert.equal(budgets.applicable(caller(null)), cached, 'the same array again');
      assert.equal(db.reads, 2);
    } finally {
      await kv.close();
    }
  });

  test('a list that changes, and a caller moved to an organization, are seen at once', async () => {
    const kv = new MemoryKv();
    const rows = [row('b_deploy', 'deployment', null, 100), row('b_org', 'organization', 'org_1', 7)];
    const db = fakeDb(rows);
    const budgets = new BudgetService(db as never, kv, Date.now, 60_000);
    try {
      await budgets.applicable(caller(null));
      const before = budgets.applicable(caller(null)) as ApplicableBudget[];
      assert.deepEqual(ids(before), ['b_deploy']);

      // An admin write drops the cached list; the next request reads the new one.
      rows.push(row('b_key', 'key', 'key_1', 5));
      await kv.del('budget:list:default:key:key_1');
      const reread = await budgets.applicable(caller(null));
      assert.deepEqual(ids(reread), ['b_deploy', 'b_key']);
      const after = budgets.applicable(caller(null));
      assert.notEqual(after, before);
      assert.deepEqual(ids(after as ApplicableBudget[]), ['b_deploy', 'b_key']);

      // The same key, now in an organization: its budget applies from the next request on.
      const moved = await budgets.applicable(caller('org_1'));
      assert.deepEqual(ids(moved), ['b_deploy', 'b_org', 'b_key']);
      assert.deepEqual(ids(budgets.applicable(caller('org_1')) as ApplicableBudget[]), ['b_deploy', 'b_org', 'b_key']);
      assert.deepEqual(ids(budgets.applicable(caller(null)) as ApplicableBudget[]), ['b_deploy', 'b_key'], 'and back');
    } finally {
      await kv.close();
    }
  });

  test('the ledger keeps one counter per budget and period, and a new one when the period turns', async () => {
    const kv = new MemoryKv();
    const budgets = new BudgetService(fakeDb([]) as never, kv, Date.now, 60_000);
    const budget: ApplicableBudget = { id: 'b_daily', tenantId: 'default', scope: 'deployment', scopeId: null, period: 'daily', limitMicros: 1_000_000 };
    try {
      const day = Date.UTC(2031, 0, 31);
      const morning = budgets.ledger.counter(budget, day + 3_600_000);
      assert.equal(budgets.ledger.counter(budget, day + 86_399_999), morning);
      const next = budgets.ledger.counter(budget, day + 86_400_000);
      assert.notEqual(next.key, morning.key);
      assert.equal(next.key, `budget:spend:b_daily:${day + 86_400_000}`);
      assert.equal(next.ttlMs(day + 86_400_000), 2 * 86_400_000, 'the whole day, and a day of grace');
      assert.equal(budgets.ledger.counter(budget, day).key, morning.key, 'an earlier time (a batch that ended yesterday) finds its own day');
    } finally {
      await kv.close();
    }
  });
});

for (const [name, open, skip] of [
  ['memory', () => openKv({}), false],
  ['redis', () => openKv({ redisUrl: REDIS_URL!, prefix: newPrefix() }), REDIS_URL ? false : 'TEST_REDIS_URL not set'],
] as const) {
  test(`the identity caches' MGET operation on the ${name} KV: values in key order, null for a missing key`, { skip }, async () => {
    const kv = await open();
    try {
      await kv.set('a', '1');
      await kv.set('c', '3', 60_000);
      assert.deepEqual(await kv.run(readMany, ['a', 'b', 'c']), ['1', null, '3']);
      if (kv.runNow) assert.deepEqual(kv.runNow(readMany, ['c', 'a']), ['3', '1']);
    } finally {
      await kv.close();
    }
  });
}
