/**
 * The ratelimit plugin through in-process gateways on the embedded default (PGlite, memory KV): exact counts under
 * concurrency per minute, per day and per token, reservations settled to the real usage (streams included), the
 * order of layers and the give-back of a refusal, the ip and tenant levels, the headers and the envelope, and
 * what happens when the KV fails.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { KV } from '../../core/store/kv.ts';
import { windowsAdmit, windowsSettle } from '../../plugins/ratelimit/windows.ts';
import { interceptOperation } from '../helpers/kv-ops.ts';
import { helloStreamEvents, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { admin, assertRefusals, bodyReserving, burst, createKey, fullUsageHandler, send, tally } from '../helpers/ratelimit.ts';

const DAY = 86_400_000;
const hello = (extra: Record<string, unknown> = {}) => ({ model: 'plain', messages: [{ role: 'user', content: 'Count to three.' }], ...extra });

/** chat: per-key only; messages: deployment limits; completions: an ip limit. */
function config(baseUrl: string): string {
  const text = chatConfig(baseUrl, `
  - name: messages
    routes: [/v1/messages]
    plugins:
      - auth
      - ratelimit:
          deployment: { requestsPerMinute: 5 }
  - name: legacy
    routes: [/v1/completions]
    plugins:
      - auth
      - ratelimit:
          ip: { requestsPerMinute: 3 }
`);
  assert.ok(text.includes('plugins: [auth]'));
  return text.replace('plugins: [auth]', 'plugins: [auth, ip-allow, ratelimit]');
}

/** How much a window holds now: a zero-cost probe is admitted and reports the total. */
async function windowUsed(kv: KV, key: string): Promise<number> {
  const windowMs = key.endsWith(':requestsPerMinute') ? 60_000 : DAY;
  const probe = await kv.run(windowsAdmit, [{ key, cost: 0, limit: Number.MAX_SAFE_INTEGER, windowMs }]);
  assert.ok(probe.admitted);
  return probe.windows[0]!.used;
}

async function freshTenant(url: string): Promise<string> {
  const id = `t-${randomUUID().slice(0, 8)}`;
  await admin(url, 'POST', '/tenants', { id, name: id });
  return id;
}

