/**
 * The passthrough (/proxy/<provider>/...) through a real gateway and loopback upstreams: what is forwarded and
 * what never is, bodies streaming both ways without being held, the route's plugins (auth with the `proxy`
 * capability, ip-allow), the body limit, the provider hooks (passthroughHeaders, authorize), errors and the
 * breaker, and a client that leaves.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const UPSTREAM_KEY = 'sk-upstream-secret';
const LIMIT = 8 * 1024 * 1024;
const JWT_SECRET = 'passthrough-test-secret-0123456789abcdef';

// ---------------------------------------------------------------------------------------------------------
// A loopback upstream that records what reaches it; a test may take over a path.

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bytes: number;
  sha256: string;
  /** The request body ended normally. */
  complete: boolean;
  /** The connection closed before the answer was finished. */
  aborted: boolean;
}

type Route = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

interface Upstream {
  url: string;
  seen: Seen[];
  routes: Map<string, Route>;
  /** Resolves when the next request to `path` (without its query) arrives. */
  arrival(path: string): Promise<Seen>;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const seen: Seen[] = [];
  const routes = new Map<string, Route>();
  const waiting = new Map<string, Array<(s: Seen) => void>>();
  const server: Server = createServer((req, res) => {
    const hash = createHash('sha256');
    const record: Seen = { method: req.method!, url: req.url!, headers: req.headers, bytes: 0, sha256: '', complete: false, aborted: false };
    seen.push(record);
    const path = req.url!.split('?')[0]!;
    for (const resolve of waiting.get(path) ?? []) resolve(record);
    waiting.delete(path);
    res.once('close', () => {
      if (!res.writableFinished) record.aborted = true;
    });
    req.on('data', (chunk: Buffer) => {
      record.bytes += chunk.length;
      hash.update(chunk);
    });
    req.on('end', () => {
      record.complete = true;
      record.sha256 = hash.digest('hex');
    });
    const route = routes.get(path);
    if (route) {
      route(req, res, record);
      return;
    }
    // By default: echo what arrived, once the body is in.
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'upstream-req-1', 'x-upstream-custom': 'yes' });
      res.end(JSON.stringify({ method: record.method, url: record.url, bytes: record.bytes, sha256: record.sha256 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    routes,
    arrival: (path) => new Promise((resolve) => waiting.set(path, [...(waiting.get(path) ?? []), resolve])),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Test providers, loaded through providerPackages: one with its own credential header, one that authorizes
// (as a token exchange or a signer would), and plain bearer ones for errors and the breaker.

const TEST_PROVIDERS = `
const base = { apiVersion: 1, family: 'test', configSchema: { type: 'object' }, capabilities: {}, mapError: () => new Error('unused') };
export default [
  { ...base, slug: 'hooked', displayName: 'Hooked', passthroughHeaders: (t) => ({ 'x-test-key': t.apiKey }) },
  {
    ...base, slug: 'signed', displayName: 'Signed',
    async authorize(request, target) {
      const proof = 'Signed ' + target.apiKey + ' ' + request.method + ' ' + request.path + ' streamed=' + (request.bodyStreamed === true) + ' body=' + (request.body === undefined ? 'none' : 'inline');
      return { ...request, headers: { ...request.headers, authorization: proof } };
    },
  },
  { ...base, slug: 'flaky', displayName: 'Flaky' },
  { ...base, slug: 'down', displayName: 'Down' },
  { ...base, slug: 'off', displayName: 'Off' },
  { ...base, slug: 'unwritten', displayName: 'Registered, never configured', defaultBaseUrl: 'http://127.0.0.1:9/never' },
];
`;

function gatewayConfig(upstream: string, closedPort: number): string {
  return chatConfig(`${upstream}/v1`, `server:
  proxyBodyLimitBytes: ${LIMIT}
upstream:
  breaker:
    volumeThreshold: 3
    errorThresholdPercentage: 50
    resetTimeoutMs: 600000
providerPackages: [./test-providers.mjs]
`).replace('providers:\n', `providers:
  hooked:
    baseUrl: ${upstream}/hooked
    apiKey: hooked-upstream-key
  signed:
    baseUrl: ${upstream}/signed/v2
    apiKey: signed-upstream-key
  flaky:
    baseUrl: ${upstream}/flaky
    apiKey: flaky-upstream-key
  down:
    baseUrl: http://127.0.0.1:${closedPort}/v1
    apiKey: down-upstream-key
  off:
    baseUrl: ${upstream}/off
    apiKey: off-upstream-key
    enabled: false
`);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---------------------------------------------------------------------------------------------------------
// A client on node:http: exact headers, bodies written piece by piece.

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** The path is sent exactly as written (no URL parsing, so `..` and `%2e` stay). */
function call(url: string, method: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  const origin = /^http:\/\/[^/]+/.exec(url)![0];
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    // node:http sends DELETE bodies unframed unless told their length.
    const framed = body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers };
    const req = httpRequest({ hostname, port, path: url.slice(origin.length), method, headers: framed }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function assertEnvelope(answer: Answer, status: number, code: string): any {
  assert.equal(answer.status, status, answer.text);
  assert.match(String(answer.headers['content-type']), /^application\/json/);
  const body = answer.json();
  assert.deepEqual(Object.keys(body), ['error'], answer.text);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message'], answer.text);
  assert.equal(body.error.code, code, answer.text);
  return body.error;
}

/** `work`, or a failure naming what did not happen: a gateway that buffers would otherwise just hang. */
async function within<T>(work: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `timed out waiting for: ${what}` })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function eventually(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ---------------------------------------------------------------------------------------------------------

let upstream: Upstream;
let gw: TestGateway;
let proxyKey: string;
let chatKey: string;
const proxy = (path: string) => `${gw.url}/proxy${path}`;

before(async () => {
  upstream = await startUpstream();
  gw = await startTestGateway(gatewayConfig(upstream.url, await closedPort()), {
    files: { 'test-providers.mjs': TEST_PROVIDERS },
    env: { AIGW_JWT_SECRET: JWT_SECRET },
  });
  proxyKey = await gw.createKey({ scopes: { capabilities: ['proxy'] } });
  chatKey = await gw.createKey({ scopes: { capabilities: ['chat'] } });
});
after(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('forwarding', () => {
  test('GET: path and query intact, the provider key injected, the caller\'s key and cookie never forwarded', async () => {
    const from = upstream.seen.length;
    const answer = await call(proxy('/openai/models/gpt%2F4o?limit=2&after=a%2Fb&x=1&x=2'), 'GET', {
      authorization: `Bearer ${proxyKey}`,
      cookie: `access_token=${proxyKey}; theme=dark`,
      'x-caller-header': 'kept',
      accept: 'application/json',
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json(), { method: 'GET', url: '/v1/models/gpt%2F4o?limit=2&after=a%2Fb&x=1&x=2', bytes: 0, sha256: createHash('sha256').digest('hex') });
    const seen = upstream.seen[from]!;
    assert.equal(seen.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(seen.headers.cookie, undefined);
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.equal(seen.headers['x-caller-header'], 'kept');
    assert.equal(seen.headers.accept, 'application/json');
    // The gateway's request id goes upstream; the answer carries it and the provider's own id under another name.
    assert.equal(seen.headers['x-request-id'], answer.headers['x-request-id']);
    assert.equal(answer.headers['x-upstream-request-id'], 'upstream-req-1');
    assert.equal(answer.headers['x-upstream-custom'], 'yes');
    assert.equal(answer.headers['x-provider'], 'openai');
    assert.ok(!JSON.stringify(seen.headers).includes(proxyKey), 'the caller\'s key reached the upstream');
  });

  test('x-api-key is not forwarded either; the caller\'s X-Request-ID is the one sent upstream', async () => {
    const from = upstream.seen.length;
    const requestId = `trace-${randomUUID()}`;
    const answer = await call(proxy('/openai/files'), 'GET', { 'x-api-key': proxyKey, 'x-request-id': requestId });
    assert.equal(answer.status, 200, answer.text);
    const seen = upstream.seen[from]!;
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.equal(seen.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(seen.headers['x-request-id'], requestId);
    assert.equal(answer.headers['x-request-id'], requestId);
    assert.ok(!JSON.stringify(seen.headers).includes(proxyKey));
  });

  test('POST, PUT, PATCH, DELETE and HEAD keep their method, body and content type', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const from = upstream.seen.length;
      const body = JSON.stringify({ model: 'whatever', input: `for ${method}` });
      const answer = await call(proxy('/openai/embeddings?api-version=1'), method, {
        authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json; charset=utf-8',
      }, body);
      assert.equal(answer.status, 200, `${method} ${answer.text}`);
      assert.deepEqual(answer.json(), {
        method, url: '/v1/embeddings?api-version=1', bytes: Buffer.byteLength(body), sha256: createHash('sha256').update(body).digest('hex'),
      });
      assert.equal(upstream.seen[from]!.headers['content-type'], 'application/json; charset=utf-8');
    }
    const from = upstream.seen.length;
    const head = await call(proxy('/openai/models'), 'HEAD', { authorization: `Bearer ${proxyKey}` });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(upstream.seen[from]!.method, 'HEAD');
  });

  test('hop-by-hop headers are dropped, including those Connection names', async () => {
    const from = upstream.seen.length;
    const answer = await call(proxy('/openai/models'), 'GET', {
      authorization: `Bearer ${proxyKey}`, connection: 'keep-alive, x-hop', 'x-hop': 'one hop only', 'keep-alive': 'timeout=5',
      'proxy-authorization': 'Basic c2VjcmV0', te: 'trailers', 'x-end-to-end': 'kept',
    });
    assert.equal(answer.status, 200, answer.text);
    const seen = upstream.seen[from]!;
    for (const name of ['x-hop', 'keep-alive', 'proxy-authorization', 'te']) assert.equal(seen.headers[name], undefined, name);
    assert.equal(seen.headers['x-end-to-end'], 'kept');
  });

  test('a provider\'s passthroughHeaders replace the default Bearer and the caller\'s header of that name', async () => {
    const from = upstream.seen.length;
    const answer = await call(proxy('/hooked/things?q=1'), 'GET', { authorization: `Bearer ${proxyKey}`, 'x-test-key': 'caller-chosen' });
    assert.equal(answer.status, 200, answer.text);
    const seen = upstream.seen[from]!;
    assert.equal(seen.url, '/hooked/things?q=1');
    assert.equal(seen.headers['x-test-key'], 'hooked-upstream-key');
    assert.equal(seen.headers.authorization, undefined);
    assert.equal(answer.headers['x-provider'], 'hooked');
  });

  test('a provider\'s authorize signs the request; a streamed body is flagged, never inlined', async () => {
    let from = upstream.seen.length;
    assert.equal((await call(proxy('/signed/models?a=1'), 'GET', { authorization: `Bearer ${proxyKey}` })).status, 200);
    assert.equal(upstream.seen[from]!.url, '/signed/v2/models?a=1');
    assert.equal(upstream.seen[from]!.headers.authorization, 'Signed signed-upstream-key GET /models?a=1 streamed=false body=none');
    from = upstream.seen.length;
    const answer = await call(proxy('/signed/invoke'), 'POST', { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json' }, '{"x":1}');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(upstream.seen[from]!.headers.authorization, 'Signed signed-upstream-key POST /invoke streamed=true body=none');
    assert.equal(answer.json().bytes, 7);
  });

  test('upstream error answers pass through verbatim: status, headers and body', async () => {
    upstream.routes.set('/v1/rate', (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end('{"error":{"message":"slow down","type":"requests"}}');
    });
    const limited = await call(proxy('/openai/rate'), 'POST', { authorization: `Bearer ${proxyKey}` }, '{}');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '7');
    assert.equal(limited.text, '{"error":{"message":"slow down","type":"requests"}}');
    assert.equal(limited.headers['x-provider'], 'openai');
    upstream.routes.set('/v1/bad', (_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('native validation message');
    });
    const bad = await call(proxy('/openai/bad'), 'GET', { authorization: `Bearer ${proxyKey}` });
    assert.equal(bad.status, 400);
    assert.equal(bad.text, 'native validation message');
    assert.match(String(bad.headers['content-type']), /^text\/plain/);
  });
});

describe('unbuffered both ways', () => {
  test('an SSE answer: the client has the first event while the upstream has not finished', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let upstreamFinished = false;
    upstream.routes.set('/v1/slow-stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('data: {"n":1}\n\n');
      void released.then(() => {
        res.end('data: {"n":2}\n\ndata: [DONE]\n\n');
        upstreamFinished = true;
      });
    });
    const response = await within(
      fetch(proxy('/openai/slow-stream'), { method: 'POST', headers: { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json' }, body: '{"stream":true}' }),
      'the answer to start while the upstream holds the rest of it',
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await within(reader.read(), 'the first event while the upstream holds the rest');
      assert.ok(!done, 'the stream ended before its first event');
      text += decoder.decode(value, { stream: true });
    }
    assert.equal(text, 'data: {"n":1}\n\n');
    assert.equal(upstreamFinished, false, 'the first event arrived only after the upstream finished');
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.equal(text, 'data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
  });

  test('a large chunked request body reaches the upstream piece by piece, while the client is still sending', async () => {
    // Lockstep: each piece is written only once the upstream has received every byte before it. A gateway that
    // held the body would never forward the first piece, and this test would time out.
    const piece = 256 * 1024;
    const pieces = 24; // 6 MiB, under the 8 MiB limit
    const arrived = upstream.arrival('/v1/uploads');
    const hash = createHash('sha256');
    const answer = new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(proxy('/openai/uploads'), { method: 'POST', headers: { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/octet-stream' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      });
      req.on('error', reject);
      void (async () => {
        let seen: Seen | undefined;
        for (let i = 0; i < pieces; i++) {
          const bytes = randomBytes(piece);
          hash.update(bytes);
          req.write(bytes);
          seen ??= await within(arrived, 'the upstream request to start while the client still sends its body');
          const expected = (i + 1) * piece;
          await eventually(() => seen!.bytes >= expected, `the upstream to receive ${expected} bytes while the client still sends`);
          assert.equal(seen.complete, false, 'the upstream saw the end of a body the client has not finished');
        }
        req.end();
      })().catch(reject);
    });
    const result = await answer;
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.json(), { method: 'POST', url: '/v1/uploads', bytes: piece * pieces, sha256: hash.digest('hex') });
  });
});

describe('the route\'s plugins', () => {
  test('without a credential: 401 AUTH_REQUIRED; a chat-only key: 403 AUTH_FORBIDDEN naming proxy; nothing reaches the upstream', async () => {
    const from = upstream.seen.length;
    assertEnvelope(await call(proxy('/openai/models'), 'GET'), 401, 'AUTH_REQUIRED');
    const refused = assertEnvelope(await call(proxy('/openai/models'), 'GET', { authorization: `Bearer ${chatKey}` }), 403, 'AUTH_FORBIDDEN');
    assert.deepEqual(refused.details, { requiredCapability: 'proxy' });
    assert.match(refused.message, /"proxy"/);
    assert.equal(upstream.seen.length, from);
  });

  test('a JWT caller with the default auth.jwt.capabilities (the spec\'s 15) lacks proxy: 403', async () => {
    const jwt = await new SignJWT({ sub: 'user-1', tenantId: 'default', type: 'access', jti: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(JWT_SECRET));
    const from = upstream.seen.length;
    const refused = assertEnvelope(await call(proxy('/openai/models'), 'GET', { authorization: `Bearer ${jwt}` }), 403, 'AUTH_FORBIDDEN');
    assert.deepEqual(refused.details, { requiredCapability: 'proxy' });
    assert.equal(upstream.seen.length, from);
  });

  test('ip-allow applies (the implicit default pipeline [auth, ip-allow]): a key for another address gets 403', async () => {
    const elsewhere = await gw.createKey({ scopes: { capabilities: ['proxy'] }, allowedIps: ['203.0.113.7'] });
    const here = await gw.createKey({ scopes: { capabilities: ['proxy'] }, allowedIps: ['127.0.0.1'] });
    const from = upstream.seen.length;
    const refused = assertEnvelope(await call(proxy('/openai/models'), 'GET', { authorization: `Bearer ${elsewhere}` }), 403, 'AUTH_FORBIDDEN');
    assert.equal(refused.details.reason, 'ip_not_allowed');
    assert.equal(upstream.seen.length, from);
    assert.equal((await call(proxy('/openai/models'), 'GET', { authorization: `Bearer ${here}` })).status, 200);
  });
});

describe('refusals and failures', () => {
  test('an unknown, unconfigured or disabled provider: 404 NOT_FOUND; no path after it: 404', async () => {
    const from = upstream.seen.length;
    // `unwritten` is registered and has a default base URL, but pipelines.yaml has no block for it.
    for (const path of ['/nope/models', '/off/models', '/%6Fff/models', '/unwritten/models', '/__proto__/models', '/openai']) {
      assertEnvelope(await call(proxy(path), 'GET', { authorization: `Bearer ${proxyKey}` }), 404, 'NOT_FOUND');
    }
    assert.equal(upstream.seen.length, from);
  });

  test('dot segments that would leave the base path: 400 VALIDATION_ERROR', async () => {
    const from = upstream.seen.length;
    for (const path of ['/openai/../admin', '/openai/a/%2e%2E/b', '/openai/./x']) {
      assertEnvelope(await call(proxy(path), 'GET', { authorization: `Bearer ${proxyKey}` }), 400, 'VALIDATION_ERROR');
    }
    assert.equal(upstream.seen.length, from);
  });

  test('a declared Content-Length over server.proxyBodyLimitBytes: 413 before anything is sent upstream', async () => {
    const from = upstream.seen.length;
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(proxy('/openai/uploads'), { method: 'POST', headers: { authorization: `Bearer ${proxyKey}`, 'content-length': String(LIMIT + 1) } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }));
      });
      req.on('error', reject);
      req.write('only the start');
    });
    const error = assertEnvelope(answer, 413, 'PAYLOAD_TOO_LARGE');
    assert.deepEqual(error.details, { limitBytes: LIMIT });
    assert.equal(answer.headers.connection, 'close');
    assert.equal(upstream.seen.length, from);
  });

  test('a chunked body that grows past the limit: 413, and the upstream never gets all of it', async () => {
    const arrived = upstream.arrival('/v1/too-big');
    const big = randomBytes(LIMIT + 1024 * 1024);
    const stream = new ReadableStream({
      start(controller) {
        for (let at = 0; at < big.length; at += 512 * 1024) controller.enqueue(big.subarray(at, at + 512 * 1024));
        controller.close();
      },
    });
    const response = await fetch(proxy('/openai/too-big'), { method: 'POST', headers: { authorization: `Bearer ${proxyKey}` }, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(response.status, 413);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'PAYLOAD_TOO_LARGE');
    const seen = await arrived;
    await eventually(() => seen.aborted || seen.complete, 'the upstream request to end');
    assert.equal(seen.complete, false, 'the upstream received a body over the limit in full');
    assert.ok(seen.bytes <= LIMIT, `the upstream received ${seen.bytes} bytes`);
  });

  test('an unreachable upstream: 502 UPSTREAM_ERROR in the canonical envelope, with X-Provider', async () => {
    const answer = await call(proxy('/down/models'), 'GET', { authorization: `Bearer ${proxyKey}` });
    const error = assertEnvelope(answer, 502, 'UPSTREAM_ERROR');
    assert.equal(error.details.provider, 'down');
    assert.equal(answer.headers['x-provider'], 'down');
  });

  test('5xx, 408 and 429 answers pass through and count against the provider\'s breaker; once open: 503 UPSTREAM_UNAVAILABLE', async () => {
    const script: Array<[number, string]> = [[429, 'limited'], [500, 'broken'], [404, 'no such thing'], [503, 'overloaded']];
    upstream.routes.set('/flaky/x', (_req, res) => {
      const [status, text] = script.shift() ?? [200, 'ok'];
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(text);
    });
    // 429 and 500 count (2 of 2), the 404 does not (2 of 3), the 503 does: 3 of 4 > 50% with 3 or more calls.
    for (const [status, text] of [[429, 'limited'], [500, 'broken'], [404, 'no such thing'], [503, 'overloaded']] as const) {
      const answer = await call(proxy('/flaky/x'), 'GET', { authorization: `Bearer ${proxyKey}` });
      assert.equal(answer.status, status);
      assert.equal(answer.text, text);
    }
    const from = upstream.seen.length;
    const answer = await call(proxy('/flaky/x'), 'GET', { authorization: `Bearer ${proxyKey}` });
    const error = assertEnvelope(answer, 503, 'UPSTREAM_UNAVAILABLE');
    assert.equal(error.details.provider, 'flaky');
    assert.equal(upstream.seen.length, from, 'an open breaker still let the request through');
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { breakers: Array<{ provider: string; state: string; failures: number }> };
    const flaky = ready.breakers.find((b) => b.provider === 'flaky');
    assert.equal(flaky?.state, 'open');
    assert.equal(flaky?.failures, 3);
  });

  test('a client that leaves mid-answer aborts the upstream request', async () => {
    upstream.routes.set('/v1/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
      // ... and never ends by itself.
    });
    const arrived = upstream.arrival('/v1/endless');
    const controller = new AbortController();
    const response = await fetch(proxy('/openai/endless'), { headers: { authorization: `Bearer ${proxyKey}` }, signal: controller.signal });
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    const seen = await arrived;
    assert.equal(seen.aborted, false);
    controller.abort();
    await eventually(() => seen.aborted, 'the upstream connection to close after the client left');
  });

  test('a client that leaves mid-upload aborts the upstream request', async () => {
    const arrived = upstream.arrival('/v1/upload-abandoned');
    const req = httpRequest(proxy('/openai/upload-abandoned'), { method: 'POST', headers: { authorization: `Bearer ${proxyKey}` } });
    req.on('error', () => {});
    req.write(randomBytes(64 * 1024));
    const seen = await arrived;
    await eventually(() => seen.bytes > 0, 'the first bytes upstream');
    req.destroy();
    await eventually(() => seen.aborted, 'the upstream connection to close after the client left');
    assert.equal(seen.complete, false);
  });
});

describe('configuration', () => {
  const FILE = '/tmp/aigw-passthrough/pipelines.yaml';
  const parse = (extra: string, env: NodeJS.ProcessEnv = {}) => parseConfig(chatConfig('http://127.0.0.1:9/v1', extra), { file: FILE, display: 'pipelines.yaml', env, cwd: '/tmp/aigw-passthrough' });

  test('server.proxyBodyLimitBytes defaults to 50 MiB', async () => {
    assert.equal((await parse('')).config.server.proxyBodyLimitBytes, 50 * 1024 * 1024);
  });

  test('auth.jwt.capabilities leaves proxy out by default, and accepts it when listed', async () => {
    const defaults = await parse('', { AIGW_JWT_SECRET: JWT_SECRET });
    assert.ok(!defaults.config.auth.jwt.capabilities.includes('proxy'));
    assert.equal(defaults.config.auth.jwt.capabilities.length, 15);
    const listed = await parse(`auth:\n  jwt:\n    capabilities: [chat, proxy]\n`, { AIGW_JWT_SECRET: JWT_SECRET });
    assert.deepEqual(listed.config.auth.jwt.capabilities, ['chat', 'proxy']);
  });

  test('a pipeline may name /proxy, and must then include auth', async () => {
    const ok = await parse(`  - name: passthrough\n    routes: [/proxy]\n    plugins: [auth, ip-allow]\n`);
    // The third is the default pipeline the loader adds for every other route.
    assert.deepEqual(ok.config.pipelines.map((p) => p.routes), [['/v1/chat/completions'], ['/proxy'], []]);
    await assert.rejects(parse(`  - name: passthrough\n    routes: [/proxy]\n    plugins: []\n`), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues.map((i) => [i.pointer, i.message]), [['/pipelines/1/plugins', 'pipeline "passthrough" serves /proxy but no plugin of it provides "caller" (provided by: auth); the passthrough requires a credential']]);
      return true;
    });
  });
});
