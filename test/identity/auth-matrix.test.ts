/**
 * The identity matrix: every row of the spec's "Authentication and authorization errors" table, algorithm
 * confusion, which credential wins when several are sent, capability scoping, and the JWT secret's config
 * rule, each through a real in-process gateway and its exact status, code and canonical envelope.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT, type JWTPayload } from 'jose';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import {
  CAPABILITIES, CAPABILITY_ENDPOINTS, capabilityFor, EXTENSION_CAPABILITY_ENDPOINTS, SPEC_CAPABILITIES as CODE_SPEC_CAPABILITIES, SPEC_CAPABILITY_ENDPOINTS, SPEC_CAPABILITY_EXTRA_PATHS,
} from '../../core/config/capabilities.ts';
import { endpoints } from '../../core/api/endpoints.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const SECRET = 'auth-matrix-secret-0123456789abcdefghij';
const OTHER_SECRET = 'auth-matrix-other-secret-0123456789abcdef';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const hello = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };

/** The spec's capability table, copied from the spec text so that the code's table is held to it. */
const SPEC_TABLE: Record<string, string[]> = {
  chat: ['/v1/chat/completions', '/v1/messages'],
  completions: ['/v1/completions'],
  embeddings: ['/v1/embeddings'],
  audio: ['/v1/audio/transcriptions', '/v1/audio/translations'],
  tts: ['/v1/audio/speech'],
  images: ['/v1/images/generations'],
  rerank: ['/v1/rerank'],
  'video-generation': ['/v1/video/generations'],
  files: ['/v1/files'],
  batch: ['/v1/batches'],
  'vector-stores': ['/v1/vector_stores'],
  responses: ['/v1/responses'],
  realtime: ['/v1/realtime/sessions', '/v1/realtime/connect'],
  'usage:read': ['/v1/usage'],
  'budget:read': ['/v1/budget'],
};
const SPEC_CAPABILITIES = Object.keys(SPEC_TABLE);

/** Every credential minted here: none may ever reach the upstream. */
const credentials = new Set<string>();

interface Answer {
  status: number;
  body: any;
}

/** Exact status and code, in the canonical envelope with exactly {code, message, details}, not echoing the credential. */
function assertError(r: Answer, status: number, code: string, presented: string[] = []): void {
  const seen = JSON.stringify(r.body);
  assert.equal(r.status, status, seen);
  assert.ok(r.body && typeof r.body === 'object', seen);
  assert.deepEqual(Object.keys(r.body), ['error'], seen);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message'], seen);
  assert.equal(r.body.error.code, code, seen);
  assert.equal(typeof r.body.error.message, 'string');
  assert.ok(r.body.error.message.length > 0);
  for (const value of presented) if (value.length >= 8) assert.ok(!seen.includes(value), `the error echoes the credential: ${seen}`);
}

function assertOk(r: Answer, what = ''): void {
  assert.equal(r.status, 200, `${what} ${JSON.stringify(r.body)}`);
}

const nowSec = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const hmac = (hash: 'sha256' | 'sha384' | 'sha512', secret: string, input: string) => createHmac(hash, secret).update(input).digest('base64url');

/** A claim set with every required claim; an override of undefined removes that claim. */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    sub: 'user-1', tenantId: 'default', type: 'access', jti: `jti-${randomUUID()}`, iat: nowSec(), exp: nowSec() + 3600, ...overrides,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return payload;
}

/** An HS256 token signed by jose. */
async function mint(overrides: Record<string, unknown> = {}, secret = SECRET): Promise<string> {
  const token = await new SignJWT(claims(overrides) as JWTPayload)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
  credentials.add(token);
  return token;
}

