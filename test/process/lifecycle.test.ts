/**
 * The gateway as a process: SIGTERM drains a stream in flight and exits 0, a kill -9 leaves a data folder
 * the next start reopens, and `aigw keys create` works with and without a gateway holding the folder.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { helloStreamEvents, sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { builtInPlugins } from '../../plugins/index.ts';
import { builtInMigrations } from '../helpers/config.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, chatConfig, postJson } from '../helpers/gateway.ts';
import { runCli, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

const hello = (stream = false) => ({ model: 'plain', stream, messages: [{ role: 'user', content: 'hi' }] });

/** Rejects after `ms` so that a broken drain fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function createKeyOver(url: string): Promise<string> {
  const created = await postJson(`${url}/admin/v1/keys`, { name: 'process-test' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.key as string;
}


/** The last migration of the core and of each built-in plugin, as `aigw migrate` prints them. */
async function latestVersions(): Promise<string> {
  const last = async (dir: string) => (await readdir(dir)).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort().at(-1)!.replace(/\.sql$/, '');
  const core = await last(new URL('../../core/store/migrations/', import.meta.url).pathname);
  const plugins = await Promise.all(builtInMigrations.map(async ({ namespace, dir }) => `${namespace}/${await last(dir)}`));
  return [core, ...plugins].join(', ');
}

describe('the gateway process', () => {
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  const dataDirs: string[] = [];
  const running: GatewayProcess[] = [];

  const dataDir = async () => {
    const path = await freshDataDir();
    dataDirs.push(path);
    return path;
  };
  const start = async (data: string, env: NodeJS.ProcessEnv = {}) => {
    const gateway = await startGatewayProcess(configFile, { AIGW_DATA_DIR: data, AIGW_ADMIN_TOKEN: ADMIN_TOKEN, ...env });
    running.push(gateway);
    return gateway;
  };

  before(async () => {
    fake = await startFakeOpenAI();
    dir = await mkdtemp(join(tmpdir(), 'aigw-process-test-'));
    configFile = join(dir, 'pipelines.yaml');
    await writeFile(configFile, chatConfig(fake.baseUrl));
  });
  after(async () => {
    for (const gateway of running) if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
    await Promise.all(running.map((g) => g.exited));
    await fake.close();
    for (const path of [dir, ...dataDirs]) await rm(path, { recursive: true, force: true });
  });

  test('SIGTERM mid-stream: new connections are refused, the stream completes, then the process exits 0', async () => {
    const gateway = await start(await dataDir());
    const key = await createKeyOver(gateway.url);

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.handle(async (req, res) => {
      const events = helloStreamEvents(req.body, ['one', ' two', ' three']);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events[0]);
      await released;
      for (const event of events.slice(1)) {
        res.write(event);
        await sleep(20);
      }
      res.end();
    });
    try {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(hello(true)),
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      assert.match(text, /chat\.completion\.chunk/);

      gateway.child.kill('SIGTERM');
      // The listener closes at once: a new connection is refused while the stream is still open.
      let refused = false;
      for (let i = 0; i < 50 && !refused; i++) {
        refused = await fetch(`${gateway.url}/healthz`).then(() => false, () => true);
        if (!refused) await sleep(20);
      }
      assert.ok(refused, 'the listener still accepts connections after SIGTERM');
      assert.equal(gateway.child.exitCode, null, 'the process exited before its stream finished');

      release();
      for (;;) {
        const { value, done } = await within(reader.read(), 10_000, 'the rest of the stream');
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      assert.match(text, /one/);
      assert.match(text, / three/);
      assert.ok(text.endsWith('data: [DONE]\n\n'), `the stream did not end with [DONE]: ${text.slice(-200)}`);
      assert.equal(await within(gateway.exited, 15_000, 'exit after the drain'), 0);
      assert.ok(gateway.logs.some((l) => l.msg === 'stopped'), 'no "stopped" log line');
    } finally {
      release();
      fake.reset();
    }
  });

  test('kill -9: the next start on the same data folder reopens the database and keeps its keys', async () => {
    const data = await dataDir();
    const first = await start(data);
    const key = await createKeyOver(first.url);
    assert.equal((await postJson(`${first.url}/v1/chat/completions`, hello(), { authorization: `Bearer ${key}` })).status, 200);
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');

    const second = await start(data);
    const answer = await postJson(`${second.url}/v1/chat/completions`, hello(), { authorization: `Bearer ${key}` });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.choices[0].message.content, 'Hello world');
    const ready = await fetch(`${second.url}/readyz`);
    assert.equal(ready.status, 200);
    await createKeyOver(second.url); // and it still writes
    second.child.kill('SIGTERM');
    assert.equal(await within(second.exited, 15_000, 'exit'), 0);
  });

  test('aigw keys create writes the key itself when no gateway runs, and asks the running gateway when one does', async () => {
    const data = await dataDir();
    const env = { AIGW_DATA_DIR: data };
    const offline = await runCli(['keys', 'create', '--name', 'cli-offline', '--capabilities', 'chat,embeddings', '--json', '--config', configFile], env);
    assert.equal(offline.code, 0, offline.stderr);
    const record = JSON.parse(offline.stdout) as { key: string; name: string; scopes: { capabilities: string[] }; tenantId: string };
    assert.match(record.key, /^aigw_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(record.name, 'cli-offline');
    assert.deepEqual(record.scopes.capabilities, ['chat', 'embeddings']);
    assert.equal(record.tenantId, 'default');

    // No admin token: the CLI reaches the running gateway through the control token in the data folder.
    const gateway = await start(data, { AIGW_ADMIN_TOKEN: '' });
    const first = await postJson(`${gateway.url}/v1/chat/completions`, hello(), { authorization: `Bearer ${record.key}` });
    assert.equal(first.status, 200, JSON.stringify(first.body));

    const online = await runCli(['keys', 'create', '--name', 'cli-online', '--config', configFile], env);
    assert.equal(online.code, 0, online.stderr);
    const plaintext = online.stdout.split('\n')[0]!;
    assert.match(plaintext, /^aigw_sk_/);
    assert.match(online.stdout, /shown once/);
    const second = await postJson(`${gateway.url}/v1/chat/completions`, hello(), { authorization: `Bearer ${plaintext}` });
    assert.equal(second.status, 200, JSON.stringify(second.body));

    const migrate = await runCli(['migrate', '--config', configFile], env);
    assert.equal(migrate.code, 1);
    assert.match(migrate.stderr, /in use by process/);

    gateway.child.kill('SIGINT');
    assert.equal(await within(gateway.exited, 15_000, 'exit'), 0);
    const after = await runCli(['migrate', '--config', configFile], env);
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stdout, `up to date (${await latestVersions()})\n`);
  });

  test('a bad config fails the start with exit 1 and file:line:col on stderr', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, chatConfig(fake.baseUrl).replace('plugins: [auth]', 'plugins: [auth, no-such-plugin]'));
    const result = await runCli(['start', '--config', bad], { AIGW_DATA_DIR: await dataDir() });
    assert.equal(result.code, 1);
    const known = builtInPlugins.map((plugin) => plugin.name).join(', ');
    assert.ok(result.stderr.includes(`/pipelines/0/plugins/1: unknown plugin "no-such-plugin" (known: ${known})`), result.stderr);
    assert.match(result.stderr, /bad\.yaml:\d+:\d+ \/pipelines\/0\/plugins\/1: /);
  });
});
