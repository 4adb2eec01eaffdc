/**
 * GET /admin/v1/providers: the configured providers with the models routed to each and the breakers of the
 * instance that answers, never their credentials; admins only; documented in /openapi.json.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (baseUrl: string) => `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: plain
    provider: openai
  - id: routed
    strategy: fallback
    targets:
      - provider: openai
        upstreamModel: plain
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`;

describe('GET /admin/v1/providers', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const providers = async (token = ADMIN_TOKEN) => {
    const response = await fetch(`${gw.url}/admin/v1/providers`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, text: await response.text() };
  };

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config(fake.baseUrl));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('lists each provider with its models, and a breaker once the provider was called', async () => {
    const first = await providers();
    assert.equal(first.status, 200, first.text);
    assert.doesNotMatch(first.text, /sk-upstream-secret/);
    assert.deepEqual(JSON.parse(first.text), {
      object: 'list',
      data: [{ id: 'openai', object: 'provider', enabled: true, baseUrl: fake.baseUrl, models: ['plain', 'routed'], breakers: [] }],
    });

    const key = await gw.createKey();
    const chat = await postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const [openai] = JSON.parse((await providers()).text).data;
    assert.equal(openai.breakers.length, 1);
    assert.equal(openai.breakers[0].state, 'closed');
    assert.equal(openai.breakers[0].successes, 1);
    assert.equal(openai.breakers[0].failures, 0);
  });

  test('admins only', async () => {
    const refused = await providers('not-the-admin-token');
    assert.equal(refused.status, 401, refused.text);
    assert.equal(JSON.parse(refused.text).error.code, 'AUTH_INVALID_TOKEN');
  });

  test('is documented in /openapi.json', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    const operation = doc.paths['/admin/v1/providers']?.get;
    assert.ok(operation, 'GET /admin/v1/providers');
    assert.ok(operation.responses['200'].content['application/json'].schema.properties.data);
  });
});
