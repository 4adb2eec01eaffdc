import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type ConfigIssue } from '../../core/config/document.ts';
import type { LoadedConfig } from '../../core/boot/load.ts';
import { loadConfig, parseConfig } from '../helpers/config.ts';
import { endpointPaths } from '../../core/api/endpoints.ts';
import { builtInPlugins } from '../../plugins/index.ts';
import { builtInProviders } from '../../providers/index.ts';
import { BIN, REPO_ROOT } from '../helpers/process.ts';

const FILE = '/tmp/whatever/pipelines.yaml';
const DISPLAY = 'pipelines.yaml';
const ENV: NodeJS.ProcessEnv = { OPENAI_API_KEY: 'sk-test' };
const REPO_CONFIG = fileURLToPath(new URL('../../pipelines.yaml', import.meta.url));

const KNOWN_PLUGINS = builtInPlugins.map((p) => p.name).join(', ');
const KNOWN_PROVIDERS = builtInProviders.map((p) => p.slug).join(', ');
const KNOWN_ROUTES = [...endpointPaths(), ...builtInPlugins.flatMap((p) => (p.endpoints ?? []).map((e) => e.path))].join(', ');

// Line numbers are 1-based; columns too. The value of `apiKey` is at 6:13, `[auth]` at 13:14.
const MINIMAL = `server:
  port: \${PORT:-8080}
providers:
  openai:
    baseUrl: https://api.openai.com/v1
    apiKey: \${OPENAI_API_KEY}
models:
  - id: gpt-4o-mini
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins: [auth]
`;

/** MINIMAL with one exact, unique piece of text replaced. */
function edit(text: string, find: string, replace: string): string {
  const at = text.indexOf(find);
  assert.ok(at !== -1, `fixture text not found: ${find}`);
  assert.equal(text.indexOf(find, at + 1), -1, `fixture text not unique: ${find}`);
  return text.slice(0, at) + replace + text.slice(at + find.length);
}

function parse(text: string, env: NodeJS.ProcessEnv = ENV, file = FILE): Promise<LoadedConfig> {
  return parseConfig(text, { file, display: DISPLAY, env, cwd: '/tmp/whatever' });
}

async function configError(text: string, env: NodeJS.ProcessEnv = ENV, file = FILE): Promise<ConfigError> {
  try {
    await parse(text, env, file);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    assert.fail(`expected a ConfigError, got ${(err as Error).name}: ${(err as Error).message}`);
  }
  assert.fail('expected a ConfigError, but the config was accepted');
}

/** The one issue of a ConfigError, checked in full, and the message line it formats to. */
async function oneIssue(text: string, expected: Required<ConfigIssue>, env: NodeJS.ProcessEnv = ENV): Promise<void> {
  const err = await configError(text, env);
  assert.deepEqual(err.issues, [expected]);
  // An issue about the whole document has the empty pointer, written "/".
  assert.equal(err.message, `${DISPLAY}:${expected.line}:${expected.col} ${expected.pointer || '/'}: ${expected.message}`);
  assert.equal(err.file, DISPLAY);
  assert.equal(err.name, 'ConfigError');
}

