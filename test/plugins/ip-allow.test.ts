/** The ip-allow plugin through real in-process gateways: keys from the admin API, requests from loopback. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const hello = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };

function ipAllowConfig(baseUrl: string, extra = ''): string {
  const text = chatConfig(baseUrl, extra);
  assert.ok(text.includes('plugins: [auth]'));
  return text.replace('plugins: [auth]', 'plugins: [auth, ip-allow]');
}

function assertForbidden(r: { status: number; body: any }, clientIp: string): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body), ['error']);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message']);
  assert.equal(r.body.error.code, 'AUTH_FORBIDDEN');
  assert.equal(typeof r.body.error.message, 'string');
  assert.deepEqual(r.body.error.details, { reason: 'ip_not_allowed', clientIp });
}

describe('ip-allow', () => {
  let fake: FakeOpenAI;
  let direct: TestGateway;
  let proxied: TestGateway;

  const chat = (gw: TestGateway, key: string, headers: Record<string, string> = {}) =>
    postJson(`${gw.url}/v1/chat/completions`, hello, { authorization: `Bearer ${key}`, ...headers });

  before(async () => {
    fake = await startFakeOpenAI();
    direct = await startTestGateway(ipAllowConfig(fake.baseUrl));
    proxied = await startTestGateway(ipAllowConfig(fake.baseUrl, 'server:\n  trustProxy: true\n'));
  });
  after(async () => {
    await direct?.close();
    await proxied?.close();
    await fake?.close();
  });

  test('a key allowing 127.0.0.1 is served from loopback', async () => {
    const key = await direct.createKey({ allowedIps: ['127.0.0.1'] });
    const r = await chat(direct, key);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  test('a key allowing only 10.0.0.0/8: 403 AUTH_FORBIDDEN, and the provider is never called', async () => {
    const key = await direct.createKey({ allowedIps: ['10.0.0.0/8'] });
    const before = fake.requests.length;
    assertForbidden(await chat(direct, key), '127.0.0.1');
    assert.equal(fake.requests.length, before);
  });

  test('an empty list is unrestricted', async () => {
    const key = await direct.createKey({ allowedIps: [] });
    assert.equal((await chat(direct, key)).status, 200);
    const noField = await direct.createKey();
    assert.equal((await chat(direct, noField)).status, 200);
  });

  test('malformed entries are refused when a key is created or updated, each named (400 VALIDATION_ERROR)', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const malformed = ['127.0.0/8', '127.0.0.0/8', '127.0.0.256', '127.0.0.1/33', 'localhost'];
    const created = await postJson(`${direct.url}/admin/v1/keys`, { name: 'bad', allowedIps: malformed }, admin);
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.equal(created.body.error.code, 'VALIDATION_ERROR');
    const paths = (created.body.error.details as Array<{ path: string }>).map((issue) => issue.path);
    assert.deepEqual(paths, ['/allowedIps/0', '/allowedIps/2', '/allowedIps/3', '/allowedIps/4']);

    const key = await direct.createKey({ allowedIps: ['127.0.0.0/8'] });
    const listed = await fetch(`${direct.url}/admin/v1/keys`, { headers: admin }).then((r) => r.json()) as { data: Array<{ id: string; prefix: string }> };
    const id = listed.data.find((k) => key.startsWith(k.prefix))!.id;
    const patched = await fetch(`${direct.url}/admin/v1/keys/${id}`, {
      method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ allowedIps: ['10.0.0.0/8', 'nope'] }),
    });
    assert.equal(patched.status, 400);
    // The key keeps its list: still served from loopback.
    assert.equal((await chat(direct, key)).status, 200);
  });

  test('with trustProxy, X-Forwarded-For from loopback (a default trusted proxy) names the client', async () => {
    const tenNet = await proxied.createKey({ allowedIps: ['10.0.0.0/8'] });
    const loopback = await proxied.createKey({ allowedIps: ['127.0.0.1'] });
    assert.equal((await chat(proxied, tenNet, { 'x-forwarded-for': '10.1.2.3' })).status, 200);
    assertForbidden(await chat(proxied, loopback, { 'x-forwarded-for': '10.1.2.3' }), '10.1.2.3');
  });

  test('with trustProxy, a spoofed leftmost hop does not help: the rightmost untrusted hop is checked', async () => {
    const tenNet = await proxied.createKey({ allowedIps: ['10.0.0.0/8'] });
    assertForbidden(await chat(proxied, tenNet, { 'x-forwarded-for': '10.1.2.3, 203.0.113.7' }), '203.0.113.7');
  });

  test('without trustProxy the same header is ignored', async () => {
    const tenNet = await direct.createKey({ allowedIps: ['10.0.0.0/8'] });
    const loopback = await direct.createKey({ allowedIps: ['127.0.0.1'] });
    assertForbidden(await chat(direct, tenNet, { 'x-forwarded-for': '10.1.2.3' }), '127.0.0.1');
    assert.equal((await chat(direct, loopback, { 'x-forwarded-for': '10.1.2.3' })).status, 200);
  });

  test('a caller refused by auth never reaches ip-allow', async () => {
    const r = await postJson(`${direct.url}/v1/chat/completions`, hello);
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'AUTH_REQUIRED');
  });
});

describe('ip-allow with a narrower server.trustedProxies', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(ipAllowConfig(fake.baseUrl, 'server:\n  trustProxy: true\n  trustedProxies: [192.0.2.0/24]\n'));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('loopback is no longer a trusted proxy, so its X-Forwarded-For is ignored', async () => {
    const tenNet = await gw.createKey({ allowedIps: ['10.0.0.0/8'] });
    const r = await postJson(`${gw.url}/v1/chat/completions`, hello, { authorization: `Bearer ${tenNet}`, 'x-forwarded-for': '10.1.2.3' });
    assertForbidden(r, '127.0.0.1');
  });
});

describe('ip-allow configuration', () => {
  const env = { AIGW_DATA_DIR: '/tmp/aigw-unused' };
  const base = ipAllowConfig('http://127.0.0.1:9/v1');

  async function configError(text: string): Promise<ConfigError> {
    try {
      await parseConfig(text, { file: '/tmp/pipelines.yaml', display: 'pipelines.yaml', env });
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    assert.fail('expected a ConfigError');
  }

  test('server.trustedProxies defaults to loopback and private ranges', async () => {
    const { config } = await parseConfig(base, { file: '/tmp/pipelines.yaml', env });
    assert.deepEqual(config.server.trustedProxies, ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']);
    assert.deepEqual(config.pipelines[0]?.plugins.map((p) => p.name), ['auth', 'ip-allow']);
  });

  test('a malformed trustedProxies entry is a config error at its position', async () => {
    const err = await configError(`${base}server:\n  trustedProxies: [10.0.0.0/8, 10.0.0/8]\n`);
    assert.equal(err.issues.length, 1, err.message);
    assert.equal(err.issues[0]?.pointer, '/server/trustedProxies/1');
    assert.match(err.message, /^pipelines\.yaml:\d+:\d+ \/server\/trustedProxies\/1: not an IPv4\/IPv6 address or CIDR range: "10\.0\.0\/8"$/);
  });

  test('ip-allow listed before auth is a config error', async () => {
    const err = await configError(base.replace('plugins: [auth, ip-allow]', 'plugins: [ip-allow, auth]'));
    assert.equal(err.issues.length, 1, err.message);
    assert.equal(err.issues[0]?.pointer, '/pipelines/0/plugins/0');
    assert.equal(err.issues[0]?.message, 'plugin "ip-allow" requires "caller": list it after a plugin that provides it (provided by: auth)');
  });

  test('ip-allow takes no settings', async () => {
    const err = await configError(base.replace('plugins: [auth, ip-allow]', 'plugins: [auth, {ip-allow: {mode: strict}}]'));
    assert.equal(err.issues[0]?.pointer, '/pipelines/0/plugins/1/ip-allow/mode');
  });
});
