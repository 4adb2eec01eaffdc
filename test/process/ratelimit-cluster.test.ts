/**
 * Two gateway processes on one Postgres and one Redis: concurrent requests split across both hold a key's limits
 * exactly (per minute, per day, per token). Each run works in its own Postgres schema (search_path in the
 * connection string) and its own Redis key prefix (storage.kvPrefix). Runs when TEST_DATABASE_URL and
 * TEST_REDIS_URL are set (CI sets both).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig } from '../helpers/gateway.ts';
import { createSharedStores, dropSharedStores, startGateways, stopGateways, type SharedStores } from '../helpers/cluster.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { admin, assertRefusals, bodyReserving, burst, createKey, fullUsageHandler, send, tally } from '../helpers/ratelimit.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';
const DAY = 86_400_000;
const hello = () => ({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] });

describe('ratelimit across two gateway processes on one Redis and one Postgres', { skip: SKIP }, () => {
  let stores: SharedStores | undefined;
  let fake: FakeOpenAI;
  let dir: string;
  const processes: GatewayProcess[] = [];
  let urls: string[] = [];

  before(async () => {
    stores = await createSharedStores(DATABASE_URL!);
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-ratelimit-cluster-'));
    const configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, chatConfig(fake.baseUrl, `
  - name: messages
    routes: [/v1/messages]
    plugins:
      - auth
      - ratelimit: { deployment: { requestsPerMinute: 6 } }
  - name: legacy
    routes: [/v1/completions]
    plugins:
      - auth
      - ratelimit: { ip: { requestsPerMinute: 5 } }
storage:
  kvPrefix: "${stores.prefix}"
`).replace('plugins: [auth]', 'plugins: [auth, ratelimit]'));
    const env = { DATABASE_URL: stores.databaseUrl, REDIS_URL: REDIS_URL!, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, AIGW_DATA_DIR: join(dir, 'data') };
    urls = await startGateways(2, configFile, env, processes);
  });
  after(async () => {
    await stopGateways(processes);
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
  });

  test('requestsPerMinute K: of 3K concurrent requests over both processes exactly K succeed', async () => {
    const { id, key } = await createKey(urls[0]!, { rateLimits: { requestsPerMinute: 10 } });
    const replies = await burst(urls, 30, hello, key);
    assert.deepEqual(tally(replies), { ok: 10, limited: 20, other: [] });
    assertRefusals(replies, 'apiKey', 10, 60_000);
    // The window lives under this run's prefix (storage.kvPrefix): a hash of its buckets and their starts.
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const tables = await client.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [stores!.schema]).finally(() => client.end());
    assert.ok(tables.rows[0].n > 0, 'the processes work in this run\'s schema');
    const redis = new Redis(REDIS_URL!);
    try {
      const window = `${stores!.prefix}ratelimit:apiKey:${id}:requestsPerMinute`;
      assert.equal(await redis.exists(`${window}:buckets`, `${window}:starts`), 2);
      assert.equal(await redis.hget(`${window}:buckets`, 'sum'), '10');
    } finally {
      redis.disconnect();
    }
  });

  test('requestsPerDay K: exactly K succeed, refused with windowMs 86400000', async () => {
    const { key } = await createKey(urls[1]!, { rateLimits: { requestsPerDay: 7 } });
    const replies = await burst(urls, 21, hello, key);
    assert.deepEqual(tally(replies), { ok: 7, limited: 14, other: [] });
    assertRefusals(replies, 'apiKey', 7, DAY);
  });

  test('tokensPerDay: exactly the requests whose tokens fit succeed, plain and streamed', async () => {
    const { body, prompt } = await bodyReserving(40);
    fake.handle(fullUsageHandler(prompt));
    try {
      const { key } = await createKey(urls[0]!, { rateLimits: { tokensPerDay: 5 * 40 } });
      const replies = await burst(urls, 15, (i) => ({ ...body, stream: i % 3 === 0 }), key);
      assert.deepEqual(tally(replies), { ok: 5, limited: 10, other: [] });
      assertRefusals(replies, 'apiKey', 200, DAY);
    } finally {
      fake.reset();
    }
  });

  test('a reservation settled on one process is what the other sees', async () => {
    const { key } = await createKey(urls[0]!, { rateLimits: { tokensPerDay: 200 } });
    const { body } = await bodyReserving(60);
    const first = await send(urls[0]!, body, key);
    assert.equal(first.headers.get('x-ratelimit-remaining'), String(200 - 60));
    const streamed = await send(urls[1]!, { ...body, stream: true }, key); // settles to the fake's 11 tokens
    assert.equal(streamed.headers.get('x-ratelimit-remaining'), String(200 - 11 - 60));
    const third = await send(urls[0]!, body, key);
    assert.equal(third.headers.get('x-ratelimit-remaining'), String(200 - 22 - 60));
  });

  test('tenant level: a deployment limit narrowed by an organization policy holds across both processes', async () => {
    const tenantId = `t-${randomUUID().slice(0, 8)}`;
    await admin(urls[0]!, 'POST', '/tenants', { id: tenantId, name: tenantId });
    const org = await admin(urls[1]!, 'POST', '/organizations', { name: 'Narrow', tenantId });
    await admin(urls[0]!, 'PUT', `/organizations/${org.id as string}/policy`, { rateLimits: { requestsPerMinute: 4 } });
    const { id, key } = await createKey(urls[1]!, { tenantId, organizationId: org.id, rateLimits: { requestsPerMinute: 100 } });
    const body = { model: 'plain', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] };
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => send(urls[i % 2]!, body, key, '/v1/messages')));
    assert.deepEqual(tally(replies), { ok: 4, limited: 8, other: [] });
    assertRefusals(replies, 'tenant', 4, 60_000);
    // All or nothing: the key's window, checked before the tenant's, holds only the admitted requests.
    const redis = new Redis(REDIS_URL!);
    try {
      assert.equal(await redis.hget(`${stores!.prefix}ratelimit:apiKey:${id}:requestsPerMinute:buckets`, 'sum'), '4');
    } finally {
      redis.disconnect();
    }
  });

  test('ip level: one address over both processes, whatever the key', async () => {
    const keys = await Promise.all([0, 1, 2].map(() => createKey(urls[0]!, { scopes: { capabilities: ['completions'] } })));
    const replies = await Promise.all(Array.from({ length: 15 }, (_, i) => send(urls[i % 2]!, hello(), keys[i % 3]!.key, '/v1/completions')));
    assert.deepEqual(tally(replies), { ok: 5, limited: 10, other: [] });
    assertRefusals(replies, 'ip', 5, 60_000);
  });
});
