/**
 * `aigw keys update` against a running gateway on the embedded database: the spawned CLI asks that gateway
 * (through the control token in its data folder), and the gateway's next request sees the key's new capabilities
 * and expiry. The two-instance case on Redis and Postgres is keys-update-cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { chatConfig, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { runCli } from '../helpers/process.ts';
import { createKey } from '../helpers/usage.ts';

describe('aigw keys update with a gateway holding the data folder', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let dir: string;
  let configFile: string;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(chatConfig(fake.baseUrl));
    dir = await mkdtemp(join(tmpdir(), 'aigw-keys-update-cli-'));
    configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, chatConfig(fake.baseUrl));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const chat = (key: string) => postJson(`${gw.url}/v1/chat/completions`, { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
  const cli = (...args: string[]) => runCli([...args, '--config', configFile], { AIGW_DATA_DIR: gw.dataDir });

  test('capabilities and expiry changed by the CLI hold from the next request', { timeout: 120_000 }, async () => {
    const { id, key } = await createKey(gw);
    assert.equal((await chat(key)).status, 200);

    const narrowed = await cli('keys', 'update', id, '--capabilities', 'embeddings');
    assert.equal(narrowed.code, 0, narrowed.stderr);
    assert.match(narrowed.stdout, new RegExp(`^updated ${id}\ncapabilities embeddings\nrate limits none\nallowed addresses any\nexpires never\n$`));
    const refused = await chat(key);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));

    const past = await cli('keys', 'update', id, '--capabilities', 'chat', '--expires-at', '2020-01-01T00:00:00Z');
    assert.equal(past.code, 0, past.stderr);
    assert.equal((await chat(key)).body.error.code, 'AUTH_API_KEY_EXPIRED');
    // The refusal wrote the key as expired; a later expiry brings it back.
    const renewed = await cli('keys', 'update', id, '--no-expiry', '--json');
    assert.equal(renewed.code, 0, renewed.stderr);
    assert.deepEqual([JSON.parse(renewed.stdout).status, JSON.parse(renewed.stdout).expiresAt], ['active', null]);
    assert.equal((await chat(key)).status, 200);

    const [badLimit, both] = await Promise.all([
      cli('keys', 'update', id, '--requests-per-minute', '0'),
      cli('keys', 'update', id, '--expires-at', '2030-01-01T00:00:00Z', '--no-expiry'),
    ]);
    // Out of range: refused by the admin API, never clamped.
    assert.equal(badLimit.code, 1, badLimit.stderr);
    assert.match(badLimit.stderr, /VALIDATION_ERROR/);
    assert.equal(both.code, 2, both.stderr);
  });
});