describe('the minimal file', () => {
  test('is accepted as is', async () => {
    const { config, plugins, providers } = await parse(MINIMAL);
    assert.equal(config.server.port, 8080);
    assert.equal(typeof config.server.port, 'number');
    assert.deepEqual(Object.keys(config.providers), ['openai']);
    assert.equal(config.providers.openai?.apiKey, 'sk-test');
    assert.equal(config.providers.openai?.baseUrl, 'https://api.openai.com/v1');
    assert.equal(config.providers.openai?.enabled, true);
    assert.equal(config.models.length, 1);
    assert.deepEqual(config.models[0], { id: 'gpt-4o-mini', provider: 'openai', strategy: 'single', enabled: true });
    assert.deepEqual(config.pipelines[0], { name: 'chat', routes: ['/v1/chat/completions'], plugins: [{ name: 'auth', config: {} }] });
    // Every other route: the implicit default pipeline, the whole built-in chain with each plugin's defaults.
    const implicit = config.pipelines[1]!;
    assert.deepEqual([implicit.name, implicit.routes, implicit.plugins.map((p) => p.name)], ['default', [], ['auth', 'ip-allow', 'ratelimit', 'budget', 'usage']]);
    assert.notStrictEqual(implicit.plugins[0]!.config, config.pipelines[0]!.plugins[0]!.config, 'a copy of the declared entry');
    assert.equal((implicit.plugins[2]!.config as { onStoreError?: string }).onStoreError, 'open', "ratelimit's schema defaults");
    assert.equal(config.pipelines.length, 2);
    assert.deepEqual(config.source, { file: FILE, dir: '/tmp/whatever' });
    assert.ok(plugins.get('auth'));
    assert.ok(providers.get('openai'));
  });

  test('gets the defaults of the sections it leaves out', async () => {
    const { config } = await parse(MINIMAL);
    assert.equal(config.server.host, '0.0.0.0');
    assert.equal(config.storage.dataDir, '/tmp/whatever/data');
    assert.equal(config.storage.databaseUrl, undefined);
    assert.equal(config.auth.adminToken, undefined);
    assert.deepEqual(config.plugins, []);
    assert.deepEqual(config.providerPackages, []);
  });
});

describe('environment references', () => {
  test('PORT=9090 gives the number 9090', async () => {
    const { config } = await parse(MINIMAL, { ...ENV, PORT: '9090' });
    assert.equal(config.server.port, 9090);
  });

  test('${VAR:-default} takes the default when VAR is unset or empty', async () => {
    const text = edit(MINIMAL, '  port: ${PORT:-8080}', '  port: ${PORT:-8080}\n  host: ${AIGW_TEST_HOST:-127.0.0.1}');
    for (const env of [ENV, { ...ENV, PORT: '', AIGW_TEST_HOST: '' }]) {
      const { config } = await parse(text, env);
      assert.equal(config.server.port, 8080);
      assert.equal(config.server.host, '127.0.0.1');
    }
    const { config } = await parse(text, { ...ENV, AIGW_TEST_HOST: '::1' });
    assert.equal(config.server.host, '::1');
  });

  test('a reference to a variable that is set but empty gives the empty string', async () => {
    const { config } = await parse(MINIMAL, { OPENAI_API_KEY: '' });
    assert.equal(config.providers.openai?.apiKey, '');
  });

  test('$$ gives a literal $, and $${VAR} a literal ${VAR} without reading VAR', async () => {
    const text = edit(MINIMAL, 'apiKey: ${OPENAI_API_KEY}', 'apiKey: sk-$$abc$$');
    assert.equal((await parse(text, {})).config.providers.openai?.apiKey, 'sk-$abc$');
    const literal = edit(MINIMAL, 'apiKey: ${OPENAI_API_KEY}', 'apiKey: $${OPENAI_API_KEY}');
    assert.equal((await parse(literal, {})).config.providers.openai?.apiKey, '${OPENAI_API_KEY}');
  });

  test('a reference inside a larger string stays a string', async () => {
    const text = edit(MINIMAL, 'baseUrl: https://api.openai.com/v1', 'baseUrl: http://localhost:${UPSTREAM_PORT}/v1');
    const { config } = await parse(text, { ...ENV, UPSTREAM_PORT: '8081' });
    assert.equal(config.providers.openai?.baseUrl, 'http://localhost:8081/v1');

    const key = edit(MINIMAL, 'apiKey: ${OPENAI_API_KEY}', 'apiKey: key-${N}');
    assert.equal((await parse(key, { N: '123' })).config.providers.openai?.apiKey, 'key-123');
    const two = edit(MINIMAL, 'apiKey: ${OPENAI_API_KEY}', 'apiKey: ${A}${B}');
    assert.equal((await parse(two, { A: '1', B: '2' })).config.providers.openai?.apiKey, '12');
  });

  test('a whole-value reference in quotes stays a string, whatever its text', async () => {
    // BUG: the quotes are ignored, so an all-digit key becomes the number 12345 and fails "expected string".
    const text = edit(MINIMAL, 'apiKey: ${OPENAI_API_KEY}', 'apiKey: "${OPENAI_API_KEY}"');
    const { config } = await parse(text, { OPENAI_API_KEY: '12345' });
    assert.equal(config.providers.openai?.apiKey, '12345');
  });

  test('a missing variable is an error at the line:col of its value', async () => {
    const err = await configError(MINIMAL, {});
    assert.equal(err.issues.length, 1);
    const [issue] = err.issues;
    assert.equal(issue?.line, 6);
    assert.equal(issue?.col, 13);
    assert.match(issue?.message ?? '', /environment variable OPENAI_API_KEY is not set/);
    assert.ok(err.message.startsWith(`${DISPLAY}:6:13 `), err.message);
    assert.match(err.message, /OPENAI_API_KEY/);
    assert.doesNotMatch(err.message, /\n/);
  });

  test('every missing variable is reported', async () => {
    const text = edit(MINIMAL, 'baseUrl: https://api.openai.com/v1', 'baseUrl: ${OPENAI_BASE_URL}');
    const err = await configError(text, {});
    assert.deepEqual(err.issues.map((i) => [i.line, i.col]), [[5, 14], [6, 13]]);
    assert.match(err.message, /^pipelines\.yaml:5:14 .*OPENAI_BASE_URL.*\npipelines\.yaml:6:13 .*OPENAI_API_KEY/);
  });
});

