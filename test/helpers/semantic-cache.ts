/**
 * The semantic-cache tests' gateway: one openai fake that answers chat (a numbered answer per call, so a test
 * tells a replay from a new answer), embeddings (test/fakes/embedder.ts) and a few scripted failures, behind
 * [auth, budget, semantic-cache, usage] on the chat-style routes. Run on the embedded stores, or on Postgres and
 * Redis when `shared` is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { semanticCacheOf } from '../../plugins/semantic-cache/index.ts';
import { answerEmbeddings } from '../fakes/embedder.ts';
import { helloStreamEvents, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { dropSharedStores } from './cluster.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from './gateway.ts';

export const DATABASE_URL = process.env.TEST_DATABASE_URL;
export const REDIS_URL = process.env.TEST_REDIS_URL;
export const TTL_SECONDS = 60;

function yaml(baseUrl: string): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: gpt-4o-mini
    provider: openai
    pricing: {input: 0.15, output: 0.6}
  - id: embed
    provider: openai
routing:
  retries: 0
pipelines:
  - name: chat
    routes: [/v1/chat/completions, /v1/messages, /v1/completions]
    plugins:
      - auth
      - budget
      - semantic-cache:
          embeddingModel: embed
          threshold: 0.85
          ttlSeconds: ${TTL_SECONDS}
      - usage
`;
}

/** What the fake answers: "Answer N to: <last user text>", N counting chat calls; scripted by the user text. */
function answerText(calls: number, body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return `Answer ${calls} to: ${body.prompt}`;
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return `Answer ${calls} to: ${typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content)}`;
}

export interface Fixture {
  fake: FakeOpenAI;
  gw: TestGateway;
  key: string;
  client: OpenAI;
  /** Chat calls the fake received. */
  chatCalls(): number;
  /** Makes the fake's embeddings answer 500 while set. */
  failEmbeddings: boolean;
  /** Moves the gateway's clock. */
  advance(ms: number): void;
  /** Waits for the cache's writes of the answers given so far. */
  stored(): Promise<void>;
  close(): Promise<void>;
}

export async function startFixture(shared: boolean): Promise<Fixture> {
  const stores = { schema: 'aigw_test_' + randomUUID().replace(/-/g, ''), prefix: `aigw-test-${randomUUID()}:`, databaseUrl: DATABASE_URL ?? '' };
  let now = Date.now();
  let chat = 0;
  const fake = await startFakeOpenAI();
  const fixture = {
    failEmbeddings: false,
  } as Fixture;
  fake.handle(async (req, res) => {
    if (req.path.endsWith('/embeddings')) {
      if (fixture.failEmbeddings) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'embeddings are down', type: 'server_error' } }));
        return;
      }
      return answerEmbeddings(res, req.body);
    }
    chat++;
    const text = answerText(chat, req.body);
    if (text.includes('please fail')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'upstream broke', type: 'server_error' } }));
      return;
    }
    if (text.includes('weather')) {
      const call = { id: `call_${chat}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: `chatcmpl-${chat}`, object: 'chat.completion', created: 1_700_000_000, model: String(req.body.model),
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
      }));
      return;
    }
    if (!req.path.endsWith('/chat/completions')) {
      // The legacy completions API (a prompt goes there natively on openai).
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: `cmpl-${chat}`, object: 'text_completion', created: 1_700_000_000, model: String(req.body.model),
        choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 },
      }));
      return;
    }
    if (req.body.stream === true) return writeSplit(res, helloStreamEvents(req.body, text.split(/(?= )/)).map((e) => e.replaceAll('chatcmpl-fake1', `chatcmpl-${chat}`)), 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: `chatcmpl-${chat}`, object: 'chat.completion', created: 1_700_000_000, model: String(req.body.model),
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 },
    }));
  });
  const gw = await startTestGateway(yaml(fake.baseUrl), {
    clock: { now: () => now },
    ...(shared ? { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: stores.schema, kvPrefix: stores.prefix } : {}),
  });
  const key = await createKey(gw);
  return Object.assign(fixture, {
    fake, gw, key,
    client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }),
    chatCalls: () => chat,
    advance: (ms: number) => {
      now += ms;
    },
    stored: () => semanticCacheOf(gw.gateway)!.idle(),
    close: async () => {
      await gw.close();
      await fake.close();
      if (shared) await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
    },
  });
}

export async function admin(gw: TestGateway, path: string, body: unknown): Promise<any> {
  const answer = await postJson(`${gw.url}/admin/v1${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body;
}

export async function createKey(gw: TestGateway, fields: Record<string, unknown> = {}): Promise<string> {
  const body = await admin(gw, '/keys', { name: 'cache test', scopes: { capabilities: ['chat', 'completions', 'budget:read'] }, ...fields });
  return body.key as string;
}

export interface Answer {
  status: number;
  xCache: string | null;
  similarity: string | null;
  requestId: string;
  body: any;
}

/** POSTs a chat-style body; the answer's status, cache headers, request id and body (JSON, or the SSE text). */
export async function ask(f: Fixture, body: Record<string, unknown>, options: { key?: string; path?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const requestId = randomUUID();
  const response = await fetch(`${f.gw.url}${options.path ?? '/v1/chat/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${options.key ?? f.key}`, 'x-request-id': requestId, ...options.headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const isJson = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, xCache: response.headers.get('x-cache'), similarity: response.headers.get('x-cache-similarity'), requestId, body: isJson ? JSON.parse(text) : text };
}

export const chatBody = (content: string, extra: Record<string, unknown> = {}) =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }], ...extra });

/** The content of an SSE chat stream's text, and whether it ended with [DONE]. */
export function streamed(text: string): { content: string; done: boolean; usage: any } {
  const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  const chunks = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
  return {
    content: chunks.map((c) => (c.choices ?? []).map((choice: any) => choice.delta?.content ?? '').join('')).join(''),
    done: events.at(-1) === '[DONE]',
    usage: chunks.find((c) => c.usage)?.usage ?? null,
  };
}
