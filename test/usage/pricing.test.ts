/** costUsd and toMicroUsd: USD per million tokens, cached prompt tokens at cachedInput, null without pricing. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costUsd, toMicroUsd } from '../../core/usage/pricing.ts';

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

  test('a model without pricing, or with neither input nor output, has no cost: null', () => {
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
