/**
 * The background side of vector stores on a gateway with a clock the test moves: an ingestion whose embeddings
 * provider fails in a way that may pass is retried later and completes; one that keeps failing ends `failed`
 * after vectorStores.maxAttempts runs, with a warning, and the store completes; a store past its TTL is gone for
 * readers at once and deleted by the vector-stores.expire sweep with its chunks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeKnowledge, type FakeKnowledge } from '../fakes/knowledge.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream }
models:
  - id: embed-small
    provider: openai
    upstreamModel: text-embedding-3-small
routing: { retries: 0 }
upstream:
  breaker: { volumeThreshold: 1000 }
vectorStores:
  embeddingModel: embed-small
  maxAttempts: 2
  expirySweepMs: 1000
jobs:
  pollIntervalMs: 10
pipelines:
  - name: data
    routes: [/v1/files, /v1/vector_stores]
    plugins: [auth]
`;

describe('vector store jobs', () => {
  let fake: FakeKnowledge;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let offset = 0;

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gw.url}${path}`, {
      method, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const storeWith = async (text: string, extra: Record<string, unknown> = {}) => {
    const file = await postJson(`${gw.url}/v1/files`, { provider: 'openai', purpose: 'assistants', filename: 'a.txt', mime_type: 'text/plain', content_base64: Buffer.from(text).toString('base64') }, auth);
    assert.equal(file.status, 200, JSON.stringify(file.body));
    const created = await call('POST', '/v1/vector_stores', { name: 's', file_ids: [file.body.id], ...extra });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return { store: created.body.id as string, file: file.body.id as string };
  };
  const embeddingCalls = () => fake.requests.filter((r) => r.path === '/openai/embeddings').length;

  before(async () => {
    fake = await startFakeKnowledge();
    gw = await startTestGateway(config(fake.origin), { clock: { now: () => Date.now() + offset } });
    auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities: ['files', 'vector-stores'] } })}` };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('a provider failing for a while: the file is ingested on a later run', async () => {
    fake.failEmbeddings(503);
    const calls = embeddingCalls();
    const { store } = await storeWith('Tides follow the moon; spring tides come with the full and the new moon.');
    await eventually(async () => assert.ok(embeddingCalls() > calls, 'the first run tried'));
    assert.equal((await call('GET', `/v1/vector_stores/${store}`)).body.status, 'in_progress');
    fake.failEmbeddings(null);
    offset += 60_000; // past the retry's backoff
    await eventually(async () => {
      const body = (await call('GET', `/v1/vector_stores/${store}`)).body;
      assert.equal(body.status, 'completed');
      assert.equal(body.file_counts.completed, 1);
      assert.ok(body.chunk_count >= 1);
    });
  });

  test('a provider that keeps failing: the file ends failed after maxAttempts runs, the store completes', async () => {
    fake.failEmbeddings(503);
    try {
      const { store, file } = await storeWith('Glaciers carve valleys into a U shape over thousands of years.');
      for (let run = 0; run < 2; run++) {
        const calls = embeddingCalls();
        await eventually(async () => assert.ok(embeddingCalls() > calls, `run ${run + 1} tried`));
        offset += 600_000;
      }
      await eventually(async () => {
        const body = (await call('GET', `/v1/vector_stores/${store}`)).body;
        assert.equal(body.status, 'completed');
        assert.equal(body.file_counts.failed, 1);
      });
      const files = (await call('GET', `/v1/vector_stores/${store}/files`)).body.data;
      assert.equal(files[0].file_id, file);
      assert.equal(files[0].status, 'failed');
      assert.match(files[0].warning, /ingestion failed/);
    } finally {
      fake.failEmbeddings(null);
    }
  });

  test('a store past its TTL is gone at once, and the sweep deletes it with its chunks', async () => {
    const { store } = await storeWith('Volcanic islands form over hot spots as the plate drifts above them.', { expires_in_seconds: 120 });
    await eventually(async () => assert.equal((await call('GET', `/v1/vector_stores/${store}`)).body.status, 'completed'));
    const db = gw.gateway.services.db;
    assert.ok((await db.query('SELECT 1 FROM vector_store_chunks WHERE store_id = $1', [store])).length > 0);
    offset += 121_000;
    assert.equal((await call('GET', `/v1/vector_stores/${store}`)).status, 404);
    assert.equal((await call('POST', `/v1/vector_stores/${store}/search`, { query: 'volcanic islands' })).status, 404);
    await eventually(async () => {
      assert.deepEqual(await db.query('SELECT id FROM vector_stores WHERE id = $1', [store]), []);
      assert.deepEqual(await db.query('SELECT 1 FROM vector_store_chunks WHERE store_id = $1', [store]), []);
    });
  });
});
