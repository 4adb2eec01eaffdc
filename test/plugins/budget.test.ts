/**
 * The budget plugin through real in-process gateways on the embedded stores (memory KV, PGlite): refusals with
 * their exact envelope, reservation and settlement (plain and streamed), every scope, periods on a movable
 * clock, counters rebuilt from usage records after a restart, unpriced models and store failures.
 */
import { countersAdd } from '../../plugins/budget/counters.ts';
import { interceptOperation } from '../helpers/kv-ops.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import { parseConfig } from '../helpers/config.ts';
import { createGateway } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { openDatabase } from '../../core/store/database.ts';
import { completion, helloStreamEvents, sleep, startFakeOpenAI, writeSplit, type FakeOpenAI, type FakeHandler } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/eventually.ts';

/** USD per million tokens: a prompt token costs 100 micro-dollars, a completion token 200. */
const IN = 100;
const OUT = 200;
const MESSAGES = [{ role: 'user', content: 'hi' }];

function budgetYaml(baseUrl: string, budget = '{}', extra = ''): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: priced
    provider: openai
    pricing: { input: ${IN}, output: ${OUT} }
  - id: capped
    provider: openai
    max_output_tokens: 10
    pricing: { input: ${IN}, output: ${OUT} }
  - id: unpriced
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      - budget: ${budget}
      - usage
  - name: messages
    routes: [/v1/messages]
    plugins:
      - auth
      - budget: { onStoreError: open }
