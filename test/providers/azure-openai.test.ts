/** Azure OpenAI and Azure AI model inference: path, api-version, deployments, headers, content filters, errors. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { azureAi, azureOpenAi } from '../../providers/azure-openai/index.ts';

const request: ChatCompletionRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };
const target = (slug: string, extra: Partial<ProviderTarget> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'https://res.openai.azure.com/openai', apiKey: 'azure-key', headers: {}, options: {}, upstreamModel: 'gpt-4o', ...extra });

function build(p: ProviderDefinition, t: ProviderTarget, stream = false) {
  const built = p.chat!.toUpstream(request, t, stream);
  return { ...built, json: JSON.parse(built.body!) as Record<string, any> };
}

describe('azure-openai', () => {
  test('the deployment is in the path with the api-version; the key is in api-key; the body names no model', () => {
    const built = build(azureOpenAi, target('azure-openai'), true);
    assert.equal(built.path, '/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
    assert.equal(built.headers['api-key'], 'azure-key');
    assert.equal(built.headers.authorization, undefined);
    assert.equal(built.json.model, undefined);
    assert.deepEqual(built.json.stream_options, { include_usage: true });
  });

  test('options map a model to its deployment and pick the api-version', () => {
    const built = build(azureOpenAi, target('azure-openai', { options: { apiVersion: '2025-01-01-preview', deployments: { 'gpt-4o': 'prod gpt4o' } } }));
    assert.equal(built.path, '/deployments/prod%20gpt4o/chat/completions?api-version=2025-01-01-preview');
  });

  test('the stream opening chunk with only prompt filter results is dropped; content_filter finishes pass', () => {
    const decoder = azureOpenAi.chat!.streamDecoder(target('azure-openai'), request);
    const event = (value: unknown) => decoder.event({ event: 'message', data: JSON.stringify(value) }).chunks;
    assert.deepEqual(event({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] }), []);
    const finish = event({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: { violence: { filtered: true, severity: 'high' } } }] });
    assert.equal(finish[0]!.choices[0]!.finish_reason, 'content_filter');
    const usage = event({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });
    assert.equal(usage.length, 1, 'a usage chunk without choices is kept');
  });

  test('error bodies: a content-filter refusal says so and keeps the filter results; Azure codes and the API management shape', () => {
    const filtered = azureOpenAi.mapError(400, { error: { code: 'content_filter', message: 'The response was filtered', innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: true } } } } }, target('azure-openai'));
    assert.equal(filtered.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(filtered.message, /content filter: The response was filtered/);
    assert.deepEqual((filtered.details as { upstreamError: { innererror: unknown } }).upstreamError.innererror, { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: true } } });
    const missing = azureOpenAi.mapError(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } }, target('azure-openai'));
    assert.match(missing.message, /DeploymentNotFound: The API deployment/);
    const apim = azureOpenAi.mapError(429, { statusCode: 429, message: 'Rate limit is exceeded. Try again in 3 seconds.' }, target('azure-openai'));
    assert.equal(apim.code, 'UPSTREAM_RATE_LIMITED');
    assert.match(apim.message, /Try again in 3 seconds/);
    assert.equal(azureOpenAi.mapError(401, { error: { code: '401', message: 'Access denied' } }, target('azure-openai')).code, 'UPSTREAM_ERROR');
  });

  test('no default base URL: the resource name is the operator\'s', () => {
    assert.equal(azureOpenAi.defaultBaseUrl, undefined);
    assert.equal(azureAi.defaultBaseUrl, undefined);
  });
});

describe('azure-ai', () => {
  test('/chat/completions with its api-version, the model in the body, api-key by default', () => {
    const built = build(azureAi, target('azure-ai', { upstreamModel: 'Llama-3.3-70B-Instruct' }));
    assert.equal(built.path, '/chat/completions?api-version=2024-05-01-preview');
    assert.equal(built.json.model, 'Llama-3.3-70B-Instruct');
    assert.equal(built.headers['api-key'], 'azure-key');
  });

  test('auth: bearer sends the key as a Bearer token; extraParameters becomes the extra-parameters header', () => {
    const built = build(azureAi, target('azure-ai', { options: { auth: 'bearer', extraParameters: 'pass-through', apiVersion: '2025-05-01' } }));
    assert.equal(built.headers.authorization, 'Bearer azure-key');
    assert.equal(built.headers['api-key'], undefined);
    assert.equal(built.headers['extra-parameters'], 'pass-through');
    assert.equal(built.path, '/chat/completions?api-version=2025-05-01');
  });
});
