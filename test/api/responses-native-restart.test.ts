/**
 * Native continuations across a gateway restart on the same data folder: the provider forgot the first response
 * (the whole stored conversation goes up instead), and a provider now served through chat (nativeResponses:
 * false) replays the stored native items it can carry, leaving out reasoning and the provider's own tool items.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { createGateway } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { startFakeResponsesApi } from '../fakes/openai-responses.ts';
import { parseConfig } from '../helpers/config.ts';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { nativeConfig } from './responses-native-fixture.ts';

/** A second gateway on the first one's data folder, with another configuration. */
async function restart(first: TestGateway, yaml: string) {
  const loaded = await parseConfig(yaml, { file: join(first.configDir, 'pipelines.yaml'), env: { AIGW_DATA_DIR: first.dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN } });
  const gateway = await createGateway(loaded, { logger: silentLogger() });
  return { gateway, url: await gateway.listen(0) };
}

const NATIVE_EXTRAS = [
  { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'opaque' },
  { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'colours' } },
];

test('after a restart, with the provider having forgotten the first response, the stored conversation goes up', async () => {
  const fake = await startFakeResponsesApi();
  const first = await startTestGateway(nativeConfig(fake.url));
  let second: Awaited<ReturnType<typeof restart>> | undefined;
  try {
    const key = await first.createKey({ scopes: { capabilities: ['responses'] } });
    fake.script = { text: 'Noted: blue.', extraItems: NATIVE_EXTRAS };
    const turn = await new OpenAI({ baseURL: `${first.url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'gpt-4.1', input: 'My favourite colour is blue.', instructions: 'Be brief.' });
    await first.gateway.close();
    fake.forget();

    second = await restart(first, nativeConfig(fake.url));
    fake.script = { text: 'Blue.' };
    const next = await new OpenAI({ baseURL: `${second.url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'gpt-4.1', input: 'Which colour?', previous_response_id: turn.id });
    assert.equal(next.output_text, 'Blue.');
    const [refused, retried] = fake.requests.slice(-2);
    assert.equal(refused!.json.previous_response_id, (turn as unknown as { provider_response_id: string }).provider_response_id);
    assert.deepEqual(retried!.json, {
      model: 'gpt-4.1', store: true,
      input: [
        { type: 'message', role: 'user', content: 'My favourite colour is blue.' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Noted: blue.' }] },
        { type: 'message', role: 'user', content: 'Which colour?' },
      ],
    });
  } finally {
    await second?.gateway.close();
    await first.close().catch(() => {}); // its gateway is closed already; this removes its folders
    await fake.close();
  }
});

test('a native turn continued through chat: the stored native items chat cannot carry are left out', async () => {
  const fake = await startFakeResponsesApi();
  const chat = await startFakeOpenAI();
  const first = await startTestGateway(nativeConfig(fake.url));
  let second: Awaited<ReturnType<typeof restart>> | undefined;
  try {
    const key = await first.createKey({ scopes: { capabilities: ['responses'] } });
    fake.script = { text: 'Noted: blue.', extraItems: NATIVE_EXTRAS };
    const turn = await new OpenAI({ baseURL: `${first.url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'gpt-4.1', input: 'My favourite colour is blue.' });
    await first.gateway.close();

    const chatOnly = nativeConfig(fake.url).replace(`baseUrl: ${fake.url}/v1`, `baseUrl: ${chat.baseUrl}\n    options: { nativeResponses: false }`);
    second = await restart(first, chatOnly);
    const next = await new OpenAI({ baseURL: `${second.url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'gpt-4.1', input: 'Which colour?', previous_response_id: turn.id });
    assert.equal(next.output_text, 'Hello world');
    assert.deepEqual(chat.requests.at(-1)!.body.messages, [
      { role: 'user', content: 'My favourite colour is blue.' },
      { role: 'assistant', content: 'Noted: blue.' },
      { role: 'user', content: 'Which colour?' },
    ]);
  } finally {
    await second?.gateway.close();
    await first.close().catch(() => {});
    await Promise.all([fake.close(), chat.close()]);
  }
});
