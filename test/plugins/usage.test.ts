/**
 * The usage plugin through in-process gateways on the embedded database: exactly one record per request however
 * it ends (answered, streamed, cut by the client, cut by the upstream, refused upstream or before dispatch), its
 * fields and cost, and the recorder's retries and back-pressure under a failing database.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { usageRecorderFor } from '../../plugins/usage/index.ts';
import { chunk, completion, helloStreamEvents, sleep, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { openDatabase } from '../../core/store/database.ts';
import { postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { createKey, recordsOf, refuseUsageWrites, usageConfig, type Row } from '../helpers/usage.ts';

async function oneRecord(gw: TestGateway, requestId: string): Promise<Row> {
  const rows = await recordsOf(gw, requestId);
  assert.equal(rows.length, 1, `exactly one record for ${requestId}: ${JSON.stringify(rows)}`);
  return rows[0]!;
}

function captureLogger() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(text, _encoding, done) {
      for (const line of String(text).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const body = (model: string, stream = false, extra: Record<string, unknown> = {}) => ({ model, stream, messages: [{ role: 'user', content: 'Say hello to the usage plugin' }], ...extra });

const DATABASE_URL = process.env.TEST_DATABASE_URL;

/** The same suite on the embedded database and, when TEST_DATABASE_URL is set, on a Postgres server. */
function recordSuite(name: string, options: () => TestGatewayOptions, skip: string | false = false): void {
  describe(`usage plugin: ${name}`, { skip }, () => {
    let fake: FakeOpenAI;
    let gw: TestGateway;
    let key: { id: string; key: string };
    /** Every request id sent to `gw`, to prove at the end that each has exactly one record. */
    const sent: string[] = [];

    const call = (requestBody: unknown, requestId = randomUUID(), headers: Record<string, string> = {}, path = '/v1/chat/completions') => {
      sent.push(requestId);
      return postJson(`${gw.url}${path}`, requestBody, { authorization: `Bearer ${key.key}`, 'x-request-id': requestId, ...headers }).then((r) => ({ ...r, requestId }));
    };

    /** Starts a stream and returns its reader once the first chunk arrived. */
    const openStream = async (requestBody: unknown, controller = new AbortController()) => {
      const requestId = randomUUID();
      sent.push(requestId);
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify(requestBody),
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /chat\.completion\.chunk/);
      return { requestId, reader, controller };
    };
    const readAll = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
      let text = '';
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    };

    before(async () => {
      fake = await startFakeOpenAI();
      gw = await startTestGateway(usageConfig(fake.baseUrl), options());
      key = await createKey(gw);
    });
    after(async () => {
      fake.reset();
      await gw?.close();
      await fake?.close();
    });

    test('a non-streaming answer: one record with the caller, the models, the tokens, the cost and the timings', async () => {
      const r = await call(body('gpt-4o-mini'));
      assert.equal(r.status, 200);
      const row = await oneRecord(gw, r.requestId);
      assert.equal(row.tenant_id, 'default');
      assert.equal(row.caller_kind, 'api_key');
      assert.equal(row.api_key_id, key.id);
      assert.equal(row.user_id, null);
      assert.equal(row.organization_id, null);
      assert.equal(row.endpoint, '/v1/chat/completions');
      assert.equal(row.modality, 'chat');
      assert.equal(Number(row.search_units), 0);
      assert.equal(row.stream, false);
      assert.equal(row.provider, 'openai');
      assert.equal(row.requested_model, 'gpt-4o-mini');
      assert.equal(row.model, 'gpt-4o-mini');
      assert.equal(row.upstream_model, 'gpt-4o-mini-2024-07-18');
      assert.deepEqual([Number(row.prompt_tokens), Number(row.completion_tokens), Number(row.total_tokens)], [9, 2, 11]);
      assert.equal(Number(row.cached_tokens), 0);
      assert.equal(row.estimated, false);
      assert.equal(Number(row.cost_usd), 0.00000255, '9 x $0.15 + 2 x $0.60 per million');
      assert.equal(row.status, 'completed');
      assert.equal(row.error_code, null);
      assert.ok(row.latency_ms > 0);
      assert.equal(row.ttfb_ms, row.latency_ms, 'a complete answer: its first byte is the answer');
      assert.ok(Math.abs(new Date(row.created_at).getTime() - Date.now()) < 10_000);
    });

    test('cached and reasoning tokens are recorded, cached ones priced at cachedInput', async () => {
      fake.handle((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          ...completion(String(req.body.model), 'Hi'),
          usage: { prompt_tokens: 1000, completion_tokens: 300, total_tokens: 1300, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 200 } },
        }));
      });
      try {
        const r = await call(body('gpt-4o-mini'));
        assert.equal(r.status, 200);
        const row = await oneRecord(gw, r.requestId);
        assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.reasoning_tokens, row.total_tokens].map(Number), [1000, 300, 400, 200, 1300]);
        assert.equal(Number(row.cost_usd), (600 * 0.15 + 400 * 0.075 + 300 * 0.6) / 1e6);
      } finally {
        fake.reset();
      }
    });

    test('a model without pricing has a null cost', async () => {
      const r = await call(body('plain'));
      assert.equal(r.status, 200);
      const row = await oneRecord(gw, r.requestId);
      assert.equal(row.model, 'plain');
      assert.equal(row.cost_usd, null);
    });

    test('a completed stream: the usage of its last chunk, ttfb before the end', async () => {
      fake.handle(async (req, res) => {
        const events = helloStreamEvents(req.body);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events[0]);
        // Long against the 40 ms asserted below, so that a stalled event loop on a loaded machine cannot close it.
        await sleep(150);
        for (const event of events.slice(1)) res.write(event);
        res.end();
      });
      try {
        const { requestId, reader } = await openStream(body('gpt-4o-mini', true));
        const text = await readAll(reader);
        assert.ok(text.endsWith('data: [DONE]\n\n'));
        const row = await oneRecord(gw, requestId);
        assert.equal(row.stream, true);
        assert.equal(row.status, 'completed');
        assert.deepEqual([Number(row.prompt_tokens), Number(row.completion_tokens)], [9, 2]);
        assert.equal(row.estimated, false);
        assert.equal(row.upstream_model, 'gpt-4o-mini-2024-07-18');
        assert.ok(row.ttfb_ms !== null && row.ttfb_ms > 0);
        assert.ok(row.latency_ms - row.ttfb_ms >= 40, `ttfb ${row.ttfb_ms} ms, latency ${row.latency_ms} ms`);
        assert.equal(Number(row.cost_usd), 0.00000255, '9 x $0.15 + 2 x $0.60 per million');
      } finally {
        fake.reset();
      }
    });

    test('a provider that reports no usage: the core estimate is recorded and flagged, streaming or not', async () => {
      fake.handle(async (req, res) => {
        if (req.body.stream === true) {
          const model = String(req.body.model);
          return writeSplit(res, [chunk(model, { content: 'Hello there' }), chunk(model, {}, 'stop')].map((c) => `data: ${JSON.stringify(c)}\n\n`).concat('data: [DONE]\n\n'));
        }
        const { usage: _none, ...rest } = completion(String(req.body.model), 'Hello there');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(rest));
      });
      try {
        const plain = await call(body('plain'));
        assert.equal(plain.status, 200);
        const row = await oneRecord(gw, plain.requestId);
        assert.equal(row.estimated, true);
        assert.ok(Number(row.prompt_tokens) > 0 && Number(row.completion_tokens) > 0);

        const { requestId, reader } = await openStream(body('plain', true));
        await readAll(reader);
        const streamed = await oneRecord(gw, requestId);
        assert.equal(streamed.status, 'completed');
        assert.equal(streamed.estimated, true);
        assert.equal(Number(streamed.completion_tokens), Number(row.completion_tokens), 'the same text, the same estimate');
      } finally {
        fake.reset();
      }
    });

    test('a stream the client cuts: one aborted record with the tokens of what it received, estimated', async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      fake.handle(async (req, res) => {
        const events = helloStreamEvents(req.body, ['Hello', ' world', ' and', ' more']);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events[0]! + events[1]!);
        await released; // the usage chunk never comes before the client leaves
        res.end();
      });
      try {
        const { requestId, controller } = await openStream(body('gpt-4o-mini', true));
        controller.abort();
        const row = await oneRecord(gw, requestId);
        assert.equal(row.status, 'aborted');
        assert.equal(row.error_code, null);
        assert.equal(row.estimated, true);
        assert.ok(Number(row.prompt_tokens) > 0, 'the prompt as sent');
        assert.equal(Number(row.completion_tokens), 1, '"Hello" is what reached the caller');
        assert.equal(Number(row.total_tokens), Number(row.prompt_tokens) + 1);
        assert.ok(row.ttfb_ms !== null && row.ttfb_ms <= row.latency_ms);
        assert.ok(Number(row.cost_usd) > 0);
      } finally {
        release();
        fake.reset();
      }
    });

    test('a stream whose upstream dies: one failed record with UPSTREAM_ERROR and the tokens seen', async () => {
      fake.handle(async (req, res) => {
        const events = helloStreamEvents(req.body, ['Hello', ' world']);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events[0]! + events[1]! + events[2]!);
        await sleep(20);
        res.destroy();
      });
      try {
        const { requestId, reader } = await openStream(body('gpt-4o-mini', true));
        const text = await readAll(reader);
        assert.match(text, /UPSTREAM_ERROR/);
        const row = await oneRecord(gw, requestId);
        assert.equal(row.status, 'failed');
        assert.equal(row.error_code, 'UPSTREAM_ERROR');
        assert.equal(row.provider, 'openai');
        assert.equal(row.estimated, true);
        assert.equal(Number(row.completion_tokens), 2, '"Hello world"');
        assert.ok(Number(row.prompt_tokens) > 0);
      } finally {
        fake.reset();
      }
    });

    test('an upstream 500: one failed record, the provider named, no tokens, cost 0', async () => {
      fake.handle((_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
      });
      try {
        const r = await call(body('gpt-4o-mini'));
        assert.equal(r.status, 502);
        const row = await oneRecord(gw, r.requestId);
        assert.equal(row.status, 'failed');
        assert.equal(row.error_code, 'UPSTREAM_ERROR');
        assert.equal(row.provider, 'openai');
        assert.equal(row.model, 'gpt-4o-mini');
        assert.equal(row.upstream_model, null);
        assert.equal(Number(row.total_tokens), 0);
        assert.equal(row.ttfb_ms, null);
        assert.equal(Number(row.cost_usd), 0);
      } finally {
        fake.reset();
      }
    });

    test('an unknown model (404 before dispatch) and an invalid body are recorded as failed too', async () => {
      const missing = await call(body('no-such-model'));
      assert.equal(missing.status, 404);
      const row = await oneRecord(gw, missing.requestId);
      assert.equal(row.status, 'failed');
      assert.equal(row.error_code, 'MODEL_NOT_FOUND');
      assert.equal(row.requested_model, 'no-such-model');
      assert.equal(row.model, null);
      assert.equal(row.provider, null);
      assert.equal(row.cost_usd, null);

      const invalid = await call({ model: 'plain', messages: 'not a list' });
      assert.equal(invalid.status, 400);
      const bad = await oneRecord(gw, invalid.requestId);
      assert.equal(bad.error_code, 'VALIDATION_ERROR');
      assert.equal(bad.requested_model, null);
      assert.equal(bad.modality, 'chat', 'a body that never parsed: the modality of its route');
    });

    test('a model name with U+0000 is recorded without poisoning the batch it is written in', async () => {
      const evil = await call(body('bad\u0000model'));
      assert.equal(evil.status, 404);
      const good = await call(body('plain'));
      const row = await oneRecord(gw, evil.requestId);
      assert.equal(row.requested_model, 'badmodel');
      await oneRecord(gw, good.requestId);
    });

    test('a request refused by auth never reaches the plugin: no record', async () => {
      const requestId = randomUUID();
      const r = await postJson(`${gw.url}/v1/chat/completions`, body('plain'), { authorization: 'Bearer aigw_sk_nope', 'x-request-id': requestId });
      assert.equal(r.status, 401);
      assert.deepEqual(await recordsOf(gw, requestId, 200), []);
    });

    test('a caller that reuses its X-Request-ID gets a record for each request', async () => {
      const requestId = randomUUID();
      await call(body('plain'), requestId);
      await call(body('plain'), requestId);
      const rows = await recordsOf(gw, requestId);
      assert.equal(rows.length, 2);
      assert.notEqual(rows[0]!.id, rows[1]!.id);
    });

    test('the Messages endpoint is recorded under its own path', async () => {
      const r = await call({ model: 'plain', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, randomUUID(), {}, '/v1/messages');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const row = await oneRecord(gw, r.requestId);
      assert.equal(row.endpoint, '/v1/messages');
      assert.equal(row.modality, 'chat');
      assert.equal(row.status, 'completed');
    });

    test('every request sent has exactly one record, and nothing is left in flight', async () => {
      await sleep(2200); // longer than the plugin's grace for stream endings: a late second record would show
      await usageRecorderFor(gw.gateway)!.flush();
      const rows = await gw.gateway.services.db.query<{ request_id: string; n: number }>(
        'SELECT request_id, count(*)::int AS n FROM usage_records GROUP BY request_id');
      const counts = new Map(rows.map((r) => [r.request_id, r.n]));
      for (const id of sent) assert.equal(counts.get(id), sent.filter((s) => s === id).length, `records of ${id}`);
      assert.equal(usageRecorderFor(gw.gateway)!.inFlight, 0);
    });
  });
}

