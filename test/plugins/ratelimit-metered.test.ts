/**
 * Work metered outside a request (a realtime session at its close, a batch, the gateway's own embeddings) counts
 * in its caller's tokensPerDay windows through gateway.meterWork: at the key's own level and at the tenant level
 * narrowed by its policy, once however often (and on however many gateways) it is reported, never refused. On
 * PGlite with the memory KV, and on Postgres with Redis (two gateways sharing them).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import type { KV } from '../../core/store/kv.ts';
import { meteredMarker } from '../../plugins/ratelimit/metered.ts';
import { windowsAdmit } from '../../plugins/ratelimit/windows.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { createSharedStores, dropSharedStores, type SharedStores } from '../helpers/cluster.ts';
import { chatConfig, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { admin, bodyReserving, createKey, send } from '../helpers/ratelimit.ts';

const DAY = 86_400_000;
const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;

/** The deployment's token limit is wide: the tests' tenant windows are narrowed by an organization policy. */
const config = (baseUrl: string) => chatConfig(baseUrl).replace('plugins: [auth]', `plugins:
      - auth
      - ratelimit:
          deployment: { tokensPerDay: 1000000 }`);

interface Caller { tenantId?: string; organizationId?: string | null; apiKeyId: string }

/** A realtime session's ending as the realtime endpoint reports it: 150 tokens and some audio. */
function realtimeWork(caller: Caller, fields: Partial<MeteredWork> = {}): MeteredWork {
  const endedAt = Date.now();
  return {
    id: `rt_${randomUUID()}`, source: 'realtime',
    tenantId: caller.tenantId ?? 'default', organizationId: caller.organizationId ?? null, departmentId: null,
    callerKind: 'api_key', apiKeyId: caller.apiKeyId, userId: null,
    endpoint: '/v1/realtime/sessions', modality: 'realtime', provider: 'openai',
    requestedModel: 'plain', model: 'plain', upstreamModel: 'plain',
    usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 }, audioSeconds: 12,
    requests: { total: 1, completed: 1, failed: 0 },
    status: 'completed', startedAt: endedAt - 60_000, endedAt,
    ...fields,
  };
}

/** What a window holds now: a zero-cost probe is admitted and reports the total. */
async function windowUsed(kv: KV, key: string): Promise<number> {
  const probe = await kv.run(windowsAdmit, [{ key, cost: 0, limit: Number.MAX_SAFE_INTEGER, windowMs: DAY }]);
  assert.ok(probe.admitted);
  return probe.windows[0]!.used;
}

