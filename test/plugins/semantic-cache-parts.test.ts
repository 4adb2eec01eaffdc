/**
 * The semantic-cache plugin's parts on their own: what is in the keys and the partition, the conversation as it is
 * embedded, answers assembled from chunks and replayed as chunks, what may be stored, Cache-Control, and the
 * config checks as `aigw validate` reports them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalChatRequest, ChatCompletion, ChatCompletionChunk } from '../../core/canonical/chat.ts';
import { AnswerAssembler, replayChunks, storable } from '../../plugins/semantic-cache/answer.ts';
import {
  canonicalJson, conversationText, endpointKind, exactKey, MAX_CONVERSATION_CHARS, partitionKey, uncacheable, type KeyInput,
} from '../../plugins/semantic-cache/key.ts';
import { cacheControl } from '../../plugins/semantic-cache/middleware.ts';
import { normalized } from '../../plugins/semantic-cache/stores.ts';
import { parseConfig } from '../helpers/config.ts';

const request = (body: Record<string, unknown>, extra: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest => ({
  modality: 'chat', model: 'm', stream: false, includeUsage: false,
  body: { model: 'm', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], ...body },
  ...extra,
});
const keys = (r: CanonicalChatRequest, over: Partial<KeyInput> = {}) => {
  const input: KeyInput = { tenant: 't1', kind: 'chat', model: 'm', request: r, embeddingModel: 'e', ...over };
  return { exact: exactKey(input), partition: partitionKey(input) };
};

describe('the cache keys', () => {
  test('canonical JSON sorts keys at every depth and drops undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined, x: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"x":2,"z":1}]},"b":1}');
  });

  test('parameters that do not change the answer are not in the key; every other one is', () => {
    const base = keys(request({}));
    for (const ignored of [{ stream: true }, { stream_options: { include_usage: true } }, { user: 'u' }, { metadata: { a: '1' } }, { store: true }, { model: 'alias' }]) {
      assert.equal(keys(request(ignored)).exact, base.exact, JSON.stringify(ignored));
    }
    for (const changing of [{ temperature: 0.5 }, { max_tokens: 5 }, { n: 2 }, { seed: 1 }, { tools: [] }, { unknown_extra: 1 }]) {
      assert.notEqual(keys(request(changing)).exact, base.exact, JSON.stringify(changing));
      assert.notEqual(keys(request(changing)).partition, base.partition, JSON.stringify(changing));
    }
    assert.equal(keys(request({ temperature: 1, top_p: 1 })).exact, keys(request({ top_p: 1, temperature: 1 })).exact, 'order does not matter');
  });

  test('tenant, endpoint kind, resolved model and a pinned provider are in both keys', () => {
    const base = keys(request({}));
    for (const other of [keys(request({}), { tenant: 't2' }), keys(request({}), { kind: 'messages' }), keys(request({}), { model: 'other' }), keys(request({}, { provider: 'p' }))]) {
      assert.notEqual(other.exact, base.exact);
      assert.notEqual(other.partition, base.partition);
    }
  });

  test('the partition leaves the conversation out, but not the instructions nor the embedding model', () => {
    const base = keys(request({}));
    const otherQuestion = keys(request({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }] }));
    assert.notEqual(otherQuestion.exact, base.exact);
    assert.equal(otherQuestion.partition, base.partition);
    const otherInstructions = keys(request({ messages: [{ role: 'developer', content: 'Be long.' }, { role: 'user', content: 'Hi' }] }));
    assert.notEqual(otherInstructions.partition, base.partition);
    assert.notEqual(keys(request({}), { embeddingModel: 'e2' }).partition, base.partition);
    assert.equal(keys(request({}), { embeddingModel: 'e2' }).exact, base.exact);
  });

  test('a legacy prompt is in the exact key, its other fields in both', () => {
    const legacy = (prompt: string, echo?: boolean) => request({ messages: [{ role: 'user', content: prompt }] }, { legacy: { prompt, ...(echo ? { echo } : {}) } });
    assert.notEqual(keys(legacy('a')).exact, keys(legacy('b')).exact);
    assert.equal(keys(legacy('a')).partition, keys(legacy('b')).partition);
    assert.notEqual(keys(legacy('a', true)).partition, keys(legacy('a')).partition);
  });

  test('only chat-style endpoints; log probabilities are never cached', () => {
    assert.deepEqual(['/v1/chat/completions', '/v1/messages', '/v1/completions', '/v1/responses', '/v1/embeddings'].map(endpointKind), ['chat', 'messages', 'completions', undefined, undefined]);
    assert.equal(uncacheable(request({ logprobs: true })), 'logprobs');
    assert.equal(uncacheable(request({}, { legacy: { prompt: 'x', logprobs: 2 } })), 'logprobs');
    assert.equal(uncacheable(request({ logprobs: false })), undefined);
  });
});

describe('the conversation as it is embedded', () => {
  test('role: text per message, instructions left out, tool calls and results as text', () => {
    const text = conversationText([
      { role: 'system', content: 'secret instructions' },
      { role: 'user', content: [{ type: 'text', text: 'Weather' }, { type: 'text', text: 'in Paris?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ]);
    assert.equal(text, 'user: Weather\nin Paris?\nassistant: weather({"city":"Paris"})\ntool: sunny');
  });

  test('not compared by meaning: an image or a file, no text, or too long', () => {
    assert.equal(conversationText([{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }]), null);
    assert.equal(conversationText([{ role: 'system', content: 'only instructions' }]), null);
    assert.equal(conversationText([{ role: 'user', content: 'x'.repeat(MAX_CONVERSATION_CHARS) }]), null);
  });
});

const chunk = (choices: ChatCompletionChunk['choices'], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk =>
  ({ id: 'c1', object: 'chat.completion.chunk', created: 7, model: 'up', choices, ...extra });

describe('answers as chunks and back', () => {
  test('a stream of two interleaved choices, split tool-call arguments, reasoning and usage assembles whole', () => {
    const assembler = new AnswerAssembler(10_000);
    const parts: ChatCompletionChunk[] = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }, { index: 1, delta: { role: 'assistant' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a"' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'Hel', reasoning_content: 'think' } as never, finish_reason: null }]),
      chunk([{ index: 1, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }]),
      chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }]),
      chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
    ];
    for (const part of parts) assembler.push(part);
    const answer = assembler.answer()!;
    assert.deepEqual(answer, {
      id: 'c1', object: 'chat.completion', created: 7, model: 'up',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello', reasoning_content: 'think' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });

    const again = new AnswerAssembler(10_000);
    const replayed = replayChunks(answer);
    for (const part of replayed) again.push(part);
    assert.deepEqual(again.answer(), answer, 'a replay assembles to the same answer');
    assert.deepEqual(replayed.at(-1), { id: 'c1', object: 'chat.completion.chunk', created: 7, model: 'up', choices: [], usage: answer.usage }, 'it ends with usage');
  });

  test('an answer past the size bound is not kept; nothing streamed, nothing kept', () => {
    const assembler = new AnswerAssembler(5);
    assembler.push(chunk([{ index: 0, delta: { content: 'too long' }, finish_reason: 'stop' }]));
    assert.equal(assembler.answer(), null);
    assert.equal(new AnswerAssembler(5).answer(), null);
  });

  test('stored: finished with stop or length; tool calls only with cacheToolCalls; never a filtered or unfinished one', () => {
    const answer = (finish: string | null, calls = false): ChatCompletion => ({
      id: 'x', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x', ...(calls ? { tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'f', arguments: '{}' } }] } : {}) }, finish_reason: finish as never }],
    });
    assert.deepEqual(['stop', 'length', 'content_filter', null].map((finish) => storable(answer(finish), true)), [true, true, false, false]);
    assert.equal(storable(answer('tool_calls', true), false), false);
    assert.equal(storable(answer('tool_calls', true), true), true);
    assert.equal(storable(answer('stop', true), false), false, 'tool calls with a stop finish are tool calls all the same');
  });
});

describe('request headers and vectors', () => {
  test('Cache-Control directives, in any case and among others', () => {
    assert.deepEqual(cacheControl(''), { noStore: false, noCache: false });
    assert.deepEqual(cacheControl('max-age=0, No-Cache'), { noStore: false, noCache: true });
    assert.deepEqual(cacheControl('no-store'), { noStore: true, noCache: false });
  });

  test('vectors are normalized; a zero or broken one is refused', () => {
    assert.deepEqual(normalized([3, 4]), [0.6, 0.8]);
    assert.equal(normalized([0, 0]), null);
    assert.equal(normalized([1, Number.NaN]), null);
  });
});

describe('the config, as aigw validate reads it', () => {
  const yaml = (entry: string) => `
providers:
  openai: { baseUrl: 'http://127.0.0.1:1/v1', apiKey: x }
  anthropic: { baseUrl: 'http://127.0.0.1:1', apiKey: x }
models:
  - { id: chat, provider: openai }
  - { id: embed, provider: openai }
  - { id: claude, provider: anthropic }
  - { id: off, provider: openai, enabled: false }
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      - semantic-cache: ${entry}
`;
  const problems = async (entry: string) => {
    try {
      await parseConfig(yaml(entry), { file: '/tmp/cache.yaml', env: {} });
      return [];
    } catch (err) {
      return ((err as { issues?: Array<{ message: string }> }).issues ?? [{ message: String(err) }]).map((i) => i.message);
    }
  };

  test('defaults, and a model that serves embeddings', async () => {
    const { config } = await parseConfig(yaml('{embeddingModel: embed}'), { file: '/tmp/cache.yaml', env: {} });
    assert.deepEqual(config.pipelines[0]!.plugins[1]!.config, { embeddingModel: 'embed', threshold: 0.95, ttlSeconds: 3600, cacheToolCalls: false, maxEntryBytes: 1_048_576, maxScanRows: 1000, embeddingTimeoutMs: 5000 });
    assert.deepEqual(await problems('{}'), []);
  });

  test('an unknown, disabled or non-embedding model, or semantic without one, is refused with the entry named', async () => {
    assert.deepEqual(await problems('{embeddingModel: nope}'), ['plugin "semantic-cache": embeddingModel "nope" is not a model in `models`']);
    assert.deepEqual(await problems('{embeddingModel: off}'), ['plugin "semantic-cache": embeddingModel "off" is disabled in `models`']);
    assert.deepEqual(await problems('{embeddingModel: claude}'), ['plugin "semantic-cache": embeddingModel "claude" has no target whose provider serves embeddings']);
    assert.deepEqual(await problems('{semantic: true}'), ['plugin "semantic-cache": semantic: true needs embeddingModel (a model id from `models` with an embeddings provider)']);
    assert.deepEqual(await problems('{threshold: 1.5, ttlSeconds: 0}'), ['must be <= 1, got number', 'must be >= 1, got number']);
  });
});
