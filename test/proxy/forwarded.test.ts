/**
 * What passthrough requests (HTTP and WebSocket) tell the provider about the hop: a caller's own Forwarded,
 * X-Forwarded-* and X-Real-IP never reach it unless the caller is a trusted proxy; the gateway sets
 * X-Forwarded-Proto and X-Forwarded-Host, and X-Forwarded-For (the chain it believes) only when
 * server.proxyForwardClientAddress is on. Three gateways on loopback differ only in their server block.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { parseConfig } from '../helpers/config.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

/** What a caller (or a proxy in front of the gateway) may claim. */
const FORGED = {
  'x-forwarded-for': '198.51.100.66',
  forwarded: 'for=198.51.100.66;proto=https;host=evil.example',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'https',
  'x-forwarded-prefix': '/evil',
  'x-real-ip': '198.51.100.66',
};

let upstream: Server;
let wss: WebSocketServer;
const seen: IncomingHttpHeaders[] = [];
const gateways: Record<'untrusted' | 'trusted' | 'defaults', TestGateway | undefined> = { untrusted: undefined, trusted: undefined, defaults: undefined };
const keys: Record<string, string> = {};

before(async () => {
  upstream = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  wss = new WebSocketServer({ noServer: true });
  upstream.on('upgrade', (req, socket, head) => {
    seen.push(req.headers);
    wss.handleUpgrade(req, socket, head, (ws) => ws.close());
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const servers = {
    // trustProxy on, but the loopback peer is not among the trusted proxies: an ordinary untrusted caller.
    untrusted: 'server:\n  trustProxy: true\n  trustedProxies: [10.9.9.9/32]\n  proxyForwardClientAddress: true\n',
    // The default trusted proxies include loopback: the caller is a trusted proxy.
    trusted: 'server:\n  trustProxy: true\n  proxyForwardClientAddress: true\n',
    defaults: '',
  };
  for (const [name, server] of Object.entries(servers) as Array<[keyof typeof gateways, string]>) {
    const gw = await startTestGateway(chatConfig(base, server));
    gateways[name] = gw;
    keys[name] = await gw.createKey({ scopes: { capabilities: ['proxy'] } });
  }
});

after(async () => {
  for (const gw of Object.values(gateways)) await gw?.close();
  for (const client of wss?.clients ?? []) client.terminate();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

/** What the upstream received for one HTTP passthrough GET through `name`'s gateway. */
function viaHttp(name: keyof typeof gateways, headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  const gw = gateways[name]!;
  const { port } = new URL(gw.url);
  const from = seen.length;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/proxy/openai/models', headers: { authorization: `Bearer ${keys[name]}`, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        else resolve(seen[from]!);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the upstream received for one WebSocket upgrade through `name`'s gateway. */
function viaWebSocket(name: keyof typeof gateways, headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  const gw = gateways[name]!;
  const from = seen.length;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/proxy/openai/realtime`, { headers: { authorization: `Bearer ${keys[name]}`, ...headers } });
    ws.once('open', () => {
      ws.close();
      resolve(seen[from]!);
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

const hostOf = (name: keyof typeof gateways) => new URL(gateways[name]!.url).host;

function assertNothingForged(headers: IncomingHttpHeaders): void {
  assert.equal(headers.forwarded, undefined);
  assert.equal(headers['x-real-ip'], undefined);
  assert.equal(headers['x-forwarded-prefix'], undefined);
  assert.ok(!JSON.stringify(headers).includes('198.51.100.66'), JSON.stringify(headers));
  assert.ok(!JSON.stringify(headers).includes('evil'), JSON.stringify(headers));
}

for (const [transport, via] of [['HTTP', viaHttp], ['WebSocket', viaWebSocket]] as const) {
  describe(`forwarding headers (${transport})`, () => {
    test('an untrusted caller\'s forged Forwarded / X-Forwarded-* / X-Real-IP are dropped; the gateway sets its own', async () => {
      const headers = await via('untrusted', FORGED);
      assertNothingForged(headers);
      assert.equal(headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(headers['x-forwarded-proto'], 'http');
      assert.equal(headers['x-forwarded-host'], hostOf('untrusted'));
    });

    test('a trusted proxy: its X-Forwarded-For is cut to the hops the gateway believes, then the peer; its scheme and host are kept', async () => {
      const headers = await via('trusted', {
        'x-forwarded-for': '198.51.100.66, 203.0.113.7, 10.1.2.3',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'api.example.com',
        forwarded: 'for=198.51.100.66',
        'x-real-ip': '198.51.100.66',
      });
      // 10.1.2.3 is a trusted (private) hop, 203.0.113.7 is not: the client. What it wrote to its left is not believed.
      assert.equal(headers['x-forwarded-for'], '203.0.113.7, 10.1.2.3, 127.0.0.1');
      assert.equal(headers['x-forwarded-proto'], 'https');
      assert.equal(headers['x-forwarded-host'], 'api.example.com');
      assert.equal(headers.forwarded, undefined);
      assert.equal(headers['x-real-ip'], undefined);
    });

    test('a trusted proxy that sent no X-Forwarded-*: the gateway\'s own', async () => {
      const headers = await via('trusted', {});
      assert.equal(headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(headers['x-forwarded-proto'], 'http');
      assert.equal(headers['x-forwarded-host'], hostOf('trusted'));
    });

    test('by default the client address is not sent at all; scheme and host are; forged ones still dropped', async () => {
      const headers = await via('defaults', FORGED);
      assertNothingForged(headers);
      assert.equal(headers['x-forwarded-for'], undefined);
      assert.equal(headers['x-forwarded-proto'], 'http');
      assert.equal(headers['x-forwarded-host'], hostOf('defaults'));
    });
  });
}

test('server.proxyForwardClientAddress defaults to off and must be a boolean', async () => {
  const parse = (extra: string) => parseConfig(chatConfig('http://127.0.0.1:9/v1', extra), { file: '/tmp/aigw-forwarded/pipelines.yaml', env: {} });
  assert.equal((await parse('')).config.server.proxyForwardClientAddress, false);
  assert.equal((await parse('server:\n  proxyForwardClientAddress: true\n')).config.server.proxyForwardClientAddress, true);
  await assert.rejects(parse('server:\n  proxyForwardClientAddress: sometimes\n'));
});
