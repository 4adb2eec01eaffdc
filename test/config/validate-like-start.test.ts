/**
 * `aigw validate` checks everything `aigw start` checks about a config: a file validate passes, start accepts,
 * and a file start refuses for its content, validate refuses first, with file:line:col. Rules across a plugin's
 * entries (checkEntries) are the checks that used to run only in the plugins' setup at start.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { parseConfig } from '../helpers/config.ts';
import { createGateway } from '../../core/gateway.ts';
import { silentLogger } from '../../core/logger.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { BIN, REPO_ROOT } from '../helpers/process.ts';

const BASE = `providers:
  openai:
    baseUrl: http://127.0.0.1:9/v1
    apiKey: sk-test
models:
  - id: plain
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      - usage:
          flushIntervalMs: 1000
  - name: messages
    routes: [/v1/messages]
    plugins:
      - auth
      - usage:
          flushIntervalMs: 250
`;

const validate = (file: string) => spawnSync(process.execPath, [BIN, 'validate', file], {
  cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000,
});

/** What `start` does with a config text short of listening: load it, build the gateway, close it. */
async function startWith(text: string, file: string): Promise<'started' | string> {
  const dataDir = await freshDataDir();
  try {
    const loaded = await parseConfig(text, { file, env: { AIGW_DATA_DIR: dataDir } });
    const gateway = await createGateway(loaded, { logger: silentLogger() });
    await gateway.close();
    return 'started';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe('aigw validate runs every check aigw start runs on the config', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aigw-validate-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('two usage entries with different settings: validate exits 1 naming the second entry at its line', async () => {
    const file = join(dir, 'usage-differs.yaml');
    await writeFile(file, BASE);
    const result = validate(file);
    assert.equal(result.status, 1, `validate passed a file start refuses: ${result.stdout}`);
    const display = relative(REPO_ROOT, file);
    assert.match(result.stderr, new RegExp(`^${display.replace(/[.]/g, '\\.')}:19:9 /pipelines/1/plugins/1: .*flushIntervalMs.*differ`, 'm'), result.stderr);
    // start refuses it with the same message, at load, before any store is opened.
    assert.match(await startWith(BASE, file), /\/pipelines\/1\/plugins\/1: .*differ/);
  });

  test('files validate passes, start accepts; files start refuses for their content, validate refuses', async () => {
    const variants: Record<string, string> = {
      'same usage settings': BASE.replace('flushIntervalMs: 250', 'flushIntervalMs: 1000'),
      'usage in one pipeline only': BASE.replace(/      - usage:\n          flushIntervalMs: 250\n/, ''),
      'usage by defaults and by the same values': BASE.replace('flushIntervalMs: 1000', 'batchSize: 500').replace('flushIntervalMs: 250', 'maxPending: 100000'),
      'usage differing in batchSize': BASE.replace('flushIntervalMs: 1000', 'batchSize: 10').replace('flushIntervalMs: 250', 'batchSize: 20'),
      'a short JWT secret': BASE.replace('flushIntervalMs: 250', 'flushIntervalMs: 1000') + 'auth:\n  jwt:\n    secret: too-short\n',
    };
    for (const [name, text] of Object.entries(variants)) {
      const file = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
      await writeFile(file, text);
      const validated = validate(file).status === 0;
      const started = await startWith(text, file);
      assert.equal(validated, started === 'started', `${name}: validate ${validated ? 'passed' : 'refused'}, start said ${started}`);
    }
  });

  test('the loader reports every entry that differs, all at once, as a ConfigError', async () => {
    const text = BASE + `  - name: completions
    routes: [/v1/completions]
    plugins:
      - auth
      - usage:
          maxPending: 10
`;
    await assert.rejects(parseConfig(text, { file: join(dir, 'three.yaml'), env: {} }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues.map((i) => i.pointer), ['/pipelines/1/plugins/1', '/pipelines/2/plugins/1']);
      return true;
    });
  });
});
