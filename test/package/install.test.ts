/**
 * The packages install as an operator installs them: the gateway and the two packages of examples/ are packed,
 * installed with plain `npm install` into a project of their own, named in its pipelines.yaml, and served by
 * `aigw start` from node_modules/.bin, the compiled gateway with no TypeScript loader of its own. The
 * TypeScript plugin sets its header, the JavaScript provider answers through a loopback upstream, and errors
 * that both raise with aigw's own error classes reach the caller with their status.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { completion, helloStreamEvents, startFakeOpenAI, writeSplit, type FakeOpenAI } from '../fakes/openai.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/free-port.ts';
import { ADMIN_TOKEN, postJson } from '../helpers/gateway.ts';
import { childEnv, REPO_ROOT } from '../helpers/process.ts';
import { EXAMPLES, installProject, pack } from './operator-project.ts';

// A plugin file beside pipelines.yaml, in TypeScript, that refuses with a catalogue error from `aigw/plugin`: the
// compiled gateway must recognise it as its own, or the refusal would become a 500.
const LOCAL_PLUGIN = `import { createError, definePlugin } from 'aigw/plugin';

export default definePlugin<Record<string, never>>({
  name: 'refuse-marked',
  description: 'Refuses requests that carry X-Refuse.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  setup() {
    return async (ctx, next) => {
      if (ctx.get('x-refuse')) throw createError('GUARD_BLOCKED', 'refused by refuse-marked');
      await next();
    };
  },
});
`;

// A TypeScript plugin whose package leaves it CommonJS (no "type"): it loads apart, through tsImport.
const COMMONJS_PLUGIN = `import { format } from 'node:util';

export default {
  apiVersion: 1,
  name: 'commonjs-header',
  description: 'Sets X-CommonJS.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  setup() {
    return async (ctx: { set(name: string, value: string): void }, next: () => Promise<void>) => {
      await next();
      ctx.set('x-commonjs', format('%s', 'loaded'));
    };
  },
};
`;

const pipelinesYaml = (upstream: string) => `
plugins: [aigw-plugin-example, ./refuse-marked.ts, ./commonjs]
providerPackages: [aigw-provider-example]
providers:
  example-compat:
    baseUrl: ${upstream}
    apiKey: upstream-secret
models:
  - id: tiny
    provider: example-compat
    upstreamModel: tiny-1
  - id: refused-upstream
    provider: example-compat
    upstreamModel: unknown-model
pipelines:
  - name: default
    routes: []
    plugins:
      - auth
      - example-header: { header: X-Example-Plugin, value: loaded-from-npm }
      - refuse-marked
      - commonjs-header
`;

describe('an operator project that installs the packed gateway and the example packages', () => {
  let work: string;
  let project: string;
  let fake: FakeOpenAI;
  let gateway: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  let output = '';
  let url: string;
  let apiKey: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aigw-package-'));
    const tarballs = join(work, 'tarballs');
    await mkdir(tarballs);
    // The gateway's pack runs its prepare script (the build); the examples pack in the meantime.
    const [aigw, plugin, provider] = await Promise.all([pack(REPO_ROOT, tarballs), pack(EXAMPLES.plugin, tarballs), pack(EXAMPLES.provider, tarballs)]);
    project = join(work, 'operator');
    await installProject(project, { aigw, 'aigw-plugin-example': plugin, 'aigw-provider-example': provider });

    fake = await startFakeOpenAI();
    fake.handle(async (req, res) => {
      if (req.body.model === 'unknown-model') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'The model `unknown-model` does not exist', type: 'invalid_request_error' } }));
      } else if (req.body.stream === true) {
        await writeSplit(res, helloStreamEvents(req.body));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(String(req.body.model), 'Hello world')));
      }
    });
    await writeFile(join(project, 'pipelines.yaml'), pipelinesYaml(fake.baseUrl));
    await writeFile(join(project, 'refuse-marked.ts'), LOCAL_PLUGIN);
    await mkdir(join(project, 'commonjs'));
    await writeFile(join(project, 'commonjs', 'package.json'), JSON.stringify({ name: 'commonjs-header', main: 'index.ts' }));
    await writeFile(join(project, 'commonjs', 'index.ts'), COMMONJS_PLUGIN);

    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    gateway = spawn(join(project, 'node_modules', '.bin', 'aigw'), ['start'], {
      cwd: project,
      env: childEnv({ PORT: String(port), AIGW_DATA_DIR: join(project, 'data'), AIGW_ADMIN_TOKEN: ADMIN_TOKEN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
    gateway.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
    exited = new Promise((resolve) => gateway!.once('exit', resolve));
    await eventually(async () => {
      assert.equal(gateway!.exitCode, null, `aigw start exited:\n${output}`);
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 200);
    }, 60_000, 200);

    const created = await postJson(`${url}/admin/v1/keys`, { name: 'operator' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    apiKey = created.body.key as string;
  });

  after(async () => {
    gateway?.kill('SIGKILL');
    await exited;
    await fake?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const chat = (model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    postJson(`${url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, { authorization: `Bearer ${apiKey}`, ...headers });

  test('the installed gateway ships its compiled code, not its sources or tests', async () => {
    assert.deepEqual((await readdir(join(project, 'node_modules', 'aigw'))).sort(), ['README.md', 'bin', 'dist', 'package.json']);
  });

  test("the TypeScript plugins type-check against the installed gateway's declarations", async () => {
    // The operator's dev dependencies for this would be typescript, @types/node and @types/koa: this checkout's.
    const tsconfig = {
      compilerOptions: {
        module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true,
        types: ['node'], typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
      },
      files: ['node_modules/aigw-plugin-example/index.ts', 'refuse-marked.ts'],
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  });

  test('the provider package answers a chat completion, and the plugin package sets its header', async () => {
    const { status, headers, body } = await chat('tiny');
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, 'Hello world');
    assert.equal(headers.get('x-provider'), 'example-compat');
    assert.equal(headers.get('x-example-plugin'), 'loaded-from-npm');
    assert.equal(headers.get('x-commonjs'), 'loaded');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, 'Bearer upstream-secret');
    assert.equal(sent.body.model, 'tiny-1');
  });

  test("the plugin package's migration, KV operation and endpoint work from the installed package", async () => {
    const first = await chat('tiny');
    const second = await chat('tiny');
    const hits = Number(second.headers.get('x-example-hits'));
    assert.equal(hits, Number(first.headers.get('x-example-hits')) + 1);
    const stats = await fetch(`${url}/v1/example/hits`, { headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal(stats.status, 200);
    const body = (await stats.json()) as { hits: number; first_seen: string | null };
    assert.equal(body.hits, hits);
    assert.ok(body.first_seen && !Number.isNaN(Date.parse(body.first_seen)), JSON.stringify(body));
    assert.equal((await fetch(`${url}/v1/example/hits`)).status, 401, 'behind the default pipeline, with auth');
    const migrated = spawnSync(join(project, 'node_modules', '.bin', 'aigw'), ['migrate'], {
      cwd: project, encoding: 'utf8', env: childEnv({ AIGW_DATA_DIR: join(project, 'data-migrate') }),
    });
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.match(migrated.stdout, /example-header\/0001_first_seen/);
  });

  test('a stream goes through the provider package, with the plugin header', async () => {
    const { status, headers, body } = await chat('tiny', { stream: true });
    assert.equal(status, 200);
    assert.equal(headers.get('x-example-plugin'), 'loaded-from-npm');
    const text = (body as string).split('\n').filter((line) => line.startsWith('data: {'))
      .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '').join('');
    assert.equal(text, 'Hello world');
    assert.match(body as string, /data: \[DONE\]/);
  });

  test("errors built with the installed aigw's classes keep their status: an upstream 400 and a plugin's refusal", async () => {
    const upstream = await chat('refused-upstream');
    assert.equal(upstream.status, 400, JSON.stringify(upstream.body));
    assert.equal(upstream.body.error.code, 'UPSTREAM_BAD_REQUEST');
    const refused = await chat('tiny', {}, { 'x-refuse': '1' });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'GUARD_BLOCKED');
  });
});
