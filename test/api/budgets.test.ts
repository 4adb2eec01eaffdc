/**
 * Budgets on the admin side and GET /v1/budget, on an in-process gateway: create, list (pagination, filters),
 * fetch with spend, change the limit, delete; validation with exact paths; the audit trail; admin JWTs kept to
 * their tenant; the data-plane view of every budget that applies to a caller; and `aigw budgets` from the CLI.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { runCli } from '../helpers/process.ts';

const JWT_SECRET = 'budgets-test-jwt-secret-0123456789-abcdef';

interface Answer { status: number; body: any }

function yaml(baseUrl: string): string {
  return `
providers:
  openai:
    baseUrl: ${baseUrl}
    apiKey: sk-upstream-secret
models:
  - id: priced
    provider: openai
    pricing: { input: 1, output: 2 }
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth, budget, usage]
`;
}

async function mintJwt(claims: Record<string, unknown> & { sub: string }): Promise<string> {
  const { sub, ...rest } = claims;
  return new SignJWT({ ...rest, type: 'access' })
    .setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setJti(`jti-${sub}-${Math.random()}`).setIssuedAt().setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

function assertError(answer: Answer, status: number, code: string, path?: string): void {
  const shown = JSON.stringify(answer.body);
  assert.equal(answer.status, status, shown);
  assert.equal(answer.body?.error?.code, code, shown);
  if (path !== undefined) {
    const paths = (answer.body.error.details as Array<{ path: string }>).map((d) => d.path);
    assert.ok(paths.includes(path), `details should name ${path}: ${shown}`);
  }
}

describe('budgets: admin API and GET /v1/budget', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  const admin = async (method: string, path: string, body?: unknown, auth = ADMIN_TOKEN): Promise<Answer> => {
    const response = await fetch(`${gw.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };
  const ok = async (answer: Promise<Answer>, status = 200) => {
    const a = await answer;
    assert.equal(a.status, status, JSON.stringify(a.body));
    return a.body;
  };
  const budgetView = async (credential: string): Promise<Answer> => {
    const response = await fetch(`${gw.url}/v1/budget`, { headers: { authorization: `Bearer ${credential}` } });
    return { status: response.status, body: await response.json() };
  };

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(yaml(fake.baseUrl), { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    await ok(admin('POST', '/tenants', { id: 'north', name: 'North' }), 201);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('create, fetch with spend, change the limit, delete', async () => {
    const org = await ok(admin('POST', '/organizations', { name: 'Crud org' }), 201);
    const created = await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: 12.5 }), 201);
    assert.match(created.id, /^budget_[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...created, createdAt: undefined, updatedAt: undefined, id: undefined },
      { id: undefined, object: 'budget', tenantId: 'default', scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: 12.5, createdAt: undefined, updatedAt: undefined });
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));

    const shown = await ok(admin('GET', `/budgets/${created.id}`));
    const now = new Date();
    assert.equal(shown.spentUsd, 0);
    assert.equal(shown.remainingUsd, 12.5);
    assert.equal(shown.periodStart, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    assert.equal(shown.resetsAt, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());

    const changed = await ok(admin('PUT', `/budgets/${created.id}`, { limitUsd: 0.000001 }));
    assert.equal(changed.limitUsd, 0.000001);
    assert.equal(changed.remainingUsd, 0.000001);
    assert.ok(Date.parse(changed.updatedAt) >= Date.parse(created.updatedAt));

    assert.deepEqual(await ok(admin('DELETE', `/budgets/${created.id}`)), { id: created.id, object: 'budget', deleted: true });
    assertError(await admin('GET', `/budgets/${created.id}`), 404, 'NOT_FOUND');
    assertError(await admin('PUT', `/budgets/${created.id}`, { limitUsd: 1 }), 404, 'NOT_FOUND');
    assertError(await admin('DELETE', `/budgets/${created.id}`), 404, 'NOT_FOUND');
    // Once deleted, the same scope and period may have a budget again.
    await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: 1 }), 201);
  });

  test('validation: every mistake is a 400 VALIDATION_ERROR naming its field', async () => {
    const org = await ok(admin('POST', '/organizations', { name: 'Validation org' }), 201);
    const north = await ok(admin('POST', '/organizations', { name: 'North org', tenantId: 'north' }), 201);
    const cases: Array<[unknown, string]> = [
      [{ period: 'daily', limitUsd: 1 }, '/scope'],
      [{ scope: 'deployment', limitUsd: 1 }, '/period'],
      [{ scope: 'deployment', period: 'daily' }, '/limitUsd'],
      [{ scope: 'team', period: 'daily', limitUsd: 1 }, '/scope'],
      [{ scope: 'deployment', period: 'weekly', limitUsd: 1 }, '/period'],
      [{ scope: 'deployment', period: 'daily', limitUsd: -1 }, '/limitUsd'],
      [{ scope: 'deployment', period: 'daily', limitUsd: '5' }, '/limitUsd'],
      [{ scope: 'deployment', period: 'daily', limitUsd: 0.0000001 }, '/limitUsd'],
      [{ scope: 'deployment', period: 'daily', limitUsd: 2_000_000_000 }, '/limitUsd'],
      [{ scope: 'deployment', period: 'daily', limitUsd: 1, extra: true }, '/extra'],
      [{ scope: 'deployment', scopeId: 'x', period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'organization', period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'organization', scopeId: 'org_missing', period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'department', scopeId: org.id, period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'key', scopeId: org.id, period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'organization', scopeId: north.id, tenantId: 'default', period: 'daily', limitUsd: 1 }, '/scopeId'],
      [{ scope: 'deployment', tenantId: 'no-such-tenant', period: 'daily', limitUsd: 1 }, '/tenantId'],
    ];
    for (const [body, path] of cases) assertError(await admin('POST', '/budgets', body), 400, 'VALIDATION_ERROR', path);
    assertError(await admin('POST', '/budgets', 'not json'), 400, 'VALIDATION_ERROR');

    await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'daily', limitUsd: 1 }), 201);
    const duplicate = await admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'daily', limitUsd: 2 });
    assertError(duplicate, 400, 'VALIDATION_ERROR', '/period');
    assert.match(duplicate.body.error.details[0].message, /already has a daily budget \(budget_/);
    // Another period of the same scope is fine.
    await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'total', limitUsd: 2 }), 201);

    const [budget] = (await ok(admin('GET', `/budgets?scopeId=${org.id}`))).data;
    assertError(await admin('PUT', `/budgets/${budget.id}`, {}), 400, 'VALIDATION_ERROR', '/limitUsd');
    assertError(await admin('PUT', `/budgets/${budget.id}`, { limitUsd: 1.23456789 }), 400, 'VALIDATION_ERROR', '/limitUsd');
    assertError(await admin('PUT', `/budgets/${budget.id}`, { limitUsd: 1, period: 'monthly' }), 400, 'VALIDATION_ERROR', '/period');
    assertError(await admin('GET', '/budgets?scope=team'), 400, 'VALIDATION_ERROR', '/scope');
    assertError(await admin('GET', '/budgets?limit=0'), 400, 'VALIDATION_ERROR', '/limit');
  });

  test('list: pages in creation order, filters by tenant, scope and scope id', async () => {
    await ok(admin('POST', '/tenants', { id: 'paged', name: 'Paged' }), 201);
    const orgs = [];
    for (let i = 0; i < 3; i++) orgs.push(await ok(admin('POST', '/organizations', { name: `Paged ${i}`, tenantId: 'paged' }), 201));
    const made = [];
    for (const org of orgs) made.push((await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'daily', limitUsd: 3 }), 201)).id);
    made.push((await ok(admin('POST', '/budgets', { scope: 'deployment', tenantId: 'paged', period: 'total', limitUsd: 100 }), 201)).id);

    const first = await ok(admin('GET', '/budgets?tenantId=paged&limit=3'));
    assert.equal(first.object, 'list');
    assert.equal(first.has_more, true);
    const second = await ok(admin('GET', `/budgets?tenantId=paged&limit=3&cursor=${first.next_cursor}`));
    assert.equal(second.has_more, false);
    assert.equal(second.next_cursor, null);
    assert.deepEqual([...first.data, ...second.data].map((b: any) => b.id), made);

    const deployments = await ok(admin('GET', '/budgets?tenantId=paged&scope=deployment'));
    assert.deepEqual(deployments.data.map((b: any) => b.id), [made[3]]);
    assert.equal(deployments.data[0].scopeId, null);
    const one = await ok(admin('GET', `/budgets?scopeId=${orgs[1].id}`));
    assert.deepEqual(one.data.map((b: any) => b.id), [made[1]]);
  });

  test('audit: every write leaves one row naming its actor; reads and refusals none', async () => {
    const db = gw.gateway.services.db;
    const rows = () => db.query<{ actor: string; action: string; target_type: string; target_id: string; details: any }>(
      "SELECT actor, action, target_type, target_id, details FROM admin_audit WHERE target_type = 'budget' ORDER BY id");
    const before = (await rows()).length;
    const created = await ok(admin('POST', '/budgets', { scope: 'deployment', tenantId: 'north', period: 'monthly', limitUsd: 40 }), 201);
    await ok(admin('GET', `/budgets/${created.id}`));
    await ok(admin('GET', '/budgets'));
    assertError(await admin('POST', '/budgets', { scope: 'deployment', tenantId: 'north', period: 'monthly', limitUsd: 40 }), 400, 'VALIDATION_ERROR');
    await ok(admin('PUT', `/budgets/${created.id}`, { limitUsd: 50 }));
    const carol = await mintJwt({ sub: 'carol', tenantId: 'north', role: 'admin' });
    await ok(admin('DELETE', `/budgets/${created.id}`, undefined, carol));
    const written = (await rows()).slice(before);
    assert.deepEqual(written.map((r) => [r.actor, r.action, r.target_id]), [
      ['admin-token', 'create', created.id],
      ['admin-token', 'set_limit', created.id],
      ['jwt:carol', 'delete', created.id],
    ]);
    assert.deepEqual(written[0]!.details, { tenantId: 'north', scope: 'deployment', scopeId: null, period: 'monthly', limitUsd: 40 });
    assert.deepEqual(written[1]!.details, { limitUsd: 50, previousLimitUsd: 40 });
  });

  test('an admin JWT sees and changes only its own tenant\'s budgets', async () => {
    const northOrg = await ok(admin('POST', '/organizations', { name: 'Scoped north', tenantId: 'north' }), 201);
    const defaultOrg = await ok(admin('POST', '/organizations', { name: 'Scoped default' }), 201);
    const foreign = await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: defaultOrg.id, period: 'daily', limitUsd: 5 }), 201);
    const alice = await mintJwt({ sub: 'alice', tenantId: 'north', role: 'admin' });

    const own = await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: northOrg.id, period: 'daily', limitUsd: 5 }, alice), 201);
    assert.equal(own.tenantId, 'north');
    const deployment = await ok(admin('POST', '/budgets', { scope: 'deployment', period: 'daily', limitUsd: 5 }, alice), 201);
    assert.equal(deployment.tenantId, 'north', 'a deployment budget defaults to the admin\'s tenant');
    assertError(await admin('POST', '/budgets', { scope: 'deployment', tenantId: 'default', period: 'total', limitUsd: 5 }, alice), 403, 'AUTH_FORBIDDEN');
    assertError(await admin('POST', '/budgets', { scope: 'organization', scopeId: defaultOrg.id, period: 'total', limitUsd: 5 }, alice), 400, 'VALIDATION_ERROR', '/scopeId');

    assertError(await admin('GET', `/budgets/${foreign.id}`, undefined, alice), 404, 'NOT_FOUND');
    assertError(await admin('PUT', `/budgets/${foreign.id}`, { limitUsd: 1 }, alice), 404, 'NOT_FOUND');
    assertError(await admin('DELETE', `/budgets/${foreign.id}`, undefined, alice), 404, 'NOT_FOUND');
    assertError(await admin('GET', '/budgets?tenantId=default', undefined, alice), 403, 'AUTH_FORBIDDEN');
    const listed = await ok(admin('GET', '/budgets?limit=100', undefined, alice));
    assert.ok(listed.data.length >= 2);
    assert.ok(listed.data.every((b: any) => b.tenantId === 'north'));
    assert.equal((await ok(admin('GET', `/budgets/${foreign.id}`))).id, foreign.id, 'the admin token sees every tenant');
  });

  test('GET /v1/budget: every budget that applies to the caller, in reservation order, and nothing else', async () => {
    await ok(admin('POST', '/tenants', { id: 'viewed', name: 'Viewed' }), 201);
    const org = await ok(admin('POST', '/organizations', { name: 'View org', tenantId: 'viewed' }), 201);
    const dept = await ok(admin('POST', '/departments', { name: 'View dept', organizationId: org.id }), 201);
    const key = await ok(admin('POST', '/keys', { name: 'viewer', tenantId: 'viewed', organizationId: org.id, departmentId: dept.id, scopes: { capabilities: ['chat', 'budget:read'] } }), 201);
    const other = await ok(admin('POST', '/keys', { name: 'other', tenantId: 'viewed', organizationId: org.id, scopes: { capabilities: ['budget:read'] } }), 201);
    const chatOnly = await ok(admin('POST', '/keys', { name: 'chat only', tenantId: 'viewed' }), 201);
    const b = {
      keyDaily: await ok(admin('POST', '/budgets', { scope: 'key', scopeId: key.id, period: 'daily', limitUsd: 1 }), 201),
      deptTotal: await ok(admin('POST', '/budgets', { scope: 'department', scopeId: dept.id, period: 'total', limitUsd: 2 }), 201),
      orgMonthly: await ok(admin('POST', '/budgets', { scope: 'organization', scopeId: org.id, period: 'monthly', limitUsd: 3 }), 201),
      deploymentDaily: await ok(admin('POST', '/budgets', { scope: 'deployment', tenantId: 'viewed', period: 'daily', limitUsd: 4 }), 201),
      deploymentMonthly: await ok(admin('POST', '/budgets', { scope: 'deployment', tenantId: 'viewed', period: 'monthly', limitUsd: 5 }), 201),
      otherKey: await ok(admin('POST', '/budgets', { scope: 'key', scopeId: other.id, period: 'daily', limitUsd: 6 }), 201),
    };
    assert.equal((await postJson(`${gw.url}/v1/chat/completions`, { model: 'priced', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key.key}` })).status, 200);
    const spent = (9 * 1 + 2 * 2) / 1e6; // the fake's usage: 9 prompt and 2 completion tokens

    const view = await budgetView(key.key);
    assert.equal(view.status, 200, JSON.stringify(view.body));
    assert.deepEqual(Object.keys(view.body), ['object', 'data']);
    assert.equal(view.body.object, 'list');
    assert.deepEqual(view.body.data.map((x: any) => x.id), [b.deploymentDaily.id, b.deploymentMonthly.id, b.orgMonthly.id, b.deptTotal.id, b.keyDaily.id]);
    const now = new Date();
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    assert.deepEqual(view.body.data[0], {
      id: b.deploymentDaily.id, object: 'budget', scope: 'deployment', scope_id: null, period: 'daily', limit_usd: 4,
      spent_usd: spent, remaining_usd: (4e6 - 13) / 1e6,
      period_start: new Date(today).toISOString(), resets_at: new Date(today + 86_400_000).toISOString(),
    });
    assert.deepEqual(view.body.data[3], {
      id: b.deptTotal.id, object: 'budget', scope: 'department', scope_id: dept.id, period: 'total', limit_usd: 2,
      spent_usd: spent, remaining_usd: (2e6 - 13) / 1e6, period_start: null, resets_at: null,
    });
    assert.equal(view.body.data[4].scope_id, key.id);

    const otherView = await budgetView(other.key);
    assert.deepEqual(otherView.body.data.map((x: any) => x.id), [b.deploymentDaily.id, b.deploymentMonthly.id, b.orgMonthly.id, b.otherKey.id]);
    assert.equal(otherView.body.data[3].spent_usd, 0);

    // A JWT caller has no key budget; its organization's and tenant's apply.
    const jwt = await mintJwt({ sub: 'viewer', tenantId: 'viewed', organizationId: org.id });
    const jwtView = await budgetView(jwt);
    assert.equal(jwtView.status, 200, JSON.stringify(jwtView.body));
    assert.deepEqual(jwtView.body.data.map((x: any) => x.id), [b.deploymentDaily.id, b.deploymentMonthly.id, b.orgMonthly.id]);

    const refused = await budgetView(chatOnly.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'AUTH_FORBIDDEN');
    const anonymous = await fetch(`${gw.url}/v1/budget`);
    assert.equal(anonymous.status, 401);
  });

  test('/openapi.json documents the budget routes with the schemas that validate them', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    for (const [path, method] of [['/admin/v1/budgets', 'post'], ['/admin/v1/budgets', 'get'], ['/admin/v1/budgets/{id}', 'get'], ['/admin/v1/budgets/{id}', 'put'], ['/admin/v1/budgets/{id}', 'delete'], ['/v1/budget', 'get']] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
    }
    assert.deepEqual(doc.paths['/admin/v1/budgets'].post.requestBody.content['application/json'].schema.required, ['scope', 'period', 'limitUsd']);
  });
});

describe('aigw budgets', () => {
  test('create, list, set and delete from the command line, without a running gateway', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aigw-budgets-cli-'));
    const data = await freshDataDir();
    try {
      const configFile = join(dir, 'pipelines.yaml');
      await writeFile(configFile, yaml('http://127.0.0.1:9/v1'));
      const cli = async (...args: string[]) => runCli([...args, '--config', configFile], { AIGW_DATA_DIR: data });
      const json = async (...args: string[]) => {
        const result = await cli(...args, '--json');
        assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
        return JSON.parse(result.stdout);
      };
      const created = await json('budgets', 'create', '--scope', 'deployment', '--period', 'daily', '--limit-usd', '2.50');
      assert.equal(created.limitUsd, 2.5);
      assert.equal(created.scope, 'deployment');
      const listed = await cli('budgets', 'list', '--scope', 'deployment');
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout, `${created.id}\tdeployment\t-\tdaily\t2.5\tdefault\n`);
      const changed = await json('budgets', 'set', created.id, '--limit-usd', '7');
      assert.equal(changed.limitUsd, 7);
      assert.equal(changed.spentUsd, 0);
      const deleted = await cli('budgets', 'delete', created.id);
      assert.equal(deleted.stdout, `deleted ${created.id}\n`);
      const wrong = await cli('budgets', 'set', created.id, '--limit-usd', 'ten');
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /--limit-usd takes an amount in USD/);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(data, { recursive: true, force: true });
    }
  });
});
