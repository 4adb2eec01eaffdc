/**
 * `aigw keys update` as an operator runs it, against two gateway processes on one Postgres and one Redis: the
 * CLI (a child process) changes a key, and the next request on either instance sees the change — each instance
 * reads the key through the shared KV, whose entry the update drops, as a revocation does. Runs when
 * TEST_DATABASE_URL and TEST_REDIS_URL are set (CI sets both).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { ADMIN_TOKEN, chatConfig } from '../helpers/gateway.ts';
import { createSharedStores, dropSharedStores, startGateways, stopGateways, type SharedStores } from '../helpers/cluster.ts';
import { runCli, type GatewayProcess } from '../helpers/process.ts';
import { admin, createKey, send } from '../helpers/ratelimit.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const SKIP = DATABASE_URL && REDIS_URL ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL not both set';
const hello = { model: 'plain', messages: [{ role: 'user', content: 'hi' }] };

describe('aigw keys update across two gateway processes on one Redis and one Postgres', { skip: SKIP }, () => {
  let stores: SharedStores | undefined;
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  let env: Record<string, string>;
  const processes: GatewayProcess[] = [];
  let urls: string[] = [];

  before(async () => {
    stores = await createSharedStores(DATABASE_URL!);
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-keys-update-'));
    configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, chatConfig(fake.baseUrl, `
storage:
  kvPrefix: "${stores.prefix}"
`).replace('plugins: [auth]', 'plugins: [auth, ip-allow, ratelimit]'));
    env = { DATABASE_URL: stores.databaseUrl, REDIS_URL: REDIS_URL!, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, AIGW_DATA_DIR: join(dir, 'data') };
    urls = await startGateways(2, configFile, env, processes);
  });
  after(async () => {
    await stopGateways(processes);
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await dropSharedStores(stores, DATABASE_URL!, REDIS_URL!);
  });

  const cli = (...args: string[]) => runCli([...args, '--config', configFile], env);

  test('limits and addresses changed by the CLI hold on both instances from their next request', { timeout: 180_000 }, async () => {
    const [a, b] = urls as [string, string];
    const { id, key } = await createKey(a);
    // Both instances have the key (limitless) in the shared cache now.
    assert.equal((await send(a, hello, key)).status, 200);
    assert.equal((await send(b, hello, key)).status, 200);

    const updated = await cli('keys', 'update', id, '--requests-per-minute', '3', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    const record = JSON.parse(updated.stdout);
    assert.deepEqual(record.rateLimits, { requestsPerMinute: 3 });
    assert.equal(record.id, id);
    assert.equal(record.key, undefined, 'the answer carries no plaintext key');
    assert.ok(!updated.stdout.includes(key));
    // Counting starts with the limit: three pass over both instances, then each refuses, B included.
    assert.equal((await send(a, hello, key)).status, 200);
    assert.equal((await send(b, hello, key)).status, 200);
    assert.equal((await send(a, hello, key)).status, 200);
    assert.equal((await send(b, hello, key)).status, 429);
    assert.equal((await send(a, hello, key)).status, 429);

    const lifted = await cli('keys', 'update', id, '--no-rate-limits', '--allowed-ips', '192.0.2.0/24');
    assert.equal(lifted.code, 0, lifted.stderr);
    assert.match(lifted.stdout, /rate limits none/);
    assert.match(lifted.stdout, /allowed addresses 192\.0\.2\.0\/24/);
    for (const url of urls) {
      const refused = await send(url, hello, key);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
    }

    const open = await cli('keys', 'update', id, '--no-ip-limit');
    assert.equal(open.code, 0, open.stderr);
    for (const url of urls) assert.equal((await send(url, hello, key)).status, 200);
  });

  test('an update is as strict as a creation: out-of-range, unknown and empty changes are refused', async () => {
    const [a] = urls as [string];
    const { id } = await createKey(a, { rateLimits: { requestsPerMinute: 5 } });
    for (const body of [{ rateLimits: { requestsPerMinute: 0 } }, { rateLimits: { requestsPerMinute: 1.5 } }, { tenantId: 'other' }, {},
      { scopes: { capabilities: ['no-such-capability'] } }, { expiresAt: 'tomorrow' }]) {
      const answer = await fetch(`${a}/admin/v1/keys/${id}`, {
        method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      assert.equal(answer.status, 400, `${JSON.stringify(body)} was accepted`);
    }
    assert.deepEqual((await admin(a, 'GET', `/keys/${id}`)).rateLimits, { requestsPerMinute: 5 });

    const missing = await fetch(`${a}/admin/v1/keys/key_nope`, {
      method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{"name":"x"}',
    });
    assert.equal(missing.status, 404);

    const usage = await cli('keys', 'update', id);
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /at least one field/);
  });
});
