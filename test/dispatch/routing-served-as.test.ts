/** RoutingTable.servedAs: which configured model prices work the gateway did not route (a registered batch). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RoutingTable } from '../../core/dispatch/routing.ts';
import { parseConfig } from '../helpers/config.ts';

const yaml = `
providers:
  openai: { apiKey: k }
  gemini: { apiKey: k }
  anthropic: { apiKey: k }
models:
  - id: mini
    provider: openai
    upstreamModel: gpt-4o-mini
  - id: mini-again
    provider: openai
    upstreamModel: gpt-4o-mini
  - id: four
    provider: openai
    upstreamModel: gpt-4o
  - id: pro
    targets:
      - { provider: anthropic, upstreamModel: claude-sonnet-4-5 }
      - { provider: gemini, upstreamModel: gemini-2.5-pro }
  - id: gpt-4.1
    provider: openai
  - id: off
    provider: gemini
    upstreamModel: gemini-2.0-flash
    enabled: false
`;

test('servedAs: the exact upstream name, then the longest one a dated or versioned name extends; declared order breaks ties', async () => {
  const loaded = await parseConfig(yaml, { file: '/tmp/served-as.yaml', env: { AIGW_DATA_DIR: '/tmp/aigw-served-as-unused' } });
  const routing = new RoutingTable(loaded.config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl);
  assert.equal(routing.servedAs('openai', 'gpt-4o-mini'), 'mini');
  assert.equal(routing.servedAs('openai', 'gpt-4o-mini-2024-07-18'), 'mini', 'gpt-4o-mini beats the shorter gpt-4o');
  assert.equal(routing.servedAs('openai', 'gpt-4o-2024-08-06'), 'four');
  assert.equal(routing.servedAs('openai', 'gpt-4.1'), 'gpt-4.1', 'a model without upstreamModel is its own upstream name');
  assert.equal(routing.servedAs('gemini', 'gemini-2.5-pro-001'), 'pro', 'any target of a model counts');
  assert.equal(routing.servedAs('anthropic', 'claude-sonnet-4-5@20250929'), 'pro', "Vertex's @version suffix");
  assert.equal(routing.servedAs('gemini', 'gemini-2.0-flash'), null, 'a disabled model prices nothing');
  assert.equal(routing.servedAs('openai', 'gpt-4omni'), null, 'a prefix that is not a whole name part is no match');
  assert.equal(routing.servedAs('anthropic', 'gpt-4o-mini'), null, 'another provider');
});
