/**
 * What POST /v1/batches refuses before anything reaches a provider: bad request lines (each problem naming its
 * custom_id), an endpoint or provider without batches, a webhook URL the outbound rules refuse; and gateway file
 * ids in a line's body: translated to the provider's, FILE_PROVIDER_MISMATCH for another provider's file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { batchesConfig, startFakeBatchApis, TALLY_FILES, type FakeBatchApis } from '../fakes/batches.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const line = (custom_id: unknown, fields: Record<string, unknown> = {}) => ({
  custom_id, method: 'POST', url: '/v1/chat/completions', body: { model: 'small', messages: [{ role: 'user', content: 'hi' }] }, ...fields,
});

describe('/v1/batches refusals and file ids', () => {
  let fake: FakeBatchApis;
  let gw: TestGateway;
  let key: string;
  const submit = (body: unknown) => postJson(`${gw.url}/v1/batches`, body, { authorization: `Bearer ${key}` });
  const upstreamCalls = () => fake.requests.filter((r) => r.path.includes('batches') || r.path.endsWith('/files')).length;

  before(async () => {
    fake = await startFakeBatchApis();
    gw = await startTestGateway(batchesConfig(fake.origin).replace('providers:\n', `providers:\n  cohere: { baseUrl: ${fake.origin}/cohere, apiKey: co }\n`), { files: TALLY_FILES });
    key = await gw.createKey({ scopes: { capabilities: ['batch', 'files'] } });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('every bad line is named by its custom_id (or its index); nothing goes upstream', async () => {
    const before = upstreamCalls();
    const response = await submit({
      provider: 'openai', endpoint: '/v1/chat/completions',
      requests: [
        line('ok-1'),
        line('dup'), line('dup'),
        line('get-me', { method: 'GET' }),
        line('wrong-url', { url: '/v1/embeddings' }),
        line('no-model', { body: { messages: [] } }),
        line(42),
        'not an object',
        line('extra', { stream: true }),
      ],
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 'VALIDATION_ERROR');
    const details = response.body.error.details as Array<{ path: string; message: string }>;
    const byPath = Object.fromEntries(details.map((d) => [d.path, d.message]));
    assert.match(byPath['/requests/2/custom_id']!, /^request "dup": custom_id is used by request line 1 too/);
    assert.match(byPath['/requests/3/method']!, /^request "get-me": method must be POST/);
    assert.match(byPath['/requests/4/url']!, /^request "wrong-url": url must be the batch's endpoint/);
    assert.match(byPath['/requests/5/body/model']!, /^request "no-model": body.model/);
    assert.match(byPath['/requests/6/custom_id']!, /^request line 6: custom_id must be a string/);
    assert.match(byPath['/requests/7']!, /^request line 7: must be an object/);
    assert.match(byPath['/requests/8/stream']!, /^request "extra": stream is not a field/);
    assert.equal(details.length, 7);
    assert.match(response.body.error.message, /7 problem\(s\) in the request lines; the first: request "dup"/);
    assert.equal(upstreamCalls(), before);
  });

  test('the body\'s own fields: provider, endpoint, requests bounds, webhook URL', async () => {
    const empty = await submit({ provider: 'openai', endpoint: '/v1/rerank', requests: [], metadata: 'x' });
    assert.deepEqual(empty.body.error.details.map((d: { path: string }) => d.path).sort(), ['/endpoint', '/metadata', '/requests']);
    const tooMany = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: Array.from({ length: 50_001 }, (_, i) => line(`l${i}`)) });
    assert.deepEqual([tooMany.status, tooMany.body.error.details[0].path], [400, '/requests']);
    const unknown = await submit({ provider: 'nope', endpoint: '/v1/chat/completions', requests: [line('a')] });
    assert.deepEqual([unknown.status, unknown.body.error.details[0].path], [400, '/provider']);
    const noBatchApi = await submit({ provider: 'cohere', endpoint: '/v1/chat/completions', requests: [line('a')] });
    assert.deepEqual([noBatchApi.status, noBatchApi.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
    const wrongEndpoint = await submit({ provider: 'anthropic', endpoint: '/v1/chat/completions', requests: [line('a')] });
    assert.deepEqual([wrongEndpoint.status, wrongEndpoint.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
    assert.match(wrongEndpoint.body.error.message, /takes \/v1\/messages/);
    const privateHook = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('a')], completion_webhook_url: 'http://10.0.0.7/hook' });
    assert.deepEqual([privateHook.status, privateHook.body.error.details[0].path], [400, '/completion_webhook_url']);
    assert.match(privateHook.body.error.details[0].message, /private, loopback/);
    const withCredentials = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('a')], completion_webhook_url: 'https://u:p@hooks.example.com/' });
    assert.match(withCredentials.body.error.details[0].message, /user name or password/);
  });

  test('input_file_id: a gateway file id goes as the provider\'s; another provider\'s file is FILE_PROVIDER_MISMATCH naming the line', async () => {
    const upload = (provider: string) => postJson(`${gw.url}/v1/files`, { provider, purpose: 'user_data', filename: 'a.txt', mime_type: 'text/plain', content_base64: Buffer.from('x').toString('base64') }, { authorization: `Bearer ${key}` });
    const openaiFile = (await upload('openai')).body;
    const anthropicFile = (await upload('anthropic')).body;
    const providerId = [...fake.files.entries()].find(([, f]) => f.purpose === 'user_data')![0];

    const ok = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('f-1', { body: { model: 'small', messages: [], input_file_id: openaiFile.id } })] });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const sent = fake.batches.get(ok.body.provider_batch_id)!.lines[0]!;
    assert.equal(sent.body.input_file_id, providerId);

    const before = upstreamCalls();
    const mismatch = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('f-1'), line('f-2', { body: { model: 'small', messages: [], input_file_id: anthropicFile.id } })] });
    assert.deepEqual([mismatch.status, mismatch.body.error.code], [400, 'FILE_PROVIDER_MISMATCH']);
    assert.match(mismatch.body.error.message, /^request "f-2": File file-.* was uploaded to anthropic/);
    assert.equal(mismatch.body.error.details.custom_id, 'f-2');
    const missing = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('f-3', { body: { model: 'small', input_file_id: 'file-00000000-0000-0000-0000-000000000000' } })] });
    assert.deepEqual([missing.status, missing.body.error.code, missing.body.error.details.custom_id], [404, 'NOT_FOUND', 'f-3']);
    assert.equal(upstreamCalls(), before);
  });

  test('a line\'s model resolves as routing resolves it for the caller, errors naming the line', async () => {
    const before = upstreamCalls();
    const unknown = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('m-1'), line('m-2', { body: { model: 'gpt-nope', messages: [] } })] });
    assert.deepEqual([unknown.status, unknown.body.error.code, unknown.body.error.details.custom_id], [404, 'MODEL_NOT_FOUND', 'm-2']);
    assert.match(unknown.body.error.message, /^request "m-2": Model "gpt-nope" is not configured/);
    const elsewhere = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('m-3', { body: { model: 'claude', messages: [] } })] });
    assert.deepEqual([elsewhere.status, elsewhere.body.error.code], [400, 'CAPABILITY_NOT_SUPPORTED']);
    assert.match(elsewhere.body.error.message, /^request "m-3": Model "claude" is not served by openai/);

    const mixed = await submit({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('m-4'), line('m-5', { body: { model: 'other', messages: [] } })] });
    assert.deepEqual([mixed.status, mixed.body.error.details[0].path], [400, '/requests/1/body/model']);
    assert.match(mixed.body.error.details[0].message, /^request "m-5": model "other" differs from the batch's model "small"/);

    const admin = (method: string, path: string, body: unknown) => fetch(`${gw.url}/admin/v1${path}`, {
      method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    }).then(async (r) => (await r.json()) as { id: string });
    const org = await admin('POST', '/organizations', { name: 'Batchers' });
    await admin('PUT', `/organizations/${org.id}/policy`, { models: ['small'], modelOverrides: { cheap: 'small' } });
    const orgKey = await gw.createKey({ organizationId: org.id, scopes: { capabilities: ['batch'] } });
    const asOrg = (body: unknown) => postJson(`${gw.url}/v1/batches`, body, { authorization: `Bearer ${orgKey}` });
    const refused = await asOrg({ provider: 'anthropic', endpoint: '/v1/messages', requests: [{ custom_id: 'p-1', method: 'POST', url: '/v1/messages', body: { model: 'claude', max_tokens: 5, messages: [] } }] });
    assert.deepEqual([refused.status, refused.body.error.code, refused.body.error.details.custom_id], [403, 'MODEL_NOT_ALLOWED', 'p-1']);
    assert.equal(upstreamCalls(), before);
    const overridden = await asOrg({ provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('p-2', { body: { model: 'cheap', messages: [] } })] });
    assert.equal(overridden.status, 200, JSON.stringify(overridden.body));
    assert.equal(fake.batches.get(overridden.body.provider_batch_id)!.lines[0]!.body.model, 'gpt-4o-mini', 'the override\'s model, by its upstream name');
  });

  test('without the batch capability: 403', async () => {
    const filesOnly = await gw.createKey({ scopes: { capabilities: ['files'] } });
    const response = await postJson(`${gw.url}/v1/batches`, { provider: 'openai', endpoint: '/v1/chat/completions', requests: [line('a')] }, { authorization: `Bearer ${filesOnly}` });
    assert.deepEqual([response.status, response.body.error.code], [403, 'AUTH_FORBIDDEN']);
  });
});
