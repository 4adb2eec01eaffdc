/**
 * Two gateway instances on one Postgres and one Redis with realtime.maxConcurrentSessions 2: the cap holds across
 * them (the third creation is refused on either), a ticket issued by one is redeemed on the other once only, and a
 * closed session frees its slot for both. Runs when TEST_DATABASE_URL and TEST_REDIS_URL are set (CI sets both).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TALLY_FILES } from '../fakes/batches.ts';
import { realtimeConfig, startFakeRealtime, type FakeRealtime } from '../fakes/realtime.ts';
import { dropSharedStores } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { connectRealtime, createSession, fetchSession } from '../helpers/realtime-client.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';

describe('realtime sessions on two instances', { skip: SKIP }, () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  const prefix = `aigw-test-${randomUUID()}:`;
  let fake: FakeRealtime;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    fake = await startFakeRealtime();
    const config = realtimeConfig(fake.origin, 'realtime:\n  maxConcurrentSessions: 2\n');
    const options = { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: schema, kvPrefix: prefix, files: TALLY_FILES };
    // One after the other: the first migrates the fresh schema.
    a = await startTestGateway(config, options);
    b = await startTestGateway(config, options);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await fake?.close();
    await dropSharedStores({ schema, prefix, databaseUrl: DATABASE_URL! }, DATABASE_URL!, REDIS_URL!);
  });

  test('a cap of 2 holds across instances; a ticket is redeemed once across them; a closed session frees its slot', async () => {
    const key = await a.createKey({ scopes: { capabilities: ['realtime'] } });
    const first = await createSession(a.url, key);
    const second = await createSession(b.url, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    for (const gw of [a, b]) {
      const third = await createSession(gw.url, key);
      assert.equal(third.status, 429, `instance ${gw.url}`);
      assert.equal(third.body.error.code, 'RATE_LIMIT_EXCEEDED');
    }

    // Issued by A, redeemed on B; the same ticket on A then is spent.
    const wsOfB = (url: string) => url.replace(new URL(a.url).host, new URL(b.url).host);
    const client = await connectRealtime(wsOfB(first.body.gateway_ws_url), first.body.subprotocol_hint);
    await client.frameCount(2);
    const again = await connectRealtime(first.body.gateway_ws_url, first.body.subprotocol_hint);
    assert.equal((await again.closed).code, 4401);
    assert.equal((await fetchSession(a.url, key, first.body.id)).status, 'connected');
    assert.equal((await createSession(a.url, key)).status, 429, 'a connected session keeps its slot');

    client.socket.close();
    await client.closed;
    await eventually(async () => assert.equal((await fetchSession(a.url, key, first.body.id)).status, 'closed'));
    const freed = await createSession(a.url, key);
    assert.equal(freed.status, 200, JSON.stringify(freed.body));
    assert.equal((await createSession(b.url, key)).status, 429);
  });
});
