/**
 * Vertex AI beyond the conformance kit: the service-account token exchange (fetched once, reused, renewed after
 * expiry), the placeholder base URL filled from options, and the routing of Claude models to rawPredict.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';
import { parseConfig } from '../helpers/config.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { RoutingTable } from '../../core/dispatch/routing.ts';
import { GatewayError } from '../../core/errors.ts';
import vertexAi from '../../providers/vertex-ai/index.ts';
import { geminiResponse } from '../conformance/wires/gemini.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const PROJECT_PATH = '/v1/projects/p1/locations/europe-west4';
const hello = (model: string, fields: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...fields });

interface Seen {
  url: string;
  authorization: string | undefined;
  body: string;
}

/** One loopback server for the token endpoint and the model endpoints. */
async function startFake() {
  const seen: Seen[] = [];
  const assertions: string[] = [];
  let tokenStatus = 200;
  let issued = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/token') {
        assertions.push(new URLSearchParams(body).get('assertion') ?? '');
        if (tokenStatus !== 200) {
          res.writeHead(tokenStatus).end(JSON.stringify({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }));
          return;
        }
        issued += 1;
        res.end(JSON.stringify({ access_token: `ya29.token-${issued}`, expires_in: 3600, token_type: 'Bearer' }));
        return;
      }
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization, body });
      res.end(JSON.stringify(geminiResponse({ text: 'ok', toolCalls: [], finish: 'stop', usage: { prompt: 1, completion: 1 } }, 'gemini')));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    assertions,
    get issued() {
      return issued;
    },
    setTokenStatus(status: number) {
      tokenStatus = status;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('vertex-ai: service-account token exchange', () => {
  let fake: Awaited<ReturnType<typeof startFake>>;
  let gw: TestGateway;
  let key: string;
  let offsetMs = 0;

  before(async () => {
    fake = await startFake();
    // The key file arrives as an environment variable; a plain ${VAR} holding JSON reads as a mapping.
    const keyFile = JSON.stringify({ client_email: 'gw@p1.iam.gserviceaccount.com', private_key: PEM, private_key_id: 'kid-1', token_uri: `${fake.url}/token` });
    gw = await startTestGateway(`
providers:
  vertex-ai:
    baseUrl: ${fake.url}${PROJECT_PATH}
    options:
      serviceAccountKey: \${GOOGLE_SA_KEY}
models:
  - id: flash
    provider: vertex-ai
    upstreamModel: gemini-2.5-flash
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`, { env: { GOOGLE_SA_KEY: keyFile }, clock: { now: () => Date.now() + offsetMs } });
    key = await gw.createKey();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(() => fake.setTokenStatus(200));

  const call = () => postJson(`${gw.url}/v1/chat/completions`, hello('flash'), { authorization: `Bearer ${key}` });

  test('the token is fetched once, with a signed RS256 assertion, and reused', async () => {
    const before = fake.issued;
    assert.equal((await call()).status, 200);
    assert.equal((await call()).status, 200);
    const results = await Promise.all([call(), call(), call()]);
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200]);
    assert.equal(fake.issued - before, 1, 'one exchange for five requests');
    assert.ok(fake.seen.slice(-5).every((s) => s.authorization === `Bearer ya29.token-${fake.issued}`));
    assert.ok(fake.seen.every((s) => !s.authorization?.includes(key)), 'the caller\'s key never reaches Vertex');

    const [header, claims, signature] = fake.assertions.at(-1)!.split('.');
    assert.ok(verify('sha256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, 'base64url')));
    assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    const payload = JSON.parse(Buffer.from(claims!, 'base64url').toString());
    assert.equal(payload.iss, 'gw@p1.iam.gserviceaccount.com');
    assert.equal(payload.aud, `${fake.url}/token`);
    assert.equal(payload.scope, 'https://www.googleapis.com/auth/cloud-platform');
    assert.equal(payload.exp - payload.iat, 3600);
  });

  test('an expired token is exchanged again', async () => {
    assert.equal((await call()).status, 200);
    const before = fake.issued;
    offsetMs += 3600 * 1000;
    assert.equal((await call()).status, 200);
    assert.equal((await call()).status, 200);
    assert.equal(fake.issued - before, 1, 'renewed once after expiry');
    assert.equal(fake.seen.at(-1)!.authorization, `Bearer ya29.token-${fake.issued}`);
    const payload = JSON.parse(Buffer.from(fake.assertions.at(-1)!.split('.')[1]!, 'base64url').toString());
    assert.ok(Math.abs(payload.iat * 1000 - (Date.now() + offsetMs)) < 5000, 'the assertion is dated by the gateway clock');
  });

  test('a refused exchange is 502 UPSTREAM_ERROR and no model request is sent', async () => {
    offsetMs += 2 * 3600 * 1000;
    fake.setTokenStatus(400);
    const calls = fake.seen.length;
    const response = await call();
    assert.equal(response.status, 502);
    assert.equal(response.body.error.code, 'UPSTREAM_ERROR');
    assert.match(response.body.error.message, /token exchange failed: Invalid JWT Signature/);
    assert.equal(fake.seen.length, calls);
  });
});

describe('vertex-ai: base URL from options', () => {
  const config = (options: string, baseUrl = '') => `
providers:
  vertex-ai:
    apiKey: ya29.static${baseUrl}
    options:
${options}
models:
  - id: m
    provider: vertex-ai
    upstreamModel: gemini-2.5-pro
`;
  const targetOf = async (yaml: string): Promise<ProviderTarget> => {
    const loaded = await parseConfig(yaml, { file: '/tmp/pipelines.yaml', env: {} });
    return new RoutingTable(loaded.config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl).resolve('m').targets[0]!;
  };

  test('project and location fill the default base URL', async () => {
    const target = await targetOf(config('      project: my-proj\n      location: us-central1'));
    assert.equal(target.baseUrl, 'https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1');
    const built = vertexAi.chat!.toUpstream(hello('m') as ChatCompletionRequest, target, false);
    assert.equal(built.path, '/publishers/google/models/gemini-2.5-pro:generateContent');
  });

  test('location global is served by aiplatform.googleapis.com', async () => {
    const target = await targetOf(config('      project: my-proj\n      location: global'));
    assert.equal(vertexAi.chat!.toUpstream(hello('m') as ChatCompletionRequest, target, true).path,
      'https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  });

  test('without location (and without baseUrl) the config is refused, naming the option', async () => {
    await assert.rejects(parseConfig(config('      project: my-proj'), { file: '/tmp/pipelines.yaml', env: {} }), /options\.location/);
  });

  test('an explicit baseUrl wins over the options', async () => {
    const target = await targetOf(config('      project: my-proj\n      location: us-central1', '\n    baseUrl: https://vertex.internal/v1/projects/x/locations/y'));
    assert.equal(target.baseUrl, 'https://vertex.internal/v1/projects/x/locations/y');
  });
});

describe('vertex-ai: Claude models', () => {
  const target = (upstreamModel: string): ProviderTarget => ({
    slug: 'vertex-ai', baseUrl: `https://europe-west4-aiplatform.googleapis.com${PROJECT_PATH}`, apiKey: 'ya29.x', headers: {}, options: {}, upstreamModel,
  });
  const req = (fields: Partial<ChatCompletionRequest> = {}) => ({ ...hello('m'), ...fields }) as ChatCompletionRequest;
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof GatewayError);
      return err.code;
    }
    return 'no error';
  };

  test('claude-* models go to rawPredict / streamRawPredict with the Messages body, anthropic_version and no model', () => {
    const built = vertexAi.chat!.toUpstream(req({ max_tokens: 10 }), target('claude-opus-4-1@20250805'), false);
    assert.equal(built.path, '/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict');
    const body = JSON.parse(built.body!);
    assert.equal(body.anthropic_version, 'vertex-2023-10-16');
    assert.equal(body.model, undefined);
    assert.equal(body.max_tokens, 10);
    assert.deepEqual(body.messages, [{ role: 'user', content: 'hi' }]);
    assert.equal(built.headers['x-api-key'], undefined, 'Vertex takes the Bearer token authorize adds, not an Anthropic key');
    const streamed = vertexAi.chat!.toUpstream(req(), target('claude-opus-4-1@20250805'), true);
    assert.equal(streamed.path, '/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict');
    assert.equal(JSON.parse(streamed.body!).stream, true);
  });

  test('Gemini models and resource paths go to generateContent', () => {
    assert.equal(vertexAi.chat!.toUpstream(req(), target('gemini-2.5-flash'), false).path, '/publishers/google/models/gemini-2.5-flash:generateContent');
    assert.equal(vertexAi.chat!.toUpstream(req(), target('endpoints/1234567'), false).path, '/endpoints/1234567:generateContent');
  });

  test('Claude Messages answers and Google-shaped Vertex errors are both read', async () => {
    const answer = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } };
    const completion = vertexAi.chat!.fromUpstream(answer, target('claude-haiku-4-5@20251001'), req());
    assert.equal(completion.choices[0]!.message.content, 'Hi');
    assert.equal(completion.usage?.prompt_tokens, 3);
    const quota = vertexAi.mapError(429, { error: { code: 429, message: 'Quota exceeded for aiplatform.googleapis.com', status: 'RESOURCE_EXHAUSTED' } }, target('claude-haiku-4-5@20251001'));
    assert.equal(quota.code, 'UPSTREAM_RATE_LIMITED');
    assert.match(quota.message, /Quota exceeded/);
    const overloaded = vertexAi.mapError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, target('claude-haiku-4-5@20251001'));
    assert.equal(overloaded.code, 'UPSTREAM_ERROR');
    assert.match(overloaded.message, /Overloaded/);
  });

  test('what only the Gemini models have is refused for Claude, and the reverse, before any I/O', () => {
    assert.equal(refusal(() => vertexAi.chat!.toUpstream(req({ n: 2 }), target('claude-sonnet-4@20250514'), false)), 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(refusal(() => vertexAi.chat!.toUpstream(req({ tools: [{ type: 'built_in', built_in: 'search_grounding' }] }), target('claude-sonnet-4@20250514'), false)), 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(refusal(() => vertexAi.chat!.toUpstream(req({ tools: [{ type: 'built_in', built_in: 'computer_use', config: { display_width_px: 1, display_height_px: 1 } }] }), target('gemini-2.5-pro'), false)), 'CAPABILITY_NOT_SUPPORTED');
    assert.equal(refusal(() => vertexAi.chat!.toUpstream(req({ n: 2 }), target('gemini-2.5-pro'), false)), 'no error');
  });

  test('through the gateway: n > 1 on a Claude model is 400 CAPABILITY_NOT_SUPPORTED and nothing is sent', async () => {
    const fake = await startFake();
    const gw = await startTestGateway(`
providers:
  vertex-ai:
    baseUrl: ${fake.url}${PROJECT_PATH}
    apiKey: ya29.static
models:
  - id: claude
    provider: vertex-ai
    upstreamModel: claude-sonnet-4@20250514
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`);
    try {
      const response = await postJson(`${gw.url}/v1/chat/completions`, hello('claude', { n: 2 }), { authorization: `Bearer ${await gw.createKey()}` });
      assert.equal(response.status, 400);
      assert.equal(response.body.error.code, 'CAPABILITY_NOT_SUPPORTED');
      assert.equal(fake.seen.length, 0);
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  test('without apiKey or serviceAccountKey a request fails with a message naming both', async () => {
    const request = vertexAi.chat!.toUpstream(req(), target('gemini-2.5-pro'), false);
    const io = { fetchJson: async () => ({ status: 500, body: null }), cached: async () => 'x', now: () => Date.now() };
    await assert.rejects(vertexAi.authorize!(request, { ...target('gemini-2.5-pro'), apiKey: undefined as never }, io, new AbortController().signal), /set apiKey .* or options\.serviceAccountKey/);
    const authorized = await vertexAi.authorize!(request, target('gemini-2.5-pro'), io, new AbortController().signal);
    assert.equal(authorized.headers.authorization, 'Bearer ya29.x');
  });
});
