/**
 * /v1/vector_stores through a real gateway, on the embedded database (pgvector) and, when TEST_DATABASE_URL is
 * set, on the Postgres server (an exact scan where it lacks pgvector): a file uploaded through /v1/files, attached,
 * ingested in the job runner (downloaded from the fake provider, chunked, embedded through the gateway's own
 * dispatch) and searched; the other endpoints, tenant isolation, skipped files, TTL and usage.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../core/store/database.ts';
import { startFakeKnowledge, type FakeKnowledge } from '../fakes/knowledge.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

const config = (origin: string) => `
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream }
models:
  - id: embed-small
    provider: openai
    upstreamModel: text-embedding-3-small
    pricing: { input: 0.02 }
  - id: gpt
    provider: openai
vectorStores:
  embeddingModel: embed-small
  chunkTokens: 60
  chunkOverlapTokens: 10
jobs:
  pollIntervalMs: 20
pipelines:
  - name: data
    routes: [/v1/files, /v1/vector_stores, /v1/usage]
    plugins: [auth, usage]
`;

/** Paragraphs on unrelated subjects, one of them the passage a search must find. */
const PLANTED = 'The launch code of project Aurora is PELICAN-42, kept by the harbour master of Valletta.';
const FILLER = [
  'Sourdough bread needs a lively starter, a long cold fermentation and a very hot oven with steam for the crust.',
  'Migratory swallows cross the Sahara each autumn, resting in oases and feeding on insects caught in flight.',
  'A well tuned bicycle chain shifts quietly; clean it with degreaser, dry it and oil every link sparingly.',
  'Jazz standards often follow the thirty-two bar AABA form, with the bridge modulating to a related key.',
];
const DOCUMENT = [...FILLER.slice(0, 2), PLANTED, ...FILLER.slice(2)].join('\n\n');

