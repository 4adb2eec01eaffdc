/**
 * Bedrock through a gateway: exception frames mid-stream, usage only from metadata, error types, refusals
 * before any I/O, and the base URL filled from options.region.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import { parseConfig } from '../helpers/config.ts';
import { RoutingTable } from '../../core/dispatch/routing.ts';
import { assemble } from '../conformance/kit.ts';
import { bedrockErrorBody, bedrockEvent, bedrockException } from '../conformance/wires/bedrock.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('bedrock: through the gateway', () => {
  let gw: TestGateway;
  let upstream: { url: string; requests: Array<{ url: string; body: string }>; reply: (req: IncomingMessage, res: ServerResponse) => void; close(): Promise<void> };
  let key: string;

  before(async () => {
    const requests: Array<{ url: string; body: string }> = [];
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (p: Buffer) => parts.push(p));
      req.on('end', () => {
        requests.push({ url: req.url ?? '', body: Buffer.concat(parts).toString('utf8') });
        upstream.reply(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    upstream = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, reply: () => {},
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
    gw = await startTestGateway(`
routing:
  retries: 0
providers:
  bedrock:
    baseUrl: ${upstream.url}
    apiKey: ABSK-gateway
    options:
      region: us-east-1
models:
  - id: claude
    provider: bedrock
    upstreamModel: anthropic.claude-3-5-sonnet-20240620-v1:0
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const streamFrames = (frames: Uint8Array[]) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    for (const frame of frames) res.write(frame);
    res.end();
  };
  const chat = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/chat/completions`, { model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...body }, { authorization: `Bearer ${key}` });
  const sseData = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));

  test('an exception frame after the first text ends the stream with the error event, and no [DONE]', async () => {
    upstream.reply = streamFrames([
      bedrockEvent('messageStart', '{"role":"assistant","p":"ab"}'),
      bedrockEvent('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"abc"}'),
      bedrockException('throttlingException', 'Too many tokens, please wait before trying again.'),
    ]);
    const { status, body } = await chat({ stream: true });
    assert.equal(status, 200);
    const data = sseData(body as string);
    assert.equal(data.includes('[DONE]'), false);
    assert.equal(assemble(data.slice(0, -1).map((d) => JSON.parse(d) as ChatCompletionChunk)).text, 'Hel');
    const { error } = JSON.parse(data.at(-1)!) as { error: { code: string; message: string } };
    assert.equal(error.code, 'UPSTREAM_RATE_LIMITED');
    assert.match(error.message, /Too many tokens/);
  });

  test('usage from metadata reaches the caller who asked for it, and only that caller', async () => {
    upstream.reply = streamFrames([
      bedrockEvent('messageStart', '{"role":"assistant"}'),
      bedrockEvent('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hi!"}}'),
      bedrockEvent('contentBlockStop', '{"contentBlockIndex":0}'),
      bedrockEvent('messageStop', '{"stopReason":"end_turn"}'),
      bedrockEvent('metadata', '{"usage":{"inputTokens":12,"outputTokens":3,"totalTokens":15},"metrics":{"latencyMs":9}}'),
    ]);
    const asked = sseData((await chat({ stream: true, stream_options: { include_usage: true } })).body as string);
    const chunks = asked.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as ChatCompletionChunk);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    assert.equal(chunks.slice(0, -1).some((c) => c.usage), false);
    const notAsked = sseData((await chat({ stream: true })).body as string).filter((d) => d !== '[DONE]');
    assert.equal(notAsked.some((d) => (JSON.parse(d) as ChatCompletionChunk).usage), false);
    assert.match(upstream.requests.at(-1)!.url, /^\/model\/anthropic\.claude-3-5-sonnet-20240620-v1%3A0\/converse-stream$/);
  });

  test('an HTTP error keeps its x-amzn-errortype and message', async () => {
    upstream.reply = (_req, res) => {
      const error = bedrockErrorBody(400, 'The model returned the following errors: max_tokens: 100000 > 8192');
      res.writeHead(400, { 'content-type': 'application/json', ...error.headers });
      res.end(error.body);
    };
    const { status, body } = await chat({});
    assert.equal(status, 400);
    assert.equal(body.error.code, 'UPSTREAM_BAD_REQUEST');
    assert.deepEqual(body.error.details.upstreamError, { type: 'ValidationException', message: 'The model returned the following errors: max_tokens: 100000 > 8192' });
  });

  test('n > 1, image URLs and built-in tools are refused with 400 CAPABILITY_NOT_SUPPORTED before any I/O', async () => {
    const before = upstream.requests.length;
    for (const body of [
      { n: 2 },
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] },
      { tools: [{ type: 'built_in', built_in: 'web_search' }] },
    ]) {
      const { status, body: answer } = await chat(body);
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(answer.error.code, 'CAPABILITY_NOT_SUPPORTED');
    }
    assert.equal(upstream.requests.length, before);
  });
});

describe('bedrock: the base URL from options.region', () => {
  const config = (block: string) => `
providers:
  bedrock:
${block}
models:
  - id: m
    provider: bedrock
    upstreamModel: amazon.nova-pro-v1:0
`;
  test('the region fills https://bedrock-runtime.{region}.amazonaws.com', async () => {
    const loaded = await parseConfig(config('    options:\n      region: eu-central-1'), { file: '/tmp/pipelines.yaml', env: {} });
    const routing = new RoutingTable(loaded.config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl);
    assert.equal(routing.resolve('m').targets[0]!.baseUrl, 'https://bedrock-runtime.eu-central-1.amazonaws.com');
  });

  test('without region and without baseUrl the config is refused, naming options.region', async () => {
    await assert.rejects(parseConfig(config('    apiKey: x'), { file: '/tmp/pipelines.yaml', env: {} }), /options\.region/);
  });

  test('a written provider block needs somewhere to go even when no model routes to it (the passthrough may)', async () => {
    await assert.rejects(
      parseConfig('providers:\n  bedrock:\n    apiKey: x\n', { file: '/tmp/pipelines.yaml', env: {} }),
      (err: Error) => /providers\/bedrock: provider "bedrock" fills its default base URL .* set options\.region/.test(err.message),
    );
    const routed = await parseConfig('providers:\n  bedrock:\n    apiKey: x\n    options:\n      region: eu-west-1\n', { file: '/tmp/pipelines.yaml', env: {} });
    assert.equal(routed.config.providers.bedrock?.apiKey, 'x');
  });
});
