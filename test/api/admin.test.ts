/**
 * The admin API over HTTP on an in-process gateway: keys and their pagination, tenants, organizations,
 * departments and policies, who may call it (admin token, admin JWTs scoped to their tenant), the audit trail
 * of every write, JWT revocation (also across a restart of a gateway with the in-memory KV), and last-used times.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { parseConfig } from '../helpers/config.ts';
import { createGateway, type Gateway } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const JWT_SECRET = 'admin-test-jwt-secret-0123456789-abcdefghij';
const hello = (model = 'plain') => ({ model, messages: [{ role: 'user', content: 'hi' }] });

interface Answer {
  status: number;
  body: any;
}

/**
 * Calls the admin API. `auth`: a bearer (default the admin token), null for none, or headers to send as they are.
 */
async function admin(url: string, method: string, path: string, options: { body?: unknown; auth?: string | null | Record<string, string> } = {}): Promise<Answer> {
  const { body, auth = ADMIN_TOKEN } = options;
  const headers: Record<string, string> = {};
  if (typeof auth === 'string') headers.authorization = `Bearer ${auth}`;
  else if (auth) Object.assign(headers, auth);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed };
}

function assertError(answer: Answer, status: number, code: string, path?: string): void {
  const shown = JSON.stringify(answer.body);
  assert.equal(answer.status, status, shown);
  assert.equal(answer.body?.error?.code, code, shown);
  assert.equal(typeof answer.body.error.message, 'string');
  if (path !== undefined) {
    assert.ok(Array.isArray(answer.body.error.details), `details should list issues: ${shown}`);
    const paths = (answer.body.error.details as Array<{ path: string }>).map((d) => d.path);
    assert.ok(paths.includes(path), `details should name ${path}: ${shown}`);
  }
}

function assertStatus(answer: Answer, status: number): any {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  return answer.body;
}

interface Claims {
  sub: string;
  tenantId: string;
  jti?: string;
  role?: string;
  organizationId?: string;
  departmentId?: string;
}

let jtiCounter = 0;

