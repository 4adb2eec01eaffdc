/**
 * The rag plugin and the file_search built-in tool through a real gateway: the planted passage of a store reaches
 * the fake upstream (OpenAI chat, Anthropic Messages) as system context; the tool is removed before the provider
 * call; per-key settings narrow the pipeline's; a failing search sends the request without context (open) or
 * fails it (closed).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { insertVectorStore } from '../../core/store/vector-stores.ts';
import { settingsFor, type RagConfig } from '../../plugins/rag/config.ts';
import type { Caller } from '../../core/pipeline/caller.ts';
import { startFakeKnowledge, type FakeKnowledge } from '../fakes/knowledge.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const STORE = `vs-${randomUUID()}`;
const PLANTED = 'The launch code of project Aurora is PELICAN-42, kept by the harbour master of Valletta.';
const DOCUMENT = [
  'Sourdough bread needs a lively starter, a long cold fermentation and a very hot oven with steam for the crust.',
  PLANTED,
  'Migratory swallows cross the Sahara each autumn, resting in oases and feeding on insects caught in flight.',
].join('\n\n');

const config = (origin: string, ragRoutes = '/v1/messages, /v1/completions', toolRoutes = '/v1/chat/completions, /v1/responses') => `
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant-upstream }
models:
  - id: embed-small
    provider: openai
    upstreamModel: text-embedding-3-small
  - id: gpt
    provider: openai
  - id: claude
    provider: anthropic
    upstreamModel: claude-sonnet-4-5
vectorStores:
  embeddingModel: embed-small
  chunkTokens: 60
  chunkOverlapTokens: 10
jobs:
  pollIntervalMs: 20
pipelines:
  - name: data
    routes: [/v1/files, /v1/vector_stores]
    plugins: [auth]
  - name: rag
    routes: [${ragRoutes}]
    plugins:
      - auth
      - rag: { vectorStoreIds: [${STORE}], topK: 2 }
      - usage: { flushIntervalMs: 10 }
  - name: tools
    routes: [${toolRoutes}]
    plugins: [auth, { usage: { flushIntervalMs: 10 } }]
`;

/** A gateway on the fake with the store holding the document, ingested. */
async function startWithStore(yaml: (origin: string) => string): Promise<{ fake: FakeKnowledge; gw: TestGateway; auth: Record<string, string> }> {
  const fake = await startFakeKnowledge();
  const gw = await startTestGateway(yaml(fake.origin));
  const auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities: ['files', 'vector-stores', 'chat', 'completions', 'responses'] } })}` };
  await insertVectorStore(gw.gateway.services.db, STORE, { tenantId: 'default', name: 'handbook', embeddingModel: 'embed-small', metadata: null, expiresAt: null, apiKeyId: null, userId: null });
  const file = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'assistants', filename: 'handbook.txt', mime_type: 'text/plain', content_base64: Buffer.from(DOCUMENT).toString('base64') }, auth);
  assert.equal(file.status, 200, JSON.stringify(file.body));
  const attached = await postJson(`${gw.url}/v1/vector_stores/${STORE}/files`, { file_ids: [file.body.id] }, auth);
  assert.equal(attached.status, 200, JSON.stringify(attached.body));
  await eventually(async () => {
    const store = await (await fetch(`${gw.url}/v1/vector_stores/${STORE}`, { headers: auth })).json() as any;
    assert.equal(store.status, 'completed');
    assert.equal(store.file_counts.completed, 1);
  }, 20_000, 20);
  return { fake, gw, auth };
}

describe('rag and file_search', () => {
  let fake: FakeKnowledge;
  let gw: TestGateway;
  let auth: Record<string, string>;

  const upstream = (path: string) => fake.requests.filter((r) => r.path === path).at(-1)!.json;
  const systemText = (body: any): string => JSON.stringify(body.messages.filter((m: any) => m.role === 'system'));

  before(async () => {
    ({ fake, gw, auth } = await startWithStore((origin) => config(origin)));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('rag: a Messages request reaches the upstream with the planted passage as system context', async () => {
    const response = await postJson(`${gw.url}/v1/messages`, {
      model: 'gpt', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'What is the launch code of project Aurora?' }],
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = upstream('/openai/chat/completions');
    assert.equal(sent.messages[0].content, 'Be brief.', 'the caller\'s own system message keeps its place');
    assert.equal(sent.messages[1].role, 'system');
    assert.match(sent.messages[1].content, /PELICAN-42/);
    assert.equal(sent.messages.at(-1).content, 'What is the launch code of project Aurora?');
  });

  test('rag: a legacy completion gets the context before its prompt', async () => {
    const response = await postJson(`${gw.url}/v1/completions`, { model: 'gpt', prompt: 'Aurora launch code:' }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = upstream('/openai/completions');
    assert.match(sent.prompt, /PELICAN-42[\s\S]*Aurora launch code:$/);
  });

  test('file_search on a provider of the Anthropic format: the results reach it as system text and the tool never does', async () => {
    const response = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'claude', messages: [{ role: 'user', content: 'What is the launch code of project Aurora?' }],
      tools: [{ type: 'built_in', built_in: 'file_search', config: { vectorStoreIds: [STORE], topK: 1 } }],
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = upstream('/anthropic/messages');
    assert.match(JSON.stringify(sent.system), /PELICAN-42/);
    assert.equal(sent.tools, undefined);
  });

  test('file_search through /v1/responses on a chat provider', async () => {
    const response = await postJson(`${gw.url}/v1/responses`, {
      model: 'claude', input: 'What is the launch code of project Aurora?', store: false,
      tools: [{ type: 'file_search', vector_store_ids: [STORE], max_num_results: 2 }],
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = upstream('/anthropic/messages');
    assert.match(JSON.stringify(sent.system), /PELICAN-42/);
    assert.equal(sent.tools, undefined);
  });

  test('file_search: an unknown store is 404, a bad config 400, both before any upstream call', async () => {
    const before = fake.requests.length;
    const ask = (config: unknown) => postJson(`${gw.url}/v1/chat/completions`, {
      model: 'gpt', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'built_in', built_in: 'file_search', config }],
    }, auth);
    const unknown = await ask({ vectorStoreIds: [`vs-${randomUUID()}`] });
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    const bad = await ask({ vectorStoreIds: [STORE], topK: 99 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    assert.ok(fake.requests.slice(before).every((r) => r.path !== '/openai/chat/completions'));
  });

  test('rag: a failing search sends the request without context (onRetrievalError: open)', async () => {
    fake.failEmbeddings(400);
    try {
      const response = await postJson(`${gw.url}/v1/messages`, { model: 'gpt', max_tokens: 50, messages: [{ role: 'user', content: 'Aurora launch code?' }] }, auth);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.doesNotMatch(systemText(upstream('/openai/chat/completions')), /PELICAN-42/);
    } finally {
      fake.failEmbeddings(null);
    }
  });

  test('the chunks rag and file_search used are in the usage records', async () => {
    const db = gw.gateway.services.db;
    await eventually(async () => {
      const rows = await db.query<{ endpoint: string; retrieval: any }>('SELECT endpoint, retrieval FROM usage_records WHERE retrieval IS NOT NULL');
      const endpoints = new Set(rows.map((r) => r.endpoint));
      assert.ok(endpoints.has('/v1/messages') && endpoints.has('/v1/chat/completions'), JSON.stringify([...endpoints]));
      for (const row of rows) {
        const retrieval = typeof row.retrieval === 'string' ? JSON.parse(row.retrieval) : row.retrieval;
        const chunk = (retrieval.chunks ?? retrieval)[0];
        assert.equal(chunk.storeId, STORE, JSON.stringify(retrieval));
        assert.ok(Number.isInteger(chunk.chunkIndex) && typeof chunk.fileId === 'string' && chunk.score > 0);
      }
    });
  });
});

describe('rag on the chat completions route', () => {
  let fake: FakeKnowledge;
  let gw: TestGateway;
  let auth: Record<string, string>;
  before(async () => {
    ({ fake, gw, auth } = await startWithStore((origin) => config(origin, '/v1/chat/completions', '/v1/responses')));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a chat request reaches the upstream with the planted passage after its own system message', async () => {
    const response = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'gpt', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the launch code of project Aurora?' }],
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const sent = fake.requests.filter((r) => r.path === '/openai/chat/completions').at(-1)!.json;
    assert.deepEqual(sent.messages.map((m: any) => m.role), ['system', 'system', 'user']);
    assert.equal(sent.messages[0].content, 'Be brief.');
    assert.match(sent.messages[1].content, /PELICAN-42/);
  });
});

describe('rag settings per caller', () => {
  const base: RagConfig = {
    vectorStoreIds: ['vs-a'], topK: 5, placement: 'system', onRetrievalError: 'open',
    organizations: { org1: { topK: 3, vectorStoreIds: ['vs-org'] } },
    departments: { dep1: { placement: 'user' } },
    keys: { key1: { enabled: false }, key2: { threshold: 0.5 } },
  };
  const caller = (fields: Partial<Caller>): Caller => ({
    kind: 'api_key', id: 'k', tenantId: 't', organizationId: null, departmentId: null, capabilities: [], allowedIps: [], rateLimits: null, role: null,
    policy: { allowLists: [], overrides: [], rateLimits: {} }, ...fields,
  });

  test('the key over the department over the organization over the entry, field by field', () => {
    assert.deepEqual(settingsFor(base, undefined), { enabled: true, vectorStoreIds: ['vs-a'], topK: 5, placement: 'system' });
    assert.deepEqual(settingsFor(base, caller({ organizationId: 'org1', departmentId: 'dep1', id: 'key2' })),
      { enabled: true, vectorStoreIds: ['vs-org'], topK: 3, placement: 'user', threshold: 0.5 });
    assert.equal(settingsFor(base, caller({ organizationId: 'org1', id: 'key1' })).enabled, false);
    assert.equal(settingsFor({ ...base, vectorStoreIds: [] }, undefined).enabled, false, 'no store: nothing to retrieve');
  });
});
