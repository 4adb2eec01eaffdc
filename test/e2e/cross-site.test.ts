/**
 * Cross-site request forgery: a browser attaches the access_token cookie to a form another site posts. Every
 * state-changing request authenticated by that cookie, on the admin API and the data plane (the passthrough
 * included), needs a same-origin Origin or Sec-Fetch-Site: same-origin, and a JSON content type. Reads and
 * bearer credentials are unaffected.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const JWT_SECRET = 'cross-site-test-jwt-secret-0123456789-abcdef';
const EVIL = 'https://evil.example';
const FORM = 'application/x-www-form-urlencoded';

const mint = (claims: Record<string, unknown>) => new SignJWT({ type: 'access', tenantId: 'default', jti: `jti-${Math.random()}`, ...claims })
  .setProtectedHeader({ alg: 'HS256' }).setSubject('dashboard-user').setExpirationTime('1h')
  .sign(new TextEncoder().encode(JWT_SECRET));

interface Answer {
  status: number;
  body: any;
}

async function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** A POST with the Host header as given; resolves with the status. */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function assertCrossSiteRefusal(answer: Answer, reason: string): void {
  const shown = JSON.stringify(answer.body);
  assert.equal(answer.status, 403, shown);
  assert.equal(answer.body.error.code, 'AUTH_FORBIDDEN', shown);
  assert.equal(answer.body.error.details.reason, reason, shown);
}

describe('cookie-authenticated writes from another site are refused', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let host: string;
  let adminCookie: string;
  let userCookie: string;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl, `  - name: passthrough
    routes: [/proxy]
    plugins: [auth]
auth:
  jwt:
    capabilities: [chat, proxy]
`), { env: { AIGW_JWT_SECRET: JWT_SECRET } });
    host = new URL(gw.url).host;
    adminCookie = `access_token=${await mint({ role: 'admin' })}`;
    userCookie = `access_token=${await mint({})}`;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function newKeyId(): Promise<string> {
    const r = await send(`${gw.url}/admin/v1/keys`, 'POST', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, '{"name":"target"}');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id;
  }

  const keyStatus = async (id: string) => (await send(`${gw.url}/admin/v1/keys/${id}`, 'GET', { authorization: `Bearer ${ADMIN_TOKEN}` })).body.status;

  test('admin: a cross-site form POST with only the cookie does not revoke a key', async () => {
    const id = await newKeyId();
    const revoke = `${gw.url}/admin/v1/keys/${id}/revoke`;
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, origin: EVIL, 'content-type': FORM }, 'x=1'), 'cross_site_request');
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, 'sec-fetch-site': 'cross-site', origin: EVIL }), 'cross_site_request');
    // A sibling subdomain is same-site, not same-origin; Sec-Fetch-Site decides over an Origin that matches.
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, 'sec-fetch-site': 'same-site', origin: `http://${host}`, 'content-type': 'application/json' }), 'cross_site_request');
    // No evidence of the origin at all (a non-browser client, or a browser that sends neither): refused.
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, 'content-type': 'application/json' }), 'cross_site_request');
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, origin: 'null', 'content-type': 'application/json' }), 'cross_site_request');
    // Same origin but a form's content type: a JSON type is what a form cannot send.
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, origin: `http://${host}`, 'content-type': FORM }, 'x=1'), 'cookie_write_not_json');
    assertCrossSiteRefusal(await send(revoke, 'POST', { cookie: adminCookie, origin: `http://${host}` }), 'cookie_write_not_json');
    assert.equal(await keyStatus(id), 'active');
  });

  test('admin: same-origin JSON writes with the cookie work; cookie reads and bearer writes need no origin', async () => {
    const id = await newKeyId();
    const json = { 'content-type': 'application/json' };
    const created = await send(`${gw.url}/admin/v1/keys`, 'POST', { cookie: adminCookie, origin: `http://${host}`, ...json }, '{"name":"same-origin"}');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const viaFetchMetadata = await send(`${gw.url}/admin/v1/keys`, 'POST', { cookie: adminCookie, 'sec-fetch-site': 'same-origin', ...json }, '{"name":"fetch-metadata"}');
    assert.equal(viaFetchMetadata.status, 201, JSON.stringify(viaFetchMetadata.body));
    // The default port of the Origin's scheme may be written out in Host (fetch cannot set Host: node:http can).
    const headers = { cookie: adminCookie, origin: 'https://gateway.example', host: 'gateway.example:443', ...json };
    assert.equal(await rawPost(`${gw.url}/admin/v1/keys`, headers, '{"name":"port"}'), 201);
    assert.equal(await rawPost(`${gw.url}/admin/v1/keys`, { ...headers, host: 'gateway.example:8443' }, '{"name":"port"}'), 403);
    assert.equal((await send(`${gw.url}/admin/v1/keys/${id}`, 'GET', { cookie: adminCookie, origin: EVIL })).status, 200);
    const bearer = await send(`${gw.url}/admin/v1/keys/${id}/revoke`, 'POST', { authorization: `Bearer ${ADMIN_TOKEN}`, origin: EVIL, 'content-type': FORM }, 'x=1');
    assert.equal(bearer.status, 200, JSON.stringify(bearer.body));
    assert.equal(await keyStatus(id), 'revoked');
  });

  test('data plane: a cross-site POST with the cookie reaches no upstream, on chat and on the passthrough', async () => {
    const before = fake.requests.length;
    const chatBody = JSON.stringify({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    assertCrossSiteRefusal(await send(`${gw.url}/v1/chat/completions`, 'POST', { cookie: userCookie, origin: EVIL, 'content-type': 'text/plain' }, chatBody), 'cross_site_request');
    assertCrossSiteRefusal(await send(`${gw.url}/proxy/openai/files`, 'POST', { cookie: userCookie, origin: EVIL, 'content-type': FORM }, 'purpose=fine-tune'), 'cross_site_request');
    assertCrossSiteRefusal(await send(`${gw.url}/proxy/openai/files/file-1`, 'DELETE', { cookie: userCookie, 'sec-fetch-site': 'cross-site' }), 'cross_site_request');
    assert.equal(fake.requests.length, before, 'a forged request reached the upstream');

    const sameOrigin = await send(`${gw.url}/v1/chat/completions`, 'POST', { cookie: userCookie, origin: `http://${host}`, 'content-type': 'application/json' }, chatBody);
    assert.equal(sameOrigin.status, 200, JSON.stringify(sameOrigin.body));
    const bearer = await send(`${gw.url}/v1/chat/completions`, 'POST', { authorization: `Bearer ${userCookie.slice('access_token='.length)}`, origin: EVIL, 'content-type': 'application/json' }, chatBody);
    assert.equal(bearer.status, 200, JSON.stringify(bearer.body));
    assert.equal((await send(`${gw.url}/v1/models`, 'GET', { cookie: userCookie, origin: EVIL })).status, 200);
  });
});
