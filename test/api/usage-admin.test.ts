/**
 * GET /admin/v1/usage (the usage plugin's admin route) and `aigw usage`: the whole deployment's usage, or one
 * tenant's, with /v1/usage's grouping, window and cursors; a tenant-limited admin sees its own tenant only. The
 * CLI is a spawned process that asks the running gateway (through the control token in its data folder).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { insertUsageRecords, type UsageRecord } from '../../plugins/usage/record.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { runCli } from '../helpers/process.ts';
import { createKey, usageConfig } from '../helpers/usage.ts';

const SECRET = 'usage-admin-test-secret-0123456789abcdef';
const WINDOW = 'from=2024-05-01&to=2024-05-03';

function record(fields: Partial<UsageRecord> & Pick<UsageRecord, 'createdAt' | 'tenantId'>): UsageRecord {
  return {
    id: randomUUID(), requestId: randomUUID(), organizationId: null, departmentId: null,
    callerKind: 'api_key', apiKeyId: null, userId: null, endpoint: '/v1/chat/completions', modality: 'chat', stream: false,
    provider: 'openai', requestedModel: 'plain', model: 'plain', upstreamModel: 'plain',
    promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: 0, totalTokens: 15, searchUnits: 0, estimated: false,
    costUsd: 0.01, latencyMs: 10, ttfbMs: 10, status: 'completed', errorCode: null,
    ...fields,
  };
}

const tenantAdmin = (tenantId: string) => new SignJWT({ tenantId, type: 'access', role: 'admin' })
  .setProtectedHeader({ alg: 'HS256' }).setSubject('tenant-admin').setJti(randomUUID()).setExpirationTime('1h')
  .sign(new TextEncoder().encode(SECRET));

describe('GET /admin/v1/usage and aigw usage', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let own: { id: string; key: string };
  let acme: { id: string; key: string };

  const adminUsage = async (query: string, credential = ADMIN_TOKEN) => {
    const response = await fetch(`${gw.url}/admin/v1/usage?${query}`, { headers: { authorization: `Bearer ${credential}` } });
    return { status: response.status, body: (await response.json()) as any };
  };

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(usageConfig(fake.baseUrl), { env: { AIGW_JWT_SECRET: SECRET } });
    const tenant = await postJson(`${gw.url}/admin/v1/tenants`, { id: 'acme', name: 'Acme' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    own = await createKey(gw);
    acme = await createKey(gw, { tenantId: 'acme' });
    await insertUsageRecords(gw.gateway.services.db, [
      record({ tenantId: 'default', apiKeyId: own.id, createdAt: Date.parse('2024-05-01T10:00:00Z') }),
      record({ tenantId: 'default', apiKeyId: own.id, createdAt: Date.parse('2024-05-02T10:00:00Z'), model: 'gpt-4o-mini' }),
      record({ tenantId: 'acme', apiKeyId: acme.id, createdAt: Date.parse('2024-05-01T11:00:00Z'), promptTokens: 100, totalTokens: 105, costUsd: 1 }),
      // Outside the window.
      record({ tenantId: 'acme', apiKeyId: acme.id, createdAt: Date.parse('2024-05-03T00:00:00Z') }),
    ]);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('deployment-wide by default, one tenant with tenantId, grouped and paged like /v1/usage', async () => {
    const all = await adminUsage(WINDOW);
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.equal(all.body.data.length, 1);
    assert.deepEqual([all.body.data[0].requests, all.body.data[0].prompt_tokens, all.body.data[0].cost_usd], [3, 120, 1.02]);

    const one = await adminUsage(`${WINDOW}&tenantId=acme`);
    assert.deepEqual([one.body.data[0].requests, one.body.data[0].prompt_tokens], [1, 100]);

    const first = await adminUsage(`${WINDOW}&group_by=key,day&limit=2`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.group_by, ['key', 'day']);
    assert.equal(first.body.has_more, true);
    const second = await adminUsage(`${WINDOW}&group_by=key,day&limit=2&cursor=${first.body.next_cursor}`);
    const rows = [...first.body.data, ...second.body.data].map((r: any) => [r.key, r.day, r.requests]);
    const expected = [[own.id, '2024-05-01', 1], [own.id, '2024-05-02', 1], [acme.id, '2024-05-01', 1]]
      .sort((x, y) => (`${x[0]}${x[1]}` < `${y[0]}${y[1]}` ? -1 : 1));
    assert.deepEqual(rows, expected);
    assert.equal(second.body.has_more, false);

    for (const bad of ['group_by=tenant', 'from=yesterday', 'limit=0', 'limit=101', 'tenantId=a&tenantId=b']) {
      assert.equal((await adminUsage(bad)).status, 400, bad);
    }
  });

  test('a tenant-limited admin sees its own tenant, and is refused another; a data-plane key is no admin', async () => {
    const jwt = await tenantAdmin('acme');
    const scoped = await adminUsage(WINDOW, jwt);
    assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
    assert.deepEqual([scoped.body.data[0].requests, scoped.body.data[0].prompt_tokens], [1, 100]);
    assert.equal((await adminUsage(`${WINDOW}&tenantId=acme`, jwt)).status, 200);
    const other = await adminUsage(`${WINDOW}&tenantId=default`, jwt);
    assert.equal(other.status, 403, JSON.stringify(other.body));
    assert.equal(other.body.error.code, 'AUTH_FORBIDDEN');
    assert.equal((await adminUsage(WINDOW, own.key)).status, 401);
  });

  test('/openapi.json documents the route with its filters', async () => {
    const spec = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    const operation = spec.paths['/admin/v1/usage']?.get;
    assert.ok(operation, 'GET /admin/v1/usage is not documented');
    const names = operation.parameters.map((p: any) => p.name).sort();
    assert.deepEqual(names, ['cursor', 'from', 'group_by', 'limit', 'tenantId', 'to']);
  });

  test('aigw usage prints a table, or the answer with --json', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aigw-usage-cli-'));
    const configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, usageConfig(fake.baseUrl));
    const env = { AIGW_DATA_DIR: gw.dataDir, AIGW_JWT_SECRET: SECRET };
    const [table, json] = await Promise.all([
      runCli(['usage', '--from', '2024-05-01', '--to', '2024-05-03', '--group-by', 'model', '--config', configFile], env),
      runCli(['usage', '--from', '2024-05-01', '--to', '2024-05-03', '--tenant', 'acme', '--json', '--config', configFile], env),
    ]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'usage from 2024-05-01T00:00:00.000Z to 2024-05-03T00:00:00.000Z');
    assert.match(lines[1]!, /^model\s+requests\s+prompt_tokens\s+completion_tokens\s+total_tokens\s+cost_usd$/);
    assert.match(lines[2]!, /^gpt-4o-mini\s+1\s+10\s+5\s+15\s+0\.010000$/);
    assert.match(lines[3]!, /^plain\s+2\s+110\s+10\s+120\s+1\.010000$/);
    assert.equal(json.code, 0, json.stderr);
    const answer = JSON.parse(json.stdout);
    assert.deepEqual([answer.data[0].requests, answer.data[0].prompt_tokens], [1, 100]);
    await rm(dir, { recursive: true, force: true });
  });
});