/** An HS256 access token; `secret` other than the gateway's makes a forged one. */
async function mintJwt(claims: Claims, secret = JWT_SECRET): Promise<string> {
  const { sub, jti = `jti-${process.pid}-${++jtiCounter}`, ...rest } = claims;
  return new SignJWT({ ...rest, type: 'access' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
}

const chat = (url: string, credential: string, model = 'plain') =>
  postJson(`${url}/v1/chat/completions`, hello(model), { authorization: `Bearer ${credential}` });

/** Creates through the admin API and returns the answer's body, failing the test on anything but 201. */
async function created(url: string, path: string, body: unknown, auth: string = ADMIN_TOKEN): Promise<any> {
  return assertStatus(await admin(url, 'POST', path, { body, auth }), 201);
}

/**
 * A second gateway on the folder of `first`, which must be closed already (its folders are still there: only
 * TestGateway.close() removes them). The in-memory KV starts empty, as after a restart.
 */
async function reopen(first: TestGateway, yaml: string): Promise<{ url: string; gateway: Gateway }> {
  const loaded = await parseConfig(yaml, {
    file: join(first.configDir, 'pipelines.yaml'),
    env: { AIGW_DATA_DIR: first.dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, AIGW_JWT_SECRET: JWT_SECRET },
  });
  const gateway = await createGateway(loaded, { logger: silentLogger() });
  try {
    return { url: await gateway.listen(0), gateway };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}

describe('admin API', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let url: string;
  let yaml: string;

  before(async () => {
    fake = await startFakeOpenAI();
    yaml = chatConfig(fake.baseUrl);
    gw = await startTestGateway(yaml, { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    url = gw.url;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('keys: create, show (never the plaintext or the hash), 404 for unknown ids, revoke (twice is harmless)', async () => {
    const key = await created(url, '/keys', { name: 'show-me' });
    assert.match(key.key, /^aigw_sk_[A-Za-z0-9_-]{43}$/);
    assert.match(key.id, /^key_/);
    assert.equal(key.object, 'api_key');
    assert.equal(key.status, 'active');
    assert.equal(key.tenantId, 'default');
    assert.equal(key.prefix, key.key.slice(0, 12));
    assert.equal(key.lastUsedAt, null);
    assert.equal(key.revokedAt, null);
    const hash = createHash('sha256').update(key.key).digest('hex');
    assert.ok(!JSON.stringify(key).includes(hash), 'the creation answer holds the hash');

    const shown = assertStatus(await admin(url, 'GET', `/keys/${key.id}`), 200);
    assert.ok(!('key' in shown), 'GET /keys/:id returns the plaintext');
    const { key: _plaintext, ...record } = key;
    assert.deepEqual(shown, record);
    const listed = assertStatus(await admin(url, 'GET', '/keys?limit=100'), 200);
    for (const text of [JSON.stringify(shown), JSON.stringify(listed)]) {
      assert.ok(!text.includes(hash), 'an answer holds the key hash');
      assert.ok(!text.includes(key.key), 'an answer holds the plaintext');
      assert.ok(!/hash/i.test(text), `an answer names a hash: ${text.slice(0, 300)}`);
    }

    assertError(await admin(url, 'GET', '/keys/key_does-not-exist'), 404, 'NOT_FOUND');
    assertError(await admin(url, 'POST', '/keys/key_does-not-exist/revoke'), 404, 'NOT_FOUND');

    assert.equal((await chat(url, key.key)).status, 200); // warms the key cache
    const revoked = assertStatus(await admin(url, 'POST', `/keys/${key.id}/revoke`), 200);
    assert.equal(revoked.status, 'revoked');
    assert.ok(!Number.isNaN(Date.parse(revoked.revokedAt)), `revokedAt: ${revoked.revokedAt}`);
    const refused = await chat(url, key.key);
    assertError(refused, 401, 'AUTH_API_KEY_REVOKED');

    const again = assertStatus(await admin(url, 'POST', `/keys/${key.id}/revoke`), 200);
    assert.equal(again.status, 'revoked');
    assert.equal(again.revokedAt, revoked.revokedAt, 'a second revoke moved revokedAt');
    assert.equal(assertStatus(await admin(url, 'GET', `/keys/${key.id}`), 200).status, 'revoked');
    assertError(await chat(url, key.key), 401, 'AUTH_API_KEY_REVOKED');
  });

  test('keys: 25 keys page by 10 in three pages, in order, with no duplicates and no gaps; ?tenantId filters', async () => {
    assertStatus(await admin(url, 'POST', '/tenants', { body: { id: 'paging', name: 'Paging' } }), 201);
    // Created in parallel, so that several may share a timestamp: the id breaks ties.
    const ids = new Set<string>();
    for (let batch = 0; batch < 5; batch++) {
      const keys = await Promise.all(Array.from({ length: 5 }, (_, i) => created(url, '/keys', { name: `page-${batch}-${i}`, tenantId: 'paging' })));
      for (const key of keys) ids.add(key.id);
    }
    assert.equal(ids.size, 25);

    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/keys?tenantId=paging&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: any = assertStatus(await admin(url, 'GET', query), 200);
      assert.deepEqual(Object.keys(page).sort(), ['data', 'has_more', 'next_cursor', 'object']);
      assert.equal(page.object, 'list');
      pages.push(page);
      cursor = page.next_cursor;
      assert.ok(pages.length <= 3, 'more than three pages');
    } while (cursor !== null);

    assert.deepEqual(pages.map((p) => p.data.length), [10, 10, 5]);
    assert.deepEqual(pages.map((p) => p.has_more), [true, true, false]);
    assert.equal(typeof pages[0].next_cursor, 'string');
    assert.equal(typeof pages[1].next_cursor, 'string');
    assert.equal(pages[2].next_cursor, null);
    const seen: any[] = pages.flatMap((p) => p.data);
    const seenIds = seen.map((k) => k.id);
    assert.equal(new Set(seenIds).size, 25, 'a key shows on two pages');
    assert.deepEqual([...seenIds].sort(), [...ids].sort(), 'the pages miss a key or show a foreign one');
    for (const item of seen) {
      assert.equal(item.tenantId, 'paging');
      assert.ok(!('key' in item), 'a listed key carries its plaintext');
    }
    // Ordered by (createdAt, id).
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1], seen[i]];
      assert.ok(a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id), `out of order at ${i}: ${a.id} ${b.id}`);
    }

    // Exactly one full page: nothing more. The default page size is 20.
    const exact = assertStatus(await admin(url, 'GET', '/keys?tenantId=paging&limit=25'), 200);
    assert.equal(exact.data.length, 25);
    assert.equal(exact.has_more, false);
    assert.equal(exact.next_cursor, null);
    const byDefault = assertStatus(await admin(url, 'GET', '/keys?tenantId=paging'), 200);
    assert.equal(byDefault.data.length, 20);
    assert.equal(byDefault.has_more, true);

    // The filter: the default tenant's keys are not among these, and these are not among the default tenant's.
    const others = assertStatus(await admin(url, 'GET', '/keys?tenantId=default&limit=100'), 200);
    assert.ok(others.data.length > 0);
    assert.ok(others.data.every((k: any) => k.tenantId === 'default' && !ids.has(k.id)));
    const none = assertStatus(await admin(url, 'GET', '/keys?tenantId=no-such-tenant'), 200);
    assert.deepEqual(none, { object: 'list', data: [], has_more: false, next_cursor: null });
  });

  test('lists refuse a limit out of 1..100 (never clamp it) and a cursor they did not issue', async () => {
    for (const limit of ['0', '101', 'abc', '-1', '1.5', '', '1e2']) {
      assertError(await admin(url, 'GET', `/keys?limit=${encodeURIComponent(limit)}`), 400, 'VALIDATION_ERROR', '/limit');
    }
    assertError(await admin(url, 'GET', '/keys?limit=10&limit=20'), 400, 'VALIDATION_ERROR', '/limit');
    for (const list of ['/tenants', '/organizations', '/departments']) {
      assertError(await admin(url, 'GET', `${list}?limit=0`), 400, 'VALIDATION_ERROR', '/limit');
      assertError(await admin(url, 'GET', `${list}?limit=101`), 400, 'VALIDATION_ERROR', '/limit');
      assertStatus(await admin(url, 'GET', `${list}?limit=100`), 200);
    }

    const forged = [
      'not-a-cursor!',
      Buffer.from('hello').toString('base64url'),
      // The right shape, but a timestamp Postgres cannot hold, or an id it cannot hold: still 400, not 500.
      Buffer.from('99999999999999999999.key_x').toString('base64url'),
      Buffer.from('9223372036854775807.key_x').toString('base64url'),
      Buffer.from('1700000000000000.key_\u0000').toString('base64url'),
    ];
    for (const cursor of forged) {
      for (const list of ['/keys', '/tenants', '/organizations', '/departments']) {
        assertError(await admin(url, 'GET', `${list}?cursor=${encodeURIComponent(cursor)}`), 400, 'VALIDATION_ERROR', '/cursor');
      }
    }
    const real = Buffer.from('1700000000000000.key_x').toString('base64url');
    assertError(await admin(url, 'GET', `/keys?cursor=${real}&cursor=${real}`), 400, 'VALIDATION_ERROR', '/cursor');
  });

  test('tenants, organizations, departments, keys in them, and their policies', async () => {
    // Tenants: id rules, duplicates, required fields.
    for (const id of ['Acme', '-acme', '', 'a'.repeat(64), 'ac me', 'acme/x']) {
      assertError(await admin(url, 'POST', '/tenants', { body: { id, name: 'Bad' } }), 400, 'VALIDATION_ERROR', '/id');
    }
    assertError(await admin(url, 'POST', '/tenants', { body: { id: 'acme' } }), 400, 'VALIDATION_ERROR', '/name');
    assertError(await admin(url, 'POST', '/tenants', { body: { id: 'acme', name: 'Acme', extra: 1 } }), 400, 'VALIDATION_ERROR', '/extra');
    const acme = await created(url, '/tenants', { id: 'acme', name: 'Acme' });
    assert.equal(acme.id, 'acme');
    assert.equal(acme.object, 'tenant');
    assert.equal(acme.name, 'Acme');
    assertError(await admin(url, 'POST', '/tenants', { body: { id: 'acme', name: 'Acme again' } }), 400, 'VALIDATION_ERROR', '/id');
    const tenants = assertStatus(await admin(url, 'GET', '/tenants?limit=100'), 200);
    assert.ok(tenants.data.some((t: any) => t.id === 'acme' && t.name === 'Acme'));
    assert.ok(tenants.data.some((t: any) => t.id === 'default'));

    // Organizations and departments.
    const eng = await created(url, '/organizations', { name: 'Eng', tenantId: 'acme' });
    assert.match(eng.id, /^org_/);
    assert.equal(eng.tenantId, 'acme');
    assert.deepEqual(eng.policy, {});
    const ops = await created(url, '/organizations', { name: 'Ops', tenantId: 'acme' });
    const sales = await created(url, '/organizations', { name: 'Sales' });
    assert.equal(sales.tenantId, 'default');
    assertError(await admin(url, 'POST', '/organizations', { body: { name: 'X', tenantId: 'no-such-tenant' } }), 400, 'VALIDATION_ERROR', '/tenantId');
    assertError(await admin(url, 'POST', '/organizations', { body: {} }), 400, 'VALIDATION_ERROR', '/name');

    const ml = await created(url, '/departments', { name: 'ML', organizationId: eng.id });
    assert.match(ml.id, /^dept_/);
    assert.equal(ml.organizationId, eng.id);
    assert.equal(ml.tenantId, 'acme');
    const infra = await created(url, '/departments', { name: 'Infra', organizationId: ops.id });
    assertError(await admin(url, 'POST', '/departments', { body: { name: 'X', organizationId: 'org_nope' } }), 400, 'VALIDATION_ERROR', '/organizationId');
    assertError(await admin(url, 'POST', '/departments', { body: { name: 'X' } }), 400, 'VALIDATION_ERROR', '/organizationId');
    assertError(await admin(url, 'POST', '/departments', { body: { name: 'X', organizationId: eng.id, tenantId: 'default' } }), 400, 'VALIDATION_ERROR', '/tenantId');
    // An admin of the default tenant cannot put a department into another tenant's organization.
    const defaultAdmin = await mintJwt({ sub: 'dana', tenantId: 'default', role: 'admin' });
    assertError(await admin(url, 'POST', '/departments', { body: { name: 'X', organizationId: eng.id }, auth: defaultAdmin }), 400, 'VALIDATION_ERROR', '/organizationId');
    const inSales = await created(url, '/departments', { name: 'Deals', organizationId: sales.id }, defaultAdmin);
    assert.equal(inSales.tenantId, 'default');

    assert.deepEqual(assertStatus(await admin(url, 'GET', `/organizations/${eng.id}`), 200), eng);
    assert.deepEqual(assertStatus(await admin(url, 'GET', `/departments/${ml.id}`), 200), ml);
    assertError(await admin(url, 'GET', '/organizations/org_nope'), 404, 'NOT_FOUND');
    assertError(await admin(url, 'GET', '/departments/dept_nope'), 404, 'NOT_FOUND');
    const orgs = assertStatus(await admin(url, 'GET', '/organizations?tenantId=acme'), 200);
    assert.deepEqual(orgs.data.map((o: any) => o.id), [eng.id, ops.id]);
    const depts = assertStatus(await admin(url, 'GET', `/departments?organizationId=${eng.id}`), 200);
    assert.deepEqual(depts.data.map((d: any) => d.id), [ml.id]);

    // Keys in an organization and a department.
    const inMl = await created(url, '/keys', { name: 'ml-key', tenantId: 'acme', organizationId: eng.id, departmentId: ml.id });
    assert.equal(inMl.tenantId, 'acme');
    assert.equal(inMl.organizationId, eng.id);
    assert.equal(inMl.departmentId, ml.id);
    const inEng = await created(url, '/keys', { name: 'eng-key', tenantId: 'acme', organizationId: eng.id });
    assert.equal(inEng.departmentId, null);
    const keyErrors: Array<[Record<string, unknown>, string]> = [
      [{ tenantId: 'acme', organizationId: eng.id, departmentId: infra.id }, '/departmentId'], // a department of another org
      [{ tenantId: 'acme', departmentId: ml.id }, '/organizationId'], // a department without its organization
      [{ organizationId: eng.id }, '/organizationId'], // an organization of another tenant
      [{ tenantId: 'acme', organizationId: 'org_nope' }, '/organizationId'],
      [{ tenantId: 'no-such-tenant' }, '/tenantId'],
    ];
    for (const [fields, path] of keyErrors) {
      assertError(await admin(url, 'POST', '/keys', { body: { name: 'bad', ...fields } }), 400, 'VALIDATION_ERROR', path);
    }

    // Policies: validated, stored, returned, and in force at once.
    const policy = { models: ['gpt-4o-mini'], modelOverrides: { 'gpt-4o': 'gpt-4o-mini' }, rateLimits: { requestsPerMinute: 10 } };
    assertError(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: { ...policy, maxTokens: 5 } }), 400, 'VALIDATION_ERROR', '/maxTokens');
    assertError(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: { rateLimits: { requestsPerMinute: 0 } } }), 400, 'VALIDATION_ERROR', '/rateLimits/requestsPerMinute');
    assertError(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: { rateLimits: { burst: 3 } } }), 400, 'VALIDATION_ERROR', '/rateLimits/burst');
    assertError(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: { models: 'gpt-4o-mini' } }), 400, 'VALIDATION_ERROR', '/models');
    assertError(await admin(url, 'PUT', '/organizations/org_nope/policy', { body: policy }), 404, 'NOT_FOUND');
    assert.deepEqual(assertStatus(await admin(url, 'GET', `/organizations/${eng.id}`), 200).policy, {}, 'a refused policy was stored');

    assert.equal((await chat(url, inEng.key, 'plain')).status, 200); // caches the organization
    const withPolicy = assertStatus(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: policy }), 200);
    assert.deepEqual(withPolicy.policy, policy);
    assert.equal(withPolicy.id, eng.id);
    assert.ok(withPolicy.updatedAt >= eng.updatedAt);
    assert.deepEqual(assertStatus(await admin(url, 'GET', `/organizations/${eng.id}`), 200).policy, policy);
    assertError(await chat(url, inEng.key, 'plain'), 403, 'MODEL_NOT_ALLOWED');
    fake.requests.length = 0;
    assert.equal((await chat(url, inEng.key, 'gpt-4o')).status, 200); // overridden to gpt-4o-mini
    assert.equal(fake.requests.at(-1)?.body.model, 'gpt-4o-mini-2024-07-18');

    const deptPolicy = { models: ['gpt-4o-mini'], rateLimits: { requestsPerDay: 100 } };
    assertError(await admin(url, 'PUT', `/departments/${ml.id}/policy`, { body: { models: [] , unknown: true } }), 400, 'VALIDATION_ERROR', '/unknown');
    assertError(await admin(url, 'PUT', `/departments/${ml.id}/policy`, { body: { rateLimits: { requestsPerMinute: 0 } } }), 400, 'VALIDATION_ERROR', '/rateLimits/requestsPerMinute');
    assertError(await admin(url, 'PUT', '/departments/dept_nope/policy', { body: deptPolicy }), 404, 'NOT_FOUND');
    const deptWithPolicy = assertStatus(await admin(url, 'PUT', `/departments/${ml.id}/policy`, { body: deptPolicy }), 200);
    assert.deepEqual(deptWithPolicy.policy, deptPolicy);
    assert.deepEqual(assertStatus(await admin(url, 'GET', `/departments/${ml.id}`), 200).policy, deptPolicy);

    // Replacing the organization's policy with an empty one lifts its allow-list at once.
    assert.deepEqual(assertStatus(await admin(url, 'PUT', `/organizations/${eng.id}/policy`, { body: {} }), 200).policy, {});
    assert.equal((await chat(url, inEng.key, 'plain')).status, 200);
    assertError(await chat(url, inMl.key, 'plain'), 403, 'MODEL_NOT_ALLOWED'); // the department's list still holds
  });

  test('admin credentials: admin token, admin JWTs scoped to their tenant (bearer or cookie), and refusals', async () => {
    await created(url, '/tenants', { id: 'north', name: 'North' });
    await created(url, '/tenants', { id: 'south', name: 'South' });
    const southOrg = await created(url, '/organizations', { name: 'South org', tenantId: 'south' });
    const southKey = await created(url, '/keys', { name: 'south-key', tenantId: 'south' });

    // Refusals.
    assertError(await admin(url, 'GET', '/keys', { auth: null }), 401, 'AUTH_REQUIRED');
    assertError(await admin(url, 'GET', '/keys', { auth: 'wrong-token' }), 401, 'AUTH_INVALID_TOKEN');
    assertError(await admin(url, 'POST', '/keys', { auth: 'wrong-token', body: { name: 'x' } }), 401, 'AUTH_INVALID_TOKEN');
    assertError(await admin(url, 'GET', '/keys', { auth: southKey.key }), 401, 'AUTH_INVALID_TOKEN');
    assertError(await admin(url, 'GET', '/keys', { auth: { 'x-api-key': southKey.key } }), 401, 'AUTH_REQUIRED');
    const forged = await mintJwt({ sub: 'mallory', tenantId: 'north', role: 'admin' }, 'not-the-gateway-secret-0123456789abcdef');
    assertError(await admin(url, 'GET', '/keys', { auth: forged }), 401, 'AUTH_INVALID_TOKEN');
    const ghost = await mintJwt({ sub: 'ghost', tenantId: 'no-such-tenant', role: 'admin' });
    assertError(await admin(url, 'GET', '/keys', { auth: ghost }), 401, 'AUTH_INVALID_TOKEN');
    for (const role of [undefined, 'member', 'Admin']) {
      const user = await mintJwt({ sub: 'uma', tenantId: 'north', ...(role ? { role } : {}) });
      assertError(await admin(url, 'GET', '/keys', { auth: user }), 403, 'AUTH_FORBIDDEN');
      assertError(await admin(url, 'POST', '/keys', { auth: user, body: { name: 'x' } }), 403, 'AUTH_FORBIDDEN');
    }
    // The data plane takes the same user's JWT: only the admin API wants the role.
    assert.equal((await chat(url, await mintJwt({ sub: 'uma', tenantId: 'north' }))).status, 200);

    // An admin of north: its writes land in north, and it cannot see or touch south.
    const alice = await mintJwt({ sub: 'alice', tenantId: 'north', role: 'admin' });
    const northKey = await created(url, '/keys', { name: 'by-alice' }, alice);
    assert.equal(northKey.tenantId, 'north');
    assert.equal((await created(url, '/keys', { name: 'explicit', tenantId: 'north' }, alice)).tenantId, 'north');
    assertError(await admin(url, 'POST', '/keys', { auth: alice, body: { name: 'x', tenantId: 'south' } }), 403, 'AUTH_FORBIDDEN');
    assertError(await admin(url, 'POST', '/keys', { auth: alice, body: { name: 'x', tenantId: 'default' } }), 403, 'AUTH_FORBIDDEN');
    const northOrg = await created(url, '/organizations', { name: 'North org' }, alice);
    assert.equal(northOrg.tenantId, 'north');
    assertError(await admin(url, 'POST', '/organizations', { auth: alice, body: { name: 'x', tenantId: 'south' } }), 403, 'AUTH_FORBIDDEN');
    assert.equal((await created(url, '/departments', { name: 'North dept', organizationId: northOrg.id }, alice)).tenantId, 'north');
    assertError(await admin(url, 'POST', '/departments', { auth: alice, body: { name: 'x', organizationId: southOrg.id } }), 400, 'VALIDATION_ERROR', '/organizationId');

    assertError(await admin(url, 'GET', `/keys/${southKey.id}`, { auth: alice }), 404, 'NOT_FOUND');
    assertError(await admin(url, 'POST', `/keys/${southKey.id}/revoke`, { auth: alice }), 404, 'NOT_FOUND');
    assertError(await admin(url, 'GET', `/organizations/${southOrg.id}`, { auth: alice }), 404, 'NOT_FOUND');
    assertError(await admin(url, 'PUT', `/organizations/${southOrg.id}/policy`, { auth: alice, body: { models: ['plain'] } }), 404, 'NOT_FOUND');
    assertError(await admin(url, 'GET', `/departments?organizationId=${southOrg.id}`, { auth: alice }), 404, 'NOT_FOUND');
    assert.equal(assertStatus(await admin(url, 'GET', `/keys/${southKey.id}`), 200).status, 'active', 'the refused revoke revoked');
    assert.deepEqual(assertStatus(await admin(url, 'GET', `/organizations/${southOrg.id}`), 200).policy, {});
    assertStatus(await admin(url, 'GET', `/keys/${northKey.id}`, { auth: alice }), 200);

    const keys = assertStatus(await admin(url, 'GET', '/keys?limit=100', { auth: alice }), 200);
    assert.deepEqual(keys.data.map((k: any) => k.tenantId).sort(), ['north', 'north']);
    assert.equal(assertStatus(await admin(url, 'GET', '/keys?tenantId=north', { auth: alice }), 200).data.length, 2);
    assertError(await admin(url, 'GET', '/keys?tenantId=south', { auth: alice }), 403, 'AUTH_FORBIDDEN');
    assertError(await admin(url, 'GET', '/organizations?tenantId=south', { auth: alice }), 403, 'AUTH_FORBIDDEN');
    assert.deepEqual(assertStatus(await admin(url, 'GET', '/tenants', { auth: alice }), 200).data.map((t: any) => t.id), ['north']);
    assert.deepEqual(assertStatus(await admin(url, 'GET', '/organizations', { auth: alice }), 200).data.map((o: any) => o.id), [northOrg.id]);
    const depts = assertStatus(await admin(url, 'GET', '/departments?limit=100', { auth: alice }), 200);
    assert.ok(depts.data.length === 1 && depts.data[0].tenantId === 'north', JSON.stringify(depts));
    assertError(await admin(url, 'POST', '/tenants', { auth: alice, body: { id: 'alices-own', name: 'Mine' } }), 403, 'AUTH_FORBIDDEN');

    // The admin JWT works from the access_token cookie too (writes from the gateway's own origin only: see
    // test/e2e/cross-site.test.ts); a non-admin one there is still refused.
    const viaCookie = await admin(url, 'GET', '/keys', { auth: { cookie: `access_token=${alice}` } });
    assert.deepEqual(assertStatus(viaCookie, 200).data.map((k: any) => k.tenantId), ['north', 'north']);
    const sameOrigin = { cookie: `access_token=${alice}`, origin: url };
    const cookieCreate = await admin(url, 'POST', '/keys', { auth: sameOrigin, body: { name: 'from-cookie' } });
    assert.equal(assertStatus(cookieCreate, 201).tenantId, 'north');
    const userCookie = `access_token=${await mintJwt({ sub: 'uma', tenantId: 'north' })}`;
    assertError(await admin(url, 'GET', '/keys', { auth: { cookie: userCookie } }), 403, 'AUTH_FORBIDDEN');

    // The admin token sees every tenant.
    const all = assertStatus(await admin(url, 'GET', '/tenants?limit=100'), 200);
    assert.ok(['north', 'south', 'default'].every((id) => all.data.some((t: any) => t.id === id)));
  });

  test('audit: every admin write leaves exactly one row naming its actor and target; reads and refusals none', async () => {
    const audited = await startTestGateway(yaml, { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    try {
      const a = audited.url;
      const db = audited.gateway.services.db;
      const rows = () => db.query<{ actor: string; action: string; target_type: string; target_id: string }>(
        'SELECT actor, action, target_type, target_id FROM admin_audit ORDER BY id');
      assert.deepEqual(await rows(), []);
      const expected: Array<{ actor: string; action: string; target_type: string; target_id: string }> = [];
      const expect = (actor: string, action: string, targetType: string, targetId: string) =>
        expected.push({ actor, action, target_type: targetType, target_id: targetId });

      await created(a, '/tenants', { id: 'audited', name: 'Audited' });
      expect('admin-token', 'create', 'tenant', 'audited');
      const org = await created(a, '/organizations', { name: 'Org', tenantId: 'audited' });
      expect('admin-token', 'create', 'organization', org.id);
      const dept = await created(a, '/departments', { name: 'Dept', organizationId: org.id });
      expect('admin-token', 'create', 'department', dept.id);
      assertStatus(await admin(a, 'PUT', `/organizations/${org.id}/policy`, { body: { models: ['plain'] } }), 200);
      expect('admin-token', 'set_policy', 'organization', org.id);
      assertStatus(await admin(a, 'PUT', `/departments/${dept.id}/policy`, { body: { rateLimits: { requestsPerMinute: 5 } } }), 200);
      expect('admin-token', 'set_policy', 'department', dept.id);
      const key = await created(a, '/keys', { name: 'audited-key', tenantId: 'audited', organizationId: org.id });
      expect('admin-token', 'create', 'api_key', key.id);
      assertStatus(await admin(a, 'POST', `/keys/${key.id}/revoke`), 200);
      expect('admin-token', 'revoke', 'api_key', key.id);
      assertStatus(await admin(a, 'POST', `/keys/${key.id}/revoke`), 200); // already revoked: nothing written
      await created(a, '/jwt/revocations', { jti: 'audited-jti' });
      expect('admin-token', 'revoke', 'jwt', 'audited-jti');

      const carol = await mintJwt({ sub: 'carol', tenantId: 'audited', role: 'admin' });
      const carolKey = await created(a, '/keys', { name: 'by-carol' }, carol);
      expect('jwt:carol', 'create', 'api_key', carolKey.id);
      const carolOrg = await created(a, '/organizations', { name: 'Carol org' }, carol);
      expect('jwt:carol', 'create', 'organization', carolOrg.id);
      const carolDept = await created(a, '/departments', { name: 'Carol dept', organizationId: carolOrg.id }, carol);
      expect('jwt:carol', 'create', 'department', carolDept.id);
      assertStatus(await admin(a, 'PUT', `/organizations/${carolOrg.id}/policy`, { auth: carol, body: {} }), 200);
      expect('jwt:carol', 'set_policy', 'organization', carolOrg.id);
      assertStatus(await admin(a, 'POST', `/keys/${carolKey.id}/revoke`, { auth: carol }), 200);
      expect('jwt:carol', 'revoke', 'api_key', carolKey.id);
      await created(a, '/jwt/revocations', { jti: 'carol-revoked-jti' }, carol);
      expect('jwt:carol', 'revoke', 'jwt', 'carol-revoked-jti');

      // Reads, refused and failed writes: no rows.
      await admin(a, 'GET', '/keys');
      await admin(a, 'GET', `/keys/${key.id}`);
      await admin(a, 'GET', '/tenants');
      assertError(await admin(a, 'POST', '/tenants', { body: { id: 'audited', name: 'Again' } }), 400, 'VALIDATION_ERROR');
      assertError(await admin(a, 'POST', '/tenants', { auth: carol, body: { id: 'carols', name: 'Carol' } }), 403, 'AUTH_FORBIDDEN');
      assertError(await admin(a, 'POST', '/keys', { body: { name: 'x', tenantId: 'audited', departmentId: dept.id } }), 400, 'VALIDATION_ERROR');
      assertError(await admin(a, 'POST', '/keys', { auth: carol, body: { name: 'x', tenantId: 'default' } }), 403, 'AUTH_FORBIDDEN');
      assertError(await admin(a, 'POST', '/keys/key_nope/revoke'), 404, 'NOT_FOUND');
      assertError(await admin(a, 'PUT', `/organizations/${org.id}/policy`, { body: { rateLimits: { requestsPerMinute: 0 } } }), 400, 'VALIDATION_ERROR');
      assertError(await admin(a, 'POST', '/departments', { body: { name: 'x', organizationId: 'org_nope' } }), 400, 'VALIDATION_ERROR');
      assertError(await admin(a, 'POST', '/jwt/revocations', { body: {} }), 400, 'VALIDATION_ERROR');
      assertError(await admin(a, 'POST', '/keys', { auth: 'wrong-token', body: { name: 'x' } }), 401, 'AUTH_INVALID_TOKEN');

      assert.deepEqual(await rows(), expected);
      const [policyRow] = await db.query<{ details: unknown; at: Date | string }>(
        `SELECT details, at FROM admin_audit WHERE action = 'set_policy' AND target_id = $1`, [org.id]);
      assert.deepEqual(policyRow?.details, { policy: { models: ['plain'] } });
      assert.ok(policyRow?.at, 'no time on the audit row');
    } finally {
      await audited.close();
    }
  });

  test('JWT revocation: the jti is refused at once on the data plane and the admin API; bodies are validated', async () => {
    const bob = await mintJwt({ sub: 'bob', tenantId: 'default', jti: 'jti-bob' });
    assert.equal((await chat(url, bob)).status, 200);
    const revoked = await created(url, '/jwt/revocations', { jti: 'jti-bob' });
    assert.equal(revoked.object, 'jwt_revocation');
    assert.equal(revoked.jti, 'jti-bob');
    assert.equal(revoked.expiresAt, null);
    assert.ok(!Number.isNaN(Date.parse(revoked.revokedAt)));
    const refused = await chat(url, bob);
    assertError(refused, 401, 'AUTH_INVALID_TOKEN');
    assert.equal(refused.body.error.details?.reason, 'revoked');
    // Another token of the same user, with another jti, still works.
    assert.equal((await chat(url, await mintJwt({ sub: 'bob', tenantId: 'default', jti: 'jti-bob-2' }))).status, 200);

    // A revoked admin JWT loses the admin API at once.
    const eve = await mintJwt({ sub: 'eve', tenantId: 'default', role: 'admin', jti: 'jti-eve-admin' });
    assertStatus(await admin(url, 'GET', '/keys', { auth: eve }), 200);
    await created(url, '/jwt/revocations', { jti: 'jti-eve-admin', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    assertError(await admin(url, 'GET', '/keys', { auth: eve }), 401, 'AUTH_INVALID_TOKEN');

    // An expiry in the past is accepted (the token is dead anyway).
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const old = await created(url, '/jwt/revocations', { jti: 'jti-long-gone', expiresAt: past });
    assert.equal(old.expiresAt, past);

    const invalid: Array<[unknown, string]> = [
      [{}, '/jti'],
      [{ jti: '' }, '/jti'],
      [{ jti: 5 }, '/jti'],
      [{ jti: 'x'.repeat(257) }, '/jti'],
      [{ jti: 'x', expiresAt: 'tomorrow' }, '/expiresAt'],
      [{ jti: 'x', reason: 'because' }, '/reason'],
      ['{not json', ''],
      [[], ''],
    ];
    for (const [body, path] of invalid) {
      assertError(await admin(url, 'POST', '/jwt/revocations', { body }), 400, 'VALIDATION_ERROR', path);
    }
  });

  test('JWT revocation survives a restart of a gateway with the in-memory KV', async () => {
    const first = await startTestGateway(yaml, { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    let second: { url: string; gateway: Gateway } | undefined;
    try {
      const forever = await mintJwt({ sub: 'frank', tenantId: 'default', jti: 'jti-restart-forever' });
      const untilExpiry = await mintJwt({ sub: 'frank', tenantId: 'default', jti: 'jti-restart-until' });
      const untouched = await mintJwt({ sub: 'frank', tenantId: 'default', jti: 'jti-restart-fine' });
      for (const token of [forever, untilExpiry, untouched]) assert.equal((await chat(first.url, token)).status, 200);
      await created(first.url, '/jwt/revocations', { jti: 'jti-restart-forever' });
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await created(first.url, '/jwt/revocations', { jti: 'jti-restart-until', expiresAt: until });
      assertError(await chat(first.url, forever), 401, 'AUTH_INVALID_TOKEN');
      // Revoking again with an earlier expiry (here by another tenant's admin) must not shorten, let alone undo, either.
      await created(first.url, '/tenants', { id: 'elsewhere', name: 'Elsewhere' });
      const otherAdmin = await mintJwt({ sub: 'oscar', tenantId: 'elsewhere', role: 'admin' });
      const past = new Date(Date.now() - 3_600_000).toISOString();
      assert.equal((await created(first.url, '/jwt/revocations', { jti: 'jti-restart-forever', expiresAt: past }, otherAdmin)).expiresAt, null);
      assert.equal((await created(first.url, '/jwt/revocations', { jti: 'jti-restart-until', expiresAt: past })).expiresAt, until);

      await first.gateway.close();
      second = await reopen(first, yaml);
      assertError(await chat(second.url, forever), 401, 'AUTH_INVALID_TOKEN');
      assertError(await chat(second.url, untilExpiry), 401, 'AUTH_INVALID_TOKEN');
      assert.equal((await chat(second.url, untouched)).status, 200, 'the restarted gateway refuses every JWT');
    } finally {
      await second?.gateway.close();
      await first.close();
    }
  });

  test('last-used: with a 200 ms flush interval it is set within a second of the call', async () => {
    const quick = await startTestGateway(chatConfig(fake.baseUrl, 'auth:\n  lastUsedFlushIntervalMs: 200\n'));
    try {
      const key = await created(quick.url, '/keys', { name: 'used' });
      const before = Date.now();
      assert.equal((await chat(quick.url, key.key)).status, 200);
      const afterCall = Date.now();
      let lastUsedAt: string | null = null;
      while (lastUsedAt === null && Date.now() - afterCall < 1_500) {
        await sleep(50);
        lastUsedAt = assertStatus(await admin(quick.url, 'GET', `/keys/${key.id}`), 200).lastUsedAt;
      }
      const waited = Date.now() - afterCall;
      assert.ok(lastUsedAt !== null, 'lastUsedAt was not set within 1.5 s with a 200 ms flush interval');
      assert.ok(waited < 1_500, `took ${waited} ms`);
      const at = Date.parse(lastUsedAt);
      assert.ok(at >= before && at <= afterCall, `lastUsedAt ${lastUsedAt} is not the time of the call`);
      const listed = assertStatus(await admin(quick.url, 'GET', '/keys'), 200);
      assert.equal(listed.data.find((k: any) => k.id === key.id)?.lastUsedAt, lastUsedAt);
    } finally {
      await quick.close();
    }
  });

  test('last-used: null until the recorder flushes, and close() writes the times still pending', async () => {
    const slowYaml = chatConfig(fake.baseUrl, 'auth:\n  lastUsedFlushIntervalMs: 600000\n');
    const first = await startTestGateway(slowYaml, { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    let second: { url: string; gateway: Gateway } | undefined;
    try {
      const key = await created(first.url, '/keys', { name: 'used-before-close' });
      const idle = await created(first.url, '/keys', { name: 'never-used' });
      const before = Date.now();
      assert.equal((await chat(first.url, key.key)).status, 200);
      const afterCall = Date.now();
      assert.equal(assertStatus(await admin(first.url, 'GET', `/keys/${key.id}`), 200).lastUsedAt, null, 'written before any flush');

      await first.gateway.close();
      second = await reopen(first, slowYaml);
      const lastUsedAt = assertStatus(await admin(second.url, 'GET', `/keys/${key.id}`), 200).lastUsedAt;
      assert.ok(lastUsedAt !== null, 'close() did not flush the pending last-used time');
      const at = Date.parse(lastUsedAt);
      assert.ok(at >= before && at <= afterCall, `lastUsedAt ${lastUsedAt} is not the time of the call`);
      assert.equal(assertStatus(await admin(second.url, 'GET', `/keys/${idle.id}`), 200).lastUsedAt, null);
    } finally {
      await second?.gateway.close();
      await first.close();
    }
  });
});

/** These gateways never call upstream. */
const UNUSED_UPSTREAM = 'http://127.0.0.1:9/v1';

describe('admin API availability', () => {
  test('with neither AIGW_ADMIN_TOKEN nor a JWT secret, /admin/v1 answers 404 to all but the control token', async () => {
    const off = await startTestGateway(chatConfig(UNUSED_UPSTREAM), { env: { AIGW_ADMIN_TOKEN: '' } });
    try {
      assertError(await admin(off.url, 'GET', '/keys', { auth: null }), 404, 'NOT_FOUND');
      assertError(await admin(off.url, 'GET', '/keys', { auth: ADMIN_TOKEN }), 404, 'NOT_FOUND');
      assertError(await admin(off.url, 'POST', '/keys', { auth: ADMIN_TOKEN, body: { name: 'x' } }), 404, 'NOT_FOUND');
      assertError(await admin(off.url, 'POST', '/tenants', { auth: null, body: { id: 'x', name: 'x' } }), 404, 'NOT_FOUND');
      assertError(await admin(off.url, 'GET', '/keys', { auth: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' }), 404, 'NOT_FOUND');
      // The local CLI's control token, in the data folder, still works: only a process that can read it has it.
      const lock = JSON.parse(await readFile(join(off.dataDir, 'aigw.lock'), 'utf8')) as { controlToken: string };
      assertStatus(await admin(off.url, 'GET', '/keys', { auth: lock.controlToken }), 200);
    } finally {
      await off.close();
    }
  });

  test('with a JWT secret and no admin token, admin JWTs work and the old token is refused', async () => {
    const jwtOnly = await startTestGateway(chatConfig(UNUSED_UPSTREAM), { env: { AIGW_ADMIN_TOKEN: '', AIGW_JWT_SECRET: JWT_SECRET } });
    try {
      assertError(await admin(jwtOnly.url, 'GET', '/keys', { auth: null }), 401, 'AUTH_REQUIRED');
      assertError(await admin(jwtOnly.url, 'GET', '/keys', { auth: ADMIN_TOKEN }), 401, 'AUTH_INVALID_TOKEN');
      const root = await mintJwt({ sub: 'root', tenantId: 'default', role: 'admin' });
      const key = await created(jwtOnly.url, '/keys', { name: 'by-jwt' }, root);
      assert.equal(key.tenantId, 'default');
      assertStatus(await admin(jwtOnly.url, 'GET', `/keys/${key.id}`, { auth: root }), 200);
    } finally {
      await jwtOnly.close();
    }
  });
});
