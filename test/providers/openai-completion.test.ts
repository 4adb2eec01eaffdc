/**
 * The OpenAI family's legacy completions translator (POST /completions) as each declaring provider builds it:
 * OpenAI's path and headers, Azure OpenAI's deployment path, api-version and api-key, a catalogue host's own
 * path (DeepSeek's /beta/completions); text_completion answers and chunks -> canonical chat; malformed answers
 * and cut streams; and which providers declare the modality.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LegacyCompletionRequest } from '../../core/canonical/completion.ts';
import { GatewayError } from '../../core/errors.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { completionTranslatorFor } from '../../core/dispatch/completion-call.ts';
import { azureAi, azureOpenAi } from '../../providers/azure-openai/index.ts';
import anthropic from '../../providers/anthropic/index.ts';
import openai from '../../providers/openai/index.ts';
import { compatibleProviderBySlug, openAiCompatibleProviders } from '../../providers/openai-compatible/index.ts';

const target = (slug: string, extra: Partial<ProviderTarget> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-test', headers: {}, options: {}, upstreamModel: 'gpt-3.5-turbo-instruct', ...extra });
const legacy: LegacyCompletionRequest = { model: 'instruct', prompt: 'def f():', suffix: '\n', best_of: 2, logprobs: 1, echo: true, max_tokens: 16, temperature: 0.2 };

const translator = (p: ProviderDefinition) => {
  assert.ok(p.capabilities.completion && p.completion, `${p.slug} declares completion`);
  return p.completion;
};

describe('the legacy completions translator', () => {
  test('OpenAI: POST /completions, Bearer, the fields as given with the upstream model; a stream asks for usage', () => {
    const t = translator(openai);
    const plain = t.toUpstream(legacy, target('openai'), false);
    assert.equal(plain.path, '/completions');
    assert.equal(plain.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(JSON.parse(plain.body!), { ...legacy, model: 'gpt-3.5-turbo-instruct' });
    const streamed = JSON.parse(t.toUpstream(legacy, target('openai'), true).body!);
    assert.equal(streamed.stream, true);
    assert.deepEqual(streamed.stream_options, { include_usage: true });
  });

  test('Azure OpenAI: the deployment path with api-version, api-key, no model in the body; azure-ai declares none', () => {
    const t = translator(azureOpenAi);
    const request = t.toUpstream(legacy, target('azure-openai', { options: { apiVersion: '2024-06-01', deployments: { 'gpt-3.5-turbo-instruct': 'instruct prod' } } }), false);
    assert.equal(request.path, '/deployments/instruct%20prod/completions?api-version=2024-06-01');
    assert.equal(request.headers['api-key'], 'sk-test');
    assert.equal(request.headers.authorization, undefined);
    assert.equal('model' in JSON.parse(request.body!), false);
    assert.equal(azureAi.capabilities.completion, undefined);
  });

  test('the catalogue: DeepSeek at /beta/completions, the others at /completions; Mistral (a FIM API of its own) declares none', () => {
    assert.equal(translator(compatibleProviderBySlug('deepseek')).toUpstream(legacy, target('deepseek'), false).path, '/beta/completions');
    assert.equal(translator(compatibleProviderBySlug('together-ai')).toUpstream(legacy, target('together-ai'), false).path, '/completions');
    const slugs = openAiCompatibleProviders.filter((p) => p.capabilities.completion).map((p) => p.slug).sort();
    assert.deepEqual(slugs, ['cerebras', 'databricks', 'deepinfra', 'deepseek', 'featherless-ai', 'fireworks-ai', 'hyperbolic', 'nebius', 'novita-ai', 'nvidia-nim', 'ollama', 'openrouter', 'together-ai', 'vllm']);
    assert.equal(compatibleProviderBySlug('mistral').capabilities.completion, undefined);
  });

  test('a text_completion answer -> canonical chat: text as content, logprobs and usage kept', () => {
    const logprobs = { tokens: [' x'], token_logprobs: [-1], top_logprobs: [{ ' x': -1 }], text_offset: [8] };
    const result = translator(openai).fromUpstream({
      id: 'cmpl-1', object: 'text_completion', created: 5, model: 'gpt-3.5-turbo-instruct',
      choices: [{ text: ' x', index: 0, logprobs, finish_reason: 'length' }], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 },
    }, target('openai'), legacy);
    assert.deepEqual(result, {
      id: 'cmpl-1', object: 'chat.completion', created: 5, model: 'gpt-3.5-turbo-instruct',
      choices: [{ index: 0, message: { role: 'assistant', content: ' x' }, finish_reason: 'length', logprobs }],
      usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 },
    });
  });

  test('malformed answers and chunks are UPSTREAM_ERROR; a stream cut before its finish reason or [DONE] fails', () => {
    const t = translator(openai);
    for (const body of [null, {}, { choices: 'x' }, { choices: [{ text: 3 }] }]) {
      assert.throws(() => t.fromUpstream(body, target('openai'), legacy), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR', JSON.stringify(body));
    }
    const decoder = t.streamDecoder(target('openai'), { model: 'm', messages: [] });
    const { chunks } = decoder.event({ event: 'message', data: JSON.stringify({ id: 'cmpl-2', object: 'text_completion', created: 1, model: 'm', choices: [{ text: 'Hi', index: 0, logprobs: null, finish_reason: null }] }) });
    assert.deepEqual(chunks, [{ id: 'cmpl-2', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] }]);
    assert.throws(() => decoder.end(), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR');
    assert.throws(() => decoder.event({ event: 'message', data: '{"choices": [{"text": 1}]}' }), (err: unknown) => err instanceof GatewayError && err.code === 'UPSTREAM_ERROR');
  });

  test('which API a legacy request takes per provider, and the refusal naming the field and provider', () => {
    const request = (fields: Record<string, unknown>, body: Record<string, unknown> = {}) =>
      ({ modality: 'chat' as const, model: 'm', stream: false, includeUsage: false, body: { model: 'm', messages: [{ role: 'user' as const, content: 'p' }], ...body }, legacy: { prompt: 'p', ...fields } });
    assert.equal(completionTranslatorFor(openai, request({ suffix: 's' })), openai.completion);
    assert.equal(completionTranslatorFor(anthropic, request({ echo: true })), null, 'echo alone: through chat, the gateway echoes');
    for (const [fields, field] of [[{ suffix: 's' }, 'suffix'], [{ best_of: 3 }, 'best_of'], [{ logprobs: 0 }, 'logprobs']] as const) {
      assert.throws(() => completionTranslatorFor(anthropic, request(fields)), (err: unknown) => err instanceof GatewayError && err.code === 'CAPABILITY_NOT_SUPPORTED'
        && err.message.startsWith(field) && JSON.stringify(err.details) === JSON.stringify({ provider: 'anthropic', field, capability: 'completion' }));
    }
    assert.equal(completionTranslatorFor(openai, request({}, { tools: [{ type: 'function', function: { name: 'f' } }] })), null, 'a chat-only parameter: through chat');
    assert.throws(() => completionTranslatorFor(openai, request({ best_of: 2 }, { response_format: { type: 'json_object' } })), /best_of cannot be sent with response_format/);
  });
});
