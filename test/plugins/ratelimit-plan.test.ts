/**
 * The ratelimit plugin's plan cache: a caller's plan is made once and used again only while its limits are the
 * same objects, its tenant and its address the same; otherwise it is made anew, exactly as planFor makes it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlanCache, planFor, type PlanCaller } from '../../plugins/ratelimit/plan.ts';

const config = { deployment: { requestsPerMinute: 100, tokensPerDay: 10_000 }, ip: { requestsPerMinute: 50 } };

function caller(fields: Partial<PlanCaller> = {}): PlanCaller {
  return { id: 'key_a', tenantId: 'default', rateLimits: { requestsPerMinute: 10 }, policy: { rateLimits: { tokensPerDay: 5_000 } }, ...fields };
}

test('the same caller from the same address gets the same plan, made once', () => {
  const plans = new PlanCache(config);
  const first = caller();
  const plan = plans.plan({ caller: first, clientIp: '10.0.0.1' });
  assert.deepEqual(plan, planFor(first, '10.0.0.1', config));
  assert.equal(plans.plan({ caller: { ...first }, clientIp: '10.0.0.1' }), plan, 'a new caller object with the same limit objects');
});

test('another address, tenant, or limits object makes the plan anew', () => {
  const plans = new PlanCache(config);
  const first = caller();
  const plan = plans.plan({ caller: first, clientIp: '10.0.0.1' });
  const cases: Array<[string, PlanCaller, string]> = [
    ['address', first, '10.0.0.2'],
    ['tenant', { ...first, tenantId: 'acme' }, '10.0.0.1'],
    ['key limits', { ...first, rateLimits: { requestsPerMinute: 20 } }, '10.0.0.1'],
    ['no key limits', { ...first, rateLimits: null }, '10.0.0.1'],
    ['policy limits', { ...first, policy: { rateLimits: { tokensPerDay: 1 } } }, '10.0.0.1'],
  ];
  for (const [what, changed, ip] of cases) {
    const again = plans.plan({ caller: changed, clientIp: ip });
    assert.notEqual(again, plan, what);
    assert.deepEqual(again, planFor(changed, ip, config), what);
  }
});

test('without a caller only the address is planned; past its capacity the cache starts over and stays right', () => {
  const plans = new PlanCache(config, 2);
  assert.deepEqual(plans.plan({ caller: undefined, clientIp: '10.0.0.1' }), planFor(undefined, '10.0.0.1', config));
  const callers = ['a', 'b', 'c', 'a'].map((id) => caller({ id: `key_${id}` }));
  for (const c of callers) assert.deepEqual(plans.plan({ caller: c, clientIp: '10.0.0.1' }), planFor(c, '10.0.0.1', config));
});