describe('ratelimit', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config(fake.baseUrl));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('requestsPerMinute K: of 3K concurrent requests exactly K succeed; headers on every answer', async () => {
    const { key } = await createKey(gw.url, { rateLimits: { requestsPerMinute: 5 } });
    const replies = await burst([gw.url], 15, () => hello(), key);
    assert.deepEqual(tally(replies), { ok: 5, limited: 10, other: [] });
    assertRefusals(replies, 'apiKey', 5, 60_000);
    const ok = replies.filter((r) => r.status === 200);
    assert.deepEqual(ok.map((r) => r.headers.get('x-ratelimit-remaining')).sort(), ['0', '1', '2', '3', '4']);
    for (const reply of replies) {
      assert.equal(reply.headers.get('x-ratelimit-limit'), '5');
      // Seconds, rounded up, until the oldest bucket (42 ms wide in a minute window) has wholly left it.
      const reset = Number(reply.headers.get('x-ratelimit-reset'));
      assert.ok(reset >= 59 && reset <= 61, `reset ${reset}`);
    }
    const refused = replies.find((r) => r.status === 429)!;
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(refused.body.error.details.retryAfter >= 59);
  });

  test('requestsPerDay: exact under concurrency, refused with windowMs 86400000', async () => {
    const { key } = await createKey(gw.url, { rateLimits: { requestsPerDay: 3 } });
    const replies = await burst([gw.url], 9, () => hello(), key);
    assert.deepEqual(tally(replies), { ok: 3, limited: 6, other: [] });
    assertRefusals(replies, 'apiKey', 3, DAY);
    const refused = replies.find((r) => r.status === 429)!;
    assert.ok(refused.body.error.details.retryAfter > 86_000, `retryAfter ${refused.body.error.details.retryAfter}`);
  });

  test('tokensPerDay: exact under concurrency when every request uses what it reserved, streams included', async () => {
    const { body, prompt } = await bodyReserving(40);
    fake.handle(fullUsageHandler(prompt));
    try {
      const { key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 5 * 40 } });
      const replies = await burst([gw.url], 15, (i) => ({ ...body, stream: i % 2 === 1 }), key);
      assert.deepEqual(tally(replies), { ok: 5, limited: 10, other: [] });
      assertRefusals(replies, 'apiKey', 200, DAY);
    } finally {
      fake.reset();
    }
  });

  test('tokensPerDay: the estimate is reserved, then settled to the usage the provider reported', async () => {
    const { id, key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
    const window = `ratelimit:apiKey:${id}:tokensPerDay`;
    const { body, prompt } = await bodyReserving(60);
    const first = await send(gw.url, body, key);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-remaining'), String(200 - 60)); // the reservation
    assert.equal(await windowUsed(gw.gateway.services.kv, window), 11); // the fake's usage.total_tokens
    const second = await send(gw.url, body, key);
    assert.equal(second.headers.get('x-ratelimit-remaining'), String(200 - 11 - 60));
    assert.equal(await windowUsed(gw.gateway.services.kv, window), 22);

    // A reservation that does not fit is refused, though the real usage would have.
    const big = await send(gw.url, { ...body, max_tokens: 200 - prompt - 10 }, key);
    assert.equal(big.status, 429);
    assert.deepEqual(big.body.error.details, { level: 'apiKey', retryAfter: big.body.error.details.retryAfter, limit: 200, windowMs: DAY });
    assert.equal(big.headers.get('x-ratelimit-remaining'), String(200 - 22));
    assert.equal(await windowUsed(gw.gateway.services.kv, window), 22);

    // Without max_tokens the configured completion estimate (512) is reserved, capped at the limit.
    const capped = await send(gw.url, hello(), (await createKey(gw.url, { rateLimits: { tokensPerDay: 300 } })).key);
    assert.equal(capped.status, 200);
    assert.equal(capped.headers.get('x-ratelimit-remaining'), '0');
  });

  test('a stream settles to the usage of its last chunk', async () => {
    const { id, key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
    const { body } = await bodyReserving(60, true);
    const streamed = await send(gw.url, body, key);
    assert.equal(streamed.status, 200);
    assert.match(streamed.text, /data: \[DONE\]/);
    assert.equal(streamed.headers.get('x-ratelimit-remaining'), String(200 - 60));
    assert.equal(await windowUsed(gw.gateway.services.kv, `ratelimit:apiKey:${id}:tokensPerDay`), 11);
  });

  test('no usage: an aborted stream settles to the prompt estimate, an upstream failure to 0', async () => {
    const { id, key } = await createKey(gw.url, { rateLimits: { tokensPerDay: 200 } });
    const window = `ratelimit:apiKey:${id}:tokensPerDay`;
    const { body, prompt } = await bodyReserving(60, true);
    fake.handle(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(helloStreamEvents(req.body)[0]);
      await sleep(5_000);
      res.end();
    });
    try {
      const controller = new AbortController();
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', signal: controller.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200);
      await response.body!.getReader().read();
      controller.abort();
      for (let i = 0; i < 100 && (await windowUsed(gw.gateway.services.kv, window)) !== prompt; i++) await sleep(20);
      assert.equal(await windowUsed(gw.gateway.services.kv, window), prompt);

      fake.handle((_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
      });
      const failed = await send(gw.url, { ...body, stream: false }, key);
      assert.equal(failed.status, 502);
      assert.equal(failed.headers.get('x-ratelimit-limit'), '200', 'the headers are on every answer of a limited route');
      assert.equal(await windowUsed(gw.gateway.services.kv, window), prompt);
    } finally {
      fake.reset();
    }
  });

  test('a refusal at the tenant level consumes nothing at the key level', async () => {
    const tenantId = await freshTenant(gw.url);
    const { id, key } = await createKey(gw.url, { tenantId, rateLimits: { requestsPerMinute: 10, tokensPerDay: 10_000 } });
    const messages = (i: number) => ({ model: 'plain', max_tokens: 20, messages: [{ role: 'user', content: `hi ${i}` }] });
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => send(gw.url, messages(i), key, '/v1/messages')));
    assert.deepEqual(tally(replies), { ok: 5, limited: 3, other: [] });
    assertRefusals(replies, 'tenant', 5, 60_000);
    const kv = gw.gateway.services.kv;
    assert.equal(await windowUsed(kv, `ratelimit:apiKey:${id}:requestsPerMinute`), 5);
    assert.equal(await windowUsed(kv, `ratelimit:apiKey:${id}:tokensPerDay`), 5 * 11);
    assert.equal(await windowUsed(kv, `ratelimit:tenant:${tenantId}:requestsPerMinute`), 5);
  });

  test('the deployment limit is one window per tenant, narrowed for callers under an organization policy', async () => {
    const tenantId = await freshTenant(gw.url);
    const org = await admin(gw.url, 'POST', '/organizations', { name: 'Narrow', tenantId });
    await admin(gw.url, 'PUT', `/organizations/${org.id as string}/policy`, { rateLimits: { requestsPerMinute: 2 } });
    const narrow = await createKey(gw.url, { tenantId, organizationId: org.id });
    const wide = await createKey(gw.url, { tenantId });
    const messages = { model: 'plain', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] };
    const call = (key: string) => send(gw.url, messages, key, '/v1/messages');

    assert.equal((await call(narrow.key)).status, 200);
    const last = await call(narrow.key);
    assert.equal(last.status, 200);
    assert.deepEqual([last.headers.get('x-ratelimit-limit'), last.headers.get('x-ratelimit-remaining')], ['2', '0']);
    const refused = await call(narrow.key);
    assertRefusals([refused], 'tenant', 2, 60_000);
    assert.equal(refused.status, 429);

    // Outside the organization the deployment's 5 applies to the same tenant window, which holds 2 already.
    const wideReplies = await Promise.all(Array.from({ length: 5 }, () => call(wide.key)));
    assert.deepEqual(tally(wideReplies), { ok: 3, limited: 2, other: [] });
    assertRefusals(wideReplies, 'tenant', 5, 60_000);

    // Another tenant has its own window.
    const other = await createKey(gw.url, { tenantId: await freshTenant(gw.url) });
    assert.equal((await call(other.key)).status, 200);
  });

  test('a policy limit applies where the deployment sets none', async () => {
    const tenantId = await freshTenant(gw.url);
    const org = await admin(gw.url, 'POST', '/organizations', { name: 'Policy only', tenantId });
    await admin(gw.url, 'PUT', `/organizations/${org.id as string}/policy`, { rateLimits: { requestsPerDay: 1 } });
    const { key } = await createKey(gw.url, { tenantId, organizationId: org.id });
    assert.equal((await send(gw.url, hello(), key)).status, 200);
    const refused = await send(gw.url, hello(), key);
    assert.equal(refused.status, 429);
    assertRefusals([refused], 'tenant', 1, DAY);
  });

  test('the ip level counts every key from one address and is checked before the key level', async () => {
    const legacy = (key: string) => send(gw.url, hello(), key, '/v1/completions'); // the legacy endpoint takes the chat body
    const fields = (requestsPerMinute: number) => ({ scopes: { capabilities: ['completions'] }, rateLimits: { requestsPerMinute } });
    const [one, a, b, c] = await Promise.all([1, 100, 100, 100].map((rpm) => createKey(gw.url, fields(rpm))));
    assert.equal((await legacy(one!.key)).status, 200); // ip 1 of 3
    const byKey = await legacy(one!.key); // admitted by ip, refused by the key: the ip admission is given back
    assertRefusals([byKey], 'apiKey', 1, 60_000);
    assert.equal(byKey.status, 429);
    assert.deepEqual(tally(await Promise.all([a, b].map((k) => legacy(k!.key)))), { ok: 2, limited: 0, other: [] }); // ip 3 of 3
    const byIp = await legacy(c!.key);
    assert.equal(byIp.status, 429);
    assertRefusals([byIp], 'ip', 3, 60_000);
    assert.equal(await windowUsed(gw.gateway.services.kv, `ratelimit:apiKey:${c!.id}:requestsPerMinute`), 0);
    // Both levels would refuse this one: the ip level answers, being first.
    assertRefusals([await legacy(one!.key)], 'ip', 3, 60_000);
  });

  test('no limit for the caller: no KV window call; with limits: one call admits every window, one settles', async () => {
    const kv = gw.gateway.services.kv;
    const calls = { admit: 0, settle: 0 };
    const undoAdmit = interceptOperation(kv, windowsAdmit.name, (_args, run) => (calls.admit++, run()));
    const undoSettle = interceptOperation(kv, windowsSettle.name, (_args, run) => (calls.settle++, run()));
    try {
      const { key } = await createKey(gw.url);
      const plain = await send(gw.url, hello(), key);
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('x-ratelimit-limit'), null);
      assert.deepEqual(calls, { admit: 0, settle: 0 });
      const limited = await createKey(gw.url, { rateLimits: { requestsPerMinute: 10 } });
      assert.equal((await send(gw.url, hello(), limited.key)).status, 200);
      assert.deepEqual(calls, { admit: 1, settle: 0 }, 'a request window is never settled');
      const every = await createKey(gw.url, { rateLimits: { requestsPerMinute: 10, requestsPerDay: 10, tokensPerDay: 10_000 } });
      assert.equal((await send(gw.url, hello({ max_tokens: 50 }), every.key)).status, 200);
      assert.deepEqual(calls, { admit: 2, settle: 1 });
    } finally {
      undoSettle();
      undoAdmit();
    }
  });

  test('a body that fails validation is answered before any window is charged', async () => {
    const { id, key } = await createKey(gw.url, { rateLimits: { requestsPerMinute: 10, tokensPerDay: 10_000 } });
    const invalid = await send(gw.url, { model: 'plain', messages: 'not a list' }, key);
    assert.equal(invalid.status, 400);
    assert.equal(await windowUsed(gw.gateway.services.kv, `ratelimit:apiKey:${id}:requestsPerMinute`), 0);
    assert.equal(await windowUsed(gw.gateway.services.kv, `ratelimit:apiKey:${id}:tokensPerDay`), 0);
  });
});

