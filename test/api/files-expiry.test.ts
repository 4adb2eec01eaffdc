/**
 * The files.expire job on a gateway (PGlite, millisecond cadence): expired entries and their provider files are
 * deleted in batches, a provider's 404 counts as gone, other failures are retried at the next sweep, and the
 * deployment has one live sweep job whoever enqueues it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { filesExpireJob } from '../../core/api/files-expiry.ts';
import { ConfigError } from '../../core/config/document.ts';
import { insertFile, type NewFile } from '../../core/store/files.ts';
import { startFakeFiles, type FakeFiles } from '../fakes/files.ts';
import { parseConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const parse = (text: string) => parseConfig(text, { file: '/nowhere/pipelines.yaml', display: 'pipelines.yaml', env: {}, cwd: '/nowhere' });

const config = (origin: string) => `
jobs:
  pollIntervalMs: 10
files:
  expirySweepMs: 30
  expiryBatchSize: 2
upstream:
  breaker: { volumeThreshold: 1000 }
providers:
  openai: { baseUrl: ${origin}/openai, apiKey: sk-upstream-openai }
  anthropic: { baseUrl: ${origin}/anthropic, apiKey: sk-ant-upstream }
`;

describe('the files config section', () => {
  test('defaults: a sweep every 10 minutes, 100 entries a batch; bounds are checked', async () => {
    assert.deepEqual((await parse('{}')).config.files, { expirySweepMs: 600000, expiryBatchSize: 100 });
    await assert.rejects(parse('files:\n  expiryBatchSize: 0\n'), (err: unknown) => err instanceof ConfigError && err.issues[0]!.pointer === '/files/expiryBatchSize');
  });
});

describe('files.expire', () => {
  let fake: FakeFiles;
  let gw: TestGateway;
  let auth: Record<string, string>;

  const db = () => gw.gateway.services.db;
  const entries = async () => (await db().query<{ id: string }>('SELECT id FROM files ORDER BY id')).map((r) => r.id);
  /** The first id expired longest ago: the sweep takes them in this order. */
  const expire = async (ids: string[]) => {
    for (const [i, id] of ids.entries()) await db().query(`UPDATE files SET expires_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, ids.length - i]);
  };
  const deletes = (providerId: string) => fake.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/files/${providerId}`)).length;

  async function upload(provider: string): Promise<{ id: string; providerId: string }> {
    const response = await postJson(`${gw.url}/v1/files`, {
      provider, purpose: 'batch', filename: 'in.jsonl', mime_type: 'application/jsonl', content_base64: Buffer.from('{}\n').toString('base64'),
    }, auth);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return { id: response.body.id, providerId: [...fake.stored.keys()].at(-1)! };
  }

  const entry = (fields: Partial<NewFile>): NewFile => ({
    tenantId: 'default', provider: 'openai', providerFileId: 'file-none', filename: 'x', purpose: 'batch', bytes: 1,
    mimeType: 'text/plain', metadata: null, expiresAt: Date.now() - 1000, apiKeyId: null, userId: null, ...fields,
  });

  before(async () => {
    fake = await startFakeFiles();
    gw = await startTestGateway(config(fake.origin));
    auth = { authorization: `Bearer ${await gw.createKey({ scopes: { capabilities: ['files'] } })}` };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  test('expired entries and their provider files are deleted, several batches in a sweep; live ones stay', async () => {
    const expiring = [await upload('openai'), await upload('openai'), await upload('anthropic'), await upload('openai'), await upload('anthropic')];
    const live = await upload('openai');
    await expire(expiring.map((f) => f.id));
    await eventually(async () => assert.deepEqual(await entries(), [live.id]), 5000, 10);
    for (const file of expiring) {
      assert.ok(!fake.stored.has(file.providerId), `${file.providerId} deleted upstream`);
      assert.equal(deletes(file.providerId), 1);
    }
    assert.ok(fake.stored.has(live.providerId));
    assert.equal(deletes(live.providerId), 0);
  });

  test("a provider's 404 counts as gone; a provider no longer configured is not called", async () => {
    const gone = 'file-44444444-4444-4444-8444-444444444444';
    const unconfigured = 'file-55555555-5555-4555-8555-555555555555';
    await insertFile(db(), gone, entry({ providerFileId: 'file-never-uploaded' }));
    await insertFile(db(), unconfigured, entry({ provider: 'gemini', providerFileId: 'files/abc' }));
    await eventually(async () => assert.ok(!(await entries()).some((id) => id === gone || id === unconfigured)), 5000, 10);
    assert.equal(deletes('file-never-uploaded'), 1);
    assert.ok(!fake.requests.some((r) => r.path.includes('files/abc')));
  });

  test('a failing provider keeps its entries for the next sweeps, which delete them once it answers again', async () => {
    const files = [await upload('openai'), await upload('openai'), await upload('openai')];
    fake.failWith(503);
    try {
      await expire(files.map((f) => f.id));
      // Two sweeps at least, each calling the provider once: the first failure leaves its other files to the next.
      await eventually(async () => assert.ok(fake.requests.filter((r) => r.method === 'DELETE').length >= 2 && deletes(files[0]!.providerId) >= 2), 5000, 10);
      const before = await entries();
      for (const file of files) assert.ok(before.includes(file.id), 'kept while the provider fails');
      assert.equal(deletes(files[1]!.providerId) + deletes(files[2]!.providerId), 0, 'one call per sweep for a failing provider');
    } finally {
      fake.failWith(null);
    }
    await eventually(async () => assert.ok(!(await entries()).some((id) => files.some((f) => f.id === id))), 5000, 10);
    for (const file of files) assert.ok(!fake.stored.has(file.providerId));
  });

  test('one live sweep job per deployment: enqueueing it again names the same job', async () => {
    const again = await gw.gateway.jobs.enqueue(filesExpireJob);
    const live = await db().query<{ id: string }>(`SELECT id FROM jobs WHERE kind = 'files.expire' AND status IN ('pending', 'running')`);
    assert.deepEqual(live.map((r) => r.id), [again]);
    const all = await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'files.expire'`);
    assert.equal(all[0]!.n, 1, 'rescheduled in place, never a new row');
  });
});
