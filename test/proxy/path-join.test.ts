/**
 * The passthrough's path join (core/dispatch/passthrough-path.ts), fuzzed: generated paths full of `..`, `.`,
 * `%2e%2e`, `\`, `%5c`, `//`, `%2f`, Unicode dots, NUL and stray `%`. Each either gets VALIDATION_ERROR or lands
 * under the base path with no dot segment however it is decoded, and a base URL's query stays a query. A sample
 * goes end to end as raw request lines over a socket, to a loopback upstream that records the request line.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { joinUnderBase, type UpstreamTarget } from '../../core/dispatch/passthrough-path.ts';
import { GatewayError } from '../../core/errors.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const TOKENS = [
  '..', '.', '%2e%2e', '%2E%2e', '%2e', '.%2e', '\\', '%5c', '%5C', '', '%2f', '%2F', '%252e%252e', '%252f', '..;', '.;x',
  'a', 'v1', 'models', 'gpt%2F4o', 'x.y', '...', '~', 'é', '\uff0e\uff0e', '%EF%BC%8E%EF%BC%8E', '\u2025', '%E2%80%A5',
  '%00', '\u0000', '%0a', '%', '%zz', '%25', 'a b', '{x}', '|', '"',
];

/** A small deterministic generator, so a failure names a path that can be replayed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function generatedPaths(count: number, seed: number): string[] {
  const next = generator(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const parts = Array.from({ length: 1 + Math.floor(next() * 6) }, () => pick(TOKENS));
    // Mostly separated by `/`, sometimes glued, so `.%2e` and `x\..` style segments appear too.
    let path = '';
    for (const part of parts) path += (next() < 0.8 ? '/' : '') + part;
    if (!path.startsWith('/')) path = `/${path}`;
    if (next() < 0.3) path += `?${pick(['a=1', 'x=..%2F..', 'q=\\', 'b=%00', 'c=é', ''])}`;
    paths.push(path);
  }
  return paths;
}

/** Percent-decoding as a lenient server does it: bytes as UTF-8, a stray `%` left alone. */
function decodeLeniently(text: string): string {
  return Buffer.from(text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

/** What the most credulous server could make of a path: decoded up to 4 times, `\` as `/`, Unicode folded. */
function hasDotSegmentAtAnyDepth(path: string): boolean {
  let layer = path;
  for (let round = 0; round < 5; round++) {
    const segments = layer.replace(/\\/g, '/').normalize('NFKC').split('/').map((s) => s.split(';')[0]);
    if (segments.some((s) => s === '.' || s === '..')) return true;
    layer = decodeLeniently(layer);
  }
  return false;
}

const BASES = [
  { url: 'http://upstream.test:8080/v1?api-version=2024-10-01&tag=base', path: '/v1', query: 'api-version=2024-10-01&tag=base' },
  { url: 'http://upstream.test/deep/base/path/', path: '/deep/base/path', query: '' },
  { url: 'https://upstream.test', path: '', query: '' },
];

function assertContained(target: UpstreamTarget, base: (typeof BASES)[number], requested: string): void {
  const what = `${JSON.stringify(requested)} -> ${JSON.stringify(target.path)}`;
  assert.ok(target.path.startsWith(`${base.path}/`), `left the base path: ${what}`);
  assert.ok(!hasDotSegmentAtAnyDepth(target.path.split('?')[0]!), `a dot segment survived: ${what}`);
  // What WHATWG URL (the parser that once let `..` through) makes of it: still under the base path.
  const parsed = new URL(`${target.origin}${target.path}`);
  assert.equal(parsed.origin, new URL(base.url).origin, what);
  assert.ok(parsed.pathname.startsWith(`${base.path}/`), `the URL parser resolved it out of the base path: ${what}`);
  assert.equal(parsed.hash, '', what);
  if (base.query) assert.ok(parsed.search.slice(1).startsWith(base.query), `the base query is no longer the query: ${what}`);
  assert.doesNotMatch(target.path, /[\u0000-\u0020\u007f-\uffff\\#]/, `an unencoded character went upstream: ${what}`);
}

describe('joinUnderBase, fuzzed', () => {
  test('3,000 generated paths per base: refused with VALIDATION_ERROR or contained under the base path', () => {
    let refused = 0;
    let joined = 0;
    for (const base of BASES) {
      for (const path of generatedPaths(3000, 11 + base.url.length)) {
        let target: UpstreamTarget;
        try {
          target = joinUnderBase(base.url, path);
        } catch (err) {
          assert.ok(err instanceof GatewayError, `${JSON.stringify(path)}: ${String(err)}`);
          assert.equal(err.code, 'VALIDATION_ERROR');
          refused++;
          continue;
        }
        assertContained(target, base, path);
        joined++;
      }
    }
    // Both outcomes are exercised, or the generator tests nothing.
    assert.ok(refused > 1000 && joined > 1000, `refused ${refused}, joined ${joined}`);
  });

  test('each hostile form on its own is refused', () => {
    const hostile = [
      '/x\\..\\..\\admin', '/x/%5c..%5c..%5cadmin', '/a/../b', '/a/./b', '/a/%2e%2e/b', '/a/.%2E/b', '/a/%2e/b', '/..',
      '/a/..%2f..%2fadmin', '/a/..%2F', '/a/%252e%252e/b', '/a/..;/b', '/a/%EF%BC%8E%EF%BC%8E/b', '/a/\uff0e\uff0e/b',
      '/a/%E2%80%A5/b', '/a%00b', '/a\u0000b', '/a%0d%0aHost:x', '/a%zz', '/a%', '/a#frag', '/a?b#c', '/a/%252525252e%252525252e',
    ];
    for (const path of hostile) {
      assert.throws(() => joinUnderBase(BASES[0]!.url, path), (err: unknown) => err instanceof GatewayError && err.code === 'VALIDATION_ERROR', JSON.stringify(path));
    }
  });

  test('ordinary paths go through as the caller encoded them; both queries are kept', () => {
    assert.deepEqual(joinUnderBase(BASES[0]!.url, '/models/gpt%2F4o?limit=2&after=a%2Fb'), {
      origin: 'http://upstream.test:8080',
      path: '/v1/models/gpt%2F4o?api-version=2024-10-01&tag=base&limit=2&after=a%2Fb',
    });
    assert.deepEqual(joinUnderBase(BASES[1]!.url, '/model/arn%3Aaws%3Abedrock/converse?x=1'), {
      origin: 'http://upstream.test', path: '/deep/base/path/model/arn%3Aaws%3Abedrock/converse?x=1', relative: '/model/arn%3Aaws%3Abedrock/converse?x=1',
    });
    // Names with dots are not dot segments; raw bytes over 0x7f (Node reads them as latin1) go as they came.
    assert.equal(joinUnderBase(BASES[2]!.url, '/files/a.b/.../x.json').path, '/files/a.b/.../x.json');
    assert.equal(joinUnderBase(BASES[2]!.url, '/caf\u00e9').path, '/caf%E9');
    // A leading `//` is one slash: no parser downstream may read the next segment as a host.
    assert.equal(joinUnderBase(BASES[2]!.url, '//evil.test/x').path, '/evil.test/x');
  });
});

// ---------------------------------------------------------------------------------------------------------
// End to end: raw request lines to a gateway whose provider base URL carries a query (the reported setup).

let gateway: TestGateway;
let upstream: Server;
let upstreamUrl: string;
let key: string;
const requestLines: string[] = [];

/** Sends `GET <target>` as written (no URL parsing on the way) and returns the status code and body. */
function rawGet(target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const parts: Buffer[] = [];
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(parts).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    // As UTF-8 bytes, as a client would send non-ASCII; Node hands them to the gateway as latin1 characters.
    socket.write(Buffer.from(`GET ${target} HTTP/1.1\r\nHost: gw.test\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`, 'utf8'));
  });
}

before(async () => {
  upstream = createServer((req, res) => {
    requestLines.push(req.url!);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('upstream');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = await startTestGateway(chatConfig(`${upstreamUrl}/v1?api-version=2024-10-01`));
  key = await gateway.createKey({ scopes: { capabilities: ['proxy'] } });
});
after(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

describe('end to end over a socket', () => {
  test('the reported request line, x\\..\\..\\admin under a base URL with a query: 400, nothing upstream', async () => {
    const from = requestLines.length;
    const answer = await rawGet('/proxy/openai/x\\..\\..\\admin');
    assert.equal(answer.status, 400, answer.body);
    assert.equal(JSON.parse(answer.body).error.code, 'VALIDATION_ERROR');
    assert.deepEqual(requestLines.slice(from), []);
  });

  test('a sample of 300 generated paths: 400, or the upstream request line is the join, under /v1/', async () => {
    const base = `${upstreamUrl}/v1?api-version=2024-10-01`;
    let forwarded = 0;
    for (const path of generatedPaths(300, 7)) {
      const from = requestLines.length;
      const answer = await rawGet(`/proxy/openai${path}`);
      const seen = requestLines.slice(from);
      if (answer.status === 400) {
        // Ours (the JSON envelope) or Node's own parser refusing the request line; either way nothing went out.
        if (answer.body.startsWith('{')) assert.equal(JSON.parse(answer.body).error.code, 'VALIDATION_ERROR', path);
        assert.deepEqual(seen, [], `${JSON.stringify(path)} was refused but reached the upstream`);
        continue;
      }
      if (answer.status === 404 && /^\/*(\?|$)/.test(path)) {
        // `/proxy/openai/` names no path under the provider: the router has no route for it.
        assert.deepEqual(seen, [], JSON.stringify(path));
        continue;
      }
      assert.equal(answer.status, 200, `${JSON.stringify(path)}: ${answer.body}`);
      assert.equal(seen.length, 1, JSON.stringify(path));
      const expected = joinUnderBase(base, Buffer.from(path, 'utf8').toString('latin1'));
      assert.equal(seen[0], expected.path, JSON.stringify(path));
      assert.ok(seen[0]!.startsWith('/v1/'), seen[0]);
      assert.ok(!hasDotSegmentAtAnyDepth(seen[0]!.split('?')[0]!), seen[0]);
      assert.match(seen[0]!, /\?api-version=2024-10-01(&|$)/, `the base query is no longer the query: ${seen[0]}`);
      forwarded++;
    }
    // Most generated paths are hostile; enough are not for the join to be checked on the wire.
    assert.ok(forwarded >= 20, `only ${forwarded} of 300 were forwarded`);
  });
});
