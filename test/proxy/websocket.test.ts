/**
 * WebSocket upgrades on the passthrough: admitted by the /proxy route's plugins before anything is upgraded,
 * sent to the joined upstream URL with the gateway's credential instead of the caller's, frames both ways;
 * refusals (no key, a key without `proxy`, a bad path, an unreachable upstream, one that never answers the
 * handshake, an upstream that declines the upgrade) as HTTP answers; and open connections closed when the gateway stops.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

interface Upgrade {
  url: string;
  headers: IncomingHttpHeaders;
}

let upstream: Server;
let wss: WebSocketServer;
const upgrades: Upgrade[] = [];
let gw: TestGateway;
/** Accepts TCP connections and never answers a byte. */
let silent: TcpServer;
const silentSockets = new Set<Socket>();
/** upstream.headersTimeoutMs of this file's gateway: the wait for an upstream's answer to the upgrade. */
const HANDSHAKE_MS = 800;
let proxyKey: string;
let chatKey: string;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

before(async () => {
  upstream = createServer((_req, res) => {
    res.writeHead(200).end('plain');
  });
  wss = new WebSocketServer({ noServer: true });
  upstream.on('upgrade', (req, socket, head) => {
    upgrades.push({ url: req.url!, headers: req.headers });
    if (req.url!.includes('/declined')) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 8\r\n\r\ndeclined');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data, binary) => ws.send(binary ? data : `echo:${String(data)}`, { binary }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  silent = createTcpServer((socket) => {
    silentSockets.add(socket);
    // Reads (so that it notices the gateway hanging up) but never writes.
    socket.resume();
    socket.on('error', () => {});
    socket.once('close', () => silentSockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentPort = (silent.address() as AddressInfo).port;
  const extra = `server:\n  shutdownTimeoutMs: 300\nupstream:\n  headersTimeoutMs: ${HANDSHAKE_MS}\nproviderPackages: [./p.mjs]\n`;
  const provider = (slug: string) => `{ apiVersion: 1, slug: '${slug}', family: 'test', displayName: '${slug}', configSchema: { type: 'object' }, capabilities: {}, mapError: () => new Error('unused') }`;
  gw = await startTestGateway(chatConfig(`${url}/v1?api-version=7`, extra).replace('providers:\n', `providers:
  down:
    baseUrl: http://127.0.0.1:${await closedPort()}/v1
    apiKey: down-key
  silent:
    baseUrl: http://127.0.0.1:${silentPort}/v1
    apiKey: silent-key
`), { files: { 'p.mjs': `export default [${provider('down')}, ${provider('silent')}];` } });
  proxyKey = await gw.createKey({ scopes: { capabilities: ['proxy'] } });
  chatKey = await gw.createKey({ scopes: { capabilities: ['chat'] } });
});
after(async () => {
  await gw?.close();
  for (const client of wss?.clients ?? []) client.terminate();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  for (const socket of silentSockets) socket.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
});

/** Opens a WebSocket through the gateway: the open socket, or the HTTP answer that refused it. */
function open(path: string, headers: Record<string, string>): Promise<{ ws: WebSocket } | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}${path}`, { headers });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    ws.once('error', reject);
  });
}

/** `work`, or a failure naming what did not happen. */
async function within<T>(work: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `timed out waiting for: ${what}` })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const nextMessage = (ws: WebSocket) => new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));

describe('passthrough WebSocket upgrades', () => {
  test('a proxy key upgrades; the upstream gets the joined path, the gateway\'s key, not the caller\'s; frames flow both ways', async () => {
    const from = upgrades.length;
    const opened = await open('/proxy/openai/realtime?model=gpt-4o-realtime', { authorization: `Bearer ${proxyKey}`, cookie: 'access_token=x', 'openai-beta': 'realtime=v1' });
    assert.ok('ws' in opened, JSON.stringify(opened));
    const seen = upgrades[from]!;
    assert.equal(seen.url, '/v1/realtime?api-version=7&model=gpt-4o-realtime');
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret');
    assert.equal(seen.headers.cookie, undefined);
    assert.equal(seen.headers['openai-beta'], 'realtime=v1');
    assert.ok(!JSON.stringify(seen.headers).includes(proxyKey));
    const reply = nextMessage(opened.ws);
    opened.ws.send('hello');
    assert.equal(await reply, 'echo:hello');
    opened.ws.close();
  });

  test('no credential: 401; a chat-only key: 403 naming proxy; nothing reaches the upstream', async () => {
    const from = upgrades.length;
    const anonymous = await open('/proxy/openai/realtime', {});
    assert.ok('status' in anonymous);
    assert.equal(anonymous.status, 401);
    assert.equal(JSON.parse(anonymous.body).error.code, 'AUTH_REQUIRED');
    const chatOnly = await open('/proxy/openai/realtime', { authorization: `Bearer ${chatKey}` });
    assert.ok('status' in chatOnly);
    assert.equal(chatOnly.status, 403);
    assert.deepEqual(JSON.parse(chatOnly.body).error.details, { requiredCapability: 'proxy' });
    assert.equal(upgrades.length, from);
  });

  test('a path that would leave the base path: 400 VALIDATION_ERROR, nothing upstream', async () => {
    const from = upgrades.length;
    const refused = await open('/proxy/openai/x%5c..%5c..%5cadmin', { authorization: `Bearer ${proxyKey}` });
    assert.ok('status' in refused);
    assert.equal(refused.status, 400);
    assert.equal(JSON.parse(refused.body).error.code, 'VALIDATION_ERROR');
    assert.equal(upgrades.length, from);
  });

  test('an unreachable upstream: 502 UPSTREAM_ERROR in the canonical envelope', async () => {
    const refused = await open('/proxy/down/realtime', { authorization: `Bearer ${proxyKey}` });
    assert.ok('status' in refused);
    assert.equal(refused.status, 502);
    assert.equal(JSON.parse(refused.body).error.code, 'UPSTREAM_ERROR');
  });

  test('an upstream that accepts TCP and never answers the upgrade: 504 UPSTREAM_TIMEOUT after upstream.headersTimeoutMs, its connection dropped', async () => {
    const started = Date.now();
    const connected = new Promise<Socket>((resolve) => silent.once('connection', resolve));
    // Without a deadline the caller would wait until the OS gives up: fail the test long before that.
    const refused = await within(open('/proxy/silent/realtime', { authorization: `Bearer ${proxyKey}` }), 'an answer to the upgrade', 10_000);
    const elapsed = Date.now() - started;
    assert.ok('status' in refused, 'the upgrade must not complete');
    assert.equal(refused.status, 504);
    assert.equal(JSON.parse(refused.body).error.code, 'UPSTREAM_TIMEOUT');
    assert.match(JSON.parse(refused.body).error.message, /upstream\.headersTimeoutMs/);
    assert.ok(elapsed >= HANDSHAKE_MS - 50, `answered after ${elapsed} ms`);
    const upstreamSide = await connected;
    await within(new Promise((resolve) => (upstreamSide.destroyed ? resolve(null) : upstreamSide.once('close', resolve))), 'the upstream connection to be dropped', 5_000);
  });

  test('an upstream that declines the upgrade: its answer passes through', async () => {
    const refused = await open('/proxy/openai/declined', { authorization: `Bearer ${proxyKey}` });
    assert.ok('status' in refused);
    assert.equal(refused.status, 403);
    assert.equal(refused.body, 'declined');
  });

  test('an open connection is closed when the gateway stops (last: it stops this file\'s gateway)', async () => {
    const opened = await open('/proxy/openai/realtime', { authorization: `Bearer ${proxyKey}` });
    assert.ok('ws' in opened);
    const closed = new Promise<void>((resolve) => opened.ws.once('close', () => resolve()));
    // Drains first: an open WebSocket counts as in flight until the shutdown deadline.
    await gw.gateway.close();
    await closed;
  });
});
