/**
 * Upstream streams that close cleanly before they are finished, per provider family: each family's own stream,
 * cut at every event boundary and delivered in awkwardly sized pieces, through the family's framing decoder and
 * stream decoder. A cut before the event that carries the finish reason fails as UPSTREAM_ERROR; a cut after
 * it (only the terminator, or the usage and the terminator, lost) still completes the answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ChatTranslator, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { decodeStream } from '../../core/streaming/decode.ts';
import anthropic from '../../providers/anthropic/index.ts';
import bedrock from '../../providers/bedrock/index.ts';
import cohere from '../../providers/cohere/index.ts';
import gemini from '../../providers/gemini/index.ts';
import openai from '../../providers/openai/index.ts';
import replicate from '../../providers/replicate/index.ts';
import watsonx from '../../providers/watsonx/index.ts';
import type { ScriptedAnswer } from '../conformance/fixtures.ts';
import { messagesStreamEvents } from '../conformance/wires/anthropic.ts';
import { bedrockStreamFrames } from '../conformance/wires/bedrock.ts';
import { cohereStreamEvents } from '../conformance/wires/cohere.ts';
import { geminiStreamEvents } from '../conformance/wires/gemini.ts';
import { openAiStreamEvents } from '../conformance/wires/openai.ts';
import { replicateStreamEvents } from '../conformance/wires/replicate.ts';
import { watsonxStreamEvents } from '../conformance/wires/watsonx.ts';

const answer: ScriptedAnswer = { text: 'Hello there, my good friend.', toolCalls: [], finish: 'stop', usage: { prompt: 11, completion: 6 } };
const request: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true };
const encode = (event: string | Uint8Array) => (typeof event === 'string' ? new TextEncoder().encode(event) : event);

interface Family {
  name: string;
  chat: ChatTranslator;
  target: ProviderTarget;
  /** The stream's events (SSE text or event-stream frames), in order. */
  events: Array<string | Uint8Array>;
  /** The index of the event that carries the finish reason. */
  finishAt: number;
}

const target = (slug: string, options: Record<string, unknown> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'http://127.0.0.1:1', headers: {}, options, upstreamModel: 'up-model' });

function families(): Family[] {
  const openaiEvents = openAiStreamEvents(answer, 'up-model');
  const messages = messagesStreamEvents(answer, { model: 'up-model' });
  const geminiEvents = geminiStreamEvents(answer, 'up-model');
  const cohereEvents = cohereStreamEvents(answer);
  const frames = bedrockStreamFrames(answer, { method: 'POST', url: '/model/x/converse-stream', headers: {}, rawBody: '{}', json: {} });
  const replicateEvents = replicateStreamEvents(answer);
  const watsonxEvents = watsonxStreamEvents(answer, 'up-model');
  const at = (events: Array<string | Uint8Array>, marker: string) => {
    const index = events.findIndex((e) => new TextDecoder().decode(encode(e)).includes(marker));
    assert.ok(index > 0, `the ${marker} event is in the stream`);
    return index;
  };
  return [
    { name: 'openai (and Azure, the compatible catalogue)', chat: openai.chat!, target: target('openai'), events: openaiEvents, finishAt: at(openaiEvents, '"finish_reason":"stop"') },
    { name: 'anthropic (and Claude on Vertex)', chat: anthropic.chat!, target: target('anthropic'), events: messages, finishAt: at(messages, 'message_delta') },
    { name: 'gemini (and Vertex)', chat: gemini.chat!, target: target('gemini'), events: geminiEvents, finishAt: at(geminiEvents, 'finishReason') },
    { name: 'cohere', chat: cohere.chat!, target: target('cohere'), events: cohereEvents, finishAt: at(cohereEvents, 'message-end') },
    { name: 'bedrock', chat: bedrock.chat!, target: target('bedrock', { region: 'us-east-1' }), events: frames, finishAt: at(frames, 'messageStop') },
    { name: 'replicate', chat: replicate.chat!, target: target('replicate'), events: replicateEvents, finishAt: at(replicateEvents, 'event: done') },
    { name: 'watsonx', chat: watsonx.chat!, target: target('watsonx', { projectId: 'p' }), events: watsonxEvents, finishAt: at(watsonxEvents, '"finish_reason":"stop"') },
  ];
}

/** The bytes in pieces of 1, 7, 2, 13, 3, 31 and 5 bytes, so that lines, CRLFs and frames are split. */
async function* pieces(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  const sizes = [1, 7, 2, 13, 3, 31, 5];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    yield bytes.slice(at, at + size);
    at += size;
  }
}

/** What chat-stream.ts does with a stream: events to the decoder until one says done, then end(). */
async function run(family: Family, events: Array<string | Uint8Array>): Promise<ChatCompletionChunk[]> {
  const joined = new Uint8Array(events.reduce((n, e) => n + encode(e).length, 0));
  let at = 0;
  for (const e of events) {
    joined.set(encode(e), at);
    at += encode(e).length;
  }
  const decoder = family.chat.streamDecoder(family.target, request);
  const chunks: ChatCompletionChunk[] = [];
  for await (const event of decodeStream(family.chat.streamFormat, pieces(joined))) {
    const out = decoder.event(event);
    chunks.push(...out.chunks);
    if (out.done) return chunks;
  }
  chunks.push(...decoder.end());
  return chunks;
}

const text = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe('an upstream stream that closes before it is finished', () => {
  for (const family of families()) {
    test(`${family.name}: every cut before the finish fails as UPSTREAM_ERROR; the whole stream completes`, async () => {
      assert.equal(text(await run(family, family.events)), answer.text);
      for (let kept = 0; kept <= family.finishAt; kept++) {
        await assert.rejects(run(family, family.events.slice(0, kept)), (err) => {
          assert.ok(err instanceof GatewayError, `cut after ${kept} events: ${String(err)}`);
          assert.equal(err.code, 'UPSTREAM_ERROR');
          assert.equal((err.details as { provider?: string }).provider, family.target.slug);
          return true;
        }, `cut after ${kept} of ${family.events.length} events`);
      }
    });

    test(`${family.name}: a close after the finish, with only the end of the stream lost, still completes`, async () => {
      for (let kept = family.finishAt + 1; kept < family.events.length; kept++) {
        const chunks = await run(family, family.events.slice(0, kept));
        assert.equal(text(chunks), answer.text, `cut after ${kept} of ${family.events.length} events`);
        assert.equal(chunks.flatMap((c) => c.choices).find((c) => c.finish_reason)?.finish_reason, 'stop');
      }
    });
  }
});
