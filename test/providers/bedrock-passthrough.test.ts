/**
 * Bedrock behind the passthrough and behind chat, against a loopback fake that checks SigV4 as AWS does: it
 * rebuilds the canonical request from what it received (method, raw path, query, the signed headers, and the
 * body's real SHA-256 unless x-amz-content-sha256 says UNSIGNED-PAYLOAD), signs it with the secret, and answers
 * 403 SignatureDoesNotMatch when the signatures differ. The verifier is written here, apart from the signer.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const ACCESS_KEY = 'AKIDEXAMPLEGATEWAY';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLETOKEN';
const REGION = 'eu-west-3';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

interface Verdict {
  ok: boolean;
  reason: string;
  payload: string;
}

/** AWS's check, from the received request alone. */
function verify(req: IncomingMessage, body: Buffer): Verdict {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(String(req.headers.authorization));
  if (!auth) return { ok: false, reason: 'IncompleteSignature', payload: '' };
  const [, keyId, day, region, service, signedList, signature] = auth as unknown as string[];
  if (keyId !== ACCESS_KEY || region !== REGION || service !== 'bedrock') return { ok: false, reason: 'InvalidClientTokenId', payload: '' };
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!date.startsWith(day!)) return { ok: false, reason: 'SignatureDoesNotMatch: date', payload: '' };
  const signed = signedList!.split(';');
  for (const required of ['host', 'x-amz-date']) if (!signed.includes(required)) return { ok: false, reason: `${required} not signed`, payload: '' };
  const declared = req.headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== 'UNSIGNED-PAYLOAD' && declared !== sha256(body)) return { ok: false, reason: 'XAmzContentSHA256Mismatch', payload: '' };
  const payload = declared === 'UNSIGNED-PAYLOAD' ? 'UNSIGNED-PAYLOAD' : sha256(body);
  const [rawPath, rawQuery = ''] = req.url!.split('?', 2) as [string, string?];
  const path = `/${rawPath.split('/').filter((s) => s !== '').map((s) => rfc3986(s)).join('/')}${rawPath.endsWith('/') && rawPath !== '/' ? '/' : ''}`;
  const query = rawQuery.split('&').filter(Boolean).map((pair) => {
    const [name, value = ''] = pair.split('=', 2) as [string, string?];
    return [rfc3986(safeDecode(name)), rfc3986(safeDecode(value))] as const;
  }).sort(([an, av], [bn, bv]) => (an === bn ? (av < bv ? -1 : 1) : an < bn ? -1 : 1)).map(([n, v]) => `${n}=${v}`).join('&');
  const headers = signed.map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, path, query, headers, signed.join(';'), payload].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, day!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n')).digest();
  const ok = timingSafeEqual(expected, Buffer.from(signature!, 'hex'));
  return { ok, reason: ok ? '' : 'SignatureDoesNotMatch', payload };
}

interface Received {
  url: string;
  verdict: Verdict;
  headers: IncomingMessage['headers'];
  bytes: number;
}

let fake: Server;
let fakeUrl: string;
const received: Received[] = [];
let gw: TestGateway;
let key: string;

before(async () => {
  fake = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const verdict = verify(req, body);
      received.push({ url: req.url!, verdict, headers: req.headers, bytes: body.length });
      if (!verdict.ok) {
        res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': `${verdict.reason}:http://internal.amazon.com/coral/com.amazon.coral.service/` });
        res.end(JSON.stringify({ message: `The request signature we calculated does not match the signature you provided (${verdict.reason})` }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url!.includes('/converse')) {
        res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'signed ok' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }));
      } else {
        res.end(JSON.stringify({ bytes: body.length }));
      }
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  gw = await startTestGateway(`
routing:
  retries: 0
providers:
  bedrock:
    baseUrl: ${fakeUrl}/aws
    options:
      region: ${REGION}
      accessKeyId: ${ACCESS_KEY}
      secretAccessKey: ${SECRET}
      sessionToken: ${SESSION_TOKEN}
models:
  - id: claude
    provider: bedrock
    upstreamModel: anthropic.claude-3-5-sonnet-20240620-v1:0
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
  key = await gw.createKey({ scopes: { capabilities: ['chat', 'proxy'] } });
});
after(async () => {
  await gw?.close();
  fake?.closeAllConnections();
  await new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve()));
});

/** A passthrough call on node:http: `chunked` sends the body without a Content-Length. */
function proxyCall(method: string, path: string, body?: string, options: { chunked?: boolean; headers?: Record<string, string> } = {}): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (body !== undefined && !options.chunked) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.url}/proxy/bedrock${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    if (body !== undefined && options.chunked) {
      // Two writes: node:http frames them as chunks.
      req.write(body.slice(0, 5));
      req.end(body.slice(5));
    } else {
      req.end(body);
    }
  });
}

const MODEL_PATH = '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0';

describe('bedrock passthrough: SigV4 that AWS would accept', () => {
  test('POST with a body (Content-Length): signed as UNSIGNED-PAYLOAD, accepted, the body arrives whole', async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    const from = received.length;
    const answer = await proxyCall('POST', `${MODEL_PATH}/invoke`, body);
    const seen = received[from]!;
    assert.equal(seen.verdict.reason, '', `the fake refused the signature: ${answer.text}`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(seen.url, `/aws${MODEL_PATH}/invoke`);
    assert.equal(seen.headers['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
    assert.equal(seen.headers['x-amz-security-token'], SESSION_TOKEN);
    assert.equal(seen.bytes, Buffer.byteLength(body));
  });

  test('a chunked body, a query and a model ARN with %2F: accepted', async () => {
    const body = '{"inputText":"a chunked body"}';
    const from = received.length;
    const arn = 'arn%3Aaws%3Abedrock%3Aeu-west-3%3A123456789012%3Ainference-profile%2Feu.anthropic.claude-v1%3A0';
    const answer = await proxyCall('POST', `/model/${arn}/invoke?trace=ENABLED&b=2`, body, { chunked: true });
    assert.equal(received[from]!.verdict.reason, '', answer.text);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(received[from]!.bytes, Buffer.byteLength(body));
  });

  test('GET without a body is signed over the empty payload and accepted', async () => {
    const from = received.length;
    const answer = await proxyCall('GET', '/async-invoke?maxResults=5');
    assert.equal(received[from]!.verdict.reason, '', answer.text);
    assert.equal(received[from]!.headers['x-amz-content-sha256'], undefined);
    assert.equal(answer.status, 200, answer.text);
  });

  test('a caller\'s own AWS signing headers are replaced, not forwarded under the gateway\'s signature', async () => {
    const from = received.length;
    const answer = await proxyCall('POST', `${MODEL_PATH}/invoke`, '{"x":1}', {
      headers: { 'x-amz-security-token': 'callers-token', 'x-amz-date': '20000101T000000Z', 'x-amz-content-sha256': sha256('something else') },
    });
    assert.equal(received[from]!.verdict.reason, '', answer.text);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(received[from]!.headers['x-amz-security-token'], SESSION_TOKEN);
    assert.equal(received[from]!.headers['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
  });
});

describe('bedrock chat: the translated call\'s body is hashed and verified', () => {
  test('a Converse call passes the same verifier with the body\'s real hash', async () => {
    const from = received.length;
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    assert.equal(received[from]!.verdict.reason, '', text);
    assert.equal(response.status, 200, text);
    assert.notEqual(received[from]!.verdict.payload, 'UNSIGNED-PAYLOAD');
    assert.equal(JSON.parse(text).choices[0].message.content, 'signed ok');
  });
});