/** header.payload.signature put together by hand; `sign` gets the signing input. */
function handToken(header: Record<string, unknown>, payload: unknown, sign: (input: string) => string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const token = `${input}.${sign(input)}`;
  credentials.add(token);
  return token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** The cookie as the gateway's own dashboard sends it: cross-site cookie writes are refused (test/e2e/cross-site.test.ts). */
const cookie = (token: string) => ({ cookie: `access_token=${token}`, 'sec-fetch-site': 'same-origin' });

interface Harness {
  gw: TestGateway;
  chat(headers?: Record<string, string>): Promise<Answer>;
  models(headers?: Record<string, string>): Promise<Answer>;
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
  /** Creates a key through the admin API; the whole creation answer (id, key, scopes, ...). */
  createKey(fields?: Record<string, unknown>): Promise<Record<string, any>>;
}

function harness(gw: TestGateway): Harness {
  const admin = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${gw.url}/admin/v1${path}`, {
      method,
      headers: { ...ADMIN, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    gw,
    chat: (headers = {}) => postJson(`${gw.url}/v1/chat/completions`, hello, headers),
    async models(headers = {}) {
      const response = await fetch(`${gw.url}/v1/models`, { headers });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text
      }
      return { status: response.status, body };
    },
    admin,
    async createKey(fields = {}) {
      const created = await admin('POST', '/keys', { name: 'auth matrix', ...fields });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(typeof created.body.key, 'string');
      assert.equal(typeof created.body.id, 'string');
      credentials.add(created.body.key);
      return created.body;
    },
  };
}

/** Every header value the fake upstream has received, flattened. */
function upstreamHeaderText(fake: FakeOpenAI, from = 0): string {
  return fake.requests.slice(from).map((r) => JSON.stringify(r.headers)).join('\n');
}

let fake: FakeOpenAI;
before(async () => {
  fake = await startFakeOpenAI();
});
after(async () => {
  await fake.close();
});

describe('JWT auth on (HS256, every capability), driven by a movable clock', () => {
  let h: Harness;
  let offsetMs = 0;
  let key: string;

  before(async () => {
    const gw = await startTestGateway(chatConfig(fake.baseUrl), {
      env: { AIGW_JWT_SECRET: SECRET },
      clock: { now: () => Date.now() + offsetMs },
    });
    h = harness(gw);
    key = (await h.createKey()).key;
  });
  after(async () => {
    await h.gw.close();
  });

  /** Runs `body` with the gateway's clock moved by `ms`, and puts it back whatever happens. */
  async function withClockMoved(ms: number, body: () => Promise<void>): Promise<void> {
    offsetMs = ms;
    try {
      await body();
    } finally {
      offsetMs = 0;
    }
  }

  test('sanity: a key, a jose-signed JWT and a hand-made HS256 JWT all get 200 on chat and models', async () => {
    const jwt = await mint();
    const hand = handToken({ alg: 'HS256', typ: 'JWT' }, claims(), (input) => hmac('sha256', SECRET, input));
    for (const headers of [bearer(key), { 'x-api-key': key }, bearer(jwt), cookie(jwt), bearer(hand), cookie(hand)]) {
      assertOk(await h.chat(headers), JSON.stringify(Object.keys(headers)));
      assertOk(await h.models(headers));
    }
  });

  describe('401 AUTH_REQUIRED', () => {
    test('no credential at all, on chat and on GET /v1/models', async () => {
      assertError(await h.chat(), 401, 'AUTH_REQUIRED');
      assertError(await h.models(), 401, 'AUTH_REQUIRED');
    });

    test('cookies other than access_token, or an empty access_token, are no credential', async () => {
      assertError(await h.chat({ cookie: 'session=abc; other=1' }), 401, 'AUTH_REQUIRED');
      assertError(await h.chat({ cookie: 'access_token=' }), 401, 'AUTH_REQUIRED');
    });

    test('a valid JWT in x-api-key is ignored: alone it is no credential', async () => {
      const jwt = await mint();
      assertError(await h.chat({ 'x-api-key': jwt }), 401, 'AUTH_REQUIRED', [jwt]);
      assertError(await h.models({ 'x-api-key': jwt }), 401, 'AUTH_REQUIRED', [jwt]);
    });

    test('a JWT in x-api-key is ignored, not refused: the cookie beside it is used', async () => {
      const jwt = await mint();
      const bogus = handToken({ alg: 'HS256' }, claims(), () => 'not-a-signature');
      assertOk(await h.chat({ 'x-api-key': bogus, ...cookie(jwt) }));
    });
  });

  describe('401 AUTH_INVALID_TOKEN', () => {
    test('a garbage three-part token, and a token whose parts are not JSON', async () => {
      for (const token of ['abc.def.ghi', `${b64('not json')}.${b64('also not json')}.${b64('sig')}`, `${b64({ alg: 'HS256' })}.${b64('[1,2')}.${hmac('sha256', SECRET, 'x')}`]) {
        assertError(await h.chat(bearer(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
        assertError(await h.chat(cookie(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
      }
    });

    test('a bad signature: a signature of other claims, a tampered payload, a signature cut short', async () => {
      const good = await mint();
      const [header, payload, signature] = good.split('.') as [string, string, string];
      const other = (await mint({ sub: 'someone-else' })).split('.')[2]!;
      const tampered = `${header}.${b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'admin' })}.${signature}`;
      for (const token of [`${header}.${payload}.${other}`, tampered, `${header}.${payload}.${signature.slice(0, 20)}`, `${header}.${payload}.`]) {
        credentials.add(token);
        assertError(await h.chat(bearer(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
      }
      assertOk(await h.chat(bearer(good)));
    });

    test('a token signed with another secret (also when it has expired: the signature is checked first)', async () => {
      const wrong = await mint({}, OTHER_SECRET);
      assertError(await h.chat(bearer(wrong)), 401, 'AUTH_INVALID_TOKEN', [wrong]);
      assertError(await h.chat(cookie(wrong)), 401, 'AUTH_INVALID_TOKEN', [wrong]);
      const wrongAndExpired = await mint({ exp: nowSec() - 600 }, OTHER_SECRET);
      assertError(await h.chat(bearer(wrongAndExpired)), 401, 'AUTH_INVALID_TOKEN', [wrongAndExpired]);
    });

    for (const claim of ['sub', 'tenantId', 'jti']) {
      test(`a token without ${claim}, or with ${claim} empty or not a string`, async () => {
        for (const value of [undefined, '', 42, null]) {
          const token = await mint({ [claim]: value });
          const r = await h.chat(bearer(token));
          assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
          assert.deepEqual(r.body.error.details, { reason: `claim_${claim}` }, `${claim} = ${JSON.stringify(value)}`);
        }
      });
    }

    test('type other than "access", and type missing', async () => {
      for (const type of ['refresh', 'Access', 'id', '', 1, undefined]) {
        const token = await mint({ type });
        const r = await h.chat(bearer(token));
        assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
        assert.deepEqual(r.body.error.details, { reason: 'claim_type' }, `type = ${JSON.stringify(type)}`);
      }
    });

    test('a tenantId naming no tenant; once the tenant is created the same token is let in', async () => {
      const tenant = `ghost-${randomBytes(4).toString('hex')}`;
      const token = await mint({ tenantId: tenant });
      const r = await h.chat(bearer(token));
      assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
      assert.deepEqual(r.body.error.details, { reason: 'unknown_tenant' });
      assertError(await h.models(cookie(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
      const created = await h.admin('POST', '/tenants', { id: tenant, name: 'Ghost' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assertOk(await h.chat(bearer(token)));
    });

    test('an organizationId that is not in the token\'s tenant', async () => {
      const token = await mint({ organizationId: 'org_does_not_exist' });
      const r = await h.chat(bearer(token));
      assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
      assert.deepEqual(r.body.error.details, { reason: 'unknown_unit' });
    });

    test('a jti on the revocation list (POST /admin/v1/jwt/revocations), by bearer and by cookie', async () => {
      const jti = `revoke-me-${randomUUID()}`;
      const token = await mint({ jti });
      const sibling = await mint();
      assertOk(await h.chat(bearer(token)));
      const revoked = await postJson(`${h.gw.url}/admin/v1/jwt/revocations`, { jti }, ADMIN);
      assert.equal(revoked.status, 201, JSON.stringify(revoked.body));
      assert.equal(revoked.body.object, 'jwt_revocation');
      assert.equal(revoked.body.jti, jti);
      for (const headers of [bearer(token), cookie(token)]) {
        const r = await h.chat(headers);
        assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
        assert.deepEqual(r.body.error.details, { reason: 'revoked' });
      }
      assertError(await h.models(bearer(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
      // A freshly signed token carrying the same jti is refused too; other jtis are not affected.
      const reissued = await mint({ jti, sub: 'user-2' });
      assertError(await h.chat(bearer(reissued)), 401, 'AUTH_INVALID_TOKEN', [reissued]);
      assertOk(await h.chat(bearer(sibling)));
    });

    test('nbf in the future', async () => {
      const token = await mint({ nbf: nowSec() + 600 });
      assertError(await h.chat(bearer(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
    });
  });

  describe('401 AUTH_TOKEN_EXPIRED', () => {
    test('exp in the past, by bearer, by cookie and on GET /v1/models', async () => {
      const token = await mint({ iat: nowSec() - 7200, exp: nowSec() - 60 });
      for (const r of [await h.chat(bearer(token)), await h.chat(cookie(token)), await h.models(bearer(token))]) {
        assertError(r, 401, 'AUTH_TOKEN_EXPIRED', [token]);
      }
    });

    test('expiry is judged by the gateway clock (clockToleranceSeconds defaults to 0)', async () => {
      const token = await mint({ exp: nowSec() + 60 });
      assertOk(await h.chat(bearer(token)));
      await withClockMoved(120_000, async () => {
        assertError(await h.chat(bearer(token)), 401, 'AUTH_TOKEN_EXPIRED', [token]);
      });
      assertOk(await h.chat(bearer(token)));
    });
  });

  describe('algorithm confusion: all 401 AUTH_INVALID_TOKEN', () => {
    const refused = async (token: string, label: string) => {
      for (const headers of [bearer(token), cookie(token)]) {
        const r = await h.chat(headers);
        assert.equal(r.status, 401, `${label}: ${JSON.stringify(r.body)}`);
        assertError(r, 401, 'AUTH_INVALID_TOKEN', [token]);
      }
    };

    test('alg none, with an empty signature part and with a signature', async () => {
      for (const alg of ['none', 'None', 'NONE']) {
        await refused(handToken({ alg, typ: 'JWT' }, claims(), () => ''), `${alg}, empty signature`);
        await refused(handToken({ alg, typ: 'JWT' }, claims(), (input) => hmac('sha256', SECRET, input)), `${alg}, HMAC signature`);
        await refused(handToken({ alg, typ: 'JWT' }, claims(), () => b64('anything')), `${alg}, junk signature`);
      }
    });

    test('alg none with no signature part at all (two segments): not a JWT shape, so an invalid API key by bearer, an invalid token by cookie', async () => {
      const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}`;
      credentials.add(token);
      assertError(await h.chat(bearer(token)), 401, 'AUTH_INVALID_API_KEY', [token]);
      assertError(await h.chat(cookie(token)), 401, 'AUTH_INVALID_TOKEN', [token]);
    });

    test('HS384 and HS512 signed with the gateway\'s own secret', async () => {
      await refused(handToken({ alg: 'HS384', typ: 'JWT' }, claims(), (input) => hmac('sha384', SECRET, input)), 'HS384');
      await refused(handToken({ alg: 'HS512', typ: 'JWT' }, claims(), (input) => hmac('sha512', SECRET, input)), 'HS512');
      const viaJose = await new SignJWT(claims() as JWTPayload).setProtectedHeader({ alg: 'HS512' })
        .sign(new TextEncoder().encode(SECRET + SECRET));
      credentials.add(viaJose);
      await refused(viaJose, 'HS512 (jose)');
    });

    test('RS256 / ES256 / PS256 labels over an HMAC of the secret (the classic key confusion), and a lower-case hs256', async () => {
      for (const alg of ['RS256', 'ES256', 'PS256', 'hs256', 'HS256 ']) {
        await refused(handToken({ alg, typ: 'JWT' }, claims(), (input) => hmac('sha256', SECRET, input)), alg);
      }
    });

    test('a header without alg, and a critical header the gateway does not understand', async () => {
      await refused(handToken({ typ: 'JWT' }, claims(), (input) => hmac('sha256', SECRET, input)), 'no alg');
      await refused(handToken({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 }, claims(), (input) => hmac('sha256', SECRET, input)), 'crit');
    });
  });

  describe('401 AUTH_INVALID_API_KEY', () => {
    test('an unknown aigw_sk_ key, by Authorization and by x-api-key, and a real key with one character changed', async () => {
      const unknown = `aigw_sk_${randomBytes(32).toString('base64url')}`;
      const changed = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
      for (const presented of [unknown, changed, 'aigw_sk_', 'aigw_sk_x']) {
        assertError(await h.chat(bearer(presented)), 401, 'AUTH_INVALID_API_KEY', [presented]);
        assertError(await h.chat({ 'x-api-key': presented }), 401, 'AUTH_INVALID_API_KEY', [presented]);
      }
      assertError(await h.models(bearer(unknown)), 401, 'AUTH_INVALID_API_KEY', [unknown]);
    });

    test('a bearer of no known shape (the upstream key among them)', async () => {
      for (const presented of ['some-opaque-token', 'sk-upstream-secret', 'a.b', '....']) {
        assertError(await h.chat(bearer(presented)), 401, 'AUTH_INVALID_API_KEY', [presented]);
      }
      assertError(await h.chat({ 'x-api-key': 'some-opaque-token' }), 401, 'AUTH_INVALID_API_KEY');
    });

    test('a scheme other than Bearer, even around a valid key or JWT; bearer in lower case is fine', async () => {
      const jwt = await mint();
      for (const authorization of ['Basic dXNlcjpwYXNz', `Basic ${key}`, `Token ${key}`, key, `Bearer ${key} extra`, `Bearer`, `Digest ${jwt}`]) {
        assertError(await h.chat({ authorization }), 401, 'AUTH_INVALID_API_KEY', [key, jwt]);
      }
      assertOk(await h.chat({ authorization: `bearer ${key}` }));
    });
  });

  describe('401 AUTH_API_KEY_EXPIRED', () => {
    test('a key created with expiresAt in the past (creation accepts it); its record turns expired', async () => {
      const created = await h.createKey({ expiresAt: '2020-01-01T00:00:00.000Z' });
      assert.equal(created.status, 'active');
      assert.equal(created.expiresAt, '2020-01-01T00:00:00.000Z');
      for (const headers of [bearer(created.key), { 'x-api-key': created.key }]) {
        assertError(await h.chat(headers), 401, 'AUTH_API_KEY_EXPIRED', [created.key]);
      }
      assertError(await h.models(bearer(created.key)), 401, 'AUTH_API_KEY_EXPIRED', [created.key]);
      const record = await h.admin('GET', `/keys/${created.id}`);
      assert.equal(record.status, 200);
      assert.equal(record.body.status, 'expired');
      assertError(await h.chat(bearer(created.key)), 401, 'AUTH_API_KEY_EXPIRED', [created.key]);
    });

    test('a key that works until the gateway clock passes its expiresAt (a warm cache entry does not outlive it)', async () => {
      const created = await h.createKey({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      assertOk(await h.chat(bearer(created.key)));
      await withClockMoved(2 * 3_600_000, async () => {
        assertError(await h.chat(bearer(created.key)), 401, 'AUTH_API_KEY_EXPIRED', [created.key]);
      });
      // Expiry, once seen, is recorded: the key stays expired.
      assertError(await h.chat(bearer(created.key)), 401, 'AUTH_API_KEY_EXPIRED', [created.key]);
    });
  });

  describe('401 AUTH_API_KEY_REVOKED', () => {
    test('after POST /admin/v1/keys/:id/revoke, at once (the key was warm in the cache), by either header', async () => {
      const created = await h.createKey();
      assertOk(await h.chat(bearer(created.key)));
      const revoked = await h.admin('POST', `/keys/${created.id}/revoke`);
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.equal(revoked.body.status, 'revoked');
      assert.equal(revoked.body.key, undefined, 'the revocation answer must not carry the plaintext key');
      for (const headers of [bearer(created.key), { 'x-api-key': created.key }]) {
        assertError(await h.chat(headers), 401, 'AUTH_API_KEY_REVOKED', [created.key]);
      }
      assertError(await h.models(bearer(created.key)), 401, 'AUTH_API_KEY_REVOKED', [created.key]);
      const again = await h.admin('POST', `/keys/${created.id}/revoke`);
      assert.equal(again.status, 200);
      assertError(await h.chat(bearer(created.key)), 401, 'AUTH_API_KEY_REVOKED', [created.key]);
      // Other keys are not affected.
      assertOk(await h.chat(bearer(key)));
    });
  });

  describe('403 AUTH_FORBIDDEN and capabilities', () => {
    test('the default capability is chat', async () => {
      const created = await h.createKey();
      assert.deepEqual(created.scopes.capabilities, ['chat']);
      assertOk(await h.chat(bearer(created.key)));
    });

    test('key creation accepts each of the 15 spec capabilities', async () => {
      for (const capability of SPEC_CAPABILITIES) {
        const created = await h.createKey({ scopes: { capabilities: [capability] } });
        assert.deepEqual(created.scopes.capabilities, [capability]);
      }
      const all = await h.createKey({ scopes: { capabilities: SPEC_CAPABILITIES } });
      assert.deepEqual(all.scopes.capabilities, SPEC_CAPABILITIES);
      assertOk(await h.chat(bearer(all.key)));
    });

    test('key creation refuses an unknown capability: 400 VALIDATION_ERROR naming /scopes/capabilities/0', async () => {
      for (const unknown of ['chat:write', 'admin', 'CHAT', 'models']) {
        const r = await h.admin('POST', '/keys', { name: 'bad scope', scopes: { capabilities: [unknown] } });
        assertError(r, 400, 'VALIDATION_ERROR');
        assert.ok(Array.isArray(r.body.error.details), JSON.stringify(r.body));
        assert.deepEqual(r.body.error.details.map((i: { path: string }) => i.path), ['/scopes/capabilities/0'], JSON.stringify(r.body));
      }
      const second = await h.admin('POST', '/keys', { name: 'bad scope', scopes: { capabilities: ['chat', 'nope'] } });
      assertError(second, 400, 'VALIDATION_ERROR');
      assert.deepEqual(second.body.error.details.map((i: { path: string }) => i.path), ['/scopes/capabilities/1']);
    });

    test('an embeddings-only key: GET /v1/models 200, chat 403 with details {requiredCapability: chat}', async () => {
      const created = await h.createKey({ scopes: { capabilities: ['embeddings'] } });
      const listed = await h.models(bearer(created.key));
      assertOk(listed);
      assert.equal(listed.body.object, 'list');
      assert.deepEqual(listed.body.data.map((m: { id: string }) => m.id), ['gpt-4o-mini', 'plain']);
      for (const headers of [bearer(created.key), { 'x-api-key': created.key }]) {
        const r = await h.chat(headers);
        assertError(r, 403, 'AUTH_FORBIDDEN', [created.key]);
        assert.deepEqual(r.body.error.details, { requiredCapability: 'chat' });
      }
    });

    test('a key with no capability at all, and one with every capability but chat: 403 on chat, 200 on models', async () => {
      for (const capabilities of [[], SPEC_CAPABILITIES.filter((c) => c !== 'chat')]) {
        const created = await h.createKey({ scopes: { capabilities } });
        const r = await h.chat(bearer(created.key));
        assertError(r, 403, 'AUTH_FORBIDDEN', [created.key]);
        assert.deepEqual(r.body.error.details, { requiredCapability: 'chat' });
        assertOk(await h.models(bearer(created.key)));
      }
    });

    test('a JWT caller (default auth.jwt.capabilities: the spec\'s 15) gets 200 on chat and models', async () => {
      const jwt = await mint();
      assertOk(await h.chat(bearer(jwt)));
      const listed = await h.models(bearer(jwt));
      assertOk(listed);
      assert.equal(listed.body.object, 'list');
    });

    test('a 403 is decided before the body is read', async () => {
      const created = await h.createKey({ scopes: { capabilities: ['embeddings'] } });
      const r = await postJson(`${h.gw.url}/v1/chat/completions`, '{not json', bearer(created.key));
      assertError(r, 403, 'AUTH_FORBIDDEN');
    });
  });

  describe('precedence', () => {
    test('Authorization wins over x-api-key', async () => {
      const jwt = await mint();
      const bogus = `aigw_sk_${randomBytes(32).toString('base64url')}`;
      assertOk(await h.chat({ ...bearer(key), 'x-api-key': bogus }), 'valid bearer + bogus x-api-key');
      assertError(await h.chat({ ...bearer(bogus), 'x-api-key': key }), 401, 'AUTH_INVALID_API_KEY', [key]);
      assertOk(await h.chat({ ...bearer(jwt), 'x-api-key': bogus }), 'valid bearer JWT + bogus x-api-key');
      const forged = handToken({ alg: 'none' }, claims(), () => '');
      assertError(await h.chat({ ...bearer(forged), 'x-api-key': key }), 401, 'AUTH_INVALID_TOKEN', [key]);
      assertError(await h.chat({ authorization: 'Basic dXNlcjpwYXNz', 'x-api-key': key }), 401, 'AUTH_INVALID_API_KEY', [key]);
    });

    test('the access_token cookie alone works', async () => {
      const jwt = await mint();
      assertOk(await h.chat(cookie(jwt)));
      assertOk(await h.chat({ cookie: `theme=dark; access_token=${jwt}; lang=en`, 'sec-fetch-site': 'same-origin' }));
      assertOk(await h.models(cookie(jwt)));
    });

    test('Authorization wins over the cookie', async () => {
      const jwt = await mint();
      const expired = await mint({ exp: nowSec() - 60 });
      assertOk(await h.chat({ ...bearer(key), ...cookie('garbage') }), 'valid key bearer + garbage cookie');
      assertOk(await h.chat({ ...bearer(jwt), ...cookie(expired) }), 'valid JWT bearer + expired cookie');
      assertError(await h.chat({ ...bearer('aigw_sk_bogus'), ...cookie(jwt) }), 401, 'AUTH_INVALID_API_KEY', [jwt]);
      assertError(await h.chat({ ...bearer(expired), ...cookie(jwt) }), 401, 'AUTH_TOKEN_EXPIRED', [jwt]);
    });

    test('an API key in x-api-key wins over the cookie', async () => {
      const jwt = await mint();
      const expired = await mint({ exp: nowSec() - 60 });
      assertOk(await h.chat({ 'x-api-key': key, ...cookie(expired) }), 'valid x-api-key + expired cookie');
      assertOk(await h.chat({ 'x-api-key': key, ...cookie('garbage') }), 'valid x-api-key + garbage cookie');
      assertError(await h.chat({ 'x-api-key': 'aigw_sk_bogus', ...cookie(jwt) }), 401, 'AUTH_INVALID_API_KEY', [jwt]);
      const embeddingsOnly = (await h.createKey({ scopes: { capabilities: ['embeddings'] } })).key;
      const r = await h.chat({ 'x-api-key': embeddingsOnly, ...cookie(jwt) });
      assertError(r, 403, 'AUTH_FORBIDDEN', [jwt, embeddingsOnly]);
    });
  });

  test('neither the plaintext key nor the JWT ever reaches the upstream', async () => {
    const from = fake.requests.length;
    const jwt = await mint();
    for (const headers of [bearer(key), { 'x-api-key': key }, bearer(jwt), cookie(jwt), { 'x-api-key': jwt, ...cookie(jwt) }]) {
      assertOk(await h.chat(headers));
    }
    const fresh = fake.requests.slice(from);
    assert.equal(fresh.length, 5);
    for (const request of fresh) {
      assert.equal(request.headers.authorization, 'Bearer sk-upstream-secret');
      assert.equal(request.headers['x-api-key'], undefined);
      assert.equal(request.headers.cookie, undefined);
    }
    const seen = upstreamHeaderText(fake);
    assert.ok(fake.requests.length > 5);
    for (const credential of credentials) {
      assert.ok(!seen.includes(credential), `a credential reached the upstream: ${credential.slice(0, 16)}...`);
      const secretPart = credential.startsWith('aigw_sk_') ? credential.slice('aigw_sk_'.length) : credential.split('.')[2] ?? '';
      if (secretPart.length >= 16) assert.ok(!seen.includes(secretPart), 'part of a credential reached the upstream');
    }
    assert.ok(!seen.includes(SECRET));
  });
});

