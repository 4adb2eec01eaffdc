/**
 * The conformance kit on Replicate: every answer is a prediction created, polled (starting -> processing ->
 * succeeded) and read, or streamed from its urls.stream. The fixtures for what Replicate's language models do
 * not have are left out, and the gateway's refusal of each is tested here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import replicate from '../../providers/replicate/index.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { FIXTURES } from './fixtures.ts';
import { runConformance, startWireFake, type ConformanceTarget, type WireFake } from './kit.ts';
import { replicateFake } from './wires/replicate.ts';

const fake = replicateFake();
const KEY = 'r8_conformance_token';

const WITHOUT: Record<string, string> = {
  'a tool call': 'Replicate language models take a prompt, not tools (capabilities.chat.tools is false)',
  'parallel tool calls': 'no tools (capabilities.chat.tools is false)',
  'a named tool choice': 'no tools (capabilities.chat.tools is false)',
  'a tool result turn': 'no tools (capabilities.chat.tools is false)',
  'an image': 'no image parts in a text prompt (capabilities.chat.vision is false)',
  'a json_schema response format': 'no JSON mode across Replicate models: the translator refuses response_format',
  'stop, max_tokens and temperature': 'a prediction reports no finish reason, and this fixture\'s answer stops at max_tokens with fewer tokens than it; test/providers/replicate.test.ts checks the parameters and the length inference',
};

const target: ConformanceTarget = {
  provider: replicate,
  wire: fake.wire,
  credential: KEY,
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}/v1\napiKey: ${KEY}\noptions:\n  pollIntervalMs: 5\n  maxPollIntervalMs: 20`,
  extraRoutes: (req, res) => fake.routes(req, res),
  upstreamModel: 'conformance/upstream-model-1',
  streamUsage: 'estimated',
  without: WITHOUT,
};

runConformance(target);

describe('replicate: what the conformance kit leaves out is refused before any I/O', () => {
  let upstream: WireFake;
  let gw: TestGateway;
  let auth: Record<string, string>;
  before(async () => {
    upstream = await startWireFake(target);
    gw = await startTestGateway(`
providers:
  replicate:
    baseUrl: ${upstream.url}/v1
    apiKey: ${KEY}
models:
  - id: llama
    provider: replicate
    upstreamModel: meta/meta-llama-3-8b-instruct
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const refused = ['a tool call', 'parallel tool calls', 'a named tool choice', 'a tool result turn', 'an image', 'a json_schema response format'];
  for (const name of refused) {
    test(`${name} -> 400 CAPABILITY_NOT_SUPPORTED`, async () => {
      const fixture = FIXTURES.find((f) => f.name === name)!;
      const seen = upstream.requests.length;
      const answer = await postJson(`${gw.url}/v1/chat/completions`, { ...fixture.request, model: 'llama' }, auth);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.equal(upstream.requests.length, seen, 'nothing was sent upstream');
    });
  }
});
