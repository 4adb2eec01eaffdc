/**
 * watsonx.ai: the IAM token exchange (once for many requests, again after expiry, a failure named), the
 * {region} base URL, and the request and answer mapping beyond the conformance kit.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { parseConfig } from '../helpers/config.ts';
import type { ProviderIO, ProviderTarget } from '../../core/dispatch/provider.ts';
import { RoutingTable } from '../../core/dispatch/routing.ts';
import { GatewayError } from '../../core/errors.ts';
import watsonx from '../../providers/watsonx/index.ts';
import { iamToken } from '../../providers/watsonx/iam.ts';
import type { RecordedUpstreamRequest } from '../conformance/kit.ts';
import { iamRoute, watsonxAnswer, watsonxStreamEvents } from '../conformance/wires/watsonx.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const KEY = 'ibm-cloud-key-1';
const hello = { text: 'Hello.', toolCalls: [], finish: 'stop' as const, usage: { prompt: 9, completion: 2 } };

/** IAM and the chat API on one loopback server. */
async function startWatsonxFake(now: () => number) {
  const chats: RecordedUpstreamRequest[] = [];
  let exchanges = 0;
  let iamStatus = 200;
  const iam = iamRoute({ apiKey: KEY, token: (n) => `tok-${n}`, now, onExchange: () => exchanges++ });
  const server: Server = createServer((raw: IncomingMessage, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (p: Buffer) => parts.push(p));
    raw.on('end', () => {
      const rawBody = Buffer.concat(parts).toString('utf8');
      const req: RecordedUpstreamRequest = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, rawBody, json: rawBody.startsWith('{') ? JSON.parse(rawBody) : null };
      if (req.url === '/identity/token' && iamStatus !== 200) {
        res.writeHead(iamStatus, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errorCode: 'BXNIM0400E', errorMessage: 'IAM is having a bad day' }));
        return;
      }
      if (iam(req, res)) return;
      chats.push(req);
      if (req.url.startsWith('/ml/v1/text/chat_stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(watsonxStreamEvents(hello, req.json.model_id).join(''));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(watsonxAnswer(hello, req.json.model_id)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    chats,
    exchanges: () => exchanges,
    failIam: (status: number) => { iamStatus = status; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const config = (url: string, apiKey = KEY) => `
routing:
  retries: 0
providers:
  watsonx:
    baseUrl: ${url}/ml/v1
    apiKey: ${apiKey}
    options:
      projectId: proj-1
      iamUrl: ${url}/identity/token
models:
  - id: granite
    provider: watsonx
    upstreamModel: ibm/granite-3-8b-instruct
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`;

describe('watsonx: the IAM token exchange', () => {
  let fake: Awaited<ReturnType<typeof startWatsonxFake>>;
  let gw: TestGateway;
  let auth: Record<string, string>;
  let now = Date.parse('2026-03-01T09:00:00Z');

  before(async () => {
    fake = await startWatsonxFake(() => now);
    gw = await startTestGateway(config(fake.url), { clock: { now: () => now } });
    auth = { authorization: `Bearer ${await gw.createKey()}` };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const ask = (stream = false) => postJson(`${gw.url}/v1/chat/completions`, { model: 'granite', stream, messages: [{ role: 'user', content: 'hi' }] }, auth);

  test('the key is exchanged once for many requests, streams included; the chat API only ever sees the token', async () => {
    for (const stream of [false, false, true, false]) assert.equal((await ask(stream)).status, 200);
    assert.equal(fake.exchanges(), 1);
    assert.equal(fake.chats.length, 4);
    for (const chat of fake.chats) {
      assert.equal(chat.headers.authorization, 'Bearer tok-1');
      assert.ok(!chat.rawBody.includes(KEY), 'the API key never reaches the chat API');
      assert.equal(chat.json.project_id, 'proj-1');
    }
  });

  test('an expired token is exchanged again', async () => {
    now += 3_600_000;
    assert.equal((await ask()).status, 200);
    assert.equal(fake.exchanges(), 2);
    assert.equal(fake.chats.at(-1)!.headers.authorization, 'Bearer tok-2');
    assert.equal((await ask()).status, 200);
    assert.equal(fake.exchanges(), 2);
  });

  test('concurrent requests share one exchange', async () => {
    now += 3_600_000;
    const answers = await Promise.all(Array.from({ length: 6 }, () => ask()));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    assert.equal(fake.exchanges(), 3);
    assert.ok(fake.chats.slice(-6).every((c) => c.headers.authorization === 'Bearer tok-3'));
  });

  test('IAM failing -> 502 UPSTREAM_ERROR naming IAM, and the chat API is not called', async () => {
    now += 3_600_000;
    fake.failIam(500);
    const before = fake.chats.length;
    const answer = await ask();
    fake.failIam(200);
    assert.equal(answer.status, 502);
    assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
    assert.match(answer.body.error.message, /IAM/);
    assert.match(answer.body.error.message, /bad day/);
    assert.equal(fake.chats.length, before);
  });
});

describe('watsonx: a key IAM refuses', () => {
  let fake: Awaited<ReturnType<typeof startWatsonxFake>>;
  let gw: TestGateway;
  before(async () => {
    fake = await startWatsonxFake(Date.now);
    gw = await startTestGateway(config(fake.url, 'not-the-key'));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('-> 502 UPSTREAM_ERROR naming IAM and its message, not the caller\'s 400', async () => {
    const answer = await postJson(`${gw.url}/v1/chat/completions`, { model: 'granite', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${await gw.createKey()}` });
    assert.equal(answer.status, 502);
    assert.equal(answer.body.error.code, 'UPSTREAM_ERROR');
    assert.match(answer.body.error.message, /IBM Cloud IAM refused the gateway's API key \(HTTP 400\).*BXNIM0415E/);
    assert.equal(fake.chats.length, 0);
  });
});

describe('watsonx: iamToken', () => {
  const target: ProviderTarget = { slug: 'watsonx', baseUrl: 'https://us-south.ml.cloud.ibm.com/ml/v1', apiKey: 'k', headers: {}, options: { iamUrl: 'https://iam.test/identity/token' }, upstreamModel: 'm' };
  const io = (fetchJson: ProviderIO['fetchJson'], now = 1_000_000): ProviderIO & { expiries: number[] } => {
    const expiries: number[] = [];
    return { fetchJson, now: () => now, expiries, cached: async (_key, fetch) => { const fresh = await fetch(new AbortController().signal); expiries.push(fresh.expiresAt); return fresh.value; } };
  };

  test('an unreachable IAM -> UPSTREAM_ERROR naming the token endpoint', async () => {
    const down = io(async () => { throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }); });
    await assert.rejects(iamToken(target, down), (e: GatewayError) => e.code === 'UPSTREAM_ERROR' && /IAM token endpoint https:\/\/iam\.test\/identity\/token could not be reached \(ECONNREFUSED\)/.test(e.message));
  });

  test('the form body, expiration, expires_in and a missing token', async () => {
    let sent: { url: string; body?: string; headers?: Record<string, string> } | undefined;
    const ok = io(async (url, init) => {
      sent = { url, body: init.body, headers: init.headers };
      return { status: 200, body: { access_token: 't', expires_in: 3600 } };
    });
    assert.equal(await iamToken(target, ok), 't');
    assert.equal(sent!.url, 'https://iam.test/identity/token');
    assert.equal(sent!.headers!['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(sent!.body, 'grant_type=urn%3Aibm%3Aparams%3Aoauth%3Agrant-type%3Aapikey&apikey=k');
    assert.deepEqual(ok.expiries, [1_000_000 + 3_600_000]);
    const absolute = io(async () => ({ status: 200, body: { access_token: 't', expiration: 1_700_000_000, expires_in: 3600 } }));
    await iamToken(target, absolute);
    assert.deepEqual(absolute.expiries, [1_700_000_000_000]);
    const empty = io(async () => ({ status: 200, body: { token_type: 'Bearer' } }));
    await assert.rejects(iamToken(target, empty), /without an access_token/);
  });

  test('IAM throttling stays a rate limit', async () => {
    const busy = io(async () => ({ status: 429, body: { errorMessage: 'slow down' } }));
    await assert.rejects(iamToken(target, busy), (e: GatewayError) => e.code === 'UPSTREAM_RATE_LIMITED' && /IAM/.test(e.message));
  });
});

describe('watsonx: configuration', () => {
  const load = (options: string, baseUrl = '') => parseConfig(`
providers:
  watsonx:
    apiKey: k
${baseUrl}${options}
models:
  - id: granite
    provider: watsonx
`, { file: '/tmp/watsonx-test.yaml', env: { AIGW_DATA_DIR: '/tmp/aigw-watsonx-unused' } });
  const baseUrlOf = async (options: string) => {
    const loaded = await load(options);
    return new RoutingTable(loaded.config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl).resolve('granite').targets[0]!.baseUrl;
  };

  test('options.region fills the default base URL; us-south by default', async () => {
    assert.equal(await baseUrlOf('    options:\n      region: eu-de\n      projectId: p'), 'https://eu-de.ml.cloud.ibm.com/ml/v1');
    assert.equal(await baseUrlOf('    options:\n      spaceId: s'), 'https://us-south.ml.cloud.ibm.com/ml/v1');
  });

  test('a project or a space is required', async () => {
    await assert.rejects(load('    options:\n      region: eu-de'), /projectId|spaceId/);
  });
});

describe('watsonx: request and answers', () => {
  const target: ProviderTarget = { slug: 'watsonx', baseUrl: 'https://x/ml/v1', headers: {}, options: { spaceId: 'space-9', timeLimitMs: 5000 }, upstreamModel: 'meta-llama/llama-3-3-70b-instruct' };
  const chat = watsonx.chat!;
  const build = (extra: Partial<ChatCompletionRequest>, stream = false) =>
    chat.toUpstream({ model: 'caller', messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'hi' }], ...extra }, target, stream);

  test('the path names the version; the body the model, the space and watsonx\'s parameter names', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    const built = build({ tools, tool_choice: 'required', stop: 'x', reasoning_effort: 'minimal', max_completion_tokens: 30, response_format: { type: 'json_object' } }, true);
    assert.equal(built.path, '/text/chat_stream?version=2025-02-11');
    const body = JSON.parse(built.body!);
    assert.equal(body.model_id, 'meta-llama/llama-3-3-70b-instruct');
    assert.equal(body.space_id, 'space-9');
    assert.equal(body.project_id, undefined);
    assert.deepEqual(body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.deepEqual(
      { option: body.tool_choice_option, stop: body.stop, effort: body.reasoning_effort, max: body.max_completion_tokens, time: body.time_limit, format: body.response_format },
      { option: 'required', stop: ['x'], effort: 'low', max: 30, time: 5000, format: { type: 'json_object' } },
    );
    assert.equal(built.headers.authorization, undefined, 'the token is added by authorize');
    const named = JSON.parse(build({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).body!);
    assert.deepEqual(named.tool_choice, { type: 'function', function: { name: 'f' } });
    assert.equal(named.tool_choice_option, undefined);
    assert.equal(JSON.parse(build({ tool_choice: 'auto' }).body!).tool_choice_option, undefined, 'no tools, no tool choice');
  });

  const answer = (finish: string, message: Record<string, unknown> = { role: 'assistant', content: 'x' }) =>
    ({ id: 'a', model_id: 'm', created: 1, choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

  test('finish reasons: time_limit is a cut, stop beside tool calls is tool_calls, error fails', () => {
    assert.equal(chat.fromUpstream(answer('time_limit'), target, {} as ChatCompletionRequest).choices[0]!.finish_reason, 'length');
    const calls = [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }];
    assert.equal(chat.fromUpstream(answer('stop', { role: 'assistant', content: '', tool_calls: calls }), target, {} as ChatCompletionRequest).choices[0]!.finish_reason, 'tool_calls');
    assert.throws(() => chat.fromUpstream(answer('error'), target, {} as ChatCompletionRequest), (e: GatewayError) => e.code === 'UPSTREAM_ERROR');
  });

  test('reasoning_content stays out of the answer', () => {
    const result = chat.fromUpstream(answer('stop', { role: 'assistant', content: 'Yes.', reasoning_content: 'thinking...' }), target, {} as ChatCompletionRequest);
    assert.equal(result.choices[0]!.message.content, 'Yes.');
    const decoder = chat.streamDecoder(target, {} as ChatCompletionRequest);
    const out = decoder.event({ event: 'message', data: JSON.stringify({ id: 'a', choices: [{ index: 0, delta: { reasoning_content: 'hmm' }, finish_reason: null }] }) });
    assert.deepEqual(out.chunks[0]!.choices[0]!.delta, {});
  });

  test('errors: watsonx\'s errors[0].message; an error inside the stream fails it', () => {
    const err = watsonx.mapError(400, { errors: [{ code: 'model_not_supported', message: 'Model x is not supported' }], trace: 't', status_code: 400 }, target);
    assert.equal(err.code, 'UPSTREAM_BAD_REQUEST');
    assert.match(err.message, /Model x is not supported/);
    assert.equal(watsonx.mapError(401, { errors: [{ message: 'expired token' }] }, target).code, 'UPSTREAM_ERROR');
    const decoder = chat.streamDecoder(target, {} as ChatCompletionRequest);
    assert.throws(() => decoder.event({ event: 'error', data: JSON.stringify({ errors: [{ message: 'boom' }] }) }), /boom/);
  });
});
