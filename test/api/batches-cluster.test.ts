/**
 * Two gateway instances on one Postgres and one Redis, both running jobs, following one batch: the provider is
 * polled once per cadence (never by both instances in one), and the webhook and the settlement happen once.
 * Runs when TEST_DATABASE_URL and TEST_REDIS_URL are set (CI sets both).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { MeteredWork } from '../../core/pipeline/metered.ts';
import { batchesConfig, startFakeBatchApis, TALLY_FILES, type FakeBatchApis } from '../fakes/batches.ts';
import { dropSharedStores } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { docVerifier, startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';
const CADENCE_MS = 300;

describe('one batch followed by two instances', { skip: SKIP }, () => {
  const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
  const prefix = `aigw-test-${randomUUID()}:`;
  let fake: FakeBatchApis;
  let receiver: Receiver;
  let a: TestGateway;
  let b: TestGateway;
  const metered = () => [a, b].flatMap((gw) => (gw.gateway.pluginState('tally') as { seen: MeteredWork[] }).seen);

  before(async () => {
    fake = await startFakeBatchApis();
    receiver = await startReceiver(() => 200);
    const config = batchesConfig(fake.origin, `batches:\n  pollIntervalMs: { openai: ${CADENCE_MS} }\n`);
    const options = { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: schema, kvPrefix: prefix, files: TALLY_FILES };
    // One after the other: the first migrates the fresh schema.
    a = await startTestGateway(config, options);
    b = await startTestGateway(config, options);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await receiver?.close();
    await fake?.close();
    await dropSharedStores({ schema, prefix, databaseUrl: DATABASE_URL! }, DATABASE_URL!, REDIS_URL!);
  });

  test('each cadence polls the provider once; the webhook is sent once and the batch settled once', async () => {
    const key = await a.createKey({ scopes: { capabilities: ['batch'] } });
    const created = await postJson(`${a.url}/v1/batches`, {
      provider: 'openai', endpoint: '/v1/chat/completions', completion_webhook_url: receiver.url,
      requests: [{ custom_id: 'c-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'small', messages: [] } }],
    }, { authorization: `Bearer ${key}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const batch = created.body;
    const upstreamId = batch.provider_batch_id as string;

    await sleep(CADENCE_MS * 6);
    fake.set(upstreamId, 'in_progress');
    const seen = async (gw: TestGateway) => (await (await fetch(`${gw.url}/v1/batches/${batch.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string };
    await eventually(async () => assert.equal((await seen(b)).status, 'in_progress'), 5000, 20);
    await sleep(CADENCE_MS * 3);
    fake.set(upstreamId, 'completed');
    await eventually(async () => assert.equal(receiver.received.length, 1), 5000, 20);
    await eventually(async () => assert.equal(metered().length, 1), 5000, 20);
    await sleep(CADENCE_MS * 3);

    const polls = fake.statusPolls(upstreamId).map((r) => r.at);
    assert.ok(polls.length >= 6, `${polls.length} polls`);
    const gaps = polls.slice(1).map((at, i) => at - polls[i]!);
    // A due job is claimed within a runner poll (10 ms) of its time; two instances polling in one cadence would
    // leave a gap of about that.
    assert.ok(gaps.every((gap) => gap >= CADENCE_MS - 50), `gaps between polls: ${gaps.join(', ')} ms`);
    assert.equal(receiver.received.length, 1, 'one webhook');
    assert.ok((await docVerifier())(batch.webhook_secret, String(receiver.received[0]!.headers['x-gateway-signature']), receiver.received[0]!.body));
    assert.equal(metered().length, 1, 'one settlement');
    assert.equal(metered()[0]!.id, batch.id);
    assert.equal((await seen(a)).status, 'completed');
    assert.equal((await seen(b)).status, 'completed');
  });
});