${extra}`;
}

/** Answers with usage equal to the reservation: the prompt as the gateway counts it, max_tokens completion tokens. */
const exact: FakeHandler = async (req, res) => {
  const usage = { prompt_tokens: await estimatePromptTokens(req.body as never), completion_tokens: Number(req.body.max_tokens ?? 2) };
  if (req.body.stream === true) {
    const events = helloStreamEvents(req.body).map((e) => e.includes('"usage":{') ? e.replace(/"usage":\{[^}]*\}/, `"usage":${JSON.stringify({ ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens })}`) : e);
    return writeSplit(res, events, 0);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...completion(String(req.body.model), 'Hello'), usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }));
};

interface Answer { status: number; body: any; headers?: Headers }

async function admin(gw: { url: string }, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function ok(answer: Promise<Answer>, status = 200): Promise<any> {
  const a = await answer;
  assert.equal(a.status, status, JSON.stringify(a.body));
  return a.body;
}

async function newKey(gw: { url: string }, fields: Record<string, unknown> = {}): Promise<{ key: string; id: string }> {
  const body = await ok(admin(gw, 'POST', '/keys', { name: 'budget test', scopes: { capabilities: ['chat', 'budget:read'] }, ...fields }), 201);
  return { key: body.key, id: body.id };
}

const newBudget = (gw: { url: string }, fields: Record<string, unknown>) => ok(admin(gw, 'POST', '/budgets', fields), 201);

function chat(gw: { url: string }, key: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  return postJson(`${gw.url}/v1/chat/completions`, { model: 'priced', messages: MESSAGES, max_tokens: 5, ...extra }, { authorization: `Bearer ${key}` });
}

async function streamChat(gw: { url: string }, key: string, extra: Record<string, unknown> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced', messages: MESSAGES, max_tokens: 5, stream: true, ...extra }),
  });
  return { status: response.status, text: await response.text() };
}

/** The caller's budgets from GET /v1/budget, by budget id. */
async function budgetsOf(gw: { url: string }, key: string): Promise<Record<string, any>> {
  const response = await fetch(`${gw.url}/v1/budget`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as any;
  assert.equal(response.status, 200, JSON.stringify(body));
  return Object.fromEntries((body.data as any[]).map((b) => [b.id, b]));
}

function assertExceeded(answer: Answer, details: Record<string, unknown>): void {
  assert.equal(answer.status, 402, JSON.stringify(answer.body));
  assert.deepEqual(Object.keys(answer.body), ['error']);
  assert.deepEqual(Object.keys(answer.body.error).sort(), ['code', 'details', 'message']);
  assert.equal(answer.body.error.code, 'BUDGET_EXCEEDED');
  assert.match(answer.body.error.message, /^Budget exceeded: /);
  assert.deepEqual(answer.body.error.details, details);
}

const usd = (micros: number) => micros / 1e6;

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;

/** The single-instance suite, on the embedded stores and, when CI gives them, on a Postgres schema and a Redis prefix. */
function pluginSuite(name: string, shared: boolean): void {
  describe(`budget plugin (${name})`, { skip: shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false }, () => {
    const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
    const prefix = `aigw-test-${randomUUID()}:`;
    let fake: FakeOpenAI;
    let gw: TestGateway;
    /** The prompt tokens of MESSAGES as the gateway counts them, and what a request with max_tokens 5 costs. */
    let prompt: number;
    let cost5: number;

    before(async () => {
      fake = await startFakeOpenAI();
      fake.handle(exact);
      gw = await startTestGateway(budgetYaml(fake.baseUrl), shared
        ? { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: schema, kvPrefix: prefix }
        : {});
      prompt = await estimatePromptTokens({ model: 'priced', messages: MESSAGES } as never);
      cost5 = prompt * IN + 5 * OUT;
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
      if (shared) await dropShared(schema, prefix);
    });

    test('a key budget refuses once spent: 402 BUDGET_EXCEEDED with the exact envelope, and the provider is not called', async () => {
      const { key, id } = await newKey(gw);
      await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: usd(2 * cost5) });
      assert.equal((await chat(gw, key)).status, 200);
      assert.equal((await chat(gw, key)).status, 200);
      const before = fake.requests.length;
      const refused = await chat(gw, key);
      assertExceeded(refused, { scope: 'key', scopeId: id, limit: usd(2 * cost5), spent: usd(2 * cost5), period: 'daily' });
      assert.equal(fake.requests.length, before);
      // A cheaper request that still fits would pass; here nothing is left at all.
      assertExceeded(await chat(gw, key, { max_tokens: 1 }), { scope: 'key', scopeId: id, limit: usd(2 * cost5), spent: usd(2 * cost5), period: 'daily' });
    });

    test('a request whose estimate does not fit is refused though the budget is not used up; a smaller one fits', async () => {
      const { key, id } = await newKey(gw);
      const limit = prompt * IN + 3 * OUT;
      await newBudget(gw, { scope: 'key', scopeId: id, period: 'monthly', limitUsd: usd(limit) });
      assertExceeded(await chat(gw, key, { max_tokens: 4 }), { scope: 'key', scopeId: id, limit: usd(limit), spent: 0, period: 'monthly' });
      assert.equal((await chat(gw, key, { max_tokens: 3 })).status, 200);
      const [shown] = Object.values(await budgetsOf(gw, key));
      assert.equal(shown.spent_usd, usd(limit));
      assert.equal(shown.remaining_usd, 0);
    });

    test('a burst of concurrent requests: exactly the ones that fit succeed, and the spend is exact', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'total', limitUsd: usd(4 * cost5) });
      const answers = await Promise.all(Array.from({ length: 12 }, () => chat(gw, key)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [...Array(4).fill(200), ...Array(8).fill(402)]);
      assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, usd(4 * cost5));
    });

    test('non-streaming: the estimate is reserved while the request runs, then settled to the real cost', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      fake.handle(async (req, res) => {
        await gate;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(String(req.body.model), 'Hi'))); // usage 9 prompt, 2 completion tokens
      });
      try {
        const seen = fake.requests.length;
        const pending = chat(gw, key, { max_tokens: 50 });
        await eventually(async () => assert.ok(fake.requests.length > seen));
        assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, usd(prompt * IN + 50 * OUT), 'the estimate is held');
        release();
        assert.equal((await pending).status, 200);
        assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, usd(9 * IN + 2 * OUT), 'settled to the usage');
      } finally {
        fake.handle(exact);
      }
    });

    test('streaming: the estimate is held until the stream ends, then settled to the usage of its last chunk', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      fake.handle(async (req, res) => {
        const events = helloStreamEvents(req.body); // usage: 9 prompt, 2 completion tokens
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events[0]);
        await gate;
        for (const event of events.slice(1)) res.write(event);
        res.end();
      });
      try {
        const seen = fake.requests.length;
        const pending = streamChat(gw, key, { max_tokens: 40 });
        await eventually(async () => assert.ok(fake.requests.length > seen));
        await sleep(50);
        assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, usd(prompt * IN + 40 * OUT), 'the estimate is held');
        release();
        const streamed = await pending;
        assert.equal(streamed.status, 200);
        assert.match(streamed.text, /data: \[DONE\]/);
        await eventually(async () => assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, usd(9 * IN + 2 * OUT)));
      } finally {
        fake.handle(exact);
      }
    });

    test('an upstream failure before any answer gives the whole reservation back, streamed or not', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      fake.handle((_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
      });
      try {
        assert.equal((await chat(gw, key)).status, 502);
        assert.equal((await streamChat(gw, key)).status, 502);
        assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, 0);
      } finally {
        fake.handle(exact);
      }
    });

    test('the completion estimate: max_tokens, else the model\'s max_output_tokens, else defaultCompletionTokens; times n', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      const heldWith = async (body: Record<string, unknown>): Promise<number> => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        fake.handle(async (req, res) => {
          await gate;
          await exact(req, res, undefined as never);
        });
        try {
          const seen = fake.requests.length;
          const pending = postJson(`${gw.url}/v1/chat/completions`, { messages: MESSAGES, ...body }, { authorization: `Bearer ${key}` });
          await eventually(async () => assert.ok(fake.requests.length > seen));
          const before = (await budgetsOf(gw, key))[budget.id].spent_usd;
          release();
          assert.equal((await pending).status, 200);
          return Math.round(before * 1e6);
        } finally {
          fake.handle(exact);
        }
      };
      const spent = async () => Math.round((await budgetsOf(gw, key))[budget.id].spent_usd * 1e6);
      let base = await spent();
      assert.equal(await heldWith({ model: 'priced', max_completion_tokens: 7, max_tokens: 30 }) - base, prompt * IN + 7 * OUT);
      base = await spent();
      assert.equal(await heldWith({ model: 'capped' }) - base, prompt * IN + 10 * OUT);
      base = await spent();
      assert.equal(await heldWith({ model: 'priced' }) - base, prompt * IN + 1024 * OUT);
      base = await spent();
      assert.equal(await heldWith({ model: 'priced', max_tokens: 3, n: 2 }) - base, prompt * IN + 6 * OUT);
    });

    test('organization and department budgets apply to every key in them; a refusal reserves nothing on any of them', async () => {
      const org = await ok(admin(gw, 'POST', '/organizations', { name: 'Budgeted org' }), 201);
      const dept = await ok(admin(gw, 'POST', '/departments', { name: 'Budgeted dept', organizationId: org.id }), 201);
      const orgBudget = await newBudget(gw, { scope: 'organization', scopeId: org.id, period: 'daily', limitUsd: usd(3 * cost5) });
      const deptBudget = await newBudget(gw, { scope: 'department', scopeId: dept.id, period: 'daily', limitUsd: usd(2 * cost5) });
      const a = await newKey(gw, { organizationId: org.id });
      const b = await newKey(gw, { organizationId: org.id, departmentId: dept.id });
      const c = await newKey(gw, { organizationId: org.id, departmentId: dept.id });
      // c's own budget is smaller than one request: refused at the key, and org and department keep nothing.
      await newBudget(gw, { scope: 'key', scopeId: c.id, period: 'daily', limitUsd: usd(cost5 - 1) });
      assertExceeded(await chat(gw, c.key), { scope: 'key', scopeId: c.id, limit: usd(cost5 - 1), spent: 0, period: 'daily' });
      let shown = await budgetsOf(gw, c.key);
      assert.equal(shown[orgBudget.id].spent_usd, 0, 'nothing reserved on the organization');
      assert.equal(shown[deptBudget.id].spent_usd, 0, 'nothing reserved on the department');

      assert.equal((await chat(gw, b.key)).status, 200);
      assert.equal((await chat(gw, b.key)).status, 200);
      assertExceeded(await chat(gw, b.key), { scope: 'department', scopeId: dept.id, limit: usd(2 * cost5), spent: usd(2 * cost5), period: 'daily' });
      assert.equal((await chat(gw, a.key)).status, 200, 'a is outside the department');
      assertExceeded(await chat(gw, a.key), { scope: 'organization', scopeId: org.id, limit: usd(3 * cost5), spent: usd(3 * cost5), period: 'daily' });
      shown = await budgetsOf(gw, b.key);
      assert.deepEqual(Object.keys(shown).sort(), [orgBudget.id, deptBudget.id].sort());
      assert.equal(shown[orgBudget.id].spent_usd, usd(3 * cost5));

      // Raising the limit through the admin API holds at once.
      await ok(admin(gw, 'PUT', `/budgets/${orgBudget.id}`, { limitUsd: usd(4 * cost5) }));
      assert.equal((await chat(gw, a.key)).status, 200);
      // Deleting a budget stops it from applying.
      await ok(admin(gw, 'DELETE', `/budgets/${deptBudget.id}`));
      await ok(admin(gw, 'PUT', `/budgets/${orgBudget.id}`, { limitUsd: 1 }));
      assert.equal((await chat(gw, b.key)).status, 200);
    });

    test('one KV call reads the budget lists, one reserves on every budget, one settles', async () => {
      const org = await ok(admin(gw, 'POST', '/organizations', { name: 'Counted org' }), 201);
      const { key, id } = await newKey(gw, { organizationId: org.id });
      const orgBudget = await newBudget(gw, { scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: 1 });
      const keyBudget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      assert.equal((await chat(gw, key)).status, 200, 'the first request rebuilds the counters');
      const kv = gw.gateway.services.kv;
      const calls: string[] = [];
      const original = { get: kv.get, mget: kv.mget };
      kv.get = (k) => (k.startsWith('budget:') && calls.push('get'), original.get.call(kv, k));
      kv.mget = (keys) => (calls.push(`mget ${keys.length}`), original.mget.call(kv, keys));
      const undo = interceptOperation(kv, countersAdd.name, (adds: unknown[], run) => (calls.push(`countersAdd ${adds.length}`), run()));
      fake.handle((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(String(req.body.model), 'Hi'))); // usage 9 prompt, 2 completion tokens
      });
      try {
        assert.equal((await chat(gw, key)).status, 200);
        await eventually(async () => assert.deepEqual(calls, ['mget 3', 'countersAdd 2', 'countersAdd 2']));
      } finally {
        delete (kv as Partial<typeof kv>).get;
        delete (kv as Partial<typeof kv>).mget;
        undo();
        fake.handle(exact);
      }
      const shown = await budgetsOf(gw, key);
      assert.equal(shown[orgBudget.id].spent_usd, usd(cost5 + 9 * IN + 2 * OUT));
      assert.equal(shown[keyBudget.id].spent_usd, usd(cost5 + 9 * IN + 2 * OUT));
    });

    test('a deployment budget caps every caller of its tenant, and only that tenant', async () => {
      await ok(admin(gw, 'POST', '/tenants', { id: 'budgeted', name: 'Budgeted tenant' }), 201);
      const budget = await newBudget(gw, { tenantId: 'budgeted', scope: 'deployment', period: 'daily', limitUsd: usd(2 * cost5) });
      assert.equal(budget.scopeId, null);
      const one = await newKey(gw, { tenantId: 'budgeted' });
      const two = await newKey(gw, { tenantId: 'budgeted' });
      const outside = await newKey(gw);
      assert.equal((await chat(gw, one.key)).status, 200);
      assert.equal((await chat(gw, two.key)).status, 200);
      assertExceeded(await chat(gw, one.key), { scope: 'deployment', scopeId: null, limit: usd(2 * cost5), spent: usd(2 * cost5), period: 'daily' });
      assertExceeded(await chat(gw, two.key), { scope: 'deployment', scopeId: null, limit: usd(2 * cost5), spent: usd(2 * cost5), period: 'daily' });
      assert.equal((await chat(gw, outside.key)).status, 200);
    });

    test('the Messages endpoint is budgeted too, and answers 402 in its own envelope', async () => {
      const { key, id } = await newKey(gw);
      await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 0 });
      const refused = await postJson(`${gw.url}/v1/messages`, { model: 'priced', max_tokens: 5, messages: MESSAGES }, { authorization: `Bearer ${key}` });
      assert.equal(refused.status, 402, JSON.stringify(refused.body));
      assert.equal(refused.body.type, 'error');
      assert.match(refused.body.error.message, /^Budget exceeded: /);
    });

    test('a model without pricing passes and counts nothing (logged once); a budget-free caller is never checked', async () => {
      const { key, id } = await newKey(gw);
      const budget = await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 0 });
      assert.equal((await chat(gw, key, { model: 'unpriced' })).status, 200);
      assert.equal((await chat(gw, key, { model: 'unpriced' })).status, 200);
      assert.equal((await budgetsOf(gw, key))[budget.id].spent_usd, 0);
      const free = await newKey(gw);
      assert.equal((await chat(gw, free.key)).status, 200);
      assert.deepEqual(await budgetsOf(gw, free.key), {});
    });

    test('store failures: closed refuses with 503 STORE_UNAVAILABLE, open lets through, both recover by themselves', async () => {
      const { key, id } = await newKey(gw);
      await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      const kv = gw.gateway.services.kv;
      const undo = interceptOperation(kv, countersAdd.name, async () => {
        throw new Error('the KV is down');
      });
      try {
        const refused = await chat(gw, key);
        assert.equal(refused.status, 503, JSON.stringify(refused.body));
        assert.deepEqual(refused.body, { error: { code: 'STORE_UNAVAILABLE', message: refused.body.error.message, details: { plugin: 'budget' } } });
        assert.equal(refused.headers!.get('retry-after'), '1');
        const open = await postJson(`${gw.url}/v1/messages`, { model: 'priced', max_tokens: 5, messages: MESSAGES }, { authorization: `Bearer ${key}` });
        assert.equal(open.status, 200, JSON.stringify(open.body));
      } finally {
        undo();
      }
      assert.equal((await chat(gw, key)).status, 200);
    });
  });
}

async function dropShared(schema: string, prefix: string): Promise<void> {
  const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
  const redis = new Redis(REDIS_URL!);
  try {
    const leftover = await redis.keys(prefix + '*');
    if (leftover.length > 0) await redis.del(...leftover);
  } finally {
    redis.disconnect();
  }
}

pluginSuite('memory KV, PGlite', false);
pluginSuite('Redis, Postgres', true);

describe('budget plugin: unpricedModels refuse, and the store-error log', () => {
  test('refuse answers 403 MODEL_NOT_ALLOWED for callers under a budget; the warning and the store errors are logged', async () => {
    const fake = await startFakeOpenAI();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    const gw = await startTestGateway(budgetYaml(fake.baseUrl, '{ unpricedModels: refuse }'), { logger: pino({ level: 'info' }, sink) });
    try {
      const { key, id } = await newKey(gw);
      const free = await newKey(gw);
      assert.equal((await chat(gw, free.key, { model: 'unpriced' })).status, 200, 'no budget applies: nothing to refuse');
      await newBudget(gw, { scope: 'key', scopeId: id, period: 'daily', limitUsd: 1 });
      for (let i = 0; i < 2; i++) {
        const refused = await chat(gw, key, { model: 'unpriced' });
        assert.equal(refused.status, 403);
        assert.deepEqual(refused.body.error.details, { model: 'unpriced', reason: 'unpriced' });
        assert.equal(refused.body.error.code, 'MODEL_NOT_ALLOWED');
      }
      assert.equal(lines.filter((l) => String(l.msg).includes('"unpriced" has no pricing')).length, 1, 'logged once per model');

      const kv = gw.gateway.services.kv;
      const undo = interceptOperation(kv, countersAdd.name, async () => {
        throw new Error('the KV is down');
      });
      try {
        for (let i = 0; i < 3; i++) assert.equal((await chat(gw, key)).status, 503);
      } finally {
        undo();
      }
      assert.equal((await chat(gw, key)).status, 200);
      const failed = lines.filter((l) => l.plugin === 'budget' && l.level === 40 && String(l.msg).startsWith('budget: a store failed'));
      assert.equal(failed.length, 1, 'one line per interval, with the running count');
      assert.equal(failed[0]!.onStoreError, 'closed');
      assert.equal(failed[0]!.err, 'the KV is down');
      assert.ok(lines.some((l) => l.msg === 'budget: the stores answer again' && l.storeErrors === 3));
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('budget periods and restarts', () => {
  let fake: FakeOpenAI;
  let prompt: number;
  let cost5: number;

  before(async () => {
    fake = await startFakeOpenAI();
    fake.handle(exact);
    prompt = await estimatePromptTokens({ model: 'priced', messages: MESSAGES } as never);
    cost5 = prompt * IN + 5 * OUT;
  });
  after(async () => {
    await fake?.close();
  });

  test('daily budgets start again at midnight UTC, monthly ones on the first of the month, total ones never', async () => {
    let now = Date.UTC(2031, 0, 31, 23, 59, 0);
    const gw = await startTestGateway(budgetYaml(fake.baseUrl), { clock: { now: () => now } });
    try {
      const keys = { daily: await newKey(gw), monthly: await newKey(gw), total: await newKey(gw) };
      const ids: Record<string, string> = {};
      for (const [period, k] of Object.entries(keys)) {
        ids[period] = (await newBudget(gw, { scope: 'key', scopeId: k.id, period, limitUsd: usd(cost5) })).id;
        assert.equal((await chat(gw, k.key)).status, 200);
        assert.equal((await chat(gw, k.key)).status, 402);
      }
      const shown = async (period: 'daily' | 'monthly' | 'total') => (await budgetsOf(gw, keys[period].key))[ids[period]!];
      assert.deepEqual(
        { start: (await shown('daily')).period_start, resets: (await shown('daily')).resets_at },
        { start: '2031-01-31T00:00:00.000Z', resets: '2031-02-01T00:00:00.000Z' });
      assert.deepEqual(
        { start: (await shown('monthly')).period_start, resets: (await shown('monthly')).resets_at },
        { start: '2031-01-01T00:00:00.000Z', resets: '2031-02-01T00:00:00.000Z' });
      assert.deepEqual({ start: (await shown('total')).period_start, resets: (await shown('total')).resets_at }, { start: null, resets: null });

      now = Date.UTC(2031, 1, 1, 0, 0, 1); // one minute later: a new day and a new month
      assert.equal((await shown('daily')).spent_usd, 0);
      assert.equal((await shown('daily')).resets_at, '2031-02-02T00:00:00.000Z');
      assert.equal((await shown('monthly')).resets_at, '2031-03-01T00:00:00.000Z');
      assert.equal((await chat(gw, keys.daily.key)).status, 200);
      assert.equal((await chat(gw, keys.monthly.key)).status, 200);
      assert.equal((await chat(gw, keys.total.key)).status, 402);

      now = Date.UTC(2031, 1, 2, 12, 0, 0); // the next day, same month
      assert.equal((await chat(gw, keys.daily.key)).status, 200);
      assert.equal((await chat(gw, keys.monthly.key)).status, 402);
    } finally {
      await gw.close();
    }
  });

  test('after a restart on the same data folder (memory KV lost), counters are rebuilt from the usage records of their period', async () => {
    let now = Date.UTC(2031, 4, 10, 12, 0, 0);
    const clock = { now: () => now };
    const first = await startTestGateway(budgetYaml(fake.baseUrl), { clock });
    try {
      const { key, id } = await newKey(first);
      const daily = await newBudget(first, { scope: 'key', scopeId: id, period: 'daily', limitUsd: usd(3 * cost5) });
      const total = await newBudget(first, { scope: 'key', scopeId: id, period: 'total', limitUsd: usd(4 * cost5) });
      assert.equal((await chat(first, key)).status, 200);
      assert.equal((await chat(first, key)).status, 200);
      assert.equal((await budgetsOf(first, key))[daily.id].spent_usd, usd(2 * cost5));
      await first.gateway.close(); // flushes the usage records; the memory KV and its counters are gone

      const restart = async () => {
        const loaded = await parseConfig(budgetYaml(fake.baseUrl), {
          file: join(first.configDir, 'pipelines.yaml'),
          env: { AIGW_DATA_DIR: first.dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN },
        });
        const gateway = await createGateway(loaded, { logger: silentLogger(), clock });
        return { gateway, url: await gateway.listen(0) };
      };
      let second = await restart();
      try {
        const shown = await budgetsOf(second, key);
        assert.equal(shown[daily.id].spent_usd, usd(2 * cost5), 'rebuilt: today');
        assert.equal(shown[total.id].spent_usd, usd(2 * cost5), 'rebuilt: all time');
        assert.equal((await chat(second, key)).status, 200);
        assertExceeded(await chat(second, key), { scope: 'key', scopeId: id, limit: usd(3 * cost5), spent: usd(3 * cost5), period: 'daily' });
      } finally {
        await second.gateway.close();
      }

      now = Date.UTC(2031, 4, 11, 8, 0, 0); // the next day: yesterday's records count for the total only
      second = await restart();
      try {
        const shown = await budgetsOf(second, key);
        assert.equal(shown[daily.id].spent_usd, 0);
        assert.equal(shown[total.id].spent_usd, usd(3 * cost5));
        assert.equal((await chat(second, key)).status, 200);
        assertExceeded(await chat(second, key), { scope: 'key', scopeId: id, limit: usd(4 * cost5), spent: usd(4 * cost5), period: 'total' });
      } finally {
        await second.gateway.close();
      }
    } finally {
      await first.close();
    }
  });
});
