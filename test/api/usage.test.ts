/**
 * GET /v1/usage: sums of usage records per group over a window, cursor pages, validation, the caller's scope and
 * the capability. Records are written straight into the table with known times, plus one through the plugin.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { openDatabase } from '../../core/store/database.ts';
import { insertUsageRecords, type UsageRecord } from '../../plugins/usage/record.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { createKey, recordsOf, usageConfig } from '../helpers/usage.ts';

const SECRET = 'usage-api-test-secret-0123456789abcdef';
const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);

function record(fields: Partial<UsageRecord> & Pick<UsageRecord, 'createdAt'>): UsageRecord {
  return {
    id: randomUUID(), requestId: randomUUID(), tenantId: 'default', organizationId: null, departmentId: null,
    callerKind: 'api_key', apiKeyId: null, userId: null, endpoint: '/v1/chat/completions', modality: 'chat', stream: false,
    provider: 'openai', requestedModel: 'gpt-4o-mini', model: 'gpt-4o-mini', upstreamModel: 'gpt-4o-mini',
    promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, totalTokens: 0, searchUnits: 0, estimated: false,
    costUsd: null, latencyMs: 10, ttfbMs: 10, status: 'completed', errorCode: null,
    ...fields,
  };
}

const tokens = (prompt: number, completion: number) => ({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion });

async function jwt(claims: Record<string, unknown>, subject: string): Promise<string> {
  return new SignJWT({ tenantId: 'default', type: 'access', ...claims })
    .setProtectedHeader({ alg: 'HS256' }).setSubject(subject).setJti(randomUUID()).setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
}

const DATABASE_URL = process.env.TEST_DATABASE_URL;

/** The same suite on the embedded database and, when TEST_DATABASE_URL is set, on a Postgres server. */
function usageSuite(name: string, options: () => TestGatewayOptions, skip: string | false = false): void {
  describe(`GET /v1/usage: ${name}`, { skip }, () => {
    let fake: FakeOpenAI;
    let gw: TestGateway;
    let a: { id: string; key: string };
    let b: { id: string; key: string };
    let c: { id: string; key: string };
    let chatOnly: { id: string; key: string };

    const usage = async (query: string, credential = a.key) => {
      const response = await fetch(`${gw.url}/v1/usage${query ? `?${query}` : ''}`, { headers: { authorization: `Bearer ${credential}` } });
      return { status: response.status, body: (await response.json()) as any };
    };
    const MAY = 'from=2024-05-01&to=2024-05-03';

    before(async () => {
      fake = await startFakeOpenAI();
      // /v1/usage is in the pipeline with the usage plugin: local endpoints pass through it unrecorded.
      const config = usageConfig(fake.baseUrl).replace('routes: [/v1/chat/completions, /v1/messages]', 'routes: [/v1/chat/completions, /v1/messages, /v1/usage]');
      gw = await startTestGateway(config, { ...options(), env: { AIGW_JWT_SECRET: SECRET, ...options().env } });
      a = await createKey(gw, { scopes: { capabilities: ['chat', 'usage:read'] } });
      b = await createKey(gw, { scopes: { capabilities: ['usage:read'] } });
      const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'acme', name: 'Acme' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
      c = await createKey(gw, { tenantId: 'acme', scopes: { capabilities: ['usage:read'] } });
      chatOnly = await createKey(gw);
      const now = Date.now();
      await insertUsageRecords(gw.gateway.services.db, [
        record({ createdAt: at('2024-05-01T10:00:00Z'), apiKeyId: a.id, ...tokens(10, 5), costUsd: 0.001 }),
        record({ createdAt: at('2024-05-01T12:00:00Z'), apiKeyId: a.id, ...tokens(20, 10), costUsd: 0.002, cachedTokens: 5 }),
        record({ createdAt: at('2024-05-02T09:00:00Z'), apiKeyId: a.id, model: 'plain', ...tokens(1, 1) }),
        record({ createdAt: at('2024-05-02T23:59:59.999Z'), apiKeyId: a.id, provider: 'anthropic', model: 'claude', ...tokens(100, 50), costUsd: 0.5, reasoningTokens: 20 }),
        record({ createdAt: at('2024-05-03T00:00:00Z'), apiKeyId: a.id, provider: null, model: null, requestedModel: 'nope', status: 'failed', errorCode: 'MODEL_NOT_FOUND' }),
        record({ createdAt: at('2024-05-01T11:00:00Z'), apiKeyId: b.id, ...tokens(7, 7), costUsd: 0.0007 }),
        record({ createdAt: at('2024-05-01T11:00:00Z'), callerKind: 'jwt', userId: 'user-1', ...tokens(3, 3), costUsd: 0.0003 }),
        record({ createdAt: at('2024-05-01T11:00:00Z'), tenantId: 'acme', apiKeyId: c.id, ...tokens(1000, 1000), costUsd: 1 }),
        record({ createdAt: now - DAY, apiKeyId: a.id, model: 'plain', ...tokens(4, 4) }),
        record({ createdAt: now - 40 * DAY, apiKeyId: a.id, model: 'plain', ...tokens(8, 8) }),
        // June: one of each modality, for group_by=modality.
        record({ createdAt: at('2024-06-01T10:00:00Z'), apiKeyId: a.id, ...tokens(10, 5), costUsd: 0.001 }),
        record({ createdAt: at('2024-06-01T11:00:00Z'), apiKeyId: a.id, endpoint: '/v1/completions', modality: 'completion', ...tokens(4, 2), costUsd: 0.0004 }),
        record({ createdAt: at('2024-06-01T12:00:00Z'), apiKeyId: a.id, endpoint: '/v1/embeddings', modality: 'embeddings', model: 'embed', ...tokens(300, 0), costUsd: 0.000006 }),
        record({ createdAt: at('2024-06-02T12:00:00Z'), apiKeyId: a.id, endpoint: '/v1/embeddings', modality: 'embeddings', model: 'embed', ...tokens(200, 0), costUsd: 0.000004 }),
        record({ createdAt: at('2024-06-02T13:00:00Z'), apiKeyId: a.id, endpoint: '/v1/rerank', modality: 'rerank', provider: 'cohere', model: 'rerank', searchUnits: 2, costUsd: 0.004 }),
        record({ createdAt: at('2024-06-02T14:00:00Z'), apiKeyId: a.id, endpoint: '/v1/rerank', modality: 'rerank', provider: 'cohere', model: 'rerank', searchUnits: 1, costUsd: 0.002 }),
      ]);
    });
    after(async () => {
      await gw?.close();
      await fake?.close();
    });

    test('without parameters: one row summing the last 30 days', async () => {
      const r = await usage('');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.object, 'list');
      assert.deepEqual(r.body.group_by, []);
      assert.equal(r.body.has_more, false);
      assert.equal(r.body.next_cursor, null);
      assert.ok(Math.abs(Date.parse(r.body.to) - Date.now()) < 10_000);
      assert.equal(Date.parse(r.body.to) - Date.parse(r.body.from), 30 * DAY);
      assert.deepEqual(r.body.data, [{ requests: 1, prompt_tokens: 4, completion_tokens: 4, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 8, search_units: 0, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: null }]);
    });

    test('from and to (ISO dates): the window is [from, to), costs sum the priced records', async () => {
      const r = await usage(MAY);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.from, '2024-05-01T00:00:00.000Z');
      assert.equal(r.body.to, '2024-05-03T00:00:00.000Z');
      assert.deepEqual(r.body.data, [{ requests: 4, prompt_tokens: 131, completion_tokens: 66, cached_tokens: 5, reasoning_tokens: 20, total_tokens: 197, search_units: 0, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: 0.503 }]);
    });

    test('unix seconds, date-times with offsets (an unencoded + included) and without (UTC) name the same window', async () => {
      const expected = (await usage(MAY)).body.data;
      const seconds = await usage(`from=${at('2024-05-01T00:00:00Z') / 1000}&to=${at('2024-05-03T00:00:00Z') / 1000}`);
      assert.deepEqual(seconds.body.data, expected);
      const offsets = await usage('from=2024-05-01T02:00:00+02:00&to=2024-05-02T19:00:00-05:00');
      assert.equal(offsets.status, 200, JSON.stringify(offsets.body));
      assert.equal(offsets.body.from, '2024-05-01T00:00:00.000Z');
      assert.deepEqual(offsets.body.data, expected);
      const naive = await usage('from=2024-05-01T00:00&to=2024-05-03T00:00:00.000');
      assert.deepEqual(naive.body.data, expected);
    });

    test('group_by=model: one row per model, ordered, a null model last; a group without prices costs null', async () => {
      const r = await usage('from=2024-05-01&to=2024-05-04&group_by=model');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.data.map((row: any) => [row.model, row.requests, row.total_tokens, row.cost_usd]), [
        ['claude', 1, 150, 0.5],
        ['gpt-4o-mini', 2, 45, 0.003],
        ['plain', 1, 2, null],
        [null, 1, 0, null],
      ]);
      assert.deepEqual(Object.keys(r.body.data[0]), ['model', 'requests', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'total_tokens', 'search_units', 'audio_seconds', 'characters', 'images', 'video_seconds', 'guard_blocked', 'guard_redacted', 'cost_usd']);
    });

    test('group_by=modality: tokens per modality, search units for rerank, cost per modality', async () => {
      const r = await usage('from=2024-06-01&to=2024-06-03&group_by=modality');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.group_by, ['modality']);
      assert.deepEqual(r.body.data, [
        { modality: 'chat', requests: 1, prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 15, search_units: 0, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: 0.001 },
        { modality: 'completion', requests: 1, prompt_tokens: 4, completion_tokens: 2, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 6, search_units: 0, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: 0.0004 },
        { modality: 'embeddings', requests: 2, prompt_tokens: 500, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 500, search_units: 0, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: 0.00001 },
        { modality: 'rerank', requests: 2, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 0, search_units: 3, audio_seconds: 0, characters: 0, images: 0, video_seconds: 0, guard_blocked: 0, guard_redacted: 0, cost_usd: 0.006 },
      ]);
      // Combined with other groups, and paged: a modality is never null, so a cursor names it as text.
      const byDay = await usage('from=2024-06-01&to=2024-06-03&group_by=day,modality&limit=2');
      assert.deepEqual(byDay.body.data.map((row: any) => [row.day, row.modality, row.requests]), [['2024-06-01', 'chat', 1], ['2024-06-01', 'completion', 1]]);
      const next = await usage(`limit=2&cursor=${byDay.body.next_cursor}`);
      assert.deepEqual(next.body.data.map((row: any) => [row.day, row.modality, row.requests, row.search_units]), [['2024-06-01', 'embeddings', 1, 0], ['2024-06-02', 'embeddings', 1, 0]]);
      const last = await usage(`limit=2&cursor=${next.body.next_cursor}`);
      assert.deepEqual(last.body.data.map((row: any) => [row.day, row.modality, row.requests, row.search_units]), [['2024-06-02', 'rerank', 2, 3]]);
      assert.equal(last.body.has_more, false);
      // Without groups, the search units are summed with everything else.
      const whole = await usage('from=2024-06-01&to=2024-06-03');
      assert.deepEqual([whole.body.data[0].requests, whole.body.data[0].total_tokens, whole.body.data[0].search_units, whole.body.data[0].cost_usd], [6, 521, 3, 0.00741]);
    });

    test('rows written before the modality existed read as chat', async () => {
      const id = randomUUID();
      const db = gw.gateway.services.db;
      // An insert of the columns migration 0003 made, as an older gateway writes it.
      await db.query(`INSERT INTO usage_records (id, request_id, created_at, tenant_id, caller_kind, api_key_id, endpoint, stream, prompt_tokens, total_tokens, latency_ms, status)
        VALUES ($1, $2, '2024-07-01T00:00:00Z', 'default', 'api_key', $3, '/v1/chat/completions', false, 3, 3, 1, 'completed')`, [id, id, a.id]);
      const r = await usage('from=2024-07-01&to=2024-07-02&group_by=modality');
      assert.deepEqual(r.body.data.map((row: any) => [row.modality, row.requests, row.total_tokens, row.search_units]), [['chat', 1, 3, 0]]);
    });

    test('group_by=day,model and group_by=provider,key', async () => {
      const byDay = await usage('from=2024-05-01&to=2024-05-04&group_by=day,model');
      assert.deepEqual(byDay.body.data.map((row: any) => [row.day, row.model, row.requests]), [
        ['2024-05-01', 'gpt-4o-mini', 2],
        ['2024-05-02', 'claude', 1],
        ['2024-05-02', 'plain', 1],
        ['2024-05-03', null, 1],
      ]);
      const byProvider = await usage(`${MAY}&group_by=provider,key`);
      assert.deepEqual(byProvider.body.data.map((row: any) => [row.provider, row.key, row.requests]), [
        ['anthropic', a.id, 1],
        ['openai', a.id, 3],
      ]);
    });

    test('cursor pages cover every group once, in order; a cursor keeps its query', async () => {
      const all = (await usage('from=2024-05-01&to=2024-05-04&group_by=day,model')).body.data;
      const first = await usage('from=2024-05-01&to=2024-05-04&group_by=day,model&limit=3');
      assert.equal(first.body.data.length, 3);
      assert.equal(first.body.has_more, true);
      assert.equal(typeof first.body.next_cursor, 'string');
      const second = await usage(`limit=3&cursor=${first.body.next_cursor}`);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.equal(second.body.has_more, false);
      assert.equal(second.body.next_cursor, null);
      assert.deepEqual(second.body.group_by, ['day', 'model']);
      assert.deepEqual([...first.body.data, ...second.body.data], all);

      // The same query repeated with its cursor is fine; another query is not.
      const same = await usage(`from=2024-05-01&to=2024-05-04&group_by=day,model&limit=3&cursor=${first.body.next_cursor}`);
      assert.deepEqual(same.body.data, second.body.data);
      const other = await usage(`group_by=model&cursor=${first.body.next_cursor}`);
      assert.equal(other.status, 400);
      assert.deepEqual(other.body.error.details, [{ path: '/cursor', message: 'belongs to another query (from, to or group_by differ)' }]);

      // Paging one row at a time through groups with nulls in them.
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await usage(`from=2024-05-01&to=2024-05-04&group_by=model&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        seen.push(...page.body.data);
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, (await usage('from=2024-05-01&to=2024-05-04&group_by=model')).body.data);
    });

    test('invalid parameters: 400 VALIDATION_ERROR naming the parameter', async () => {
      const cases: Array<[string, string]> = [
        ['from=yesterday', '/from'],
        ['to=2024-13-45', '/to'],
        ['from=2024-05-01T25:00:00Z', '/from'],
        ['from=-5', '/from'],
        ['from=2024-05-02&to=2024-05-01', '/to'],
        ['from=2024-05-01&to=2024-05-01', '/to'],
        ['group_by=color', '/group_by'],
        ['group_by=model,model', '/group_by'],
        ['group_by=model,', '/group_by'],
        ['group_by=modality,modality', '/group_by'],
        ['group_by=modalities', '/group_by'],
        ['limit=0', '/limit'],
        ['limit=101', '/limit'],
        ['limit=abc', '/limit'],
        ['from=2024-05-01&from=2024-05-02', '/from'],
        ['cursor=garbage', '/cursor'],
        [`cursor=${Buffer.from(JSON.stringify({ g: ['model'], f: 0, t: 10, k: [1] })).toString('base64url')}`, '/cursor'],
        [`cursor=${Buffer.from(JSON.stringify({ g: ['day'], f: 0, t: 10, k: [null] })).toString('base64url')}`, '/cursor'],
      ];
      for (const [query, path] of cases) {
        const r = await usage(query);
        assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'VALIDATION_ERROR', query);
        assert.equal(r.body.error.details[0].path, path, query);
      }
    });

    test('scope: a key sees its own records, another tenant\'s key its own, a JWT user its own, a JWT admin the tenant', async () => {
      const total = (r: { body: any }) => r.body.data[0].total_tokens;
      assert.equal(total(await usage(MAY, b.key)), 14);
      assert.equal(total(await usage(MAY, c.key)), 2000);
      assert.equal(total(await usage(MAY, await jwt({}, 'user-1'))), 6);
      assert.equal(total(await usage(MAY, await jwt({}, 'user-2'))), 0);
      const admin = await usage(`${MAY}&group_by=key`, await jwt({ role: 'admin' }, 'admin-1'));
      assert.deepEqual(admin.body.data.map((row: any) => [row.key, row.total_tokens]).sort(), [[a.id, 197], [b.id, 14], [null, 6]].sort());
    });

    test('the usage:read capability is required, and a credential', async () => {
      const forbidden = await usage('', chatOnly.key);
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.body.error.code, 'AUTH_FORBIDDEN');
      assert.deepEqual(forbidden.body.error.details, { requiredCapability: 'usage:read' });
      const anonymous = await fetch(`${gw.url}/v1/usage`);
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as any).error.code, 'AUTH_REQUIRED');
    });

    test('a request through the usage plugin shows up once its record is written', async () => {
      const requestId = randomUUID();
      const before = (await usage('group_by=model')).body.data.find((row: any) => row.model === 'gpt-4o-mini')?.requests ?? 0;
      const r = await postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${a.key}`, 'x-request-id': requestId });
      assert.equal(r.status, 200);
      assert.equal((await recordsOf(gw, requestId)).length, 1);
      const row = (await usage('group_by=model')).body.data.find((row: any) => row.model === 'gpt-4o-mini');
      assert.equal(row.requests, before + 1);
      assert.equal(row.cost_usd, 0.00000255);
    });

    test('requests to /v1/usage itself are not usage records', async () => {
      const count = async () => (await gw.gateway.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records'))[0]!.n;
      const n = await count();
      await usage('');
      await recordsOf(gw, 'none', 100);
      assert.equal(await count(), n);
    });
  });
}

usageSuite('embedded database', () => ({}));

const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
usageSuite('Postgres', () => ({ env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema }), DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
after(async () => {
  if (!DATABASE_URL) return;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
});