describe('plugins in pipelines', () => {
  test('the plugin registry holds the built-ins', () => {
    assert.equal(KNOWN_PLUGINS, 'auth, ip-allow, ratelimit, rag, usage, budget, semantic-cache, guards, audit');
  });

  test('an unknown plugin name', async () => {
    await oneIssue(edit(MINIMAL, 'plugins: [auth]', 'plugins: [auth, no-such-plugin]'), {
      pointer: '/pipelines/0/plugins/1',
      message: `unknown plugin "no-such-plugin" (known: ${KNOWN_PLUGINS})`,
      line: 13,
      col: 21,
    });
  });

  test('an unknown plugin in map form', async () => {
    await oneIssue(edit(MINIMAL, '    plugins: [auth]', '    plugins:\n      - auth\n      - no-such: {a: 1}'), {
      pointer: '/pipelines/0/plugins/1',
      message: `unknown plugin "no-such" (known: ${KNOWN_PLUGINS})`,
      line: 15,
      col: 9,
    });
  });

  test('`- auth:` (a null config) is accepted', async () => {
    const { config } = await parse(edit(MINIMAL, '    plugins: [auth]', '    plugins:\n      - auth:'));
    assert.deepEqual(config.pipelines[0]?.plugins, [{ name: 'auth', config: {} }]);
  });

  test('`{auth: {}}` is accepted, in flow and block form', async () => {
    for (const form of ['    plugins: [{auth: {}}]', '    plugins:\n      - auth: {}']) {
      const { config } = await parse(edit(MINIMAL, '    plugins: [auth]', form));
      assert.deepEqual(config.pipelines[0]?.plugins, [{ name: 'auth', config: {} }], form);
    }
  });

  test('a setting the plugin does not have', async () => {
    await oneIssue(edit(MINIMAL, '    plugins: [auth]', '    plugins:\n      - auth: {strict: true}'), {
      pointer: '/pipelines/0/plugins/0/auth/strict',
      message: 'unknown property "strict" (expected one of: none)',
      line: 14,
      col: 16,
    });
  });
});

