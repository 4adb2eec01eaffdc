/**
 * `aigw start` tells an operator's mistakes before it opens the stores: a port in use fails at once, naming
 * host:port with a hint, and leaves the data folder untouched; a provider whose apiKey came out empty is named
 * in a warning, and the gateway starts anyway.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensurePortFree } from '../../core/boot/startup-checks.ts';
import { chatConfig } from '../helpers/gateway.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { runCli, startGatewayProcess } from '../helpers/process.ts';

describe('aigw start: checks before the stores open', () => {
  let dir: string;
  let occupied: Server;
  let port: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aigw-startup-checks-'));
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    port = (occupied.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => occupied?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the check itself: a taken port is refused with host:port and a hint, in milliseconds; a free one passes', async () => {
    const started = performance.now();
    await assert.rejects(ensurePortFree('127.0.0.1', port), (err: Error) => {
      assert.match(err.message, new RegExp(`^127\\.0\\.0\\.1:${port} is already in use`));
      assert.match(err.message, /server\.port/);
      assert.match(err.message, /PORT environment variable/);
      return true;
    });
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 1000, `the check took ${elapsed} ms`);
    await ensurePortFree('127.0.0.1', 0);
    // Bound and released: the port is free again for the real listen.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const freePort = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    await ensurePortFree('127.0.0.1', freePort);
    await ensurePortFree('127.0.0.1', freePort);
  });

  test('a port in use: aigw start exits 1 naming it, and never opens the data folder', async () => {
    const configFile = join(dir, 'port.yaml');
    await writeFile(configFile, chatConfig('http://127.0.0.1:9'));
    const dataDir = join(dir, 'never-created');
    const started = performance.now();
    const result = await runCli(['start', '--config', configFile], { PORT: String(port), AIGW_DATA_DIR: dataDir, AIGW_ADMIN_TOKEN: 'x'.repeat(32) });
    const elapsed = performance.now() - started;
    assert.equal(result.code, 1, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    assert.match(result.stderr, new RegExp(`aigw: 127\\.0\\.0\\.1:${port} is already in use \\(another aigw, or another program, listens there\\)`));
    assert.match(result.stderr, /server\.port in the config or the PORT environment variable/);
    assert.ok(!existsSync(dataDir), 'the data folder was created: the stores were opened before the port was checked');
    // The whole process, Node's start and the config's loading included.
    process.stdout.write(`# aigw start on a port in use exited after ${Math.round(elapsed)} ms\n`);
  });

  test('an empty or unset provider credential is named in a start-up warning, and the gateway starts', { timeout: 60_000 }, async () => {
    const configFile = join(dir, 'credentials.yaml');
    await writeFile(configFile, `
providers:
  openai:
    baseUrl: http://127.0.0.1:9
    apiKey: \${AIGW_TEST_UNSET_KEY:-}
  anthropic:
    apiKey: ""
  voyage:
    apiKey: \${AIGW_TEST_EMPTY_KEY}
  jina:
    apiKey: \${AIGW_TEST_SET_KEY}
  deepgram:
    apiKey: ""
    enabled: false
models:
  - id: plain
    provider: openai
`);
    const gateway = await startGatewayProcess(configFile, { AIGW_DATA_DIR: await freshDataDir(), AIGW_TEST_EMPTY_KEY: '', AIGW_TEST_SET_KEY: 'gsk-set' });
    try {
      const warnings = gateway.logs.filter((line) => typeof line.msg === 'string' && line.msg.includes('has an empty apiKey'));
      const named = Object.fromEntries(warnings.map((line) => [line.provider, line.variables]));
      assert.deepEqual(named, { openai: ['AIGW_TEST_UNSET_KEY'], anthropic: [], voyage: ['AIGW_TEST_EMPTY_KEY'] });
      assert.ok(warnings.every((line) => line.level === 40), JSON.stringify(warnings));
      assert.ok(warnings.some((line) => String(line.msg).startsWith('provider "openai" has an empty apiKey: set AIGW_TEST_UNSET_KEY')), JSON.stringify(warnings));
      assert.ok(warnings.some((line) => String(line.msg).startsWith('provider "anthropic" has an empty apiKey in the config')), JSON.stringify(warnings));
    } finally {
      gateway.child.kill('SIGTERM');
      assert.equal(await gateway.exited, 0);
    }
  });
});
