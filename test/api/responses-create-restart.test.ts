/**
 * A continuation after a gateway restart on the same data folder, against a fresh Anthropic fake (the provider
 * "forgot" everything): the conversation comes from the stored records alone.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { createGateway } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { parseConfig } from '../helpers/config.ts';
import { ADMIN_TOKEN, startTestGateway } from '../helpers/gateway.ts';
import { hello, responsesConfig, startFakeAnthropic } from './responses-create-fixture.ts';

test('a continuation after a restart, on a provider that kept nothing, replays the stored turn', async () => {
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const first = await startTestGateway(responsesConfig(openai.baseUrl, anthropic.url));
  let second: Awaited<ReturnType<typeof createGateway>> | undefined;
  const forgetful = await startFakeAnthropic();
  try {
    const key = await first.createKey({ scopes: { capabilities: ['responses'] } });
    anthropic.answer = hello('Noted: blue.');
    const turn = await new OpenAI({ baseURL: `${first.url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'claude', input: 'My favourite colour is blue.' });
    await first.gateway.close();

    // Same data folder, a new Anthropic upstream.
    const yaml = responsesConfig(openai.baseUrl, forgetful.url);
    const loaded = await parseConfig(yaml, { file: join(first.configDir, 'pipelines.yaml'), env: { AIGW_DATA_DIR: first.dataDir, AIGW_ADMIN_TOKEN: ADMIN_TOKEN } });
    second = await createGateway(loaded, { logger: silentLogger() });
    const url = await second.listen(0);
    forgetful.answer = hello('Blue.');
    const next = await new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 }).responses.create({ model: 'claude', input: 'Which colour?', previous_response_id: turn.id });
    assert.equal(next.output_text, 'Blue.');
    assert.deepEqual(forgetful.requests.at(-1)!.json.messages, [
      { role: 'user', content: 'My favourite colour is blue.' },
      { role: 'assistant', content: 'Noted: blue.' },
      { role: 'user', content: 'Which colour?' },
    ]);
  } finally {
    await second?.close();
    await first.close().catch(() => {}); // its gateway is closed already; this removes its folders
    await Promise.all([openai.close(), anthropic.close(), forgetful.close()]);
  }
});
