/** The passthrough sends each provider's credential where that provider expects it, keeping the caller's body type. */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('passthrough credentials per provider', () => {
  let server: ReturnType<typeof createServer>;
  let base = '';
  let gw: TestGateway;
  let auth: Record<string, string>;
  const seen: IncomingHttpHeaders[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startTestGateway(`
providers:
  openai:
    baseUrl: ${base}/openai
    apiKey: sk-openai
    options: { organization: org-1 }
  anthropic:
    baseUrl: ${base}/anthropic
    apiKey: sk-ant
  gemini:
    baseUrl: ${base}/gemini
    apiKey: AIza-gemini
  azure-openai:
    baseUrl: ${base}/azure
    apiKey: azure-key
`);
    auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities: ['proxy'] } })}` };
  });
  after(async () => {
    await gw.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const cases: Array<[string, Record<string, string>, string[]]> = [
    ['openai', { authorization: 'Bearer sk-openai', 'openai-organization': 'org-1' }, ['x-api-key']],
    ['anthropic', { 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' }, ['authorization']],
    ['gemini', { 'x-goog-api-key': 'AIza-gemini' }, ['authorization', 'x-api-key']],
    ['azure-openai', { 'api-key': 'azure-key' }, ['authorization', 'x-api-key']],
  ];
  for (const [provider, expected, absent] of cases) {
    test(`${provider}: ${Object.keys(expected).join(', ')}; the caller's credential and content type untouched`, async () => {
      const response = await fetch(`${gw.url}/proxy/${provider}/some/path`, {
        method: 'POST',
        headers: { ...auth, 'x-api-key': 'callers-own', 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz--\r\n',
      });
      assert.equal(response.status, 200);
      const headers = seen.at(-1)!;
      for (const [name, value] of Object.entries(expected)) assert.equal(headers[name], value, name);
      for (const name of absent) assert.notEqual(headers[name], 'callers-own', name);
      assert.ok(!JSON.stringify(headers).includes(auth.authorization!.slice(7)), 'the caller key never reaches the provider');
      assert.equal(headers['content-type'], 'multipart/form-data; boundary=xyz');
    });
  }
});
