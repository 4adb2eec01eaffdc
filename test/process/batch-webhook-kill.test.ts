/**
 * A gateway killed with SIGKILL while a batch's webhook is being retried: the next start on the same data folder
 * resumes the deliveries from the jobs table. Attempt numbers go on from where they were (a crashed attempt
 * kept its number), no number is sent twice, and the delivery ends at the first 2xx.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { batchesConfig, TALLY_FILES, startFakeBatchApis, type FakeBatchApis } from '../fakes/batches.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson } from '../helpers/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { docVerifier, startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

let fake: FakeBatchApis;
let receiver: Receiver;
let dir: string;
const running: GatewayProcess[] = [];
let accept = false;

before(async () => {
  fake = await startFakeBatchApis();
  receiver = await startReceiver(() => (accept ? 200 : 500));
  dir = await mkdtemp(join(tmpdir(), 'aigw-batch-kill-'));
  // Retries far enough apart to kill between them; a short lease, so that an attempt cut by the kill is taken
  // over soon by the next start.
  const config = batchesConfig(fake.origin, 'batches:\n  pollIntervalMs: { openai: 20 }\n')
    .replace('jobs:\n  pollIntervalMs: 10', 'jobs:\n  pollIntervalMs: 10\n  leaseMs: 1000')
    .replace('webhooks:\n  backoffMs: 20', 'webhooks:\n  backoffMs: 600');
  await writeFile(join(dir, 'pipelines.yaml'), config);
  for (const [name, text] of Object.entries(TALLY_FILES)) await writeFile(join(dir, name), text);
});

after(async () => {
  for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
  await Promise.all(running.map((g) => g.exited));
  await receiver?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const start = async () => {
  const gateway = await startGatewayProcess(join(dir, 'pipelines.yaml'), { AIGW_DATA_DIR: join(dir, 'data'), AIGW_ADMIN_TOKEN: ADMIN_TOKEN }, 60_000);
  running.push(gateway);
  return gateway;
};

test('kill -9 between webhook retries: the next start resumes them, numbered on, each signed, none sent twice', { timeout: 180_000 }, async () => {
  const first = await start();
  const created = await postJson(`${first.url}/admin/v1/keys`, { name: 'batches', scopes: { capabilities: ['batch', 'files'] } }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const key = created.body.key as string;
  const submitted = await postJson(`${first.url}/v1/batches`, {
    provider: 'openai', endpoint: '/v1/chat/completions', completion_webhook_url: receiver.url,
    requests: [{ custom_id: 'k-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'small', messages: [{ role: 'user', content: 'hi' }] } }],
  }, { authorization: `Bearer ${key}` });
  assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
  const batch = submitted.body as { id: string; provider_batch_id: string; webhook_secret: string };
  fake.set(batch.provider_batch_id, 'completed');

  await eventually(async () => assert.equal(receiver.received.length, 2), 30_000, 10);
  first.child.kill('SIGKILL');
  assert.equal(await first.exited, 'SIGKILL');
  const beforeRestart = receiver.received.length;
  accept = true;

  await start();
  await eventually(async () => assert.ok(receiver.received.length > beforeRestart), 60_000, 20);
  await new Promise((resolve) => setTimeout(resolve, 1500));

  const numbers = receiver.received.map((r) => Number(String(r.headers['x-gateway-delivery']).split('.').at(-1)));
  assert.ok(receiver.received.every((r) => String(r.headers['x-gateway-delivery']).startsWith(`${batch.id}.`)));
  assert.deepEqual(numbers.slice(0, 2), [1, 2]);
  assert.equal(new Set(numbers).size, numbers.length, `no number twice: ${numbers.join(', ')}`);
  assert.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), `numbered on: ${numbers.join(', ')}`);
  assert.equal(numbers.length, beforeRestart + 1, 'the first delivery after the restart is accepted, and ends them');
  const verify = await docVerifier();
  for (const delivery of receiver.received) assert.ok(verify(batch.webhook_secret, String(delivery.headers['x-gateway-signature']), delivery.body));
});
