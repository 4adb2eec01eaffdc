/**
 * The OpenAI-compatible catalogue's quirks the conformance kit does not reach: each provider's own
 * parameters, ids, usage locations and finish reasons, tested on the translator; and the catalogue against
 * the provider table of PROVIDERS.md.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';
import { builtInProviders } from '../../providers/index.ts';
import { compatibleProviderBySlug as provider } from '../../providers/openai-compatible/index.ts';
import { mistralToolCallId } from '../../providers/openai-compatible/quirks.ts';
import { catalogueRows } from '../helpers/catalogue.ts';

const target = (slug: string, extra: Partial<ProviderTarget> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'http://upstream.test/v1', apiKey: `key-${slug}`, headers: {}, options: {}, upstreamModel: 'up-model', ...extra });

const hello: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };

function build(slug: string, request: Partial<ChatCompletionRequest>, stream = false, t = target(slug)) {
  const built = provider(slug).chat!.toUpstream({ ...hello, ...request } as ChatCompletionRequest, t, stream);
  return { ...built, json: JSON.parse(built.body!) as Record<string, any> };
}

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(err.status, 400);
    return err;
  }
  assert.fail('expected a refusal');
}

function decode(p: ProviderDefinition, chunks: unknown[], request: Partial<ChatCompletionRequest> = {}): ChatCompletionChunk[] {
  const decoder = p.chat!.streamDecoder(target(p.slug), { ...hello, ...request } as ChatCompletionRequest);
  const out = chunks.flatMap((c) => decoder.event({ event: 'message', data: JSON.stringify(c) }).chunks);
  assert.equal(decoder.event({ event: 'message', data: '[DONE]' }).done, true);
  return out;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const completion = (message: Record<string, unknown>, finish: string) =>
  ({ id: 'c1', object: 'chat.completion', created: 1, model: 'up-model', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
const usage = { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 };

describe('the catalogue against PROVIDERS.md', () => {
  test('every chat row of the openai-compatible and azure families is registered with chat', () => {
    const chat = builtInProviders.filter((p) => p.capabilities.chat);
    console.log(`registered chat providers: ${chat.length} (${chat.map((p) => p.slug).join(', ')})`);
    const ours = catalogueRows().filter((row) => /^(openai-compatible|azure-openai)/.test(row.family) && row.modalities.includes('c'));
    assert.ok(ours.length >= 32, `found ${ours.length} rows`);
    for (const { slug } of ours) {
      const registered = builtInProviders.find((p) => p.slug === slug);
      assert.ok(registered, `${slug} is registered`);
      assert.ok(registered.capabilities.chat && registered.chat, `${slug} declares chat`);
    }
  });
});

describe('mistral', () => {
  test('required is any, a named choice stays, seed is random_seed, no stream_options', () => {
    const { json } = build('mistral', { tool_choice: 'required', seed: 7, max_completion_tokens: 20, user: 'u1', stop: [] }, true);
    assert.equal(json.tool_choice, 'any');
    assert.equal(json.random_seed, 7);
    assert.equal(json.max_tokens, 20);
    for (const gone of ['seed', 'max_completion_tokens', 'user', 'stream_options', 'stop']) assert.equal(json[gone], undefined, gone);
    assert.deepEqual(build('mistral', { tool_choice: { type: 'function', function: { name: 'f' } } }).json.tool_choice, { type: 'function', function: { name: 'f' } });
  });

  test('tool-call ids become 9 alphanumerics, the same in the call and its result; its own ids are kept', () => {
    const id = mistralToolCallId('call_abc-123');
    assert.match(id, /^[A-Za-z0-9]{9}$/);
    assert.equal(mistralToolCallId('call_abc-123'), id, 'deterministic');
    assert.equal(mistralToolCallId('D681PevKs'), 'D681PevKs');
    const { json } = build('mistral', {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc-123', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'D681PevKs', type: 'function', function: { name: 'g', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_abc-123', content: '1' },
        { role: 'tool', tool_call_id: 'D681PevKs', content: '2' },
      ],
    });
    assert.deepEqual(json.messages[1].tool_calls.map((c: { id: string }) => c.id), [id, 'D681PevKs']);
    assert.deepEqual([json.messages[2].tool_call_id, json.messages[3].tool_call_id], [id, 'D681PevKs']);
  });

  test('logprobs are refused; reasoning is prompt_mode; unknown fields never reach it', () => {
    refusal(() => build('mistral', { logprobs: true }));
    assert.equal(build('mistral', { logprobs: false }).json.logprobs, undefined);
    const { json } = build('mistral', { reasoning_effort: 'high', service_tier: 'auto', some_future_field: 1 });
    assert.equal(json.prompt_mode, 'reasoning');
    assert.equal(json.reasoning_effort, undefined);
    assert.equal(json.some_future_field, undefined);
  });

  test('its usage ends the stream in the finishing chunk, unasked', () => {
    const out = decode(provider('mistral'), [chunk({ content: 'Hi' }), chunk({}, 'stop', { usage })]);
    assert.deepEqual(out.at(-1)!.usage, usage);
  });
});

describe('groq', () => {
  test('logprobs, top_logprobs and logit_bias are refused before any I/O; n > 1 is not declared', () => {
    const err = refusal(() => build('groq', { logprobs: true, top_logprobs: 2 }));
    assert.deepEqual((err.details as { parameters: string[] }).parameters, ['logprobs', 'top_logprobs']);
    refusal(() => build('groq', { logit_bias: { '50256': -100 } }));
    assert.equal(provider('groq').capabilities.chat!.n, false);
  });

  test('streams without stream_options and reads usage from x_groq.usage', () => {
    assert.equal(build('groq', {}, true).json.stream_options, undefined);
    const out = decode(provider('groq'), [
      chunk({ role: 'assistant', content: '' }, null, { x_groq: { id: 'req_1' } }),
      chunk({}, 'stop', { x_groq: { id: 'req_1', usage: { queue_time: 0.1, prompt_time: 0.01, completion_time: 0.2, total_time: 0.3, ...usage } } }),
    ]);
    assert.deepEqual(out.at(-1)!.usage, usage);
  });

  test('name is dropped from non-tool messages', () => {
    const { json } = build('groq', { messages: [{ role: 'user', name: 'ada', content: 'x' }] });
    assert.equal(json.messages[0].name, undefined);
  });
});

describe('deepseek', () => {
  test('reasoning_content stays out of content, and is removed when the caller excludes it', () => {
    const p = provider('deepseek');
    const body = completion({ content: 'Paris.', reasoning_content: 'The capital...' }, 'stop');
    const kept = p.chat!.fromUpstream(structuredClone(body), target('deepseek'), hello) as ChatCompletion;
    assert.equal(kept.choices[0]!.message.content, 'Paris.');
    assert.equal((kept.choices[0]!.message as Record<string, unknown>).reasoning_content, 'The capital...');
    const excluded = p.chat!.fromUpstream(structuredClone(body), target('deepseek'), { ...hello, reasoning: { exclude_from_output: true } });
    assert.equal((excluded.choices[0]!.message as Record<string, unknown>).reasoning_content, undefined);
    const streamed = decode(p, [chunk({ content: null, reasoning_content: 'Think' }), chunk({ content: 'Paris.' }, 'stop')]);
    assert.equal(streamed.map((c) => c.choices[0]!.delta.content ?? '').join(''), 'Paris.');
    assert.equal((streamed[0]!.choices[0]!.delta as Record<string, unknown>).reasoning_content, 'Think');
  });

  test('reasoning is thinking enabled with its effort; json_schema is refused; the path has no /v1', () => {
    const built = build('deepseek', { reasoning: { effort: 'minimal', budget_tokens: 100 } }, false, target('deepseek', { baseUrl: 'https://api.deepseek.com' }));
    assert.deepEqual(built.json.thinking, { type: 'disabled' });
    assert.equal(built.path, '/chat/completions');
    assert.equal(provider('deepseek').defaultBaseUrl, 'https://api.deepseek.com');
    const on = build('deepseek', { reasoning_effort: 'high' }).json;
    assert.deepEqual([on.thinking, on.reasoning_effort], [{ type: 'enabled' }, 'high']);
    refusal(() => build('deepseek', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }));
    assert.deepEqual(build('deepseek', { response_format: { type: 'json_object' } }).json.response_format, { type: 'json_object' });
  });
});

describe('finish reasons and usage locations', () => {
  test('together finishes with eos: stop, streaming or not', () => {
    const p = provider('together-ai');
    assert.equal(p.chat!.fromUpstream(completion({ content: 'x' }, 'eos'), target('together-ai'), hello).choices[0]!.finish_reason, 'stop');
    assert.equal(decode(p, [chunk({ content: 'x' }), chunk({}, 'eos', { usage })]).at(-1)!.choices[0]!.finish_reason, 'stop');
  });

  test('zhipu finishes a filtered answer with sensitive: content_filter', () => {
    assert.equal(decode(provider('zhipu'), [chunk({}, 'sensitive')])[0]!.choices[0]!.finish_reason, 'content_filter');
  });

  test('moonshot streams usage inside the finishing choice', () => {
    const out = decode(provider('moonshot'), [chunk({ content: 'x' }), { ...chunk({}, 'stop'), choices: [{ index: 0, delta: {}, finish_reason: 'stop', usage }] }]);
    assert.deepEqual(out.at(-1)!.usage, usage);
    assert.equal((out.at(-1)!.choices[0] as Record<string, unknown>).usage, undefined);
  });
});

describe('other quirks', () => {
  test('zhipu: web_search is its web_search tool; tool_choice other than auto is refused, none drops the tools', () => {
    const json = build('zhipu', { tools: [{ type: 'built_in', built_in: 'web_search', config: { search_engine: 'search_pro' } }] }).json;
    assert.deepEqual(json.tools, [{ type: 'web_search', web_search: { enable: true, search_result: true, search_engine: 'search_pro' } }]);
    const fn = { type: 'function' as const, function: { name: 'f' } };
    refusal(() => build('zhipu', { tools: [fn], tool_choice: 'required' }));
    const none = build('zhipu', { tools: [fn], tool_choice: 'none' }).json;
    assert.deepEqual([none.tools, none.tool_choice], [undefined, undefined]);
  });

  test('perplexity: web_search is web_search_options; stop is refused; no stream_options', () => {
    assert.deepEqual(build('perplexity', { tools: [{ type: 'built_in', built_in: 'web_search', config: { search_context_size: 'high' } }] }).json.web_search_options, { search_context_size: 'high' });
    refusal(() => build('perplexity', { stop: ['x'] }));
    const sampled = build('perplexity', { max_tokens: 50, temperature: 0.2, seed: 3 }).json;
    assert.deepEqual([sampled.max_tokens, sampled.temperature, sampled.seed], [50, 0.2, undefined]);
    assert.equal(build('perplexity', {}, true).json.stream_options, undefined);
  });

  test('openrouter: reasoning is its reasoning object, web_search its web plugin, attribution from options', () => {
    const built = build('openrouter', { reasoning: { effort: 'high', budget_tokens: 2000, exclude_from_output: true }, tools: [{ type: 'built_in', built_in: 'web_search' }] },
      false, target('openrouter', { options: { siteUrl: 'https://app.example', appName: 'Example' } }));
    assert.deepEqual(built.json.reasoning, { effort: 'high', max_tokens: 2000, exclude: true });
    assert.deepEqual(built.json.plugins, [{ id: 'web' }]);
    assert.equal(built.headers['http-referer'], 'https://app.example');
    assert.equal(built.headers['x-title'], 'Example');
  });

  test('dashscope and siliconflow: enable_thinking and thinking_budget; dashscope searches with enable_search', () => {
    const json = build('dashscope', { reasoning: { effort: 'low', budget_tokens: 500 }, tools: [{ type: 'built_in', built_in: 'web_search' }] }).json;
    assert.deepEqual([json.enable_thinking, json.thinking_budget, json.enable_search], [true, 500, true]);
    assert.equal(build('siliconflow', { reasoning_effort: 'minimal' }).json.enable_thinking, false);
  });

  test('effort providers: minimal becomes low, max_completion_tokens becomes max_tokens', () => {
    const json = build('fireworks-ai', { reasoning_effort: 'minimal', max_completion_tokens: 30 }).json;
    assert.deepEqual([json.reasoning_effort, json.max_tokens, json.max_completion_tokens], ['low', 30, undefined]);
  });

  test('ollama without a key sends no Authorization; vllm sends its optional key; the caller model is replaced', () => {
    const ollama = build('ollama', {}, false, target('ollama', { apiKey: undefined } as Partial<ProviderTarget>));
    assert.equal(ollama.headers.authorization, undefined);
    assert.equal(ollama.json.model, 'up-model');
    assert.equal(build('vllm', {}).headers.authorization, 'Bearer key-vllm');
    assert.equal(build('github-models', {}).headers['x-github-api-version'], '2022-11-28');
  });

  test('every provider block option is described', () => {
    for (const p of builtInProviders.filter((d) => d.family === 'openai-compatible' || d.family === 'azure-openai')) {
      assert.equal(typeof p.configSchema.description, 'string', p.slug);
      for (const [name, schema] of Object.entries((p.configSchema.properties ?? {}) as Record<string, { description?: string }>)) {
        assert.ok(schema.description, `${p.slug}.options.${name} has a description`);
      }
    }
  });

  test('providers with a placeholder in their base URL have no default (baseUrl is required)', () => {
    for (const slug of ['workers-ai', 'databricks', 'vllm']) assert.equal(provider(slug).defaultBaseUrl, undefined, slug);
  });

  test('error bodies of the family: the provider message reaches the caller', () => {
    const cases: Array<[string, unknown, string]> = [
      ['mistral', { object: 'error', message: 'Invalid model', type: 'invalid_request_error' }, 'Invalid model'],
      ['workers-ai', { success: false, errors: [{ code: 5006, message: 'Bad input' }] }, 'Bad input'],
      ['huggingface', { error: 'Model is overloaded' }, 'Model is overloaded'],
      ['databricks', { error_code: 'BAD_REQUEST', message: 'Endpoint not found' }, 'Endpoint not found'],
      ['vllm', { detail: [{ msg: 'field required' }] }, 'field required'],
    ];
    for (const [slug, body, message] of cases) {
      const err = provider(slug).mapError(400, body, target(slug));
      assert.equal(err.code, 'UPSTREAM_BAD_REQUEST');
      assert.match(err.message, new RegExp(message), slug);
    }
  });
});