describe('schema errors', () => {
  test('port: abc', async () => {
    await oneIssue(edit(MINIMAL, 'port: ${PORT:-8080}', 'port: abc'), {
      pointer: '/server/port',
      message: 'expected integer, got string "abc"',
      line: 2,
      col: 9,
    });
  });

  test('server: {port: "abc"}', async () => {
    await oneIssue(edit(MINIMAL, 'server:\n  port: ${PORT:-8080}', 'server: {port: "abc"}'), {
      pointer: '/server/port',
      message: 'expected integer, got string "abc"',
      line: 1,
      col: 16,
    });
  });

  test('server.metrics: a token shorter than 16 characters is refused, not padded', async () => {
    const err = await configError(edit(MINIMAL, 'server:\n  port: ${PORT:-8080}', 'server:\n  metrics: { token: short }'));
    assert.equal(err.issues.length, 1);
    assert.equal(err.issues[0]!.pointer, '/server/metrics/token');
    assert.match(err.issues[0]!.message, /16/);
  });

  test('server.metrics defaults: served, no token', async () => {
    const { config } = await parse(MINIMAL);
    assert.deepEqual(config.server.metrics, { enabled: true });
  });

  test('a section written as a scalar is a ConfigError, not a crash', async () => {
    // BUG: applyEnvironmentDefaults assigns storage.dataDir on the string "local" -> TypeError.
    await oneIssue(`storage: local\n${MINIMAL}`, {
      pointer: '/storage',
      message: 'expected object, got string "local"',
      line: 1,
      col: 10,
    });
  });

  test('YAML syntax error: an unclosed flow sequence', async () => {
    const err = await configError(edit(MINIMAL, 'routes: [/v1/chat/completions]', 'routes: [/v1/chat/completions'));
    // The parser notices at the next line's key, 13:5.
    assert.ok(err.message.startsWith(`${DISPLAY}:13:5 `), err.message);
    assert.match(err.message, /YAML syntax/);
    assert.equal(err.issues[0]?.line, 13);
    assert.equal(err.issues[0]?.col, 5);
  });

  test('YAML syntax error: bad indentation', async () => {
    const err = await configError(edit(MINIMAL, '    apiKey: ${OPENAI_API_KEY}', '   apiKey: ${OPENAI_API_KEY}'));
    assert.equal(err.issues.length, 1);
    assert.ok(err.message.startsWith(`${DISPLAY}:6:1 /: YAML syntax: All mapping items must start at the same column`), err.message);
    assert.deepEqual([err.issues[0]?.line, err.issues[0]?.col], [6, 1]);
  });

  test('YAML syntax error: a duplicate key', async () => {
    const err = await configError(edit(MINIMAL, 'models:', 'server: {}\nmodels:'));
    assert.ok(err.message.startsWith(`${DISPLAY}:7:1 `), err.message);
    assert.match(err.message, /YAML syntax/);
  });

  test('a top level that is not a mapping', async () => {
    await oneIssue('- a\n- b\n', { pointer: '', message: 'expected a mapping at the top level', line: 1, col: 1 });
  });

  test('an unknown top-level key', async () => {
    await oneIssue(`${MINIMAL}telemetry: true\n`, {
      pointer: '/telemetry',
      message: 'unknown property "telemetry" (expected one of: server, storage, auth, upstream, routing, jobs, files, vectorStores, outbound, webhooks, batches, video, realtime, providers, models, pipelines, plugins, providerPackages)',
      line: 14,
      col: 1,
    });
  });

  test('an unknown provider slug lists the known ones', async () => {
    assert.ok(KNOWN_PROVIDERS.split(', ').includes('anthropic'));
    await oneIssue(edit(MINIMAL, '    apiKey: ${OPENAI_API_KEY}\n', '    apiKey: ${OPENAI_API_KEY}\n  no-such-provider:\n    apiKey: x\n'), {
      pointer: '/providers',
      message: `unknown provider "no-such-provider" (known: ${KNOWN_PROVIDERS})`,
      line: 7,
      col: 3,
    });
  });

  test('a pipeline without routes', async () => {
    await oneIssue(edit(MINIMAL, '    routes: [/v1/chat/completions]\n', ''), {
      pointer: '/pipelines/0',
      message: 'missing required property "routes"',
      line: 11,
      col: 5,
    });
  });

  test('several schema errors are reported together', async () => {
    let text = edit(MINIMAL, 'port: ${PORT:-8080}', 'port: abc');
    text = edit(text, 'plugins: [auth]', 'plugins: [auth, no-such-plugin]');
    text += 'telemetry: true\n';
    const err = await configError(text);
    const byLine = [...err.issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    assert.deepEqual(byLine, [
      { pointer: '/server/port', message: 'expected integer, got string "abc"', line: 2, col: 9 },
      { pointer: '/pipelines/0/plugins/1', message: `unknown plugin "no-such-plugin" (known: ${KNOWN_PLUGINS})`, line: 13, col: 21 },
      { pointer: '/telemetry', message: 'unknown property "telemetry" (expected one of: server, storage, auth, upstream, routing, jobs, files, vectorStores, outbound, webhooks, batches, video, realtime, providers, models, pipelines, plugins, providerPackages)', line: 14, col: 1 },
    ]);
    const lines = err.message.split('\n').sort();
    assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['pipelines.yaml:13:21', 'pipelines.yaml:14:1', 'pipelines.yaml:2:9']);
  });
});

