/**
 * The `webhook.deliver` job handler, driven directly with the JobContext the runner would give it: one signed
 * attempt per run, numbered by the persisted attempt count, retried with backoff until maxAttempts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WebhooksConfig } from '../../core/config/types.ts';
import type { JobContext, JobResult } from '../../core/jobs/types.ts';
import type { ResolveAll } from '../../core/outbound/fetch.ts';
import { compileOutboundPolicy, type OutboundPolicy } from '../../core/outbound/policy.ts';
import { retryDelay, WEBHOOK_DELIVER, webhookDeliveryHandler, webhookDeliveryJob, type WebhookDelivery } from '../../core/webhooks/deliver.ts';
import { batchCompletedPayload } from '../../core/webhooks/payload.ts';
import { newWebhookSecret } from '../../core/webhooks/sign.ts';
import { docVerifier, startReceiver, type Answer } from '../helpers/webhook-receiver.ts';

const BATCH_ID = 'batch-0b8e7a1c-51d2-4f0e-8b3a-9c6d2e1f4a70';
const loopback = compileOutboundPolicy({ allowHttp: true, allowedAddresses: ['127.0.0.1'] });
const config: WebhooksConfig = { timeoutMs: 2000, maxAttempts: 6, backoffMs: 50 };

function delivery(url: string, secret = newWebhookSecret()): WebhookDelivery {
  const body = JSON.stringify(batchCompletedPayload({
    id: BATCH_ID, provider: 'openai', endpoint: '/v1/chat/completions', status: 'completed',
    requestCounts: { total: 2, completed: 2, failed: 0 }, providerBatchId: 'batch_x',
    outputProviderFileId: 'file-out', errorProviderFileId: null, completedAt: Date.now(), metadata: null,
  }));
  return { url, secret, body, eventType: 'batch.completed', deliveryId: BATCH_ID };
}

/** Runs the handler as the runner would: attempts counted before each run, the next run at the retry time. */
async function runUntilSettled(
  payload: WebhookDelivery,
  options: { config?: WebhooksConfig; policy?: OutboundPolicy; resolve?: ResolveAll; maxRuns?: number } = {},
): Promise<JobResult[]> {
  const handler = webhookDeliveryHandler({
    config: options.config ?? config, policy: options.policy ?? loopback, random: () => 0.5,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const results: JobResult[] = [];
  const createdAt = Date.now();
  for (let attempts = 1; attempts <= (options.maxRuns ?? 10); attempts++) {
    const ctx: JobContext = {
      job: { id: 'job-1', kind: WEBHOOK_DELIVER, key: `${WEBHOOK_DELIVER}:${BATCH_ID}`, payload, attempts, runAt: Date.now(), createdAt },
      signal: new AbortController().signal,
      now: Date.now,
    };
    const result = await handler(ctx);
    results.push(result);
    if (result.status !== 'retry') break;
  }
  return results;
}

describe('webhook.deliver', () => {
  test('500, 500, 500, 200: four signed deliveries numbered .1 to .4, then done', async () => {
    const answers: Answer[] = [500, 500, 500, 200];
    const receiver = await startReceiver((n) => answers[n] ?? 200);
    try {
      const payload = delivery(receiver.url);
      const started = Date.now();
      const results = await runUntilSettled(payload);
      assert.deepEqual(results.map((r) => r.status), ['retry', 'retry', 'retry', 'done']);
      assert.equal(receiver.received.length, 4);
      const verify = await docVerifier();
      receiver.received.forEach((got, i) => {
        assert.equal(got.headers['x-gateway-delivery'], `${BATCH_ID}.${i + 1}`);
        assert.equal(got.headers['x-gateway-event'], 'batch.completed');
        assert.equal(got.headers['content-type'], 'application/json');
        assert.equal(got.body, payload.body, 'every attempt sends the same bytes');
        assert.equal(verify(payload.secret, String(got.headers['x-gateway-signature']), got.body), true, `attempt ${i + 1} verifies`);
        assert.equal(verify(newWebhookSecret(), String(got.headers['x-gateway-signature']), got.body), false);
      });
      const t = Number(/^t=(\d+),/.exec(String(receiver.received[0]!.headers['x-gateway-signature']))![1]);
      assert.ok(Math.abs(t - started / 1000) < 5, 'the timestamp is the time of the attempt');
      const retry = results[0] as Extract<JobResult, { status: 'retry' }>;
      assert.equal(retry.error, 'attempt 1 of 6: the receiver answered 500');
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that always fails is failed after maxAttempts, with the last error', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const results = await runUntilSettled(delivery(receiver.url), { config: { ...config, maxAttempts: 3 } });
      assert.deepEqual(results.map((r) => r.status), ['retry', 'retry', 'failed']);
      assert.deepEqual(results.at(-1), { status: 'failed', error: 'attempt 3 of 3: the receiver answered 503' });
      assert.deepEqual(receiver.received.map((r) => r.headers['x-gateway-delivery']), [1, 2, 3].map((n) => `${BATCH_ID}.${n}`));
    } finally {
      await receiver.close();
    }
  });

  test('the retry times back off exponentially from backoffMs', async () => {
    const receiver = await startReceiver(() => 500);
    try {
      const before = Date.now();
      const results = await runUntilSettled(delivery(receiver.url), { config: { ...config, backoffMs: 10_000, maxAttempts: 4 } });
      const delays = results.filter((r) => r.status === 'retry').map((r) => (r as { at: number }).at - before);
      // random() = 0.5: three quarters of 10 s, 20 s, 40 s (plus the few ms the attempts took).
      assert.equal(delays.length, 3);
      [7500, 15000, 30000].forEach((expected, i) => assert.ok(delays[i]! >= expected && delays[i]! < expected + 2000, `retry ${i + 1}: ${delays[i]}`));
      assert.equal(retryDelay(1, 100, () => 0), 50);
      assert.equal(retryDelay(1, 100, () => 0.999999), 100);
      assert.equal(retryDelay(5, 100, () => 0), 800);
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that never answers: the attempt times out and is retried', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? () => undefined : 204));
    try {
      const started = Date.now();
      const results = await runUntilSettled(delivery(receiver.url), { config: { ...config, timeoutMs: 300 } });
      assert.deepEqual(results.map((r) => r.status), ['retry', 'done']);
      assert.equal((results[0] as { error: string }).error, 'attempt 1 of 6: no complete answer within 300 ms');
      assert.ok(Date.now() - started < 3000);
      assert.deepEqual(receiver.received.map((r) => r.headers['x-gateway-delivery']), [`${BATCH_ID}.1`, `${BATCH_ID}.2`]);
    } finally {
      await receiver.close();
    }
  });

  test('a 302 is a failed attempt and its target is never called', async () => {
    const target = await startReceiver(() => 200);
    const redirecting = await startReceiver(() => (res) => res.writeHead(302, { location: target.url }).end());
    try {
      const results = await runUntilSettled(delivery(redirecting.url), { config: { ...config, maxAttempts: 2 } });
      assert.deepEqual(results.at(-1), { status: 'failed', error: 'attempt 2 of 2: the receiver answered 302 (redirects are not followed)' });
      assert.equal(redirecting.received.length, 2);
      assert.equal(target.received.length, 0);
    } finally {
      await redirecting.close();
      await target.close();
    }
  });

  test('the URL is checked again at delivery: a name now resolving to a forbidden address fails without sending', async () => {
    const receiver = await startReceiver(() => 200);
    try {
      const noLoopback = compileOutboundPolicy({ allowHttp: true, allowedAddresses: [] });
      const resolve: ResolveAll = async () => [{ address: '127.0.0.1', family: 4 }];
      const url = `http://hooks.example.test:${receiver.port}/hook`;
      const results = await runUntilSettled(delivery(url), { config: { ...config, maxAttempts: 2 }, policy: noLoopback, resolve });
      assert.deepEqual(results.map((r) => r.status), ['retry', 'failed']);
      assert.match((results[1] as { error: string }).error, /^attempt 2 of 2: refused: hooks\.example\.test resolves to 127\.0\.0\.1/);
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  test('an attempt cut short by shutdown is retried at once and never ends the delivery', async () => {
    const receiver = await startReceiver(() => () => undefined);
    try {
      const handler = webhookDeliveryHandler({ config: { ...config, maxAttempts: 1 }, policy: loopback });
      const controller = new AbortController();
      const payload = delivery(receiver.url);
      const ctx: JobContext = {
        job: { id: 'job-2', kind: WEBHOOK_DELIVER, key: null, payload, attempts: 1, runAt: Date.now(), createdAt: Date.now() },
        signal: controller.signal,
        now: Date.now,
      };
      const running = handler(ctx);
      setTimeout(() => controller.abort(), 100);
      const result = await running;
      assert.equal(result.status, 'retry');
      assert.match((result as { error: string }).error, /^attempt 1 interrupted: /);
    } finally {
      await receiver.close();
    }
  });

  test('a payload that is not a delivery fails at once; the error never holds the secret', async () => {
    const handler = webhookDeliveryHandler({ config, policy: loopback });
    const ctx = (payload: unknown): JobContext => ({
      job: { id: 'job-3', kind: WEBHOOK_DELIVER, key: null, payload, attempts: 1, runAt: 0, createdAt: 0 },
      signal: new AbortController().signal,
      now: Date.now,
    });
    assert.deepEqual(await handler(ctx({ url: 'https://x.example/' })), { status: 'failed', error: 'the job payload is not a webhook delivery' });
    const secret = newWebhookSecret();
    const refused = await handler(ctx(delivery('https://user:pw@10.0.0.1/?token=abc', secret)));
    assert.equal(refused.status, 'retry');
    const error = (refused as { error: string }).error;
    assert.equal(error, 'attempt 1 of 6: refused: the URL must not carry a user name or password');
    assert.ok(!error.includes(secret) && !error.includes('pw') && !error.includes('token'));
  });

  test('webhookDeliveryJob keys the job by delivery, so one event has one live delivery', () => {
    const payload = delivery('https://hooks.example.com/');
    assert.deepEqual(webhookDeliveryJob(payload), { kind: 'webhook.deliver', key: `webhook.deliver:${BATCH_ID}`, payload });
    assert.equal(webhookDeliveryJob(payload, 123).runAt, 123);
  });
});
