/**
 * Organization and department policies narrow what a caller may use, never widen it, and GET /v1/models
 * lists exactly what routing accepts for that caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { effectivePolicy, overriddenModel, allowsModel } from '../../core/identity/policy.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const SECRET = 'policies-test-secret-0123456789abcdef';
const MODELS = ['m-small', 'm-medium', 'm-large', 'm-xl'];

describe('effectivePolicy', () => {
  test('no levels: everything allowed, nothing remapped, no limits', () => {
    const policy = effectivePolicy([]);
    assert.equal(allowsModel(policy, 'anything'), true);
    assert.equal(overriddenModel(policy, 'a'), 'a');
    assert.deepEqual(policy.rateLimits, {});
  });

  test('allow-lists intersect: a department cannot add a model its organization lacks', () => {
    const policy = effectivePolicy([{ models: ['a', 'b'] }, { models: ['b', 'c'] }]);
    assert.equal(allowsModel(policy, 'a'), false);
    assert.equal(allowsModel(policy, 'b'), true);
    assert.equal(allowsModel(policy, 'c'), false);
  });

  test('a level without a list narrows nothing', () => {
    const policy = effectivePolicy([{ models: ['a'] }, { rateLimits: { requestsPerMinute: 5 } }]);
    assert.equal(allowsModel(policy, 'a'), true);
    assert.equal(allowsModel(policy, 'b'), false);
  });

  test('rate limits take the lower value per limit; a limit set at one level only stays', () => {
    const policy = effectivePolicy([
      { rateLimits: { requestsPerMinute: 100, tokensPerDay: 5000 } },
      { rateLimits: { requestsPerMinute: 500, requestsPerDay: 20 } },
    ]);
    assert.deepEqual(policy.rateLimits, { requestsPerMinute: 100, requestsPerDay: 20, tokensPerDay: 5000 });
  });

  test("the department's override wins over the organization's for the same id", () => {
    const policy = effectivePolicy([{ modelOverrides: { x: 'org-target', y: 'y-org' } }, { modelOverrides: { x: 'dept-target' } }]);
    assert.equal(overriddenModel(policy, 'x'), 'dept-target');
    assert.equal(overriddenModel(policy, 'y'), 'y-org');
    assert.equal(overriddenModel(policy, 'z'), 'z');
  });
});

interface Caller {
  name: string;
  headers: Record<string, string>;
}

describe('policies through the gateway', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let orgId: string;
  let deptId: string;
  const callers: Caller[] = [];
  const admin = (method: string, path: string, body?: unknown) => fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
  const keyFor = async (fields: Record<string, unknown>) => {
    const created = await admin('POST', '/keys', { name: 'policy test', ...fields });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { authorization: `Bearer ${created.body.key as string}` };
  };
  const jwtFor = async (claims: Record<string, unknown>) => {
    const token = await new SignJWT({ tenantId: 'default', type: 'access', ...claims })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('user-1').setJti(crypto.randomUUID()).setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));
    return { authorization: `Bearer ${token}` };
  };
  const listed = async (headers: Record<string, string>) => {
    const response = await fetch(`${gw.url}/v1/models`, { headers });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { object: string; data: Array<{ id: string; object: string; owned_by: string; created: number }> };
    assert.equal(body.object, 'list');
    return body.data;
  };
  const chat = (headers: Record<string, string>, model: string) =>
    postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, headers);

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(`
providers:
  openai:
    baseUrl: ${fake.baseUrl}
    apiKey: sk-upstream
models:
${MODELS.map((id) => `  - id: ${id}\n    provider: openai\n    context_window: 128000`).join('\n')}
  - id: m-disabled
    provider: openai
    enabled: false
pipelines:
  - name: default
    routes: [/v1/chat/completions, /v1/models]
    plugins: [auth, ip-allow]
`, { env: { AIGW_JWT_SECRET: SECRET } });

    const org = await admin('POST', '/organizations', { name: 'Eng' });
    orgId = org.body.id;
    // The organization allows three models and sends m-large to m-small.
    const orgPolicy = await admin('PUT', `/organizations/${orgId}/policy`, {
      models: ['m-small', 'm-medium', 'm-xl'],
      modelOverrides: { 'm-large': 'm-small', 'gpt-alias': 'm-medium' },
      rateLimits: { requestsPerMinute: 100 },
    });
    assert.equal(orgPolicy.status, 200, JSON.stringify(orgPolicy.body));
    const dept = await admin('POST', '/departments', { organizationId: orgId, name: 'ML' });
    deptId = dept.body.id;
    // The department narrows to two, tries to widen with m-large (the organization lacks it), and sends
    // m-xl to m-medium.
    const deptPolicy = await admin('PUT', `/departments/${deptId}/policy`, {
      models: ['m-small', 'm-medium', 'm-large'],
      modelOverrides: { 'm-xl': 'm-medium' },
    });
    assert.equal(deptPolicy.status, 200, JSON.stringify(deptPolicy.body));

    callers.push(
      { name: 'key without organization', headers: await keyFor({}) },
      { name: 'key in the organization', headers: await keyFor({ organizationId: orgId }) },
      { name: 'key in the department', headers: await keyFor({ organizationId: orgId, departmentId: deptId }) },
      { name: 'JWT in the department', headers: await jwtFor({ organizationId: orgId, departmentId: deptId }) },
      { name: 'JWT without organization', headers: await jwtFor({}) },
    );
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('the lists each caller gets', async () => {
    const ids = async (i: number) => (await listed(callers[i]!.headers)).map((m) => m.id);
    assert.deepEqual(await ids(0), ['m-large', 'm-medium', 'm-small', 'm-xl']);
    // Organization: its three, plus m-large and gpt-alias, which its overrides remap to allowed models.
    assert.deepEqual(await ids(1), ['gpt-alias', 'm-large', 'm-medium', 'm-small', 'm-xl']);
    // Department: m-small and m-medium only; m-large (-> m-small) and m-xl (-> m-medium) by override.
    assert.deepEqual(await ids(2), ['gpt-alias', 'm-large', 'm-medium', 'm-small', 'm-xl']);
    assert.deepEqual(await ids(3), await ids(2));
    assert.deepEqual(await ids(4), await ids(0));
  });

  test('a Model object has the spec fields', async () => {
    const [model] = (await listed(callers[0]!.headers)).filter((m) => m.id === 'm-small');
    assert.deepEqual(Object.keys(model!).sort(), ['capabilities', 'context_window', 'created', 'id', 'max_output_tokens', 'object', 'owned_by']);
    assert.equal(model!.object, 'model');
    assert.equal(model!.owned_by, 'openai');
    assert.ok(Number.isInteger(model!.created) && model!.created > 1_700_000_000);
    // Without a `capabilities` entry, a model lists what its provider serves, named as the capabilities a key
    // needs for it (OpenAI so far: chat, legacy completions, embeddings, audio for transcription and translation,
    // tts for speech).
    assert.deepEqual((model as unknown as { capabilities: string[] }).capabilities, ['chat', 'completions', 'embeddings', 'audio', 'tts', 'images', 'video-generation', 'realtime']);
    assert.equal((model as unknown as { context_window: number }).context_window, 128000);
  });

  test('/v1/models equals what routing accepts, for every caller and every model id', async () => {
    const candidates = [...MODELS, 'gpt-alias', 'm-disabled', 'no-such-model'];
    for (const caller of callers) {
      const accepted = new Set((await listed(caller.headers)).map((m) => m.id));
      for (const id of candidates) {
        const answer = await chat(caller.headers, id);
        const where = `${caller.name}, model ${id}`;
        if (accepted.has(id)) {
          assert.equal(answer.status, 200, `${where}: listed but refused: ${JSON.stringify(answer.body)}`);
        } else if (MODELS.includes(id)) {
          assert.equal(answer.status, 403, `${where}: not listed but answered ${answer.status}`);
          assert.equal(answer.body.error.code, 'MODEL_NOT_ALLOWED', where);
        } else {
          assert.equal(answer.status, 404, `${where}: answered ${answer.status}`);
          assert.equal(answer.body.error.code, 'MODEL_NOT_FOUND', where);
        }
      }
    }
  });

  test('overrides decide what is sent upstream: the department wins, the organization applies below it', async () => {
    const dept = callers[2]!.headers;
    const org = callers[1]!.headers;
    const sent = async (headers: Record<string, string>, model: string) => {
      const answer = await chat(headers, model);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return { upstream: fake.requests.at(-1)!.body.model, header: answer.headers.get('x-model') };
    };
    assert.deepEqual(await sent(dept, 'm-xl'), { upstream: 'm-medium', header: 'm-medium' });
    assert.deepEqual(await sent(org, 'm-xl'), { upstream: 'm-xl', header: 'm-xl' });
    assert.deepEqual(await sent(dept, 'm-large'), { upstream: 'm-small', header: 'm-small' });
    assert.deepEqual(await sent(org, 'gpt-alias'), { upstream: 'm-medium', header: 'm-medium' });
  });

  test('a department cannot widen: m-large in its list stays refused where no override sends it elsewhere', async () => {
    // Drop the organization's m-large override: the department's list names m-large, the organization's does not.
    const changed = await admin('PUT', `/organizations/${orgId}/policy`, { models: ['m-small', 'm-medium', 'm-xl'] });
    assert.equal(changed.status, 200);
    try {
      const answer = await chat(callers[2]!.headers, 'm-large');
      assert.equal(answer.status, 403);
      assert.equal(answer.body.error.code, 'MODEL_NOT_ALLOWED');
      assert.deepEqual(answer.body.error.details, { model: 'm-large' });
      assert.ok(!(await listed(callers[2]!.headers)).some((m) => m.id === 'm-large'));
    } finally {
      await admin('PUT', `/organizations/${orgId}/policy`, {
        models: ['m-small', 'm-medium', 'm-xl'],
        modelOverrides: { 'm-large': 'm-small', 'gpt-alias': 'm-medium' },
        rateLimits: { requestsPerMinute: 100 },
      });
    }
  });

  test('a policy change holds on the next request (the cached entry is dropped on write)', async () => {
    const key = callers[1]!.headers;
    assert.equal((await chat(key, 'm-medium')).status, 200);
    await admin('PUT', `/organizations/${orgId}/policy`, { models: ['m-small'] });
    try {
      const refused = await chat(key, 'm-medium');
      assert.equal(refused.status, 403);
      assert.deepEqual((await listed(key)).map((m) => m.id), ['m-small']);
    } finally {
      await admin('PUT', `/organizations/${orgId}/policy`, {
        models: ['m-small', 'm-medium', 'm-xl'],
        modelOverrides: { 'm-large': 'm-small', 'gpt-alias': 'm-medium' },
        rateLimits: { requestsPerMinute: 100 },
      });
    }
    assert.equal((await chat(key, 'm-medium')).status, 200);
  });

  test('a JWT naming an organization of another tenant, or a department outside its organization, is refused', async () => {
    const tenant = await admin('POST', '/tenants', { id: 'other', name: 'Other' });
    assert.equal(tenant.status, 201);
    const foreign = await jwtFor({ tenantId: 'other', organizationId: orgId });
    const answer = await chat(foreign, 'm-small');
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, 'AUTH_INVALID_TOKEN');
    const strayDept = await jwtFor({ departmentId: deptId });
    assert.equal((await chat(strayDept, 'm-small')).status, 401);
  });
});
