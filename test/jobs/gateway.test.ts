/**
 * The runner inside a gateway: the `jobs` config section, gateway.jobs running jobs once listening, and close()
 * handing a still-running job back before the stores close.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { openDatabase } from '../../core/store/database.ts';
import { webhookDeliveryJob } from '../../core/webhooks/deliver.ts';
import { docVerifier, startReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/eventually.ts';
import { jobRow, signal } from './engines.ts';

const parse = (text: string) => parseConfig(text, { file: '/nowhere/pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: '/nowhere' });

describe('the jobs config section', () => {
  test('defaults: poll every second, 60 s leases, 4 at a time', async () => {
    assert.deepEqual((await parse('{}')).config.jobs, { pollIntervalMs: 1000, leaseMs: 60000, concurrency: 4 });
  });

  test('a concurrency of 0 and an unknown key are refused with their place', async () => {
    await assert.rejects(parse('jobs:\n  concurrency: 0\n'), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues.map((i) => [i.pointer, i.line]), [['/jobs/concurrency', 2]]);
      return true;
    });
    await assert.rejects(parse('jobs:\n  pollMs: 5\n'), /pipelines.yaml:2:3 \/jobs\/pollMs: unknown property "pollMs" \(expected one of: pollIntervalMs, leaseMs, concurrency\)/);
  });
});

describe('gateway.jobs', () => {
  test('runs jobs once the gateway listens; close() hands a running job back for the next start', async () => {
    const gw = await startTestGateway(`
server:
  shutdownTimeoutMs: 100
jobs:
  pollIntervalMs: 10
  leaseMs: 2000
  concurrency: 2
`);
    try {
      const { jobs, services } = gw.gateway;
      const quick = signal<unknown>();
      jobs.register('test.quick', async (ctx) => { quick.resolve(ctx.job.payload); return { status: 'done' }; });
      const stuck = signal<AbortSignal>();
      jobs.register('test.stuck', (ctx) => { stuck.resolve(ctx.signal); return new Promise(() => {}); });

      await jobs.enqueue({ kind: 'test.quick', payload: { via: 'gateway' } });
      assert.deepEqual(await quick.promise, { via: 'gateway' });
      const id = await services.db.transaction((tx) => jobs.enqueue({ kind: 'test.stuck', payload: {} }, tx));
      const aborted = await stuck.promise;

      await gw.gateway.close();
      assert.ok(aborted.aborted, 'the handler was aborted at the shutdown deadline');
      const db = await openDatabase({ dataDir: gw.dataDir });
      try {
        const row = await jobRow(db, id);
        assert.deepEqual([row.status, row.lease_owner, row.attempts], ['pending', null, 1]);
      } finally {
        await db.close();
      }
    } finally {
      await gw.close(); // the gateway's close is idempotent; this removes the folders
    }
  });

  test('the gateway delivers webhook.deliver jobs: 500 then 200, two signed attempts, the job done', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200));
    const gw = await startTestGateway(`
jobs:
  pollIntervalMs: 10
outbound:
  allowHttp: true
  allowedAddresses: [127.0.0.1]
webhooks:
  backoffMs: 20
`);
    try {
      const secret = 'whsec_gateway-jobs-test';
      const body = JSON.stringify({ type: 'batch.completed', data: { id: 'batch-1' } });
      const id = await gw.gateway.jobs.enqueue(webhookDeliveryJob({ url: receiver.url, secret, body, eventType: 'batch.completed', deliveryId: 'batch-1' }));
      await eventually(async () => assert.equal((await jobRow(gw.gateway.services.db, id)).status, 'done'), 10_000, 10);
      assert.equal(receiver.received.length, 2);
      const verify = await docVerifier();
      for (const got of receiver.received) {
        assert.equal(got.body, body);
        assert.ok(verify(secret, String(got.headers['x-gateway-signature']), got.body), 'signed');
      }
      assert.deepEqual(receiver.received.map((r) => r.headers['x-gateway-delivery']), ['batch-1.1', 'batch-1.2']);
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});
