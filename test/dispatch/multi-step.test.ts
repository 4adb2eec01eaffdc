/**
 * The provider contract's hooks for providers that are more than one request: authorize (a token exchange,
 * cached until it nears expiry) and followUp (polling a job, then opening its stream), with an ndjson stream.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const errorsModule = JSON.stringify(new URL('../../core/dispatch/upstream-errors.ts', import.meta.url).href);

/** A job-style provider: POST /jobs, poll GET /jobs/:id until done, or open the job's ndjson stream. */
const STEPPER = `
import { upstreamStatusError } from ${errorsModule};
const completion = (body, target) => ({
  id: 'job-' + body.id, object: 'chat.completion', created: 1, model: target.upstreamModel,
  choices: [{ index: 0, message: { role: 'assistant', content: body.output }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});
export default {
  apiVersion: 1,
  slug: 'stepper', family: 'test', displayName: 'Stepper',
  configSchema: { type: 'object', additionalProperties: false, properties: { tokenUrl: { type: 'string', description: 'token endpoint' } } },
  capabilities: { chat: { stream: true, tools: false, vision: false, n: false } },
  chat: {
    streamFormat: 'ndjson',
    toUpstream: (request, target, stream) => ({
      method: 'POST', path: '/jobs', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: target.upstreamModel, prompt: request.messages.at(-1).content, stream }),
    }),
    followUp(body, target, stream) {
      if (stream) return { request: { method: 'GET', path: body.urls.stream, headers: { accept: 'application/x-ndjson' } }, stream: true };
      if (body.status === 'done') return null;
      return { request: { method: 'GET', path: '/jobs/' + body.id, headers: {} }, delayMs: 5 };
    },
    fromUpstream: completion,
    streamDecoder: (target) => ({
      event(e) {
        const d = JSON.parse(e.data);
        if (d.done) return { chunks: [], done: true };
        return { chunks: [{ id: 's', object: 'chat.completion.chunk', created: 1, model: target.upstreamModel, choices: [{ index: 0, delta: { content: d.text }, finish_reason: d.finish ?? null }] }] };
      },
      end: () => [],
    }),
  },
  async authorize(request, target, io, signal) {
    const token = await io.cached('stepper:' + target.apiKey, async (shared) => {
      const answer = await io.fetchJson(target.options.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: target.apiKey }) }, shared);
      if (answer.status !== 200) throw upstreamStatusError('stepper', 502, 'token exchange failed');
      return { value: answer.body.token, expiresAt: io.now() + answer.body.ttlMs };
    });
    return { ...request, headers: { ...request.headers, authorization: 'Bearer ' + token } };
  },
  mapError: (status, body) => upstreamStatusError('stepper', status, JSON.stringify(body)),
};
`;

interface Seen { method: string; url: string; authorization: string | undefined }

describe('authorize and followUp', () => {
  let server: ReturnType<typeof createServer>;
  let base: string;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let now = Date.parse('2026-01-01T00:00:00Z');
  let tokens = 0;
  let polls = 0;
  const seen: Seen[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (p: Buffer) => parts.push(p));
      req.on('end', () => {
        const json = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.url === '/token') {
          tokens++;
          return json(200, { token: `tok-${tokens}`, ttlMs: 3_600_000 });
        }
        seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
        if (req.method === 'POST' && req.url === '/jobs') {
          const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream: boolean };
          return json(201, { id: 7, status: 'running', urls: { stream: `${base}/jobs/7/stream` }, stream: body.stream });
        }
        if (req.url === '/jobs/7') {
          polls++;
          return json(200, polls % 3 === 0 ? { id: 7, status: 'done', output: 'polled answer' } : { id: 7, status: 'running' });
        }
        if (req.url === '/jobs/7/stream') {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          const lines = ['{"text":"str"}\n', '{"text":"eamed"}\n', '{"text":"","finish":"stop"}\n', '{"done":true}\n'].join('');
          // Split mid-line, as a network would.
          res.write(lines.slice(0, 9));
          setTimeout(() => res.end(lines.slice(9)), 10);
          return;
        }
        json(404, { error: 'no route' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startTestGateway(`
providerPackages: [./stepper.mjs]
routing:
  retries: 0
providers:
  stepper:
    baseUrl: ${base}
    apiKey: stepper-key
    options:
      tokenUrl: ${base}/token
models:
  - id: job-model
    provider: stepper
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { files: { 'stepper.mjs': STEPPER }, clock: { now: () => now } });
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const ask = (stream = false) => postJson(`${gw.url}/v1/chat/completions`, { model: 'job-model', stream, messages: [{ role: 'user', content: 'go' }] }, auth);

  test('a job is created, polled until done, and its output is the answer', async () => {
    const before = seen.length;
    const answer = await ask();
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.choices[0].message.content, 'polled answer');
    assert.deepEqual(seen.slice(before).map((s) => `${s.method} ${s.url}`), ['POST /jobs', 'GET /jobs/7', 'GET /jobs/7', 'GET /jobs/7']);
  });

  test('every request, follow-ups included, carries the exchanged token; the exchange happens once', async () => {
    await ask();
    await ask();
    assert.equal(tokens, 1);
    assert.ok(seen.every((s) => s.authorization === 'Bearer tok-1'), JSON.stringify(seen));
  });

  test('a token near its expiry is exchanged again', async () => {
    now += 3_600_000 - 30_000; // within the renewal margin
    await ask();
    assert.equal(tokens, 2);
    assert.equal(seen.at(-1)!.authorization, 'Bearer tok-2');
  });

  test('a streaming job: created, then its ndjson stream followed', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'job-model', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    assert.equal(response.status, 200);
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    const text = events.flatMap((e) => e.choices.map((c: { delta: { content?: string } }) => c.delta.content ?? '')).join('');
    assert.equal(text, 'streamed');
    assert.equal(seen.at(-1)!.url, '/jobs/7/stream');
  });
});
