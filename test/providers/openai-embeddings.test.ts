/**
 * The OpenAI family's embeddings translators as units: what each sends (path, headers, body) and how answers are
 * read, for OpenAI, the compatible catalogue's documented differences, and Azure's two APIs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EmbeddingsRequest } from '../../core/canonical/embeddings.ts';
import type { ProviderDefinition, ProviderTarget } from '../../core/dispatch/provider.ts';
import { azureAi, azureOpenAi } from '../../providers/azure-openai/index.ts';
import openai from '../../providers/openai/index.ts';
import { compatibleProviderBySlug } from '../../providers/openai-compatible/index.ts';

const target = (slug: string, upstreamModel: string, extra: Partial<ProviderTarget> = {}): ProviderTarget =>
  ({ slug, baseUrl: 'http://upstream', headers: {}, options: {}, upstreamModel, apiKey: 'k', ...extra });
const sent = (provider: ProviderDefinition, request: EmbeddingsRequest, t: ProviderTarget) => {
  const built = provider.embeddings!.toUpstream(request, t);
  return { ...built, body: JSON.parse(built.body!) as Record<string, unknown> };
};

describe('OpenAI embeddings', () => {
  test('the caller\'s fields and encoding go upstream; dimensions only on text-embedding-3-*', () => {
    const t = target('openai', 'text-embedding-3-large', { options: { organization: 'org-1' } });
    const built = sent(openai, { model: 'x', input: ['a', 'b'], dimensions: 256, encoding_format: 'base64', user: 'u' }, t);
    assert.equal(built.path, '/embeddings');
    assert.equal(built.headers.authorization, 'Bearer k');
    assert.equal(built.headers['openai-organization'], 'org-1');
    assert.deepEqual(built.body, { model: 'text-embedding-3-large', input: ['a', 'b'], encoding_format: 'base64', dimensions: 256, user: 'u' });
    assert.equal(openai.embeddings!.supportsDimensions('text-embedding-3-small'), true);
    assert.equal(openai.embeddings!.supportsDimensions('text-embedding-ada-002'), false);
  });

  test('answers: usage without completion tokens; a server without index keeps the list order; no data is malformed', () => {
    const t = target('openai', 'm');
    const read = openai.embeddings!.fromUpstream({ data: [{ embedding: [1] }, { embedding: 'AACAPw==' }], usage: { prompt_tokens: 4, total_tokens: 4 } }, t, { model: 'x', input: ['a', 'b'] });
    assert.deepEqual(read.data.map((d) => d.index), [0, 1]);
    assert.deepEqual(read.usage, { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
    assert.throws(() => openai.embeddings!.fromUpstream({ object: 'list' }, t, { model: 'x', input: 'a' }), { code: 'UPSTREAM_ERROR' });
  });
});

describe('the OpenAI-compatible catalogue', () => {
  test('Mistral: output_dimension, and no user (it rejects unknown fields)', () => {
    const built = sent(compatibleProviderBySlug('mistral'), { model: 'x', input: 'a', dimensions: 512, user: 'u' }, target('mistral', 'codestral-embed'));
    assert.deepEqual(built.body, { model: 'codestral-embed', input: 'a', encoding_format: 'float', output_dimension: 512 });
    assert.equal(compatibleProviderBySlug('mistral').embeddings!.supportsDimensions('mistral-embed'), false);
  });

  test('NVIDIA NIM: input_type from options (default query) and truncate NONE', () => {
    const nim = compatibleProviderBySlug('nvidia-nim');
    assert.deepEqual(sent(nim, { model: 'x', input: 'a' }, target('nvidia-nim', 'nvidia/nv-embedqa-e5-v5')).body,
      { model: 'nvidia/nv-embedqa-e5-v5', input: 'a', encoding_format: 'float', input_type: 'query', truncate: 'NONE' });
    const passage = sent(nim, { model: 'x', input: 'a' }, target('nvidia-nim', 'nvidia/nv-embedqa-e5-v5', { options: { embeddingInputType: 'passage' } }));
    assert.equal(passage.body.input_type, 'passage');
  });

  test('float-only servers are asked for no encoding; a server without a key gets no Authorization', () => {
    const built = sent(compatibleProviderBySlug('ollama'), { model: 'x', input: 'a', encoding_format: 'base64' }, target('ollama', 'nomic-embed-text', { apiKey: undefined as unknown as string }));
    assert.equal('encoding_format' in built.body, false);
    assert.equal(built.headers.authorization, undefined);
  });

  test('every entry with embeddings declares the capability and a translator; the others neither', () => {
    const withEmbeddings = ['mistral', 'together-ai', 'fireworks-ai', 'openrouter', 'deepinfra', 'nebius', 'volcengine', 'zhipu', 'dashscope',
      'siliconflow', 'upstage', 'nvidia-nim', 'github-models', 'workers-ai', 'ollama', 'vllm', 'databricks'];
    for (const slug of withEmbeddings) assert.ok(compatibleProviderBySlug(slug).capabilities.embeddings && compatibleProviderBySlug(slug).embeddings, slug);
    for (const slug of ['groq', 'deepseek', 'perplexity']) assert.equal(compatibleProviderBySlug(slug).embeddings, undefined, slug);
  });
});

describe('Azure', () => {
  test('Azure OpenAI: the deployment in the path, api-version, api-key, no model in the body', () => {
    const t = target('azure-openai', 'text-embedding-3-small', { options: { apiVersion: '2025-01-01-preview', deployments: { 'text-embedding-3-small': 'emb small' } } });
    const built = sent(azureOpenAi, { model: 'x', input: 'a', dimensions: 64 }, t);
    assert.equal(built.path, '/deployments/emb%20small/embeddings?api-version=2025-01-01-preview');
    assert.equal(built.headers['api-key'], 'k');
    assert.deepEqual(built.body, { input: 'a', encoding_format: 'float', dimensions: 64 });
    assert.equal(azureOpenAi.embeddings!.supportsDimensions('text-embedding-ada-002'), false);
  });

  test('Azure AI: /embeddings with the model in the body; dimensions on text-embedding-3 and embed-v-4-0 only', () => {
    const built = sent(azureAi, { model: 'x', input: 'a' }, target('azure-ai', 'embed-v-4-0', { options: { auth: 'bearer' } }));
    assert.equal(built.path, '/embeddings?api-version=2024-05-01-preview');
    assert.equal(built.headers.authorization, 'Bearer k');
    assert.equal(built.body.model, 'embed-v-4-0');
    assert.equal(azureAi.embeddings!.supportsDimensions('embed-v-4-0'), true);
    assert.equal(azureAi.embeddings!.supportsDimensions('Cohere-embed-v3-english'), false);
  });
});
