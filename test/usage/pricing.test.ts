/**
 * costUsd and toMicroUsd: USD per million tokens, cached prompt tokens at cachedInput, rerank search units at
 * searchUnit, null without pricing; what each modality estimates and meters (core/canonical/units.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import { estimateEmbeddingsTokens, estimatePromptTokens, estimateRerankTokens } from '../../core/canonical/estimate.ts';
import { speechCharacters } from '../../core/canonical/audio.ts';
import { costUsd, isPriced, toMicroUsd } from '../../core/canonical/pricing.ts';
import { estimateInputTokens, estimateSearchUnits, meteredModality, meteredResult } from '../../core/canonical/units.ts';

const usage = (prompt: number, completion: number, cached?: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
});

describe('costUsd', () => {
  test('input and output per million tokens', () => {
    assert.equal(costUsd({ input: 2.5, output: 10 }, usage(1_000_000, 1_000_000)), 12.5);
    assert.equal(costUsd({ input: 2.5, output: 10 }, usage(1000, 500)), 0.0075);
  });

  test('no binary noise: 9 prompt tokens at $0.15 per million is 0.00000135', () => {
    assert.equal(costUsd({ input: 0.15, output: 0.6 }, usage(9, 0)), 0.00000135);
    assert.equal(costUsd({ input: 0.15, output: 0.6 }, usage(9, 2)), 0.00000255);
  });

  test('cached prompt tokens are priced at cachedInput', () => {
    // 600 uncached at 2.5, 400 cached at 1.25, 100 out at 10
    assert.equal(costUsd({ input: 2.5, output: 10, cachedInput: 1.25 }, usage(1000, 100, 400)), (600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6);
  });

  test('without cachedInput, cached prompt tokens cost the input price', () => {
    assert.equal(costUsd({ input: 2.5, output: 10 }, usage(1000, 100, 400)), (1000 * 2.5 + 100 * 10) / 1e6);
  });

  test('more cached tokens than prompt tokens counts the prompt at most', () => {
    assert.equal(costUsd({ input: 2, output: 0, cachedInput: 1 }, usage(10, 0, 50)), 10 / 1e6);
  });

  test('a model without pricing, or with none of input, output and searchUnit, has no cost: null', () => {
    assert.equal(costUsd(undefined, usage(1000, 1000)), null);
    assert.equal(costUsd({}, usage(1000, 1000)), null);
    assert.equal(costUsd({ cachedInput: 1 }, usage(1000, 1000)), null);
  });

  test('a price left out counts as 0', () => {
    assert.equal(costUsd({ output: 10 }, usage(1000, 100)), 0.001);
    assert.equal(costUsd({ input: 1 }, usage(1000, 100)), 0.001);
  });

  test('zero tokens cost 0 when priced', () => {
    assert.equal(costUsd({ input: 1, output: 1 }, usage(0, 0)), 0);
  });

  test('search units at searchUnit each, beside the tokens at their prices', () => {
    assert.equal(costUsd({ searchUnit: 0.002 }, { ...usage(0, 0), search_units: 3 }), 0.006);
    assert.equal(costUsd({ searchUnit: 0.002, input: 50 }, { ...usage(40, 0), search_units: 1 }), 0.002 + 40 * 50 / 1e6);
    // A model priced by tokens only charges nothing for search units, and the other way round.
    assert.equal(costUsd({ input: 50 }, { ...usage(40, 0), search_units: 7 }), 40 * 50 / 1e6);
    assert.equal(costUsd({ searchUnit: 0.002 }, usage(1000, 1000)), 0);
    assert.equal(toMicroUsd(costUsd({ searchUnit: 0.002 }, { ...usage(0, 0), search_units: 1 })!), 2000);
  });

  test('searchUnit alone prices a model; cachedInput alone does not', () => {
    assert.equal(isPriced({ searchUnit: 0 }), true);
    assert.equal(isPriced({ cachedInput: 1 }), false);
    assert.equal(isPriced(undefined), false);
  });
});

describe('what each modality counts', () => {
  test('search units before the call: one per started hundred documents, at least one', () => {
    assert.deepEqual([1, 99, 100, 101, 200, 201, 10_000].map(estimateSearchUnits), [1, 1, 1, 2, 2, 3, 100]);
  });

  test('input tokens: a chat prompt, every embeddings input, a rerank query once per document plus the documents', async () => {
    const chat = { model: 'm', messages: [{ role: 'user' as const, content: 'hello there' }] };
    assert.equal(await estimateInputTokens({ modality: 'chat', model: 'm', stream: false, includeUsage: false, body: chat }), await estimatePromptTokens(chat));
    const one = await estimateEmbeddingsTokens({ model: 'm', input: 'alpha beta' });
    const two = await estimateEmbeddingsTokens({ model: 'm', input: 'gamma' });
    assert.ok(one > 0 && two > 0);
    assert.equal(await estimateInputTokens({ modality: 'embeddings', model: 'm', stream: false, body: { model: 'm', input: ['alpha beta', 'gamma'] } }), one + two);
    const query = await estimateEmbeddingsTokens({ model: 'm', input: 'which one' });
    const rerank = { model: 'm', query: 'which one', documents: ['alpha beta', 'gamma', 'gamma'] };
    assert.equal(await estimateRerankTokens(rerank), 3 * query + one + 2 * two);
    assert.equal(await estimateInputTokens({ modality: 'rerank', model: 'm', stream: false, body: rerank }), 3 * query + one + 2 * two);
  });

  test('the modality recorded: the request\'s, completion for the legacy endpoint, the route\'s when the body never parsed', () => {
    const chat = { modality: 'chat' as const, model: 'm', stream: false, includeUsage: false, body: { model: 'm', messages: [] } };
    assert.equal(meteredModality(chat, '/v1/chat/completions'), 'chat');
    assert.equal(meteredModality(chat, '/v1/messages'), 'chat');
    assert.equal(meteredModality(chat, '/v1/completions'), 'completion');
    assert.equal(meteredModality({ modality: 'embeddings', model: 'm', stream: false, body: { model: 'm', input: 'x' } }, '/v1/embeddings'), 'embeddings');
    assert.equal(meteredModality(undefined, '/v1/rerank'), 'rerank');
    assert.equal(meteredModality(undefined, '/v1/audio/speech'), 'speech');
  });

  const noAudio = { audioSeconds: 0, characters: 0, images: 0, videoSeconds: 0 };

  test('an answer\'s units: reported usage as is, embeddings without usage estimated, a rerank\'s search units', async () => {
    const embeddings = { modality: 'embeddings' as const, model: 'm', stream: false as const, body: { model: 'm', input: ['alpha beta'] } };
    const vectors = { object: 'list' as const, data: [{ object: 'embedding' as const, embedding: [1], index: 0 }], model: 'm' };
    const usage3 = { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 };
    assert.deepEqual(await meteredResult(embeddings, { ...vectors, usage: usage3 }, false), { usage: usage3, searchUnits: 0, estimated: false, ...noAudio });
    const tokens = await estimateEmbeddingsTokens(embeddings.body);
    assert.deepEqual(await meteredResult(embeddings, vectors, false), { usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens }, searchUnits: 0, estimated: true, ...noAudio });
    const rerank = { modality: 'rerank' as const, model: 'm', stream: false as const, body: { model: 'm', query: 'q', documents: ['d'] } };
    const ranked = { object: 'rerank' as const, id: '', results: [{ index: 0, relevance_score: 1 }], meta: { billed_units: { search_units: 2 } } };
    assert.deepEqual(await meteredResult(rerank, ranked, false), { usage: null, searchUnits: 2, estimated: false, ...noAudio });
    assert.deepEqual(await meteredResult(rerank, { ...ranked, usage: usage3 }, true), { usage: usage3, searchUnits: 2, estimated: true, ...noAudio });
  });
});

describe('speech: characters', () => {
  test('the input\'s code points: an emoji is one character, not two UTF-16 units', () => {
    assert.equal(speechCharacters('Grüße 😀!'), 8);
    assert.equal(speechCharacters('😀'.repeat(4096)), 4096);
  });

  test('a speech answer is metered by its characters, priced per million at `characters`', async () => {
    const request = { modality: 'speech' as const, model: 'm', stream: false as const, body: { model: 'm', input: 'hello', voice: 'alloy', response_format: 'mp3' as const } };
    const answer = { object: 'speech' as const, contentType: 'audio/mpeg', audio: (async function* () {})(), usage: { characters: 5 } };
    assert.deepEqual(await meteredResult(request, answer, false), { usage: null, searchUnits: 0, audioSeconds: 0, characters: 5, images: 0, videoSeconds: 0, estimated: false });
    assert.equal(await estimateInputTokens(request), 0);
    assert.equal(costUsd({ characters: 15 }, { prompt_tokens: 0, completion_tokens: 0, characters: 1000 }), 0.015);
    assert.equal(isPriced({ characters: 0 }), true);
    assert.equal(costUsd({ input: 1 }, { prompt_tokens: 0, completion_tokens: 0, characters: 1000 }), 0, 'a model priced by tokens charges nothing for characters');
  });
});

describe('toMicroUsd', () => {
  test('integer micro-dollars, rounded', () => {
    assert.equal(toMicroUsd(12.5), 12_500_000);
    assert.equal(toMicroUsd(0.0075), 7500);
    assert.equal(toMicroUsd(0.00000135), 1);
    assert.equal(toMicroUsd(0.0000015), 2);
    assert.equal(toMicroUsd(0), 0);
    assert.ok(Number.isInteger(toMicroUsd(0.1 + 0.2)));
    assert.equal(toMicroUsd(0.1 + 0.2), 300_000);
  });
});

describe('model pricing in the config', () => {
  const yaml = (pricing: string) => `
providers:
  cohere: { apiKey: k }
models:
  - id: rerank
    provider: cohere
    pricing: ${pricing}
pipelines: []
`;
  const parse = (pricing: string) => parseConfig(yaml(pricing), { file: '/tmp/x/pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: '/tmp/x' });

  test('searchUnit is a price of its own', async () => {
    const { config } = await parse('{ searchUnit: 0.002, input: 0 }');
    assert.deepEqual(config.models[0]!.pricing, { searchUnit: 0.002, input: 0 });
  });

  test('a negative searchUnit, or one that is not a number, is refused at load, naming the field', async () => {
    for (const [value, message] of [['-0.001', 'must be >= 0, got number'], ['"cheap"', 'expected number, got string "cheap"']] as const) {
      await assert.rejects(parse(`{ searchUnit: ${value} }`), (err: unknown) => {
        assert.ok(err instanceof ConfigError, String(err));
        assert.deepEqual(err.issues.map((i) => [i.pointer, i.message]), [['/models/0/pricing/searchUnit', message]]);
        return true;
      });
    }
  });
});
