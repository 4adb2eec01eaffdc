/**
 * Response stages and their order, end to end: a redaction plugin written as a plain module (e-mail addresses
 * scrubbed from chunks and complete answers; a secret marker blocks the answer with GUARD_BLOCKED), an observing
 * plugin on either side of it, and the real usage plugin. Which answer each sees depends only on where it is
 * listed: a stage nearer the dispatcher acts first, and what it changes is what the plugins listed before it see.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { completion, helloStreamEvents, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { dropSharedStores } from '../helpers/cluster.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createKey, recordsOf } from '../helpers/usage.ts';

const PUBLIC = new URL('../../core/public/plugin.ts', import.meta.url).href;
const PROBE = '__aigwContractStages';
const MARKER = 'TOP-SECRET';

interface Probe {
  /** The text each observer saw, by its label. */
  seen: Record<string, string>;
  /** How many chunks the redactor released at end(), per stream. */
  released: number[];
}
const globals = globalThis as unknown as Record<typeof PROBE, Probe>;
const probe = (): Probe => globals[PROBE];

/**
 * Per request, x-redact-window makes it hold that many chunks back and check the marker across them (a marker
 * split over chunks); x-redact-hold-back declares another holdBack than the window, to overstep it.
 */
const REDACT = `
import { definePlugin, GatewayError } from '${PUBLIC}';
const EMAIL = /[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+/g;
const scrub = (text) => text.replace(EMAIL, '[email]');
const textOf = (chunk) => chunk.choices.map((c) => c.delta.content ?? '').join('');
const scrubbed = (chunk) => ({ ...chunk, choices: chunk.choices.map((c) => (c.delta.content ? { ...c, delta: { ...c.delta, content: scrub(c.delta.content) } } : c)) });

export default definePlugin({
  name: 'redact',
  description: 'Scrubs e-mail addresses from answers and blocks answers that carry the secret marker.',
  configSchema: {
    type: 'object', additionalProperties: false,
    properties: { marker: { type: 'string', minLength: 1, description: 'Text that blocks the answer.' } },
    required: ['marker'],
  },
  setup(config) {
    const blocked = () => new GatewayError('GUARD_BLOCKED', 'The answer was blocked by policy', { guard: 'redact' });
    return async (ctx, next) => {
      const window = Number(ctx.get('x-redact-window') || 0);
      const held = [];
      ctx.state.gw.stage({
        holdBack: ctx.get('x-redact-hold-back') ? Number(ctx.get('x-redact-hold-back')) : window,
        result(result) {
          if (result.choices.some((c) => (c.message.content ?? '').includes(config.marker))) throw blocked();
          return { ...result, choices: result.choices.map((c) => ({ ...c, message: { ...c.message, content: scrub(c.message.content ?? '') } })) };
        },
        chunk(chunk) {
          held.push(chunk);
          if (held.map(textOf).join('').includes(config.marker)) throw blocked();
          return held.length > window ? held.splice(0, held.length - window).map(scrubbed) : [];
        },
        end() {
          globalThis.${PROBE}.released.push(held.length);
          return held.splice(0).map(scrubbed);
        },
      });
      await next();
    };
  },
});
`;

const OBSERVE = `
import { definePlugin } from '${PUBLIC}';
export default definePlugin({
  name: 'observe',
  description: 'Keeps the answer text it saw, for the test to read.',
  configSchema: { type: 'object', additionalProperties: false, properties: { label: { type: 'string', description: 'Where it keeps the text.' } }, required: ['label'] },
  setup({ label }) {
    const keep = (text) => { const seen = globalThis.${PROBE}.seen; seen[label] = (seen[label] ?? '') + text; };
    return async (ctx, next) => {
      ctx.state.gw.stage({
        result(result) { for (const c of result.choices) keep(c.message.content ?? ''); },
        chunk(chunk) { for (const c of chunk.choices) keep(c.delta.content ?? ''); },
      });
      await next();
    };
  },
});
`;

function stagesConfig(baseUrl: string, pipeline: string[]): string {
  return `plugins: [./redact.mjs, ./observe.mjs]
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: plain
    provider: openai
routing:
  retries: 0
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
${pipeline.map((entry) => `      - ${entry}`).join('\n')}
`;
}