recordSuite('embedded database', () => ({}));

const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
recordSuite('Postgres', () => ({ env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema }), DATABASE_URL ? false : 'TEST_DATABASE_URL not set');
after(async () => {
  if (!DATABASE_URL) return;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: '', onNoVector: () => {} });
  await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
});

describe('usage plugin: edge cases of the pipeline and the database', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI();
  });
  after(async () => {
    await fake?.close();
  });

  test('a stream that is never sent (a plugin before usage fails after it) is still recorded, once', async () => {
    const boom = `export default {
      apiVersion: 1, name: 'boom', description: 'fails on the way out of a stream', configSchema: { type: 'object' },
      setup() { return async (ctx, next) => { await next(); if (ctx.state.gw.stream) throw new Error('boom'); }; },
    };`;
    const gw = await startTestGateway(usageConfig(fake.baseUrl, '- boom\n- usage', 'plugins: [./boom.mjs]'), { files: { 'boom.mjs': boom } });
    try {
      const { key } = await createKey(gw);
      const requestId = randomUUID();
      const r = await postJson(`${gw.url}/v1/chat/completions`, body('plain', true), { authorization: `Bearer ${key}`, 'x-request-id': requestId });
      assert.equal(r.status, 500);
      const rows = await recordsOf(gw, requestId, 5000);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.status, 'failed');
      assert.equal(rows[0]!.error_code, 'INTERNAL_ERROR');
    } finally {
      await gw.close();
    }
  });

  test('a failing database: answers are not held back, writes are retried, and no record is lost', async () => {
    const { logger, lines } = captureLogger();
    const gw = await startTestGateway(usageConfig(fake.baseUrl, '- usage:\n    flushIntervalMs: 20\n    batchSize: 5'), { logger });
    try {
      const { key } = await createKey(gw);
      const writes = refuseUsageWrites(gw.gateway.services.db);
      const query = writes.query;

      const ids = Array.from({ length: 12 }, () => randomUUID());
      const answers = await Promise.all(ids.map((id) => postJson(`${gw.url}/v1/chat/completions`, body('plain'), { authorization: `Bearer ${key}`, 'x-request-id': id })));
      assert.ok(answers.every((a) => a.status === 200), 'every request is served while the writes fail');
      await sleep(300);
      assert.ok(writes.refused >= 2, `writes were retried (${writes.refused} refused)`);
      assert.equal(usageRecorderFor(gw.gateway)!.pending, 12);
      assert.ok(lines.some((l) => l.msg === 'writing usage records failed: the batch is kept and retried'));

      writes.failing = false;
      const deadline = Date.now() + 5000;
      let count = 0;
      while (Date.now() < deadline) {
        count = (await query<{ count: number }>('SELECT count(*)::int AS count FROM usage_records WHERE request_id = ANY($1)', [ids]))[0]!.count;
        if (count === 12) break;
        await sleep(20);
      }
      assert.equal(count, 12, 'the retries write every record, once');
      assert.ok(lines.some((l) => l.msg === 'usage records are written again'));
    } finally {
      await gw.close();
    }
  });

  test('a full queue holds new requests back (back-pressure, one log line) until the database takes writes again', async () => {
    const { logger, lines } = captureLogger();
    const gw = await startTestGateway(usageConfig(fake.baseUrl, '- usage:\n    flushIntervalMs: 20\n    maxPending: 3'), { logger });
    try {
      const { key } = await createKey(gw);
      const writes = refuseUsageWrites(gw.gateway.services.db);
      const query = writes.query;
      const send = (id: string) => postJson(`${gw.url}/v1/chat/completions`, body('plain'), { authorization: `Bearer ${key}`, 'x-request-id': id });

      const first = Array.from({ length: 3 }, () => randomUUID());
      for (const id of first) assert.equal((await send(id)).status, 200);
      const late = Array.from({ length: 2 }, () => randomUUID());
      let answered = 0;
      const pending = late.map((id) => send(id).then((r) => {
        answered++;
        return r;
      }));
      await sleep(300);
      assert.equal(answered, 0, 'the queue is full: new requests wait');
      assert.equal(fake.requests.filter((r) => r.body.model === 'plain').length >= 3, true);
      const full = lines.filter((l) => /^usage queue full/.test(l.msg));
      assert.equal(full.length, 1);
      assert.equal(full[0]!.level, 50);

      writes.failing = false;
      const results = await Promise.all(pending);
      assert.ok(results.every((r) => r.status === 200));
      await usageRecorderFor(gw.gateway)!.flush();
      const [{ count }] = await query<{ count: number }>('SELECT count(*)::int AS count FROM usage_records WHERE request_id = ANY($1)', [[...first, ...late]]) as [{ count: number }];
      assert.equal(count, 5);
      assert.ok(lines.some((l) => l.msg === 'usage queue has room again: requests are admitted without waiting'));
    } finally {
      await gw.close();
    }
  });

  test('the recorder is shared by every pipeline entry; entries with other settings are refused', async () => {
    const slow = '- usage:\n    flushIntervalMs: 600000'; // nothing is written before the test looks at the queue
    const two = usageConfig(fake.baseUrl, slow).replace('routes: [/v1/chat/completions, /v1/messages]', 'routes: [/v1/chat/completions]')
      + '  - name: messages\n    routes: [/v1/messages]\n    plugins: [auth, {usage: {flushIntervalMs: 600000}}]\n';
    const gw = await startTestGateway(two);
    try {
      const { key } = await createKey(gw);
      const a = randomUUID();
      const b = randomUUID();
      await postJson(`${gw.url}/v1/chat/completions`, body('plain'), { authorization: `Bearer ${key}`, 'x-request-id': a });
      await postJson(`${gw.url}/v1/messages`, { model: 'plain', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}`, 'x-request-id': b });
      const recorder = usageRecorderFor(gw.gateway)!;
      assert.equal(recorder.pending, 2, 'both pipelines queue into the one recorder');
      assert.equal((await recordsOf(gw, a)).length, 1);
      assert.equal((await recordsOf(gw, b)).length, 1);
    } finally {
      await gw.close();
    }
    const differing = usageConfig(fake.baseUrl).replace('routes: [/v1/chat/completions, /v1/messages]', 'routes: [/v1/chat/completions]')
      + '  - name: messages\n    routes: [/v1/messages]\n    plugins: [auth, {usage: {batchSize: 7}}]\n';
    await assert.rejects(startTestGateway(differing), /every usage entry shares one recorder/);
  });

  test('usage listed before auth is a config error', async () => {
    await assert.rejects(
      startTestGateway(usageConfig(fake.baseUrl).replace('      - auth\n      - usage', '      - usage\n      - auth')),
      /plugin "usage" requires "caller": list it after a plugin that provides it \(provided by: auth\)/,
    );
  });

  test('close() writes the records still queued', async () => {
    const gw = await startTestGateway(usageConfig(fake.baseUrl, '- usage:\n    flushIntervalMs: 600000'));
    const { key } = await createKey(gw);
    const ids = Array.from({ length: 4 }, () => randomUUID());
    for (const id of ids) await postJson(`${gw.url}/v1/chat/completions`, body('plain'), { authorization: `Bearer ${key}`, 'x-request-id': id });
    const recorder = usageRecorderFor(gw.gateway)!;
    assert.equal(recorder.pending, 4);
    // Count through a second connection to the same data folder is impossible (one process per folder):
    // read the rows back as the close hook is about to end, through the database it still holds.
    const db = gw.gateway.services.db;
    const close = db.close.bind(db);
    let counted = -1;
    db.close = async () => {
      counted = (await db.query<{ counted: number }>('SELECT count(*)::int AS counted FROM usage_records WHERE request_id = ANY($1)', [ids]))[0]!.counted;
      await close();
    };
    await gw.close();
    assert.equal(counted, 4);
  });
});
