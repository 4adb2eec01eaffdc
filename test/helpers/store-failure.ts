/**
 * A gateway on a private Redis (test/helpers/own-redis.ts) and the embedded PGlite, with callers that do and do
 * not depend on the KV: a plain key, a key under a budget, a key with its own rate limit. For the tests that
 * freeze and kill the KV.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from './gateway.ts';
import type { OwnRedis } from './own-redis.ts';

export interface Answer {
  status: number;
  body: any;
  /** How long the answer took, in ms. */
  ms: number;
}

/** The chat pipeline refuses on store errors (closed) in both plugins, so that a KV dependency shows as a 503. */
function yaml(baseUrl: string, storage: string): string {
  return `
storage:
${storage}
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: priced
    provider: openai
    pricing: { input: 100, output: 200 }
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      - ratelimit: { onStoreError: closed }
      - budget: { onStoreError: closed }
      - usage: { flushIntervalMs: 50 }
`;
}

export interface StoreFailureRig {
  redis: OwnRedis;
  fake: FakeOpenAI;
  gw: TestGateway;
  /** Keys with nothing that needs the KV (no budget, no rate limit). */
  plain: { key: string; id: string };
  /** A key with a daily budget of its own. */
  budgeted: { key: string; id: string; budgetId: string };
  /** A key with its own requests-per-minute limit. */
  limited: { key: string; id: string };
  /** Every log line of the gateway (level info and up), parsed. */
  logs: Array<Record<string, unknown>>;
  chat(key: string, signal?: AbortSignal): Promise<Answer>;
  models(key: string): Promise<Answer>;
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
  readyz(): Promise<Answer>;
  close(): Promise<void>;
}

/** Every call gives up after this long, so that a hang fails the test instead of stalling it. */
const CLIENT_TIMEOUT_MS = 15_000;

async function timed(call: () => Promise<Response>): Promise<Answer> {
  const started = performance.now();
  const response = await call();
  const text = await response.text();
  const ms = performance.now() - started;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, ms };
}

/** `storage` is the block under `storage:` (indented two spaces), e.g. "  kvTimeoutMs: 300". */
export async function startStoreFailureRig(redis: OwnRedis, storage: string): Promise<StoreFailureRig> {
  const fake = await startFakeOpenAI();
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk, _encoding, done) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } });
  const gw = await startTestGateway(yaml(fake.baseUrl, storage), { env: { REDIS_URL: redis.url }, logger: pino({ level: 'info' }, sink) });
  const signal = () => AbortSignal.timeout(CLIENT_TIMEOUT_MS);
  const admin = (method: string, path: string, body?: unknown) => timed(() => fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: signal(),
  }));
  const newKey = async (fields: Record<string, unknown> = {}) => {
    const created = await postJson(`${gw.url}/admin/v1/keys`, { name: 'store failure', ...fields }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    if (created.status !== 201) throw new Error(`key creation failed: ${created.status} ${JSON.stringify(created.body)}`);
    return { key: created.body.key as string, id: created.body.id as string };
  };
  const plain = await newKey();
  const limited = await newKey({ rateLimits: { requestsPerMinute: 1000 } });
  const budgetedKey = await newKey();
  const budget = await admin('POST', '/budgets', { scope: 'key', scopeId: budgetedKey.id, period: 'daily', limitUsd: 100 });
  if (budget.status !== 201) throw new Error(`budget creation failed: ${budget.status} ${JSON.stringify(budget.body)}`);

  return {
    redis, fake, gw, plain, limited, logs,
    budgeted: { ...budgetedKey, budgetId: budget.body.id as string },
    chat: (key, abort) => timed(() => fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
      signal: abort ?? signal(),
    })),
    models: (key) => timed(() => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, signal: signal() })),
    admin,
    readyz: () => timed(() => fetch(`${gw.url}/readyz`, { signal: signal() })),
    async close() {
      await gw.close();
      await fake.close();
    },
  };
}
