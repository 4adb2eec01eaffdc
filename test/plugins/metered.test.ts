/**
 * Work metered outside a request (gateway.meterWork, a batch that ended): one usage record standing for all its
 * requests, and one charge on every budget that applies, however often and on however many gateways it is
 * reported; a plugin whose hook throws makes the call reject naming it while the others still take the work.
 * On PGlite with the memory KV, and on Postgres with Redis (two gateways sharing them).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { MeteredWorkError } from '../../core/server/metered.ts';
import { settledMarker } from '../../plugins/budget/settle.ts';
import { meteredRecordId } from '../../plugins/usage/metered.ts';
import { createSharedStores, dropSharedStores, type SharedStores } from '../helpers/cluster.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { refuseUsageWrites } from '../helpers/usage.ts';

const PUBLIC = new URL('../../core/public/plugin.ts', import.meta.url).href;

/** Two third-party plugins, registered after the built-ins in this order: one fails on demand, one tallies. */
const FILES = {
  'flaky.mjs': `
import { definePlugin } from '${PUBLIC}';
export default definePlugin({
  name: 'flaky', description: 'Fails metered work while its shared state says so.', configSchema: { type: 'object' },
  init: () => ({ failing: false }),
  setup: () => (ctx, next) => next(),
  async onMeteredWork(work, services, shared) {
    if (shared.failing) throw new Error('flaky is down for ' + work.id);
  },
});`,
  'tally.mjs': `
import { definePlugin } from '${PUBLIC}';
export default definePlugin({
  name: 'tally', description: 'Keeps the metered work it was given.', configSchema: { type: 'object' },
  init: () => ({ seen: [] }),
  setup: () => (ctx, next) => next(),
  async onMeteredWork(work, services, shared) {
    const [row] = await services.db.query('SELECT count(*)::int AS n FROM usage_records WHERE request_id = $1', [work.id]);
    shared.seen.push({ id: work.id, usageRows: row.n });
  },
});`,
};

/** USD per million tokens: a prompt token costs 100 micro-dollars, a completion token 200. */
const CONFIG = `
plugins: [./flaky.mjs, ./tally.mjs]
providers:
  openai:
    baseUrl: http://127.0.0.1:9/v1
    apiKey: sk-upstream-secret
models:
  - id: priced
    provider: openai
    upstreamModel: priced-2025
    pricing: { input: 100, output: 200 }
  - id: unpriced
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth, budget, usage]
`;

/** 1000 prompt and 500 completion tokens at the prices above. */
const COST_USD = 0.2;

function batchWork(apiKeyId: string, fields: Partial<MeteredWork> = {}): MeteredWork {
  const endedAt = Date.now();
  return {
    id: `batch_${randomUUID()}`, source: 'batch',
    tenantId: 'default', organizationId: null, departmentId: null, callerKind: 'api_key', apiKeyId, userId: null,
    endpoint: '/v1/chat/completions', modality: 'chat', provider: 'openai',
    requestedModel: 'priced', model: 'priced', upstreamModel: 'priced-2025',
    usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
    requests: { total: 40, completed: 38, failed: 2 },
    status: 'completed', startedAt: endedAt - 90_000, endedAt,
    ...fields,
  };
}