describe('JWT callers limited by auth.jwt.capabilities, with clockToleranceSeconds', () => {
  let h: Harness;

  before(async () => {
    const gw = await startTestGateway(chatConfig(fake.baseUrl, `auth:
  jwt:
    secret: ${SECRET}
    capabilities: ['embeddings', 'usage:read']
    clockToleranceSeconds: 30
`));
    h = harness(gw);
  });
  after(async () => {
    await h.gw.close();
  });

  test('a JWT caller without chat: 403 AUTH_FORBIDDEN {requiredCapability: chat} on chat, 200 on GET /v1/models', async () => {
    const jwt = await mint();
    for (const headers of [bearer(jwt), cookie(jwt)]) {
      const r = await h.chat(headers);
      assertError(r, 403, 'AUTH_FORBIDDEN', [jwt]);
      assert.deepEqual(r.body.error.details, { requiredCapability: 'chat' });
      assertOk(await h.models(headers));
    }
  });

  test('API keys are scoped by their own capabilities, not by auth.jwt.capabilities', async () => {
    const created = await h.createKey();
    assertOk(await h.chat(bearer(created.key)));
  });

  test('the tolerance lets a token 10 s past exp in, not one 120 s past', async () => {
    const recent = await mint({ exp: nowSec() - 10 });
    assertOk(await h.models(bearer(recent)));
    const old = await mint({ exp: nowSec() - 120 });
    assertError(await h.models(bearer(old)), 401, 'AUTH_TOKEN_EXPIRED', [old]);
  });

  test('invalid tokens are still invalid before capabilities are looked at', async () => {
    const wrong = await mint({}, OTHER_SECRET);
    assertError(await h.chat(bearer(wrong)), 401, 'AUTH_INVALID_TOKEN', [wrong]);
  });
});

