/**
 * GET /v1/responses (list), GET and DELETE /v1/responses/:id, POST /v1/responses/:id/cancel through a real gateway,
 * on the embedded database and, when TEST_DATABASE_URL is set, on Postgres. Records are written with the store
 * functions; a response streaming on the gateway is a LiveResponse registered in the gateway's own map.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { liveResponses } from '../../core/ingress/responses-live.ts';
import { openDatabase } from '../../core/store/database.ts';
import { finishResponse, findResponse, insertResponse, newResponseId, type ResponseUsage } from '../../core/store/responses.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

const CONFIG = chatConfig('http://127.0.0.1:9/v1', `
  - name: responses
    routes: [/v1/responses]
    plugins: [auth]
`);

const message = (text: string) => ({ type: 'message', id: `msg_${text}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
const USAGE: ResponseUsage = { input_tokens: 4, output_tokens: 2, total_tokens: 6 };

function suite(name: string, options: () => TestGatewayOptions, skip: string | false = false): void {
  describe(`/v1/responses reading, deleting, cancelling: ${name}`, { skip }, () => {
    let gw: TestGateway;
    let key: string;
    let otherKey: string;
    let createdAt = Date.parse('2024-05-01T10:00:00Z');

    const call = async (method: string, path: string, credential = key) => {
      const response = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${credential}` } });
      return { status: response.status, body: (await response.json()) as any };
    };

    /** An in-progress record of the tenant, created a second after the previous one (lists are oldest first). */
    async function inProgress(tenantId = 'default', text = 'hello'): Promise<string> {
      const id = newResponseId();
      const db = gw.gateway.services.db;
      await insertResponse(db, id, {
        tenantId, provider: 'openai', requestedModel: 'gpt-4o-mini', previousResponseId: null, instructions: 'Be brief.',
        input: [{ role: 'user', content: text }], metadata: { turn: text }, callerKind: 'api_key', apiKeyId: null, userId: null,
      });
      createdAt += 1000;
      await db.query('UPDATE responses SET created_at = to_timestamp($2::double precision / 1000) WHERE id = $1', [id, createdAt]);
      return id;
    }

    async function completed(tenantId = 'default', text = 'hello'): Promise<string> {
      const id = await inProgress(tenantId, text);
      await finishResponse(gw.gateway.services.db, id, {
        status: 'completed', output: [message(`re: ${text}`)], usage: USAGE, model: 'gpt-4o-mini-2024-07-18', providerResponseId: `resp_up_${text}`,
        completedAt: createdAt + 500,
      });
      return id;
    }

    before(async () => {
      gw = await startTestGateway(CONFIG, options());
      key = await gw.createKey({ scopes: { capabilities: ['responses'] } });
      const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'other', name: 'Other' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
      otherKey = await gw.createKey({ tenantId: 'other', scopes: { capabilities: ['responses'] } });
    });
    after(async () => {
      await gw?.close();
    });

    test('GET /v1/responses/:id answers the stored Response; an unknown id is 404 NOT_FOUND', async () => {
      const id = await completed('default', 'get');
      const got = await call('GET', `/v1/responses/${id}`);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.deepEqual(got.body, {
        id, object: 'response', provider: 'openai', provider_response_id: 'resp_up_get', model: 'gpt-4o-mini-2024-07-18',
        previous_response_id: null, status: 'completed', instructions: 'Be brief.', output: [message('re: get')], usage: USAGE,
        error: null, incomplete_details: null, metadata: { turn: 'get' }, created_at: Math.floor(createdAt / 1000),
        completed_at: Math.floor((createdAt + 500) / 1000),
      });
      for (const [method, path] of [['GET', ''], ['POST', '/cancel'], ['DELETE', '']] as const) {
        for (const unknown of [`resp-${randomUUID()}`, 'a%00b', 'resp-%00', 'x'.repeat(300)]) {
          const missing = await call(method, `/v1/responses/${unknown}${path}`);
          assert.equal(missing.status, 404, `${method} ${unknown}${path}`);
          assert.equal(missing.body.error.code, 'NOT_FOUND');
        }
      }
      const streamed = await call('GET', `/v1/responses/${id}?stream=true`);
      assert.equal(streamed.status, 400);
      assert.equal(streamed.body.error.code, 'VALIDATION_ERROR');
    });

    test('GET /v1/responses pages oldest first by cursor or after=<id>, and refuses a bad limit', async () => {
      const tenantId = 'paged';
      await gw.gateway.services.db.query("INSERT INTO tenants (id, name) VALUES ('paged', 'Paged')");
      const pagedKey = await gw.createKey({ tenantId, scopes: { capabilities: ['responses'] } });
      const ids = [await completed(tenantId, 'p1'), await inProgress(tenantId, 'p2'), await completed(tenantId, 'p3')];
      const first = await call('GET', '/v1/responses?limit=2', pagedKey);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.object, 'list');
      assert.deepEqual(first.body.data.map((r: { id: string }) => r.id), ids.slice(0, 2));
      assert.equal(first.body.data[1].status, 'in_progress');
      assert.equal(first.body.data[1].completed_at, null);
      assert.equal(first.body.has_more, true);
      const second = await call('GET', `/v1/responses?limit=2&cursor=${first.body.next_cursor}`, pagedKey);
      assert.deepEqual(second.body.data.map((r: { id: string }) => r.id), ids.slice(2));
      assert.equal(second.body.has_more, false);
      assert.equal(second.body.next_cursor, null);
      const afterFirst = await call('GET', `/v1/responses?after=${ids[0]}`, pagedKey);
      assert.deepEqual(afterFirst.body.data.map((r: { id: string }) => r.id), ids.slice(1));
      assert.deepEqual((await call('GET', '/v1/responses', pagedKey)).body.data.length, 3, 'default limit 20');
      for (const query of ['limit=0', 'limit=101', 'limit=2.5', `after=resp-${randomUUID()}`, 'after=a%00b', `after=${ids[0]}&cursor=${first.body.next_cursor}`]) {
        const refused = await call('GET', `/v1/responses?${query}`, pagedKey);
        assert.equal(refused.status, 400, query);
        assert.equal(refused.body.error.code, 'VALIDATION_ERROR', query);
      }
    });

    test('DELETE removes the response: then GET and DELETE are 404', async () => {
      const id = await completed('default', 'delete');
      const deleted = await call('DELETE', `/v1/responses/${id}`);
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.deepEqual(deleted.body, { id, object: 'response', deleted: true });
      assert.equal((await call('GET', `/v1/responses/${id}`)).status, 404);
      const again = await call('DELETE', `/v1/responses/${id}`);
      assert.equal(again.status, 404);
      assert.equal(again.body.error.code, 'NOT_FOUND');
    });

    test('two tenants are isolated: each lists only its own, the other\'s id is 404 on every route', async () => {
      const mine = await completed('default', 'mine');
      const theirs = await inProgress('other', 'theirs');
      const stream = { tenantId: 'other', calls: 0, cancel() { this.calls++; return { output: [], usage: null }; } };
      liveResponses(gw.gateway.endpointDeps).set(theirs, stream);
      const listed = (await call('GET', '/v1/responses?limit=100', otherKey)).body.data.map((r: { id: string }) => r.id);
      assert.deepEqual(listed, [theirs]);
      const ownList = (await call('GET', '/v1/responses?limit=100')).body.data.map((r: { id: string }) => r.id);
      assert.ok(ownList.includes(mine) && !ownList.includes(theirs));
      for (const [method, path] of [['GET', ''], ['POST', '/cancel'], ['DELETE', '']] as const) {
        const foreign = await call(method, `/v1/responses/${theirs}${path}`);
        assert.equal(foreign.status, 404, `${method} ${path}`);
        assert.equal(foreign.body.error.code, 'NOT_FOUND');
        assert.equal((await call(method, `/v1/responses/${mine}${path}`, otherKey)).status, 404, `${method} ${path}, other tenant`);
      }
      assert.equal(stream.calls, 0, 'another tenant cannot stop the stream');
      assert.equal((await findResponse(gw.gateway.services.db, 'other', theirs))!.status, 'in_progress');
      assert.equal((await findResponse(gw.gateway.services.db, 'default', mine))!.status, 'completed');
      liveResponses(gw.gateway.endpointDeps).delete(theirs);
    });

    test('cancel: a finished response is returned unchanged; an in-progress one not streaming here is marked cancelled', async () => {
      const done = await completed('default', 'done');
      const before = (await call('GET', `/v1/responses/${done}`)).body;
      const unchanged = await call('POST', `/v1/responses/${done}/cancel`);
      assert.equal(unchanged.status, 200, JSON.stringify(unchanged.body));
      assert.deepEqual(unchanged.body, before);

      const running = await inProgress('default', 'elsewhere');
      const cancelled = await call('POST', `/v1/responses/${running}/cancel`);
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.equal(cancelled.body.status, 'cancelled');
      assert.deepEqual(cancelled.body.output, [], 'the streaming instance records its partial output itself');
      assert.equal(typeof cancelled.body.completed_at, 'number');
      assert.equal((await findResponse(gw.gateway.services.db, 'default', running))!.status, 'cancelled');
      assert.equal((await call('POST', `/v1/responses/${running}/cancel`)).body.status, 'cancelled', 'idempotent');
    });

    test('cancel of a response streaming on this gateway stops it and records its partial output and usage', async () => {
      const id = await inProgress('default', 'live');
      const partialUsage = { input_tokens: 4, output_tokens: 1, total_tokens: 5 };
      const stream = { tenantId: 'default', calls: 0, cancel() { this.calls++; return { output: [message('par')], usage: partialUsage }; } };
      liveResponses(gw.gateway.endpointDeps).set(id, stream);
      const cancelled = await call('POST', `/v1/responses/${id}/cancel`);
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.equal(stream.calls, 1);
      assert.equal(cancelled.body.status, 'cancelled');
      assert.deepEqual(cancelled.body.output, [message('par')]);
      assert.deepEqual(cancelled.body.usage, partialUsage);
      assert.equal(liveResponses(gw.gateway.endpointDeps).has(id), false);
      await call('POST', `/v1/responses/${id}/cancel`);
      assert.equal(stream.calls, 1, 'stopped once');
      assert.deepEqual((await findResponse(gw.gateway.services.db, 'default', id))!.output, [message('par')]);
    });

    test('DELETE of a response streaming here cancels it first, then removes it', async () => {
      const id = await inProgress('default', 'doomed');
      const stream = { tenantId: 'default', calls: 0, cancel() { this.calls++; return { output: [], usage: null }; } };
      liveResponses(gw.gateway.endpointDeps).set(id, stream);
      const deleted = await call('DELETE', `/v1/responses/${id}`);
      assert.deepEqual(deleted.body, { id, object: 'response', deleted: true });
      assert.equal(stream.calls, 1);
      assert.equal(await findResponse(gw.gateway.services.db, 'default', id), null);
    });

    test('the official openai client retrieves, cancels and deletes through these routes', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      const done = await completed('default', 'client');
      const retrieved = await client.responses.retrieve(done);
      assert.equal(retrieved.id, done);
      assert.equal(retrieved.status, 'completed');
      assert.equal(retrieved.output_text, 're: client');
      const running = await inProgress('default', 'client-running');
      const cancelled = await client.responses.cancel(running);
      assert.equal(cancelled.status, 'cancelled');
      await client.responses.delete(done);
      await assert.rejects(client.responses.retrieve(done), (err: unknown) => err instanceof OpenAI.NotFoundError);
      await assert.rejects(client.responses.delete(done), (err: unknown) => err instanceof OpenAI.NotFoundError);
    });
  });
}

suite('embedded database', () => ({}));

const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
suite('Postgres', () => ({ env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema }), DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
after(async () => {
  if (!DATABASE_URL) return;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
});