function meteredSuite(name: string, shared: boolean): void {
  describe(`ratelimit: metered work (${name})`, { skip: shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false }, () => {
    let fake: FakeOpenAI;
    let stores: SharedStores | undefined;
    let gw: TestGateway;
    /** A second gateway on the same Postgres and Redis (the shared suite only). */
    let peer: TestGateway | undefined;
    const kv = () => gw.gateway.services.kv;

    before(async () => {
      fake = await startFakeOpenAI();
      let options: TestGatewayOptions = {};
      if (shared) {
        stores = await createSharedStores(DATABASE_URL!);
        options = { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: stores.schema, kvPrefix: stores.prefix };
      }
      gw = await startTestGateway(config(fake.baseUrl), options);
      if (shared) peer = await startTestGateway(config(fake.baseUrl), options);
    });
    after(async () => {
      await peer?.close();
      await gw?.close();
      await fake?.close();
      if (shared) await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
    });

    test("a realtime session's tokens count in its key's window, once: the next request that needs more than the rest is refused", async () => {
      const { id, key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
      const window = `ratelimit:apiKey:${id}:tokensPerDay`;
      const work = realtimeWork({ apiKeyId: id });
      await gw.gateway.meterWork(work);
      await gw.gateway.meterWork(work);
      await Promise.all([gw.gateway.meterWork(work), (peer ?? gw).gateway.meterWork(work)]);
      assert.equal(await windowUsed(kv(), window), 150);
      assert.equal(await kv().get(meteredMarker(work.id)), '1');

      const tooMuch = await send(gw.url, (await bodyReserving(60)).body, key);
      assert.equal(tooMuch.status, 429, JSON.stringify(tooMuch.body));
      assert.equal(tooMuch.body.error.code, 'RATE_LIMIT_EXCEEDED');
      assert.deepEqual({ ...tooMuch.body.error.details, retryAfter: 0 }, { level: 'apiKey', retryAfter: 0, limit: 200, windowMs: DAY });
      assert.equal(tooMuch.headers.get('x-ratelimit-remaining'), '50');
      // What is left still fits.
      const fits = await send((peer ?? gw).url, (await bodyReserving(50)).body, key);
      assert.equal(fits.status, 200, JSON.stringify(fits.body));
      assert.equal(fits.headers.get('x-ratelimit-remaining'), '0');
    });

    test('never refused: work over the rest is added all the same; prompt + completion stand in for a missing total', async () => {
      const { id, key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
      const window = `ratelimit:apiKey:${id}:tokensPerDay`;
      await gw.gateway.meterWork(realtimeWork({ apiKeyId: id }, { source: 'batch', modality: 'chat', endpoint: '/v1/chat/completions' }));
      await gw.gateway.meterWork(realtimeWork({ apiKeyId: id }, { usage: { prompt_tokens: 70, completion_tokens: 30, total_tokens: 0 } }));
      assert.equal(await windowUsed(kv(), window), 250);
      assert.equal((await send(gw.url, (await bodyReserving(20)).body, key)).status, 429);
    });

    test('work with no tokens (a video job), or that ended over a day ago, adds nothing', async () => {
      const { id } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
      const window = `ratelimit:apiKey:${id}:tokensPerDay`;
      await gw.gateway.meterWork(realtimeWork({ apiKeyId: id }, {
        source: 'video', modality: 'video', usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, videoSeconds: 8,
      }));
      await gw.gateway.meterWork(realtimeWork({ apiKeyId: id }, { endedAt: Date.now() - DAY - 1000 }));
      assert.equal(await windowUsed(kv(), window), 0);
    });

    test("the tenant window narrowed by the caller's organization policy counts the work once too", async () => {
      const tenantId = `t-${randomUUID().slice(0, 8)}`;
      await admin(gw.url, 'POST', '/tenants', { id: tenantId, name: tenantId });
      const org = await admin(gw.url, 'POST', '/organizations', { name: 'Metered', tenantId });
      await admin(gw.url, 'PUT', `/organizations/${org.id as string}/policy`, { rateLimits: { tokensPerDay: 200 } });
      const { id, key } = await createKey(gw.url, { tenantId, organizationId: org.id });
      const work = realtimeWork({ apiKeyId: id, tenantId, organizationId: org.id as string });
      await Promise.all([gw.gateway.meterWork(work), (peer ?? gw).gateway.meterWork(work)]);
      await gw.gateway.meterWork(work);
      assert.equal(await windowUsed(kv(), `ratelimit:tenant:${tenantId}:tokensPerDay`), 150);
      // The key has no limits of its own: no window at its level.
      assert.equal(await windowUsed(kv(), `ratelimit:apiKey:${id}:tokensPerDay`), 0);

      const refused = await send(gw.url, (await bodyReserving(60)).body, key);
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.deepEqual({ ...refused.body.error.details, retryAfter: 0 }, { level: 'tenant', retryAfter: 0, limit: 200, windowMs: DAY });
      // Another tenant, under the deployment's limit only, has its own window.
      const other = await createKey(gw.url);
      await gw.gateway.meterWork(realtimeWork({ apiKeyId: other.id }));
      assert.equal(await windowUsed(kv(), `ratelimit:tenant:${tenantId}:tokensPerDay`), 150);
    });
  });
}

meteredSuite('PGlite, memory KV', false);
meteredSuite('Postgres, Redis, two gateways', true);