describe('JWT auth off (no secret)', () => {
  let h: Harness;

  before(async () => {
    h = harness(await startTestGateway(chatConfig(fake.baseUrl)));
  });
  after(async () => {
    await h.gw.close();
  });

  test('a well-signed JWT is 401 AUTH_INVALID_TOKEN, by bearer and by cookie, on chat and models', async () => {
    const jwt = await mint();
    for (const headers of [bearer(jwt), cookie(jwt)]) {
      const r = await h.chat(headers);
      assertError(r, 401, 'AUTH_INVALID_TOKEN', [jwt]);
      assert.deepEqual(r.body.error.details, { reason: 'jwt_disabled' });
      assertError(await h.models(headers), 401, 'AUTH_INVALID_TOKEN', [jwt]);
    }
  });

  test('a JWT in x-api-key is still ignored (no credential), and API keys still work', async () => {
    const jwt = await mint();
    assertError(await h.chat({ 'x-api-key': jwt }), 401, 'AUTH_REQUIRED', [jwt]);
    const created = await h.createKey();
    assertOk(await h.chat({ 'x-api-key': created.key }));
    assertOk(await h.chat({ ...bearer(created.key), ...cookie(jwt) }));
  });
});

describe('the capability table', () => {
  test('is the spec\'s table, with the 15 spec capabilities in its order, then the one gateway extension (proxy)', () => {
    assert.deepEqual(SPEC_CAPABILITY_ENDPOINTS, SPEC_TABLE);
    assert.deepEqual(CODE_SPEC_CAPABILITIES, SPEC_CAPABILITIES);
    assert.equal(CODE_SPEC_CAPABILITIES.length, 15);
    // Beyond the spec: the passthrough to providers' native APIs (docs/security.md). Nothing else is added.
    assert.deepEqual(EXTENSION_CAPABILITY_ENDPOINTS, { proxy: ['/proxy'] });
    assert.deepEqual(CAPABILITY_ENDPOINTS, { ...SPEC_TABLE, proxy: ['/proxy'] });
    assert.deepEqual(CAPABILITIES, [...SPEC_CAPABILITIES, 'proxy']);
    assert.equal(capabilityFor('/proxy'), 'proxy');
    assert.equal(capabilityFor('/proxy/openai/v1/files'), 'proxy');
    assert.equal(capabilityFor('/proxyX'), null);
    // The image-progress WebSocket is part of images, not a capability of its own.
    assert.deepEqual(SPEC_CAPABILITY_EXTRA_PATHS, { '/image-progress': 'images' });
    assert.equal(capabilityFor('/image-progress'), 'images');
  });

  test('capabilityFor: every listed path and the paths under it; nothing else', () => {
    for (const [capability, paths] of Object.entries(SPEC_TABLE)) {
      for (const path of paths) {
        assert.equal(capabilityFor(path), capability, path);
        assert.equal(capabilityFor(`${path}/some-id`), capability, `${path}/some-id`);
      }
    }
    assert.equal(capabilityFor('/v1/files/file-1/content'), 'files');
    assert.equal(capabilityFor('/v1/batches/b1/cancel'), 'batch');
    assert.equal(capabilityFor('/v1/vector_stores/vs1/search'), 'vector-stores');
    for (const path of ['/v1/models', '/v1/models/gpt-4o', '/v1/chat', '/v1/chat/completionsX', '/v1/filesystem', '/v1/usage-report', '/v1/audio', '/health', '/']) {
      assert.equal(capabilityFor(path), null, path);
    }
  });

  test('every endpoint declares exactly capabilityFor(its path); GET /v1/models declares null', () => {
    assert.ok(endpoints.length >= 2);
    for (const endpoint of endpoints) {
      assert.equal(endpoint.capability, capabilityFor(endpoint.path), `${endpoint.method} ${endpoint.path}`);
    }
    const models = endpoints.find((e) => e.method === 'GET' && e.path === '/v1/models');
    assert.ok(models);
    assert.equal(models.capability, null);
    const chat = endpoints.find((e) => e.method === 'POST' && e.path === '/v1/chat/completions');
    assert.ok(chat);
    assert.equal(chat.capability, 'chat');
  });
});

