/**
 * What an OpenAI-compatible provider cannot do is refused by the gateway with 400 CAPABILITY_NOT_SUPPORTED
 * before any upstream I/O: every fixture a conformance target leaves out, and Groq's n > 1 and logprobs.
 * One gateway serves every provider concerned, each through a model of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { COMPATIBLE_WIRES, basePath } from '../conformance/compatible-targets.ts';
import { FIXTURES } from '../conformance/fixtures.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const excluded = Object.entries(COMPATIBLE_WIRES).flatMap(([slug, w]) => Object.entries(w.without ?? {}).map(([fixture, reason]) => ({ slug, fixture, reason })));
const slugs = [...new Set([...excluded.map((e) => e.slug), 'groq'])];

describe('refusals before any I/O', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(`
providers:
${slugs.map((s) => `  ${s}:\n    baseUrl: ${fake.url}${basePath(s)}\n    apiKey: sk-${s}`).join('\n')}
models:
${slugs.map((s) => `  - id: model-${s}\n    provider: ${s}\n    upstreamModel: up-${s}`).join('\n')}
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const refused = async (slug: string, request: Record<string, unknown>) => {
    const before = fake.requests.length;
    const r = await postJson(`${gw.url}/v1/chat/completions`, { ...request, model: `model-${slug}` }, { authorization: `Bearer ${key}` });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(r.body.error.details.provider, slug);
    assert.equal(fake.requests.length, before, 'nothing reached the upstream');
    return r.body.error as { message: string; details: Record<string, unknown> };
  };

  for (const { slug, fixture, reason } of excluded) {
    test(`${slug}: "${fixture}" is refused (${reason})`, async () => {
      await refused(slug, FIXTURES.find((f) => f.name === fixture)!.request as Record<string, unknown>);
      await refused(slug, { ...FIXTURES.find((f) => f.name === fixture)!.request, stream: true });
    });
  }

  test('groq: n > 1, logprobs and logit_bias are refused; the same request without them goes through', async () => {
    const messages = [{ role: 'user', content: 'Hi' }];
    const n = await refused('groq', { messages, n: 2 });
    assert.equal(n.details.capability, 'n');
    const logprobs = await refused('groq', { messages, logprobs: true, top_logprobs: 3 });
    assert.match(logprobs.message, /logprobs, top_logprobs/);
    await refused('groq', { messages, logit_bias: { '1': 5 } });
    const ok = await postJson(`${gw.url}/v1/chat/completions`, { messages, model: 'model-groq', logprobs: false }, { authorization: `Bearer ${key}` });
    assert.equal(ok.status, 200);
    assert.equal(fake.requests.at(-1)!.path, '/openai/v1/chat/completions');
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-groq');
  });
});
