/**
 * What other plugins tell the usage record through the request's state: the vector-store chunks put into the
 * request (gw.retrieval, written as the record's `retrieval` JSON) and an answer served from a cache
 * (gw.servedFromCache: cost 0 and cache_status), here set by a small third-party plugin listed after usage.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../core/store/database.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { createKey, recordsOf, usageConfig } from '../helpers/usage.ts';

const PUBLIC = new URL('../../core/public/plugin.ts', import.meta.url).href;

/** Marks what the request's first user message asks for: "retrieve" sets gw.retrieval, "cached" answers as a cache would. */
const MARK = `
import { definePlugin } from '${PUBLIC}';
export default definePlugin({
  name: 'mark',
  description: 'Sets gw.retrieval or answers as a cache hit, as the test asks.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  setup() {
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      const ask = (await gw.request()).body.messages[0].content;
      if (ask === 'retrieve') gw.retrieval = { chunks: [{ storeId: 'vs-1', fileId: 'file-1', chunkIndex: 3, score: 0.91 }] };
      if (ask === 'cached') {
        gw.servedFromCache = { kind: 'semantic', similarity: 0.97 };
        gw.result = { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'stored' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
      }
      await next();
    };
  },
});
`;

const DATABASE_URL = process.env.TEST_DATABASE_URL;

function suite(name: string, options: TestGatewayOptions, skip: string | false = false): void {
  describe(`usage records what other plugins set on the request (${name})`, { skip }, () => {
    let fake: FakeOpenAI;
    let gw: TestGateway;
    let key: string;
    before(async () => {
      fake = await startFakeOpenAI();
      gw = await startTestGateway(usageConfig(fake.baseUrl, '- usage\n- mark', 'plugins: [./mark.mjs]'), { ...options, files: { 'mark.mjs': MARK } });
      key = (await createKey(gw)).key;
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    const ask = async (content: string) => {
      const requestId = randomUUID();
      const answer = await postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, { authorization: `Bearer ${key}`, 'x-request-id': requestId });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const [row] = await recordsOf(gw, requestId);
      return row!;
    };

    test('gw.retrieval is written as the record\'s retrieval JSON; without it the column is null', async () => {
      const row = await ask('retrieve');
      assert.deepEqual(row.retrieval, { chunks: [{ storeId: 'vs-1', fileId: 'file-1', chunkIndex: 3, score: 0.91 }] });
      assert.equal(row.cache_status, null);
      assert.ok(Number(row.cost_usd) > 0);
      const plain = await ask('nothing');
      assert.equal(plain.retrieval, null);
    });

    test('an answer served from a cache is recorded at cost 0, its tokens kept, with its cache status', async () => {
      const calls = fake.requests.length;
      const row = await ask('cached');
      assert.equal(fake.requests.length, calls, 'no upstream call');
      assert.deepEqual([row.cache_status, Number(row.cost_usd), Number(row.prompt_tokens), Number(row.completion_tokens), row.provider],
        ['semantic-hit', 0, 10, 5, null]);
    });
  });
}

suite('embedded database', {});
const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
suite('Postgres', { env: { DATABASE_URL: DATABASE_URL ?? '' }, dbSchema: schema }, DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
after(async () => {
  if (!DATABASE_URL) return;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
});