async function newKey(gw: TestGateway): Promise<{ id: string; key: string }> {
  const body = { name: 'metered', scopes: { capabilities: ['chat', 'usage:read', 'budget:read'] } };
  const created = await postJson(`${gw.url}/admin/v1/keys`, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { id: created.body.id, key: created.body.key };
}

async function newBudget(gw: TestGateway, fields: Record<string, unknown>): Promise<string> {
  const created = await postJson(`${gw.url}/admin/v1/budgets`, fields, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

async function get(gw: TestGateway, path: string, key: string): Promise<any> {
  const response = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

/** What GET /v1/budget says each of the caller's budgets has spent, by budget id. */
async function spent(gw: TestGateway, key: string): Promise<Record<string, number>> {
  const body = await get(gw, '/v1/budget', key);
  return Object.fromEntries((body.data as any[]).map((b) => [b.id, b.spent_usd]));
}

const rowsOf = (gw: TestGateway, workId: string) =>
  gw.gateway.services.db.query<Record<string, any>>('SELECT * FROM usage_records WHERE request_id = $1', [workId]);

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;

function meteredSuite(name: string, shared: boolean): void {
  describe(`metered work (${name})`, { skip: shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false }, () => {
    let stores: SharedStores | undefined;
    let gw: TestGateway;
    /** A second gateway on the same Postgres and Redis (the shared suite only). */
    let peer: TestGateway | undefined;

    before(async () => {
      let options: TestGatewayOptions = { files: FILES };
      if (shared) {
        stores = await createSharedStores(DATABASE_URL!);
        options = { ...options, env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: stores.schema, kvPrefix: stores.prefix };
      }
      gw = await startTestGateway(CONFIG, options);
      if (shared) peer = await startTestGateway(CONFIG, options);
    });
    after(async () => {
      await peer?.close();
      await gw?.close();
      if (shared) await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
    });

    test('reported twice, and twice at once: one usage record for its 40 requests, shown by /v1/usage', async () => {
      const { id, key } = await newKey(gw);
      const work = batchWork(id);
      await gw.gateway.meterWork(work);
      await gw.gateway.meterWork(work);
      await Promise.all([gw.gateway.meterWork(work), (peer ?? gw).gateway.meterWork(work)]);

      const rows = await rowsOf(gw, work.id);
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.equal(row.id, meteredRecordId(work.id));
      assert.deepEqual(
        {
          requests: row.requests, endpoint: row.endpoint, modality: row.modality, provider: row.provider, stream: row.stream,
          requested: row.requested_model, model: row.model, upstream: row.upstream_model, kind: row.caller_kind, key: row.api_key_id,
          prompt: Number(row.prompt_tokens), completion: Number(row.completion_tokens), total: Number(row.total_tokens),
          cost: Number(row.cost_usd), latency: row.latency_ms, status: row.status, error: row.error_code,
          createdAt: new Date(row.created_at).getTime(), estimated: row.estimated,
        },
        {
          requests: 40, endpoint: '/v1/chat/completions', modality: 'chat', provider: 'openai', stream: false,
          requested: 'priced', model: 'priced', upstream: 'priced-2025', kind: 'api_key', key: id,
          prompt: 1000, completion: 500, total: 1500, cost: COST_USD, latency: 90_000, status: 'completed', error: null,
          createdAt: work.endedAt, estimated: false,
        });

      const usage = await get(gw, '/v1/usage', key);
      assert.equal(usage.data.length, 1);
      assert.deepEqual(
        { requests: usage.data[0].requests, prompt: usage.data[0].prompt_tokens, completion: usage.data[0].completion_tokens, cost: usage.data[0].cost_usd },
        { requests: 40, prompt: 1000, completion: 500, cost: COST_USD });
    });

    test('budgets whose counters exist are charged once however often the work is reported, on every gateway', async () => {
      const { id, key } = await newKey(gw);
      const daily = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 10 });
      const total = await newBudget(gw, { scope: 'key', scopeId: id, period: 'total', limitUsd: 10 });
      // Reading the budgets creates their counters (at zero: nothing recorded yet).
      assert.deepEqual(await spent(gw, key), { [daily]: 0, [total]: 0 });
      const work = batchWork(id);
      await Promise.all([gw.gateway.meterWork(work), (peer ?? gw).gateway.meterWork(work)]);
      await gw.gateway.meterWork(work);
      await (peer ?? gw).gateway.meterWork(work);
      assert.deepEqual(await spent(gw, key), { [daily]: COST_USD, [total]: COST_USD });
      if (peer) assert.deepEqual(await spent(peer, key), { [daily]: COST_USD, [total]: COST_USD });
      assert.equal(await gw.gateway.services.kv.get(settledMarker(work.id)), '1');
    });

    test('budgets without counters are rebuilt from the usage records, which hold the work once', async () => {
      const { id, key } = await newKey(gw);
      const monthly = await newBudget(gw, { scope: 'key', scopeId: id, period: 'monthly', limitUsd: 10 });
      const work = batchWork(id);
      await Promise.all([gw.gateway.meterWork(work), (peer ?? gw).gateway.meterWork(work), gw.gateway.meterWork(work)]);
      assert.deepEqual(await spent(peer ?? gw, key), { [monthly]: COST_USD });
      // A second work while the counter exists: added to it, not rebuilt over.
      await gw.gateway.meterWork(batchWork(id));
      assert.deepEqual(await spent(gw, key), { [monthly]: 2 * COST_USD });
    });

    test('an unpriced model records its tokens and no cost, and charges no budget', async () => {
      const { id, key } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 10 });
      assert.deepEqual(await spent(gw, key), { [budget]: 0 });
      const work = batchWork(id, { requestedModel: 'unpriced', model: 'unpriced', upstreamModel: 'unpriced' });
      await gw.gateway.meterWork(work);
      const [row] = await rowsOf(gw, work.id);
      assert.deepEqual({ prompt: Number(row!.prompt_tokens), completion: Number(row!.completion_tokens), cost: row!.cost_usd }, { prompt: 1000, completion: 500, cost: null });
      const usage = await get(gw, '/v1/usage', key);
      assert.deepEqual({ requests: usage.data[0].requests, tokens: usage.data[0].total_tokens, cost: usage.data[0].cost_usd }, { requests: 40, tokens: 1500, cost: null });
      assert.deepEqual(await spent(gw, key), { [budget]: 0 });
      assert.equal(await gw.gateway.services.kv.get(settledMarker(work.id)), null);
    });

    test('every ending is recorded with its status: failed and expired as failed (with a code), cancelled as aborted', async () => {
      const { id } = await newKey(gw);
      const endings = { completed: ['completed', null], failed: ['failed', 'BATCH_FAILED'], expired: ['failed', 'BATCH_EXPIRED'], cancelled: ['aborted', null] } as const;
      for (const [status, [recorded, code]] of Object.entries(endings)) {
        const work = batchWork(id, { status: status as MeteredWork['status'], requests: { total: 3, completed: 1, failed: 2 } });
        await gw.gateway.meterWork(work);
        const [row] = await rowsOf(gw, work.id);
        assert.deepEqual({ status: row!.status, code: row!.error_code, requests: row!.requests }, { status: recorded, code, requests: 3 }, status);
      }
    });

    test('a plugin whose hook throws makes meterWork reject naming it; the others still take the work, and a retry settles it once', async () => {
      const { id, key } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'total', limitUsd: 10 });
      assert.deepEqual(await spent(gw, key), { [budget]: 0 });
      const flaky = gw.gateway.pluginState('flaky') as { failing: boolean };
      const tally = gw.gateway.pluginState('tally') as { seen: Array<{ id: string; usageRows: number }> };
      const work = batchWork(id);
      flaky.failing = true;
      try {
        await assert.rejects(gw.gateway.meterWork(work), (err: unknown) => {
          assert.ok(err instanceof MeteredWorkError);
          assert.deepEqual(err.plugins, ['flaky']);
          assert.match(err.message, new RegExp(`^metered work ${work.id} was not taken by every plugin: plugin "flaky": flaky is down for ${work.id}$`));
          return true;
        });
      } finally {
        flaky.failing = false;
      }
      // tally is registered after flaky, and ran; usage and budget ran before it.
      assert.deepEqual(tally.seen.filter((s) => s.id === work.id), [{ id: work.id, usageRows: 1 }]);
      assert.deepEqual(await spent(gw, key), { [budget]: COST_USD });

      await gw.gateway.meterWork(work);
      assert.equal((await rowsOf(gw, work.id)).length, 1);
      assert.deepEqual(await spent(gw, key), { [budget]: COST_USD });
    });

    test('when the usage record cannot be written, the budget is still charged, and the retry records it without charging again', async () => {
      const { id, key } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 10 });
      assert.deepEqual(await spent(gw, key), { [budget]: 0 });
      const writes = refuseUsageWrites(gw.gateway.services.db);
      const work = batchWork(id);
      try {
        await assert.rejects(gw.gateway.meterWork(work), (err: unknown) => err instanceof MeteredWorkError && err.plugins.join() === 'usage');
      } finally {
        writes.restore();
      }
      assert.equal((await rowsOf(gw, work.id)).length, 0);
      assert.deepEqual(await spent(gw, key), { [budget]: COST_USD });
      await gw.gateway.meterWork(work);
      assert.equal((await rowsOf(gw, work.id)).length, 1);
      assert.deepEqual(await spent(gw, key), { [budget]: COST_USD });
    });
  });
}

meteredSuite('memory KV, PGlite', false);
meteredSuite('Redis, Postgres', true);

describe('metered record ids', () => {
  test('name-based: the same work id gives the same UUID (version 5 layout), another id another', () => {
    const id = meteredRecordId('batch_1');
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(meteredRecordId('batch_1'), id);
    assert.notEqual(meteredRecordId('batch_2'), id);
  });
});

describe('onMeteredWork in the definition', () => {
  test('a value that is not a function is refused when the plugin is defined', () => {
    const definition = { name: 'odd', description: 'odd', configSchema: { type: 'object' as const }, setup: () => async () => {}, onMeteredWork: 'later' };
    assert.throws(() => definePlugin(definition as never), /^Error: invalid plugin definition: plugin "odd": onMeteredWork must be a function$/);
    assert.doesNotThrow(() => definePlugin({ ...definition, onMeteredWork: async () => {} }));
  });
});
