import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { estimatePromptTokens, estimateUsage } from '../../core/canonical/estimate.ts';

const request = (content: string): ChatCompletionRequest => ({ model: 'm', messages: [{ role: 'user', content }] });

test('a prompt is counted once per body before the call, and again for usage after it', async () => {
  const body = request('Say hello to the benchmark, in one short sentence.');
  const first = estimatePromptTokens(body);
  assert.equal(estimatePromptTokens(body), first, 'the same body shares one count');
  const rewritten = { ...body, messages: [{ role: 'user' as const, content: 'A rewritten prompt, longer than the first one was by far.' }] };
  assert.notEqual(estimatePromptTokens(rewritten), first, 'a copy of the body with a new prompt is counted again');
  assert.deepEqual(Object.keys(body), ['model', 'messages'], 'the count is not among the body\'s fields');
  assert.equal(JSON.stringify(body).includes('estimate'), false);
  const tokens = await first;
  assert.ok(tokens > 6);
  assert.equal(await estimatePromptTokens(request('Say hello to the benchmark, in one short sentence.')), tokens);
  assert.notEqual(await estimatePromptTokens(request('A different and rather longer prompt than the first one was.')), tokens);

  // Usage is counted from the body as sent: a later change to it is seen.
  (body.messages[0] as { content: string }).content += ' And another sentence, please, with more words in it.';
  const usage = await estimateUsage(body, 'Hello!');
  assert.ok(usage.prompt_tokens > tokens);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
});

test('special-token text in a prompt is counted as plain text, not refused', async () => {
  const quoted = await estimatePromptTokens(request('Explain what <|endoftext|> means to a tokenizer.'));
  const plain = await estimatePromptTokens(request('Explain what <|end of text|> means to a tokenizer.'));
  assert.ok(quoted > 10);
  assert.ok(Math.abs(quoted - plain) <= 3, `${quoted} vs ${plain}`);
});