describe('config: auth.jwt', () => {
  const FILE = '/tmp/aigw-auth-matrix/pipelines.yaml';
  const parse = (extra: string, env: NodeJS.ProcessEnv = {}) =>
    parseConfig(chatConfig('http://127.0.0.1:9/v1', extra), { file: FILE, display: 'pipelines.yaml', env, cwd: '/tmp/aigw-auth-matrix' });
  const configError = async (extra: string, env: NodeJS.ProcessEnv = {}): Promise<ConfigError> => {
    try {
      await parse(extra, env);
    } catch (err) {
      if (err instanceof ConfigError) return err;
      assert.fail(`expected a ConfigError, got ${(err as Error).name}: ${(err as Error).message}`);
    }
    assert.fail('expected a ConfigError, but the config was accepted');
  };
  const jwtBlock = (lines: string) => `auth:\n  jwt:\n${lines}`;

  test('a secret shorter than 32 characters is refused at /auth/jwt/secret, from YAML and from AIGW_JWT_SECRET', async () => {
    const short = 'x'.repeat(31);
    const fromYaml = await configError(jwtBlock(`    secret: ${short}\n`));
    assert.deepEqual(fromYaml.issues.map((i) => i.pointer), ['/auth/jwt/secret']);
    assert.match(fromYaml.message, /\/auth\/jwt\/secret/);
    assert.ok(!fromYaml.message.includes(short), 'the error must not print the secret');
    const fromEnv = await configError('', { AIGW_JWT_SECRET: short });
    assert.deepEqual(fromEnv.issues.map((i) => i.pointer), ['/auth/jwt/secret']);
    assert.ok(!fromEnv.message.includes(short), 'the error must not print the secret');
  });

  test('startTestGateway (createGateway) refuses to boot on a short secret, naming /auth/jwt/secret', async () => {
    await assert.rejects(startTestGateway(chatConfig(fake.baseUrl), { env: { AIGW_JWT_SECRET: 'too-short-secret' } }), /\/auth\/jwt\/secret/);
  });

  test('32 characters is enough; the defaults are every spec capability and no clock tolerance', async () => {
    const loaded = await parse('', { AIGW_JWT_SECRET: 'y'.repeat(32) });
    assert.equal(loaded.config.auth.jwt.secret, 'y'.repeat(32));
    assert.deepEqual(loaded.config.auth.jwt.capabilities, SPEC_CAPABILITIES);
    assert.equal(loaded.config.auth.jwt.clockToleranceSeconds, 0);
  });

  test('YAML wins over AIGW_JWT_SECRET; an empty or absent secret turns JWT auth off', async () => {
    const both = await parse(jwtBlock(`    secret: ${SECRET}\n`), { AIGW_JWT_SECRET: OTHER_SECRET });
    assert.equal(both.config.auth.jwt.secret, SECRET);
    assert.equal((await parse('')).config.auth.jwt.secret, undefined);
    assert.equal((await parse(jwtBlock(`    secret: ''\n`))).config.auth.jwt.secret, undefined);
  });

  test('an unknown capability in auth.jwt.capabilities is refused at its index', async () => {
    const err = await configError(jwtBlock(`    secret: ${SECRET}\n    capabilities: ['chat', 'chat:write']\n`));
    assert.deepEqual(err.issues.map((i) => i.pointer), ['/auth/jwt/capabilities/1']);
  });
});