function suite(name: string, options: () => TestGatewayOptions, skip: string | false = false): void {
  describe(`vector stores: ${name}`, { skip }, () => {
    let fake: FakeKnowledge;
    let gw: TestGateway;
    let auth: Record<string, string>;
    let otherAuth: Record<string, string>;

    const call = async (method: string, path: string, body?: unknown, headers = auth) => {
      const response = await fetch(`${gw.url}${path}`, {
        method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const upload = async (text: string, filename = 'notes.md', purpose = 'user_data', headers = auth) => {
      const response = await postJson(`${gw.url}/v1/files`, {
        provider: 'openai', purpose, filename, mime_type: filename.endsWith('.md') ? 'text/markdown' : 'text/plain', content_base64: Buffer.from(text).toString('base64'),
      }, headers);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.id as string;
    };
    const completed = async (id: string, headers = auth) => {
      let store: any;
      await eventually(async () => {
        store = (await call('GET', `/v1/vector_stores/${id}`, undefined, headers)).body;
        assert.equal(store.status, 'completed', JSON.stringify(store));
      }, 20_000, 20);
      return store;
    };

    before(async () => {
      fake = await startFakeKnowledge();
      gw = await startTestGateway(config(fake.origin), options());
      const capabilities = ['files', 'vector-stores', 'usage:read'];
      auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities } })}` };
      const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'other', name: 'Other' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
      otherAuth = { authorization: `Bearer ${await gw.createKey({ tenantId: 'other', scopes: { capabilities } })}` };
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    test('a file uploaded, attached and searched: the best hit is the planted passage, with a cosine score', async () => {
      const fileId = await upload(DOCUMENT);
      const created = await call('POST', '/v1/vector_stores', { name: 'handbook', file_ids: [fileId], metadata: { team: 'ops' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.match(created.body.id, /^vs-[0-9a-f-]{36}$/);
      assert.equal(created.body.object, 'vector_store');
      assert.equal(created.body.embedding_model, 'embed-small');
      assert.equal(created.body.file_counts.total, 1);
      const store = await completed(created.body.id);
      assert.ok(store.chunk_count >= 3, `the document is several chunks: ${store.chunk_count}`);
      assert.equal(store.file_counts.completed, 1);

      const search = await call('POST', `/v1/vector_stores/${store.id}/search`, { query: 'What is the launch code of project Aurora?' });
      assert.equal(search.status, 200, JSON.stringify(search.body));
      assert.equal(search.body.object, 'list');
      const [best, ...rest] = search.body.data;
      assert.ok(best.content.includes('PELICAN-42'), JSON.stringify(best));
      assert.equal(best.file_id, fileId);
      assert.equal(typeof best.document_id, 'string');
      assert.ok(Number.isInteger(best.chunk_index));
      assert.ok(best.score > 0 && best.score <= 1);
      for (const hit of rest) assert.ok(hit.score <= best.score);
      assert.ok(search.body.data.length <= 5);

      // The bytes came from the provider's content endpoint; the chunks were embedded through the gateway.
      assert.ok(fake.requests.some((r) => r.method === 'GET' && r.path.endsWith('/content')));
      assert.ok(fake.requests.some((r) => r.path === '/openai/embeddings' && r.json.model === 'text-embedding-3-small'));
    });

    test('top_k and threshold narrow the hits; out-of-range values are refused', async () => {
      const fileId = await upload(DOCUMENT);
      const store = await completed((await call('POST', '/v1/vector_stores', { name: 'k', file_ids: [fileId] })).body.id);
      const one = await call('POST', `/v1/vector_stores/${store.id}/search`, { query: 'Aurora launch code', top_k: 1 });
      assert.equal(one.body.data.length, 1);
      const strict = await call('POST', `/v1/vector_stores/${store.id}/search`, { query: 'Aurora launch code', threshold: 0.99 });
      assert.deepEqual(strict.body.data, []);
      for (const body of [{ query: 'x', top_k: 0 }, { query: 'x', top_k: 51 }, { query: 'x', threshold: 1.5 }, { query: '' }, {}]) {
        const refused = await call('POST', `/v1/vector_stores/${store.id}/search`, body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.error.code, 'VALIDATION_ERROR');
      }
    });

    test('list, get, PATCH and DELETE; another tenant sees none of it', async () => {
      const a = await call('POST', '/v1/vector_stores', { name: 'first' });
      const b = await call('POST', '/v1/vector_stores', { name: 'second' });
      assert.equal(a.body.status, 'completed', 'a store without files has nothing to ingest');
      const page = await call('GET', '/v1/vector_stores?limit=1');
      assert.equal(page.body.object, 'list');
      assert.equal(page.body.data.length, 1);
      assert.equal(page.body.has_more, true);
      const patched = await call('PATCH', `/v1/vector_stores/${a.body.id}`, { name: 'renamed', metadata: { v: 2 }, expires_in_seconds: 3600 });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.name, 'renamed');
      assert.deepEqual(patched.body.metadata, { v: 2 });
      assert.ok(Math.abs(patched.body.expires_at - (Date.now() / 1000 + 3600)) < 60);
      assert.equal((await call('PATCH', `/v1/vector_stores/${a.body.id}`, { nope: 1 })).status, 400);

      for (const [method, path, body] of [['GET', `/v1/vector_stores/${a.body.id}`], ['PATCH', `/v1/vector_stores/${a.body.id}`, { name: 'x' }], ['DELETE', `/v1/vector_stores/${a.body.id}`], ['POST', `/v1/vector_stores/${a.body.id}/search`, { query: 'x' }]] as const) {
        const refused = await call(method, path, body, otherAuth);
        assert.equal(refused.status, 404, `${method} ${path}`);
        assert.equal(refused.body.error.code, 'NOT_FOUND');
      }
      const others = await call('GET', '/v1/vector_stores', undefined, otherAuth);
      assert.deepEqual(others.body.data, []);

      const deleted = await call('DELETE', `/v1/vector_stores/${b.body.id}`);
      assert.deepEqual(deleted.body, { id: b.body.id, object: 'vector_store.deleted', deleted: true });
      assert.equal((await call('GET', `/v1/vector_stores/${b.body.id}`)).status, 404);
    });

    test('attach more files; a file whose bytes cannot be read is skipped with a warning and does not block completion', async () => {
      const store = await completed((await call('POST', '/v1/vector_stores', { name: 'attach' })).body.id);
      const good = await upload('Kitesurfing needs steady wind of twelve knots or more and a board matched to the rider.', 'kite.txt');
      const gone = await upload('this file will vanish from the provider', 'gone.txt');
      // The provider loses the second file: its content answers 404.
      const providerIds = [...fake.files.keys()];
      fake.files.delete(providerIds.at(-1)!);
      const attached = await call('POST', `/v1/vector_stores/${store.id}/files`, { file_ids: [good, gone] });
      assert.equal(attached.status, 200, JSON.stringify(attached.body));
      assert.equal(attached.body.file_counts.total, 2);
      const done = await completed(store.id);
      assert.equal(done.file_counts.completed, 1);
      assert.equal(done.file_counts.skipped, 1);
      const files = await call('GET', `/v1/vector_stores/${store.id}/files`);
      const skipped = files.body.data.find((f: any) => f.file_id === gone);
      assert.equal(skipped.status, 'skipped');
      assert.match(skipped.warning, /download/);
      const hits = await call('POST', `/v1/vector_stores/${store.id}/search`, { query: 'wind for kitesurfing' });
      assert.equal(hits.body.data[0].file_id, good);

      const detached = await call('DELETE', `/v1/vector_stores/${store.id}/files/${good}`);
      assert.equal(detached.status, 200);
      assert.deepEqual((await call('POST', `/v1/vector_stores/${store.id}/search`, { query: 'wind for kitesurfing' })).body.data, []);
    });

    test('unknown files, files of another tenant and files of other purposes are refused at create', async () => {
      const unknown = await call('POST', '/v1/vector_stores', { name: 'x', file_ids: [`file-${randomUUID()}`] });
      assert.equal(unknown.status, 404);
      const theirs = await upload('another tenant\'s notes', 'theirs.txt', 'user_data', otherAuth);
      assert.equal((await call('POST', '/v1/vector_stores', { name: 'x', file_ids: [theirs] })).status, 404);
      const batchFile = await upload('{"custom_id":"a"}', 'lines.txt', 'batch');
      const refused = await call('POST', '/v1/vector_stores', { name: 'x', file_ids: [batchFile] });
      assert.equal(refused.status, 400);
      assert.match(JSON.stringify(refused.body), /purpose/);
      const badModel = await call('POST', '/v1/vector_stores', { name: 'x', embedding_model: 'nope' });
      assert.equal(badModel.status, 404);
      assert.equal((await call('POST', '/v1/vector_stores', { file_ids: [] })).status, 400);
    });

    test('the embeddings of ingestion and search are recorded in the usage of the store\'s tenant', async () => {
      await eventually(async () => {
        const usage = await call('GET', '/v1/usage?group_by=model');
        const row = usage.body.data.find((r: any) => r.model === 'embed-small');
        assert.ok(row && row.requests >= 2 && row.prompt_tokens > 0, JSON.stringify(usage.body));
      });
    });
  });
}

suite('embedded database (pgvector)', () => ({}));

const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
suite('Postgres server', () => ({ env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema }), DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
after(async () => {
  if (!DATABASE_URL) return;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
});
