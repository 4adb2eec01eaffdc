/**
 * A request that asks for more tokens than a token window's whole limit can never be admitted, however long it
 * waits: it gets 400 VALIDATION_ERROR naming the window, not a 429 whose day-long Retry-After SDKs would obey
 * (and retry). A request the window merely cannot fit right now still gets 429.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { estimatePromptTokens } from '../../core/canonical/estimate.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const LIMIT = 1000;

describe('requests larger than a whole token window', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const chat = () => `${gw.url}/v1/chat/completions`;
  const ask = (fields: Record<string, unknown>) => ({ model: 'plain', messages: [{ role: 'user', content: 'hi' }], ...fields });

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl).replace('plugins: [auth]', `plugins:
      - auth
      - ratelimit:
          deployment:
            tokensPerDay: ${LIMIT * 10}`));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('max_tokens (or max_completion_tokens, times n) above a key\'s tokensPerDay: 400 naming the window, nothing charged', async () => {
    const auth = { authorization: `Bearer ${await gw.createKey({ rateLimits: { tokensPerDay: LIMIT } })}` };
    const before = fake.requests.length;
    for (const fields of [{ max_tokens: LIMIT * 5 }, { max_completion_tokens: LIMIT + 1 }, { max_tokens: LIMIT / 2, n: 3 }]) {
      const r = await postJson(chat(), ask(fields), auth);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.match(r.body.error.message, /can never be admitted/);
      assert.equal(r.body.error.details[0].path, 'max_completion_tokens' in fields ? '/max_completion_tokens' : '/max_tokens');
      assert.match(r.body.error.details[0].message, new RegExp(`tokensPerDay limit of ${LIMIT} \\(apiKey\\)`));
      assert.equal(r.headers.get('retry-after'), null);
    }
    assert.equal(fake.requests.length, before);
    // Nothing was charged: a request that fits is admitted with the whole window left for it.
    const fits = await postJson(chat(), ask({ max_tokens: 100 }), auth);
    assert.equal(fits.status, 200, JSON.stringify(fits.body));
  });

  test('a prompt alone above the limit: 400 too; the deployment\'s window is checked the same way', async () => {
    const small = `Bearer ${await gw.createKey({ rateLimits: { tokensPerDay: 50 } })}`;
    const long = ask({ messages: [{ role: 'user', content: 'word '.repeat(200) }] });
    assert.ok(await estimatePromptTokens(long as never) > 50);
    const r = await postJson(chat(), long, { authorization: small });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error.details[0].path, '/messages');

    const unlimitedKey = `Bearer ${await gw.createKey()}`;
    const tenant = await postJson(chat(), ask({ max_tokens: LIMIT * 20 }), { authorization: unlimitedKey });
    assert.equal(tenant.status, 400, JSON.stringify(tenant.body));
    assert.match(tenant.body.error.details[0].message, new RegExp(`tokensPerDay limit of ${LIMIT * 10} \\(tenant\\)`));
  });

  test('without max_tokens the default estimate is still capped at the limit, and a full window still answers 429', async () => {
    const auth = { authorization: `Bearer ${await gw.createKey({ rateLimits: { tokensPerDay: 300 } })}` };
    assert.equal((await postJson(chat(), ask({}), auth)).status, 200); // settled to the fake's 11 tokens
    // 295 fits an empty window of 300, not one holding 11 already.
    const prompt = await estimatePromptTokens(ask({}) as never);
    const r = await postJson(chat(), ask({ max_tokens: 295 - prompt }), auth);
    assert.equal(r.status, 429, JSON.stringify(r.body));
  });
});
