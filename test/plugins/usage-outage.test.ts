/**
 * A Postgres outage during a load test loses no usage record. The gateway reaches Postgres through a TCP proxy
 * that the test cuts (every connection destroyed, new ones refused) while requests keep coming, then restores.
 * Records are counted before and after, through a direct connection. Runs when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { usageRecorderFor } from '../../plugins/usage/index.ts';
import { sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { createKey, usageConfig } from '../helpers/usage.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

describe('usage records through a Postgres outage', { skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set' }, () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  const lines: Array<Record<string, any>> = [];
  let fake: FakeOpenAI;
  let proxy: TcpProxy;
  let gw: TestGateway;
  let direct: Database;
  let key: string;

  before(async () => {
    const url = new URL(DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(DATABASE_URL!);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    fake = await startFakeOpenAI();
    const logger = pino({ level: 'info' }, new Writable({
      write(text, _encoding, done) {
        for (const line of String(text).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    }));
    gw = await startTestGateway(usageConfig(fake.baseUrl, '- usage:\n    flushIntervalMs: 50\n    batchSize: 25'), {
      env: { DATABASE_URL: proxied.toString() },
      dbSchema: schema,
      logger,
    });
    direct = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
    key = (await createKey(gw)).key;
  });
  after(async () => {
    await gw?.close();
    await proxy?.close();
    await fake?.close();
    if (direct) await direct.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => direct.close());
  });

  const count = async () => (await direct.query<{ n: number; ids: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS ids FROM usage_records'))[0]!;

  test('requests served during the outage are all recorded, once, after Postgres comes back', async () => {
    const send = async (ids: string[]) => {
      const id = randomUUID();
      ids.push(id);
      const r = await postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}`, 'x-request-id': id });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const recorder = usageRecorderFor(gw.gateway)!;

    // Before: 20 requests, written.
    const warm: string[] = [];
    await Promise.all(Array.from({ length: 20 }, () => send(warm)));
    await recorder.flush();
    const before = await count();
    assert.equal(before.n, 20);

    // Load: 10 concurrent callers until told to stop.
    const loadIds: string[] = [];
    let stop = false;
    const callers = Array.from({ length: 10 }, async () => {
      while (!stop) await send(loadIds);
    });
    await sleep(300);
    proxy.cut();
    const cutAt = loadIds.length;
    // The outage lasts through several failed writes and at least 200 requests.
    const deadline = Date.now() + 20_000;
    while ((recorder.failedWrites < 3 || loadIds.length - cutAt < 200) && Date.now() < deadline) await sleep(20);
    assert.ok(recorder.failedWrites >= 3, `writes failed during the outage (${recorder.failedWrites})`);
    const duringOutage = loadIds.length - cutAt;
    assert.ok(duringOutage >= 200, `${duringOutage} requests during the outage`);
    assert.ok(recorder.pending >= 150, `records wait in memory (${recorder.pending})`);
    proxy.restore();
    await sleep(300);
    stop = true;
    await Promise.all(callers);

    // After: every request has its record, exactly once.
    const expected = before.n + loadIds.length;
    const until = Date.now() + 20_000;
    let after = await count();
    while (after.n < expected && Date.now() < until) {
      await sleep(100);
      after = await count();
    }
    assert.equal(after.n, expected, `${after.n} records for ${expected} requests`);
    assert.equal(after.ids, expected, 'no request has two records');
    const [missing] = await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM unnest($1::text[]) AS s(id) WHERE NOT EXISTS (SELECT 1 FROM usage_records WHERE request_id = s.id)', [loadIds]);
    assert.equal(missing!.n, 0);
    // The last batch's rows can be counted before its write has answered the recorder, which then drops them.
    while (recorder.pending > 0 && Date.now() < until) await sleep(20);
    assert.equal(recorder.pending, 0);
    assert.ok(lines.some((l) => l.msg === 'writing usage records failed: the batch is kept and retried'));
    assert.ok(lines.some((l) => l.msg === 'usage records are written again'));
  });
});