describe('ratelimit: a failing KV, and a place before auth', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const lines: Array<Record<string, any>> = [];

  before(async () => {
    fake = await startFakeOpenAI();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    });
    // chat refuses when the KV fails (closed); messages lets requests through (open, the default); legacy limits
    // addresses before auth.
    const yaml = chatConfig(fake.baseUrl, `
  - name: messages
    routes: [/v1/messages]
    plugins:
      - auth
      - ratelimit: { storeTimeoutMs: 100 }
  - name: legacy
    routes: [/v1/completions]
    plugins:
      - ratelimit: { ip: { requestsPerMinute: 2 } }
      - auth
`).replace('plugins: [auth]', 'plugins:\n      - auth\n      - ratelimit: { onStoreError: closed, storeTimeoutMs: 100 }');
    gw = await startTestGateway(yaml, { logger: pino({ level: 'info' }, sink) });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('closed: 503 STORE_UNAVAILABLE; open: served unlimited; a warn line with the count; recovery on its own', async () => {
    const kv = gw.gateway.services.kv;
    const { key } = await createKey(gw.url, { rateLimits: { requestsPerMinute: 100 } });
    const chat = () => send(gw.url, hello(), key);
    const messages = () => send(gw.url, { model: 'plain', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, key, '/v1/messages');

    let failure: () => Promise<unknown> = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    };
    const undo = interceptOperation(kv, windowsAdmit.name, () => failure());
    try {
      const refused = await chat();
      assert.equal(refused.status, 503);
      assert.deepEqual(refused.body, { error: { code: 'STORE_UNAVAILABLE', message: 'Rate limiting is unavailable: the shared store did not answer', details: { plugin: 'ratelimit' } } });
      assert.equal(refused.headers.get('retry-after'), '1');
      const served = await messages();
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('x-ratelimit-limit'), null);

      // A KV that hangs counts as failed after storeTimeoutMs.
      failure = () => new Promise(() => {});
      const started = performance.now();
      assert.equal((await messages()).status, 200);
      assert.ok(performance.now() - started < 2_000);
      assert.equal((await chat()).status, 503);
    } finally {
      undo();
    }
    const warns = lines.filter((l) => l.msg?.startsWith('ratelimit: the KV failed'));
    assert.ok(warns.length >= 1 && warns.length < 4, `throttled: ${warns.length} warn lines for 4 failures`);
    assert.equal(warns[0]!.storeErrors, 1);
    assert.equal(warns[0]!.err, 'connect ECONNREFUSED 127.0.0.1:6379');

    const back = await chat();
    assert.equal(back.status, 200);
    assert.equal(back.headers.get('x-ratelimit-limit'), '100');
    assert.equal((await messages()).status, 200);
    assert.ok(lines.some((l) => l.msg === 'ratelimit: the KV answers again' && l.storeErrors >= 2));
  });

  test('listed before auth, only the ip level applies, and it counts requests that auth then refuses', async () => {
    const anonymous = () => send(gw.url, hello(), 'not-a-key', '/v1/completions');
    assert.equal((await anonymous()).status, 401);
    assert.equal((await anonymous()).status, 401);
    const refused = await anonymous();
    assert.equal(refused.status, 429);
    assertRefusals([refused], 'ip', 2, 60_000);
  });
});