describe('semantic errors', () => {
  test('a pipeline on /v1/chat/completions without auth', async () => {
    await oneIssue(edit(MINIMAL, 'plugins: [auth]', 'plugins: []'), {
      pointer: '/pipelines/0/plugins',
      message: 'pipeline "chat" serves /v1 routes but no plugin of it provides "caller" (provided by: auth); every /v1 endpoint requires a credential',
      line: 13,
      col: 14,
    });
  });

  test('an unknown route', async () => {
    assert.equal(KNOWN_ROUTES, '/v1/chat/completions, /v1/messages, /v1/completions, /v1/embeddings, /v1/rerank, /v1/audio/transcriptions, /v1/audio/translations, /v1/audio/speech, /v1/images/generations, /image-progress, /v1/video/generations, /v1/responses, /v1/models, /v1/files, /v1/batches, /v1/vector_stores, /v1/realtime/sessions, /proxy, /v1/usage, /v1/budget');
    await oneIssue(edit(MINIMAL, 'routes: [/v1/chat/completions]', 'routes: [/v1/chat/completions, /v1/nowhere]'), {
      pointer: '/pipelines/0/routes/1',
      message: `unknown route "/v1/nowhere" (known: ${KNOWN_ROUTES})`,
      line: 12,
      col: 36,
    });
  });

  test('the same route in two pipelines', async () => {
    await oneIssue(`${MINIMAL}  - name: chat-b\n    routes: [/v1/chat/completions]\n    plugins: [auth]\n`, {
      pointer: '/pipelines/1/routes/0',
      message: 'route /v1/chat/completions is already served by pipeline "chat"',
      line: 15,
      col: 14,
    });
  });

  test('a model naming a provider that is not configured', async () => {
    await oneIssue(edit(MINIMAL, '    provider: openai', '    provider: mistral'), {
      pointer: '/models/0/provider',
      message: 'provider "mistral" is not configured under providers (configured: openai)',
      line: 9,
      col: 15,
    });
  });

  test('a model with both provider and targets', async () => {
    await oneIssue(edit(MINIMAL, '    provider: openai', '    provider: openai\n    targets: [{provider: openai}]'), {
      pointer: '/models/0',
      message: 'a model names either provider (one target) or targets (several), not both and not neither',
      line: 8,
      col: 5,
    });
  });

  test('duplicate model ids', async () => {
    await oneIssue(edit(MINIMAL, '    provider: openai', '    provider: openai\n  - id: gpt-4o-mini\n    provider: openai'), {
      pointer: '/models/1/id',
      message: 'model id "gpt-4o-mini" is already declared at /models/0',
      line: 10,
      col: 9,
    });
  });

  test('a model with several targets and no strategy is accepted as fallback', async () => {
    // BUG: the schema default strategy "single" is applied first, so load.ts's fallback default never runs and
    // semantics.ts rejects the model ("strategy single takes one target").
    const text = edit(MINIMAL, '    provider: openai', '    targets:\n      - provider: openai\n      - provider: openai\n        upstreamModel: gpt-4o');
    const { config } = await parse(text);
    assert.equal(config.models[0]?.strategy, 'fallback');
  });

  test('several semantic errors are reported together', async () => {
    let text = edit(MINIMAL, 'routes: [/v1/chat/completions]', 'routes: [/v1/chat/completions, /v1/nowhere]');
    text = edit(text, '    provider: openai', '    provider: mistral\n  - id: gpt-4o-mini\n    provider: openai');
    const err = await configError(text);
    assert.deepEqual(err.issues.map((i) => `${i.line}:${i.col} ${i.pointer}`), [
      '14:36 /pipelines/0/routes/1',
      '9:15 /models/0/provider',
      '10:9 /models/1/id',
    ]);
    assert.equal(err.message.split('\n').length, 3);
  });
});

