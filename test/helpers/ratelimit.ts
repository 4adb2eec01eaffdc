/**
 * Shared by the ratelimit suites (in-process and two processes): concurrent bursts over one or more gateways,
 * key creation over the admin API, and a fake upstream answer with fixed usage so token counts are exact.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { bucketMs } from '../../plugins/ratelimit/windows.ts';
import { chunk, completion, writeSplit, type FakeHandler, type RecordedRequest } from '../fakes/openai.ts';
import { ADMIN_TOKEN } from './gateway.ts';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  /** The raw text (a stream's SSE events). */
  text: string;
}

/** Sends one request and reads the whole answer, streams included. */
export async function send(url: string, body: unknown, key: string, path = '/v1/chat/completions'): Promise<Reply> {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a stream, or not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** `n` requests at once, spread round-robin over the gateways at `urls`. */
export function burst(urls: readonly string[], n: number, body: (i: number) => unknown, key: string): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => send(urls[i % urls.length]!, body(i), key)));
}

export function tally(replies: readonly Reply[]): { ok: number; limited: number; other: number[] } {
  const other = replies.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.status);
  return { ok: replies.filter((r) => r.status === 200).length, limited: replies.filter((r) => r.status === 429).length, other };
}

/** There is a 429, and every 429 is the spec's envelope for this level and window. */
export function assertRefusals(replies: readonly Reply[], level: string, limit: number, windowMs: number): void {
  const refused = replies.filter((r) => r.status === 429);
  assert.ok(refused.length > 0, `no 429 among ${replies.map((r) => r.status).join(', ')}`);
  for (const reply of refused) {
    assert.deepEqual(Object.keys(reply.body.error).sort(), ['code', 'details', 'message']);
    assert.equal(reply.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(reply.body.error.message, 'Rate limit exceeded');
    const { details } = reply.body.error;
    assert.deepEqual({ ...details, retryAfter: 0 }, { level, retryAfter: 0, limit, windowMs });
    // At most the window and one bucket (an entry counts until its whole bucket has left), rounded up.
    const most = Math.ceil((windowMs + bucketMs(windowMs)) / 1000);
    assert.ok(Number.isInteger(details.retryAfter) && details.retryAfter >= 1 && details.retryAfter <= most, `retryAfter ${details.retryAfter}`);
    assert.equal(reply.headers.get('retry-after'), String(details.retryAfter));
    assert.equal(reply.headers.get('x-ratelimit-limit'), String(limit));
  }
}

export async function createKey(url: string, fields: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const body = await admin(url, 'POST', '/keys', { name: 'ratelimit test', ...fields });
  assert.ok(body.key, JSON.stringify(body));
  return { id: body.id as string, key: body.key as string };
}

export async function admin(url: string, method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = (await response.json()) as Record<string, any>;
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** A chat body whose reservation is exactly `total` tokens: its prompt estimate plus max_tokens. */
export async function bodyReserving(total: number, stream = false): Promise<{ body: ChatCompletionRequest & { stream: boolean }; prompt: number }> {
  const messages: ChatCompletionRequest['messages'] = [{ role: 'user', content: 'Count to three.' }];
  const prompt = await estimatePromptTokens({ model: 'plain', messages });
  assert.ok(total > prompt, `a reservation of ${total} must exceed the prompt's ${prompt} tokens`);
  return { body: { model: 'plain', messages, max_tokens: total - prompt, stream }, prompt };
}

/** Answers every chat request (plain or streamed) with usage prompt + max_tokens, as if the model used all of it. */
export function fullUsageHandler(prompt: number): FakeHandler {
  return async (req: RecordedRequest, res: ServerResponse) => {
    const model = String(req.body.model);
    const completionTokens = Number(req.body.max_tokens ?? req.body.max_completion_tokens ?? 0);
    const usage = { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
    if (req.body.stream === true) {
      await writeSplit(res, [
        chunk(model, { role: 'assistant', content: 'one two' }, null),
        chunk(model, {}, 'stop'),
        { ...chunk(model, {}), choices: [], usage },
      ].map((c) => `data: ${JSON.stringify(c)}\n\n`).concat('data: [DONE]\n\n'), 0);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...completion(model, 'one two'), usage }));
  };
}
