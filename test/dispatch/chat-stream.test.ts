/**
 * The dispatcher's stream loop (core/dispatch/chat-stream.ts) and started() (chat-call.ts), on an OpenAI-format body
 * given as whole reads: the chunks of a read come out before an event the translator refuses in the same read; the
 * loop stops at [DONE] and leaves the body to be drained, not destroyed; a started stream that is never read still
 * ends its upstream body when it is returned.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import { started } from '../../core/dispatch/chat-call.ts';
import { canonicalChatStream } from '../../core/dispatch/chat-stream.ts';
import type { UpstreamResponse } from '../../core/dispatch/upstream.ts';
import { openaiChat } from '../../providers/openai/chat.ts';
import { chunk } from '../fakes/openai.ts';

const target = { slug: 'openai', baseUrl: 'http://upstream.invalid/v1', headers: {}, options: {}, upstreamModel: 'm' };
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], stream: true };
const event = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

/** A body whose reads are exactly `reads`, as undici's would be (a Readable). */
function body(reads: string[]): Readable {
  return Readable.from(reads.map((r) => Buffer.from(r)), { objectMode: false });
}

function stream(source: Readable) {
  return canonicalChatStream({
    response: { statusCode: 200, headers: {}, body: source } as unknown as UpstreamResponse,
    chat: openaiChat, target, request, signal: new AbortController().signal, maxFrameBytes: 65536, onEstimated: () => {},
  });
}

test('an event the translator refuses comes after the chunks of the events before it in the same read', async () => {
  const seen: string[] = [];
  const read = event(chunk('m', { content: 'Hel' })) + event(chunk('m', { content: 'lo' })) + event({ error: { message: 'overloaded', type: 'server_error' } });
  await assert.rejects(async () => {
    for await (const c of stream(body([read]))) seen.push(c.choices[0]?.delta.content ?? '');
  }, (err: Error & { code?: string }) => err.code === 'UPSTREAM_ERROR' || /overloaded/.test(err.message));
  assert.deepEqual(seen, ['Hel', 'lo']);
});

test('the loop stops at [DONE]: what follows in the body is drained, not decoded, and the body is not destroyed', async () => {
  const source = body([event(chunk('m', { content: 'Hi' }, 'stop')) + event('[DONE]'), event('not json at all'), ': more\n']);
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream(source)) chunks.push(c);
  assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content ?? null), ['Hi', null], 'the text, then the estimated usage');
  assert.ok(chunks[1]!.usage, 'usage estimated at the end');
  if (!source.readableEnded) await new Promise((resolve) => source.once('end', resolve));
  assert.equal(source.errored, null);
});

test('a started stream returned before it is read ends its upstream body', async () => {
  const source = body([event(chunk('m', { content: 'first' })), event(chunk('m', { content: 'second' }))]);
  const destroyed = new Promise((resolve) => source.once('close', resolve));
  const iterator = await started(stream(source));
  await iterator.return!();
  await destroyed;
  assert.equal(source.destroyed, true);
  assert.equal(source.readableEnded, false, 'closed before its end');
});
