/**
 * outboundGet: the body of a caller-chosen URL, each redirect checked again by the outbound guard, within a
 * byte cap (Content-Length first, then counted) and one deadline for the whole chain.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ResolveError, type ResolveAll } from '../../core/outbound/fetch.ts';
import {
  OutboundTimeoutError, outboundGet, ResponseTooLargeError, TooManyRedirectsError, UnexpectedStatusError,
} from '../../core/outbound/get.ts';
import { compileOutboundPolicy, OutboundRefusedError } from '../../core/outbound/policy.ts';

const httpOnly = compileOutboundPolicy({ allowHttp: true, allowedAddresses: [] });
const loopbackAllowed = compileOutboundPolicy({ allowHttp: true, allowedAddresses: ['127.0.0.1'] });
const KB = 1024;

/** Resolves every name to the given addresses and records what it was asked. */
const resolving = (addresses: string[]): ResolveAll & { calls: string[] } => {
  const calls: string[] = [];
  return Object.assign(async (host: string) => {
    calls.push(host);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
  }, { calls });
};

describe('outboundGet', () => {
  const hits: string[] = [];
  let origin: string;
  let port: number;
  let server: ReturnType<typeof createServer>;
  let endless: NodeJS.Timeout | undefined;
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/audio.wav': (_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.alloc(4 * KB, 7)),
    '/to-audio': (_req, res) => res.writeHead(302, { location: '/audio.wav' }).end(),
    '/to-metadata': (_req, res) => res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
    '/to-name': (_req, res) => res.writeHead(301, { location: `http://internal.example.test:${port}/audio.wav` }).end(),
    '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
    '/missing': (_req, res) => res.writeHead(404).end('no'),
    '/declared-big': (_req, res) => res.writeHead(200, { 'content-length': String(64 * KB) }).end(Buffer.alloc(64 * KB)),
    '/chunked-big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      endless = setInterval(() => res.write(Buffer.alloc(8 * KB, 1)), 2);
      res.on('close', () => clearInterval(endless));
    },
    '/silent': () => undefined,
  };

  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
      if (route) route(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    clearInterval(endless);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const options = { maxBytes: 16 * KB, timeoutMs: 3000 };

  test('an allow-listed loopback URL answers its bytes and Content-Type', async () => {
    const body = await outboundGet(`${origin}/audio.wav`, options, loopbackAllowed);
    assert.deepEqual(body.bytes, Buffer.alloc(4 * KB, 7));
    assert.equal(body.contentType, 'audio/wav');
    assert.equal(body.address, '127.0.0.1');
  });

  test('loopback is refused by default, before anything is sent', async () => {
    const before = hits.length;
    await assert.rejects(outboundGet(`${origin}/audio.wav`, options, httpOnly),
      (err: OutboundRefusedError) => err instanceof OutboundRefusedError && /127\.0\.0\.1 is private, loopback/.test(err.reason));
    assert.equal(hits.length, before);
  });

  test('a redirect is followed, and the final URL reported', async () => {
    const body = await outboundGet(`${origin}/to-audio`, options, loopbackAllowed);
    assert.equal(body.bytes.length, 4 * KB);
    assert.equal(body.url, `${origin}/audio.wav`);
  });

  test('a redirect to a link-local address is refused: the location is checked again', async () => {
    await assert.rejects(outboundGet(`${origin}/to-metadata`, options, loopbackAllowed),
      (err: OutboundRefusedError) => err instanceof OutboundRefusedError && /169\.254\.169\.254 is private, loopback, link-local/.test(err.reason));
  });

  test('a redirect to a host name is resolved and checked again, and pinned to the checked address', async () => {
    // The name resolves to the allow-listed loopback address: followed, connected to that address.
    const resolve = resolving(['127.0.0.1']);
    const body = await outboundGet(`${origin}/to-name`, options, loopbackAllowed, resolve);
    assert.equal(body.bytes.length, 4 * KB);
    assert.equal(body.url, `http://internal.example.test:${port}/audio.wav`);
    assert.deepEqual(resolve.calls, ['internal.example.test']);
    // The same redirect to a name that resolves to a private address is refused.
    await assert.rejects(outboundGet(`${origin}/to-name`, options, loopbackAllowed, resolving(['10.1.2.3'])),
      (err: OutboundRefusedError) => err instanceof OutboundRefusedError && /internal\.example\.test resolves to 10\.1\.2\.3/.test(err.reason));
  });

  test('more redirects than allowed is an error', async () => {
    const before = hits.length;
    await assert.rejects(outboundGet(`${origin}/loop`, { ...options, maxRedirects: 3 }, loopbackAllowed),
      (err: Error) => err instanceof TooManyRedirectsError && err.message === 'more than 3 redirects');
    assert.equal(hits.length - before, 4, 'the first request and three redirects');
    await assert.rejects(outboundGet(`${origin}/to-audio`, { ...options, maxRedirects: 0 }, loopbackAllowed), TooManyRedirectsError);
  });

  test('a non-2xx answer names its status', async () => {
    await assert.rejects(outboundGet(`${origin}/missing`, options, loopbackAllowed),
      (err: Error) => err instanceof UnexpectedStatusError && err.status === 404 && err.message === 'the URL answered HTTP 404');
  });

  test('a Content-Length over the cap is refused before reading', async () => {
    await assert.rejects(outboundGet(`${origin}/declared-big`, options, loopbackAllowed),
      (err: Error) => err instanceof ResponseTooLargeError && err.maxBytes === 16 * KB);
  });

  test('a body without Content-Length is counted and cut at the cap, not waited for', async () => {
    const started = Date.now();
    await assert.rejects(outboundGet(`${origin}/chunked-big`, { ...options, timeoutMs: 10_000 }, loopbackAllowed), ResponseTooLargeError);
    assert.ok(Date.now() - started < 2000, `refused after ${Date.now() - started} ms`);
  });

  test('a URL that never answers fails at the deadline, which covers the whole exchange', async () => {
    const started = Date.now();
    await assert.rejects(outboundGet(`${origin}/silent`, { ...options, timeoutMs: 300 }, loopbackAllowed),
      (err: Error) => err instanceof OutboundTimeoutError && err.message === 'no complete answer within 300 ms');
    const took = Date.now() - started;
    assert.ok(took >= 250 && took < 2000, `failed after ${took} ms`);
  });

  test('a host that does not resolve is a ResolveError', async () => {
    await assert.rejects(outboundGet('https://nowhere.invalid/a.wav', options, httpOnly, async () => []), ResolveError);
  });

  test('https only unless allowHttp', async () => {
    const strict = compileOutboundPolicy({ allowHttp: false, allowedAddresses: ['127.0.0.1'] });
    await assert.rejects(outboundGet(`${origin}/audio.wav`, options, strict),
      (err: OutboundRefusedError) => err instanceof OutboundRefusedError && err.reason === 'the scheme must be https');
  });
});