describe('loadConfig', () => {
  test("the repo's own pipelines.yaml loads with an empty env", async () => {
    const { config } = await loadConfig({ file: REPO_CONFIG, env: {}, cwd: REPO_ROOT });
    assert.equal(config.server.port, 8080);
    assert.equal(config.providers.openai?.baseUrl, 'https://api.openai.com/v1');
    assert.equal(config.providers.openai?.apiKey, '');
    assert.deepEqual(config.models.map((m) => m.id), ['gpt-4o-mini', 'gpt-4o']);
    assert.deepEqual(config.pipelines.map((p) => [p.name, p.routes, p.plugins.map((e) => e.name)]), [['default', [], ['auth', 'ip-allow', 'ratelimit', 'budget', 'usage']]]);
    assert.ok(config.models.every((m) => m.pricing), 'priced, so usage costs and budgets work');
    assert.equal(config.storage.dataDir, join(REPO_ROOT, 'data'));
  });

  test('a file that does not exist', async () => {
    await assert.rejects(loadConfig({ file: 'nope.yaml', env: {}, cwd: tmpdir() }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^nope\.yaml \/: cannot read the config file: /);
      return true;
    });
  });
});

describe('files in a temporary folder', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aigw-config-test-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('aigw validate', () => {
    const validate = (file: string) =>
      spawnSync(process.execPath, [BIN, 'validate', file], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: 'sk-test' },
        encoding: 'utf8',
        timeout: 60_000,
      });

    test('a valid file: exit 0', async () => {
      const file = join(dir, 'valid.yaml');
      await writeFile(file, MINIMAL);
      const result = validate(file);
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, `${file}: valid\n`);
      assert.equal(result.stderr, '');
    });

    test('an invalid file: exit 1 and file:line:col on stderr', async () => {
      const file = join(dir, 'invalid.yaml');
      await writeFile(file, edit(MINIMAL, 'plugins: [auth]', 'plugins: [auth, no-such-plugin]'));
      const result = validate(file);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(result.stdout, '');
      const display = relative(REPO_ROOT, file);
      assert.equal(result.stderr, `${display}:13:21 /pipelines/0/plugins/1: unknown plugin "no-such-plugin" (known: ${KNOWN_PLUGINS})\n`);
    });
  });

  describe('a third-party plugin from a relative path', () => {
    const HELLO = `export default {
  apiVersion: 1,
  name: 'hello',
  description: 'x',
  configSchema: { type: 'object', additionalProperties: false, properties: { greeting: { type: 'string', default: 'hi' } } },
  setup: () => async (ctx, next) => next(),
};
`;
    const BAD = `export default { apiVersion: 1, description: 'no name', configSchema: { type: 'object' }, setup: () => async (ctx, next) => next() };\n`;
    // `[./hello.mjs]` starts at 1:11; the hello entry is on line 13.
    const config = (module: string, entry: string) => `plugins: [${module}]
providers:
  openai:
    apiKey: sk-test
models:
  - id: gpt-4o-mini
    provider: openai
pipelines:
  - name: chat
    routes: [/v1/chat/completions]
    plugins:
      - auth
      ${entry}
`;
    let pluginDir = '';
    before(async () => {
      pluginDir = await mkdtemp(join(dir, 'plugins-'));
      await writeFile(join(pluginDir, 'hello.mjs'), HELLO);
      await writeFile(join(pluginDir, 'bad.mjs'), BAD);
    });
    const parseHere = (text: string) => parseConfig(text, { file: join(pluginDir, 'pipelines.yaml'), display: DISPLAY, env: {}, cwd: pluginDir });
    const errorHere = async (text: string): Promise<ConfigError> => {
      try {
        await parseHere(text);
      } catch (err) {
        if (err instanceof ConfigError) return err;
        throw err;
      }
      assert.fail('expected a ConfigError');
    };

    test('is registered, and its entry gets the defaults of its schema', async () => {
      const { config: loaded, plugins } = await parseHere(config('./hello.mjs', '- hello'));
      assert.equal(plugins.get('hello')?.description, 'x');
      assert.deepEqual(loaded.plugins, ['./hello.mjs']);
      assert.deepEqual(loaded.pipelines[0]?.plugins, [{ name: 'auth', config: {} }, { name: 'hello', config: { greeting: 'hi' } }]);
    });

    test('its config is passed through when it fits the schema', async () => {
      const { config: loaded } = await parseHere(config('./hello.mjs', '- hello: {greeting: hey}'));
      assert.deepEqual(loaded.pipelines[0]?.plugins[1], { name: 'hello', config: { greeting: 'hey' } });
    });

    test('unknown plugin errors list it among the known ones', async () => {
      const err = await errorHere(config('./hello.mjs', '- helo'));
      assert.equal(err.message, `${DISPLAY}:13:9 /pipelines/0/plugins/1: unknown plugin "helo" (known: auth, ip-allow, ratelimit, rag, usage, budget, semantic-cache, guards, audit, hello)`);
    });

    test('a config that breaks its own schema', async () => {
      const err = await errorHere(config('./hello.mjs', '- hello: {greeting: 5}'));
      assert.deepEqual(err.issues, [{ pointer: '/pipelines/0/plugins/1/hello/greeting', message: 'expected string, got number', line: 13, col: 27 }]);
      assert.equal(err.message, `${DISPLAY}:13:27 /pipelines/0/plugins/1/hello/greeting: expected string, got number`);
    });

    test('a module with an invalid definition (no name)', async () => {
      const err = await errorHere(config('./bad.mjs', '- auth'));
      assert.equal(err.issues.length, 1);
      const [issue] = err.issues;
      assert.equal(issue?.pointer, '/plugins/0');
      assert.equal(issue?.line, 1);
      assert.equal(issue?.col, 11);
      assert.match(issue?.message ?? '', /^cannot load "\.\/bad\.mjs": .*name must match/);
      assert.ok(err.message.startsWith(`${DISPLAY}:1:11 /plugins/0: cannot load "./bad.mjs"`), err.message);
    });

    test('a module that does not exist', async () => {
      const err = await errorHere(config('./missing.mjs', '- auth'));
      assert.equal(err.issues.length, 1);
      assert.ok(err.message.startsWith(`${DISPLAY}:1:11 /plugins/0: cannot load "./missing.mjs"`), err.message);
    });
  });
});
