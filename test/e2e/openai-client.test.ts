/** The official openai client, unmodified but for its base URL, through the gateway to a loopback upstream. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

describe('openai client end to end', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl));
    key = await gw.createKey({ scopes: { capabilities: ['chat'] } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('a completion comes back with the routing headers, and the upstream saw the provider key only', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    assert.equal(data.choices[0]?.message.content, 'Hello world');
    assert.equal(data.usage?.total_tokens, 11);
    assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('x-provider'), 'openai');
    assert.equal(response.headers.get('x-model'), 'gpt-4o-mini-2024-07-18');

    const seen = fake.requests.at(-1)!;
    assert.equal(seen.path, '/v1/chat/completions');
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret');
    assert.ok(!JSON.stringify(seen.headers).includes(key), 'the caller key must never be forwarded');
    assert.equal(seen.body.model, 'gpt-4o-mini-2024-07-18');
    assert.deepEqual(seen.body.messages, [{ role: 'user', content: 'Say hello' }]);
  });

  test('a stream arrives chunk by chunk and ends cleanly; the usage chunk only when asked for', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true })
      .withResponse();
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(response.headers.get('x-provider'), 'openai');
    assert.equal(response.headers.get('x-model'), 'gpt-4o-mini-2024-07-18');
    assert.ok(response.headers.get('x-request-id'));
    let text = '';
    let finish: string | null = null;
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) sawUsage = true;
    }
    assert.equal(text, 'Hello world');
    assert.equal(finish, 'stop');
    assert.equal(sawUsage, false);
    const seen = fake.requests.at(-1)!;
    assert.deepEqual(seen.body.stream_options, { include_usage: true }, 'the gateway always asks upstream for usage');
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret');

    const withUsage = await client.chat.completions.create({
      model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of withUsage) if (chunk.usage) usage = chunk.usage;
    assert.deepEqual(usage, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
  });

  test('an incoming sane X-Request-ID is kept; an insane one is replaced', async () => {
    const kept = await client.chat.completions
      .create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'X-Request-ID': 'trace-abc.123' } })
      .withResponse();
    assert.equal(kept.response.headers.get('x-request-id'), 'trace-abc.123');
    assert.equal(kept.response.headers.get('x-model'), 'plain');
    const replaced = await client.chat.completions
      .create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'X-Request-ID': 'bad id with spaces' } })
      .withResponse();
    assert.notEqual(replaced.response.headers.get('x-request-id'), 'bad id with spaces');
  });

  test('x-api-key is accepted as the credential', async () => {
    const viaHeader = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', defaultHeaders: { authorization: null as unknown as string, 'x-api-key': key }, maxRetries: 0 });
    const result = await viaHeader.chat.completions.create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(result.choices[0]?.message.content, 'Hello world');
  });

  test('the client sees gateway errors as typed API errors', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError && (err.error as { code?: string }).code === 'MODEL_NOT_FOUND',
    );
    const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'aigw_sk_not-a-real-key', maxRetries: 0 });
    await assert.rejects(
      stranger.chat.completions.create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] }),
      (err: unknown) => err instanceof OpenAI.AuthenticationError && (err.error as { code?: string }).code === 'AUTH_INVALID_API_KEY',
    );
  });
});
