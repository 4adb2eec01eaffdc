/**
 * Token estimates within the call (estimateInputTokensNow): none before the tokenizer has loaded, then the same
 * count the asynchronous estimate gives, made once per body whichever of the two asks first, for every modality.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CanonicalRequest } from '../../core/canonical/chat.ts';
import { loadTokenizer } from '../../core/canonical/tokenizer.ts';
import { estimateInputTokens, estimateInputTokensNow } from '../../core/canonical/units.ts';

const chat = (content: string): CanonicalRequest =>
  ({ modality: 'chat', model: 'm', stream: false, body: { model: 'm', messages: [{ role: 'user', content }] } }) as CanonicalRequest;
const embeddings = (input: string[]): CanonicalRequest => ({ modality: 'embeddings', model: 'm', stream: false, body: { model: 'm', input } }) as CanonicalRequest;
const rerank = (query: string, documents: string[]): CanonicalRequest =>
  ({ modality: 'rerank', model: 'm', stream: false, body: { model: 'm', query, documents } }) as CanonicalRequest;

test('before the tokenizer has loaded nothing is counted within the call; afterwards the counts agree', async () => {
  // First in this process: the tokenizer loads on first use.
  assert.equal(estimateInputTokensNow(chat('Say hello to the benchmark.')), undefined);
  await loadTokenizer();
  for (const request of [chat('Say hello to the benchmark, in one short sentence.'), embeddings(['one input', 'and another one']), rerank('which?', ['this', 'or that one'])]) {
    const now = estimateInputTokensNow(request);
    assert.equal(typeof now, 'number', request.modality);
    assert.ok(now! > 0, request.modality);
    assert.equal(await estimateInputTokens(request), now, `${request.modality}: the asynchronous estimate gives the same count`);
    const fresh = { ...request, body: { ...request.body } } as CanonicalRequest;
    assert.equal(await estimateInputTokens(fresh), now, `${request.modality}: counted from scratch, the same`);
  }
});

test('a body is counted once, whichever asks first, and the count is not among its fields', async () => {
  await loadTokenizer();
  const request = chat('Count me once, please, whatever asks.');
  const now = estimateInputTokensNow(request)!;
  (request.body as { messages: Array<{ content: string }> }).messages[0]!.content = 'Changed afterwards: a plugin must build a new body to be counted again.';
  assert.equal(estimateInputTokensNow(request), now, 'the count made within the call is kept');
  assert.equal(await estimateInputTokens(request), now, 'and given to the asynchronous estimate');
  assert.deepEqual(Object.keys(request.body), ['model', 'messages']);
});

test('modalities billed by other units count no input tokens', () => {
  const speech = { modality: 'speech', model: 'm', stream: false, body: { model: 'm', input: 'hello', voice: 'alloy' } } as unknown as CanonicalRequest;
  assert.equal(estimateInputTokensNow(speech), 0);
});
