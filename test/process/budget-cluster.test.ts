/**
 * Two gateway processes on one Postgres and one Redis: a USD budget holds exactly across both. The fake upstream
 * reports usage equal to each request's reservation (the prompt as the gateway counts it, plus max_tokens), so a
 * budget of N requests' cost admits exactly N of a concurrent burst split over both processes. A counter lost
 * from Redis is rebuilt from the usage records in Postgres. Each run has its own schema (search_path in the
 * connection string) and Redis prefix (storage.kvPrefix). Runs when TEST_DATABASE_URL and TEST_REDIS_URL are set.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import { chunk, completion, sleep, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN } from '../helpers/gateway.ts';
import { createSharedStores, dropSharedStores, startGateways, stopGateways, type SharedStores } from '../helpers/cluster.ts';
import type { GatewayProcess } from '../helpers/process.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';
/** USD per million tokens: 3 micro-dollars a prompt token, 15 a completion token. */
const IN = 3;
const OUT = 15;
const MESSAGES = [{ role: 'user', content: 'Count to three.' }];
const MAX_TOKENS = 20;

async function admin(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await response.json();
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

async function send(url: string, key: string, stream: boolean): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced', messages: MESSAGES, max_tokens: MAX_TOKENS, stream }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a stream: keep the text
  }
  return { status: response.status, body, text };
}

describe('budgets across two gateway processes on one Redis and one Postgres', { skip: SKIP }, () => {
  let stores: SharedStores | undefined;
  let fake: FakeOpenAI;
  let dir: string;
  const processes: GatewayProcess[] = [];
  let urls: string[] = [];
  /** What one request costs, in micro-dollars: reserved and settled alike. */
  let cost: number;

  before(async () => {
    const prompt = await estimatePromptTokens({ model: 'priced', messages: MESSAGES } as never);
    cost = prompt * IN + MAX_TOKENS * OUT;
    stores = await createSharedStores(DATABASE_URL!);
    fake = await startFakeOpenAI();
    fake.handle(async (req, res) => {
      const model = String(req.body.model);
      const usage = { prompt_tokens: prompt, completion_tokens: Number(req.body.max_tokens), total_tokens: prompt + Number(req.body.max_tokens) };
      await sleep(20); // keep requests in flight together
      if (req.body.stream === true) {
        await writeSplit(res, [chunk(model, { role: 'assistant', content: 'one two three' }), chunk(model, {}, 'stop'), { ...chunk(model, {}), choices: [], usage }]
          .map((c) => `data: ${JSON.stringify(c)}\n\n`).concat('data: [DONE]\n\n'), 0);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...completion(model, 'one two three'), usage }));
    });
    dir = await mkdtemp(join(tmpdir(), 'aigw-budget-cluster-'));
    const configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, `
providers:
  openai:
    baseUrl: ${fake.baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: priced
    provider: openai
    pricing: { input: ${IN}, output: ${OUT} }
storage:
  kvPrefix: "${stores.prefix}"
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      - budget
      - usage: { flushIntervalMs: 100 }
`);
    const env = { DATABASE_URL: stores.databaseUrl, REDIS_URL: REDIS_URL!, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, AIGW_DATA_DIR: join(dir, 'data') };
    urls = await startGateways(2, configFile, env, processes);
  });
  after(async () => {
    await stopGateways(processes);
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
  });

  test('a key budget of exactly N requests: of a concurrent burst over both processes exactly N succeed', async () => {
    const key = await admin(urls[0]!, 'POST', '/keys', { name: 'cluster budget' });
    const N = 7;
    const budget = await admin(urls[1]!, 'POST', '/budgets', { scope: 'key', scopeId: key.id, period: 'daily', limitUsd: (N * cost) / 1e6 });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => send(urls[i % 2]!, key.key, i % 3 === 0)));
    const statuses = replies.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, N, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 402).length, 30 - N, statuses.join(','));
    for (const refused of replies.filter((r) => r.status === 402)) {
      assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');
      assert.deepEqual(refused.body.error.details, { scope: 'key', scopeId: key.id, limit: (N * cost) / 1e6, spent: (N * cost) / 1e6, period: 'daily' });
    }
    // Streams settle when they end; both processes then agree on the exact spend.
    for (const url of urls) {
      const shown = await admin(url, 'GET', `/budgets/${budget.id}`);
      assert.equal(shown.spentUsd, (N * cost) / 1e6);
      assert.equal(shown.remainingUsd, 0);
    }
  });

  test('an organization budget shared by two keys holds across both processes; raising it on one holds on the other', async () => {
    const org = await admin(urls[0]!, 'POST', '/organizations', { name: 'Cluster org' });
    const a = await admin(urls[0]!, 'POST', '/keys', { name: 'a', organizationId: org.id });
    const b = await admin(urls[1]!, 'POST', '/keys', { name: 'b', organizationId: org.id });
    const N = 5;
    const budget = await admin(urls[0]!, 'POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: (N * cost) / 1e6 });
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => send(urls[i % 2]!, (i % 4 < 2 ? a : b).key, i % 5 === 0)));
    assert.equal(replies.filter((r) => r.status === 200).length, N, replies.map((r) => r.status).join(','));
    assert.ok(replies.every((r) => r.status === 200 || r.body.error.details.scope === 'organization'));

    await admin(urls[1]!, 'PUT', `/budgets/${budget.id}`, { limitUsd: ((N + 2) * cost) / 1e6 });
    const more = await Promise.all(Array.from({ length: 6 }, (_, i) => send(urls[i % 2]!, b.key, false)));
    assert.equal(more.filter((r) => r.status === 200).length, 2, more.map((r) => r.status).join(','));
  });

  test('a counter lost from Redis is rebuilt from the usage records in Postgres, the same on both processes', async () => {
    const key = await admin(urls[0]!, 'POST', '/keys', { name: 'rebuilt' });
    const N = 4;
    const budget = await admin(urls[0]!, 'POST', '/budgets', { scope: 'key', scopeId: key.id, period: 'total', limitUsd: (N * cost) / 1e6 });
    for (let i = 0; i < 3; i++) assert.equal((await send(urls[i % 2]!, key.key, i === 1)).status, 200);
    // Wait until both processes have written their usage records (flushIntervalMs 100).
    const client = new pg.Client({ connectionString: stores!.databaseUrl });
    await client.connect();
    try {
      for (let tries = 0; ; tries++) {
        const { rows } = await client.query('SELECT count(*)::int AS n FROM usage_records WHERE api_key_id = $1', [key.id]);
        if (rows[0].n === 3) break;
        assert.ok(tries < 100, `usage records: ${rows[0].n} of 3`);
        await sleep(50);
      }
    } finally {
      await client.end();
    }
    const redis = new Redis(REDIS_URL!);
    try {
      const counters = await redis.keys(`${stores!.prefix}budget:spend:${budget.id}:*`);
      assert.equal(counters.length, 1, 'one counter: the total period');
      await redis.del(...counters);
    } finally {
      redis.disconnect();
    }
    const shown = await Promise.all(urls.map((url) => admin(url, 'GET', `/budgets/${budget.id}`)));
    assert.deepEqual(shown.map((s) => s.spentUsd), [(3 * cost) / 1e6, (3 * cost) / 1e6]);
    const last = await Promise.all(Array.from({ length: 4 }, (_, i) => send(urls[i % 2]!, key.key, false)));
    assert.equal(last.filter((r) => r.status === 200).length, 1, last.map((r) => r.status).join(','));
  });
});