const REDACT_ENTRY = `redact: {marker: ${MARKER}}`;
/** Nearer the dispatcher than usage: usage and the outer observer see what it made of the answer. */
const GUARD_INSIDE = ['auth', 'observe: {label: outer}', 'usage', REDACT_ENTRY, 'observe: {label: inner}'];
/** Farther from it: usage sees the answer as the provider gave it. */
const GUARD_OUTSIDE = ['auth', REDACT_ENTRY, 'usage'];

type SseEvent = Record<string, any> | '[DONE]';

/** The client's view of a stream: its events, and the text of their deltas. */
function readEvents(text: string): { events: SseEvent[]; content: string } {
  const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6))
    .map((data): SseEvent => (data === '[DONE]' ? data : JSON.parse(data)));
  const content = events.map((e) => (e === '[DONE]' || !e.choices ? '' : e.choices.map((c: any) => c.delta.content ?? '').join(''))).join('');
  return { events, content };
}

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;

function stagesSuite(name: string, shared: boolean): void {
  describe(`response stages in pipeline order (${name})`, { skip: shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false }, () => {
    const stores = { schema: 'aigw_test_' + randomUUID().replace(/-/g, ''), prefix: `aigw-test-${randomUUID()}:`, databaseUrl: DATABASE_URL ?? '' };
    let fake: FakeOpenAI;
    let inside: TestGateway;
    let outside: TestGateway;
    const keys = new Map<TestGateway, string>();

    /** The user's message, split at '|', is what the fake answers, one piece per chunk. */
    const ask = async (gw: TestGateway, message: string, stream: boolean, headers: Record<string, string> = {}) => {
      const requestId = randomUUID();
      const body = { model: 'plain', messages: [{ role: 'user', content: message }], ...(stream ? { stream: true } : {}) };
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.get(gw)}`, 'x-request-id': requestId, ...headers },
      });
      const text = await response.text();
      return { status: response.status, text, requestId, record: async () => (await recordsOf(gw, requestId))[0]! };
    };

    before(async () => {
      fake = await startFakeOpenAI();
      fake.handle(async (req, res) => {
        const words = String((req.body.messages as Array<{ content: string }>)[0]!.content).split('|');
        if (req.body.stream === true) return writeSplit(res, helloStreamEvents(req.body, words), 0);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(String(req.body.model), words.join(''))));
      });
      const options = { files: { 'redact.mjs': REDACT, 'observe.mjs': OBSERVE }, ...(shared
        ? { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: stores.schema, kvPrefix: stores.prefix }
        : {}) };
      // Both on one database: their records are told apart by request id.
      inside = await startTestGateway(stagesConfig(fake.baseUrl, GUARD_INSIDE), options);
      outside = await startTestGateway(stagesConfig(fake.baseUrl, GUARD_OUTSIDE), options);
      keys.set(inside, (await createKey(inside)).key);
      keys.set(outside, (await createKey(outside)).key);
    });
    after(async () => {
      await inside?.close();
      await outside?.close();
      await fake?.close();
      if (shared) await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
    });
    beforeEach(() => {
      globals[PROBE] = { seen: {}, released: [] };
    });

    const blockedEnvelope = { error: { code: 'GUARD_BLOCKED', message: 'The answer was blocked by policy', details: { guard: 'redact' } } };

    test('a complete answer: the client and the plugins listed before the redactor get the scrubbed text, those after it the raw one', async () => {
      const answer = await ask(inside, 'Write to |bob@example.com| today', false);
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text).choices[0].message.content, 'Write to [email] today');
      assert.deepEqual(probe().seen, { inner: 'Write to bob@example.com today', outer: 'Write to [email] today' });
      const record = await answer.record();
      assert.equal(record.status, 'completed');
    });

    test('a stream: the same, chunk by chunk', async () => {
      const answer = await ask(inside, 'Write to |bob@example.com| today', true);
      assert.equal(answer.status, 200);
      const { events, content } = readEvents(answer.text);
      assert.equal(content, 'Write to [email] today');
      assert.equal(events.at(-1), '[DONE]');
      assert.deepEqual(probe().seen, { inner: 'Write to bob@example.com today', outer: 'Write to [email] today' });
      assert.equal((await answer.record()).status, 'completed');
    });

    test('redactor nearer the dispatcher than usage, complete answer: 400 GUARD_BLOCKED, and usage records the block', async () => {
      const answer = await ask(inside, `The code is ${MARKER}`, false);
      assert.equal(answer.status, 400);
      assert.deepEqual(JSON.parse(answer.text), blockedEnvelope);
      const record = await answer.record();
      assert.equal(record.status, 'failed');
      assert.equal(record.error_code, 'GUARD_BLOCKED');
      // The outer observer's stage never ran: the answer it would have seen was refused before reaching it.
      assert.deepEqual(probe().seen, { inner: `The code is ${MARKER}` });
    });

    test('redactor nearer the dispatcher than usage, stream: it ends with the SSE error event, and usage records the block', async () => {
      const answer = await ask(inside, `Fine so far. |The code is ${MARKER}.| More.`, true);
      assert.equal(answer.status, 200);
      const { events, content } = readEvents(answer.text);
      assert.equal(content, 'Fine so far. ');
      assert.deepEqual(events.at(-1), blockedEnvelope);
      assert.ok(!events.includes('[DONE]'));
      assert.ok(!answer.text.includes(MARKER));
      const record = await answer.record();
      assert.equal(record.status, 'failed');
      assert.equal(record.error_code, 'GUARD_BLOCKED');
    });

    test('redactor farther than usage, complete answer: the client gets the block, usage records the completed answer', async () => {
      const answer = await ask(outside, `The code is ${MARKER}`, false);
      assert.equal(answer.status, 400);
      assert.deepEqual(JSON.parse(answer.text), blockedEnvelope);
      const record = await answer.record();
      assert.equal(record.status, 'completed');
      assert.equal(record.error_code, null);
      assert.equal(Number(record.completion_tokens), 2);
    });

    test('redactor farther than usage, stream: the client gets the error event, usage records a stream its consumer stopped, not the block', async () => {
      const answer = await ask(outside, `Fine so far. |The code is ${MARKER}.| More.`, true);
      const { events, content } = readEvents(answer.text);
      assert.equal(content, 'Fine so far. ');
      assert.deepEqual(events.at(-1), blockedEnvelope);
      const record = await answer.record();
      assert.equal(record.status, 'aborted');
      assert.equal(record.error_code, null);
    });

    test('a stage holding a window of 2 releases the held chunks in order at end()', async () => {
      const answer = await ask(inside, 'one| two| three| four| mail: a@b.io', true, { 'x-redact-window': '2' });
      const { events, content } = readEvents(answer.text);
      assert.equal(content, 'one two three four mail: [email]');
      assert.equal(events.at(-1), '[DONE]');
      assert.equal((events.at(-2) as Record<string, any>).choices[0].finish_reason, 'stop');
      // The finish chunk and the usage chunk were still held when the upstream ended.
      assert.deepEqual(probe().released, [2]);
      assert.equal((await answer.record()).status, 'completed');
    });

    test('a stage holding more than its holdBack ends the stream with INTERNAL_ERROR', async () => {
      const answer = await ask(inside, 'one| two| three', true, { 'x-redact-window': '3', 'x-redact-hold-back': '2' });
      const { events, content } = readEvents(answer.text);
      assert.equal(content, '');
      assert.deepEqual(events, [{ error: { code: 'INTERNAL_ERROR', message: 'Internal error', details: null } }]);
      const record = await answer.record();
      assert.equal(record.status, 'failed');
      assert.equal(record.error_code, 'INTERNAL_ERROR');
    });

    test('a marker split across chunks passes a chunk-by-chunk check, and is caught by the window', async () => {
      const split = `The code is TOP-|SECRET today`;
      const unchecked = await ask(inside, split, true);
      assert.equal(readEvents(unchecked.text).content, `The code is ${MARKER} today`);

      const caught = await ask(inside, split, true, { 'x-redact-window': '2' });
      const { events, content } = readEvents(caught.text);
      assert.equal(content, '');
      assert.deepEqual(events.at(-1), blockedEnvelope);
      assert.ok(!caught.text.includes('TOP-'));
      assert.equal((await caught.record()).error_code, 'GUARD_BLOCKED');
    });
  });
}

stagesSuite('PGlite, memory KV', false);
stagesSuite('Postgres, Redis', true);
