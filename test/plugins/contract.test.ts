/**
 * The plugin contract, end to end, with a third-party plugin written as a plain module beside the config: its
 * own migration, shared state (init), KV operation, data-plane endpoint, admin route, error code, required fact
 * and per-request slot. On PGlite with the memory KV, and on Postgres with Redis (two instances sharing them).
 * Also: definitions made for another contract version are refused at load.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../core/config/document.ts';
import { migrate } from '../../core/store/migrate.ts';
import type { Database } from '../../core/store/database.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { dropSharedStores } from '../helpers/cluster.ts';
import { parseConfig } from '../helpers/config.ts';
import { freshDataDir } from '../helpers/data-dir.ts';
import { ADMIN_TOKEN, chatConfig, postJson, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';

const PUBLIC = new URL('../../core/public/plugin.ts', import.meta.url).href;

/** The plugin under test: every part the contract offers, each one observable from outside. */
const NOTES = `
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createSlot, defineKvOperation, definePlugin, GatewayError } from '${PUBLIC}';

// Adds to a counter and answers what it held before: atomic on Redis (one script) and in memory (synchronous).
const bump = defineKvOperation({
  name: 'notes.bump',
  redis: {
    lua: "local after = redis.call('INCRBY', KEYS[1], ARGV[1]) return after - tonumber(ARGV[1])",
    keys: (args) => [args.key],
    argv: (args) => [args.by],
    parse: (reply) => Number(reply),
  },
  memory(kv, args) {
    const before = Number(kv.get(args.key) ?? 0);
    kv.set(args.key, String(before + args.by));
    return before;
  },
});

const COUNTER = 'notes:requests';
const sequence = createSlot('notes.sequence');

export default definePlugin({
  name: 'notes',
  description: 'Numbers every dispatched request through a KV counter and keeps notes in its own table.',
  configSchema: {
    type: 'object', additionalProperties: false,
    properties: { header: { type: 'string', default: 'x-notes-sequence', description: 'Response header carrying the request number.' } },
  },
  requires: ['caller'],
  errors: { NOTE_REFUSED: { status: 409, description: 'The request asked to be refused (x-note-refuse).' } },
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  init: () => ({ instance: randomUUID(), served: 0 }),
  setup(config, services, shared) {
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      if (gw.endpoint.kind !== 'dispatch') return next();
      const refuse = ctx.get('x-note-refuse');
      if (refuse) throw new GatewayError('NOTE_REFUSED', 'The notes plugin refused this request', { reason: refuse, tenant: gw.caller.tenantId });
      sequence.set(gw, await services.kv.run(bump, { key: COUNTER, by: 1 }));
      shared.served++;
      const note = ctx.get('x-note');
      if (note) await services.db.query('INSERT INTO notes_entries (text) VALUES ($1)', [note]);
      // The slot is read back in the plugin's own stage, after the dispatcher answered.
      gw.stage({ result: () => { ctx.set(config.header, String(sequence.get(gw))); } });
      await next();
    };
  },
  endpoints: [{
    method: 'GET', path: '/v1/notes-stats', capability: null, errorEnvelope: 'canonical',
    summary: 'How many notes are kept and requests numbered.',
    responses: { '200': { description: 'The counts.' } },
    handler: (services, shared) => async (ctx) => {
      const [row] = await services.db.query('SELECT count(*)::int AS notes FROM notes_entries');
      ctx.body = { notes: row.notes, requests: Number((await services.kv.get(COUNTER)) ?? 0), instance: shared.instance, served: shared.served };
    },
  }],
  adminRoutes: [{
    method: 'GET', path: '/notes', status: 200, summary: 'Every note kept.',
    handle: async (_request, services) => ({ object: 'list', data: await services.db.query('SELECT id, text FROM notes_entries ORDER BY id') }),
  }],
});
`;

// No IF NOT EXISTS, and a seed row: applied twice, the boot would fail or the seed would be doubled.
const MIGRATION = `CREATE TABLE notes_entries (id serial PRIMARY KEY, text text NOT NULL);
INSERT INTO notes_entries (text) VALUES ('seeded by 0001_notes');
`;

const FILES = { 'notes.mjs': NOTES, 'migrations/0001_notes.sql': MIGRATION };

function notesConfig(baseUrl: string, plugins = '[auth, notes]'): string {
  return `plugins: [./notes.mjs]\n${chatConfig(baseUrl).replace('routes: [/v1/chat/completions]', 'routes: [/v1/chat/completions, /v1/notes-stats]').replace('plugins: [auth]', `plugins: ${plugins}`)}`;
}

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;

type Stores = { kind: 'embedded'; dataDir: string } | { kind: 'shared'; schema: string; prefix: string };

function contractSuite(name: string, shared: boolean): void {
  describe(`a third-party plugin's parts (${name})`, { skip: shared && !(DATABASE_URL && REDIS_URL) ? 'TEST_DATABASE_URL and TEST_REDIS_URL not both set' : false }, () => {
    let fake: FakeOpenAI;
    let stores: Stores;
    /** The running instances: one on the embedded stores, two on the shared ones. */
    let gateways: TestGateway[] = [];
    let key: string;

    const options = (): TestGatewayOptions => (stores.kind === 'embedded'
      ? { env: { AIGW_DATA_DIR: stores.dataDir }, files: FILES }
      : { env: { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! }, dbSchema: stores.schema, kvPrefix: stores.prefix, files: FILES });
    const start = () => startTestGateway(notesConfig(fake.baseUrl), options());
    const db = (): Database => gateways[0]!.gateway.services.db as Database;
    const chat = (gw: TestGateway, headers: Record<string, string> = {}) => postJson(`${gw.url}/v1/chat/completions`,
      { model: 'plain', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}`, ...headers });
    const stats = async (gw: TestGateway) => {
      const response = await fetch(`${gw.url}/v1/notes-stats`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(response.status, 200);
      return (await response.json()) as { notes: number; requests: number; instance: string; served: number };
    };

    before(async () => {
      fake = await startFakeOpenAI();
      stores = shared
        ? { kind: 'shared', schema: 'aigw_test_' + randomUUID().replace(/-/g, ''), prefix: `aigw-test-${randomUUID()}:` }
        : { kind: 'embedded', dataDir: await freshDataDir() };
      gateways = [await start()];
      key = await gateways[0]!.createKey({ name: 'contract' });
    });
    after(async () => {
      for (const gw of gateways) await gw.close();
      await fake?.close();
      if (stores?.kind === 'embedded') await rm(stores.dataDir, { recursive: true, force: true });
      if (stores?.kind === 'shared') await dropSharedStores({ ...stores, databaseUrl: DATABASE_URL! }, DATABASE_URL!, REDIS_URL!);
    });

    test('its migration ran: the table exists, seeded once, recorded as notes/0001_notes', async () => {
      assert.deepEqual(await db().query('SELECT id, text FROM notes_entries'), [{ id: 1, text: 'seeded by 0001_notes' }]);
      const recorded = await db().query<{ version: string }>("SELECT version FROM aigw_schema_migrations WHERE version LIKE 'notes/%'");
      assert.deepEqual(recorded.map((r) => r.version), ['notes/0001_notes']);
    });

    test('a second start on the same database applies nothing again', async () => {
      const [firstApplied] = await db().query<{ applied_at: Date }>("SELECT applied_at FROM aigw_schema_migrations WHERE version = 'notes/0001_notes'");
      if (stores.kind === 'embedded') {
        // PGlite holds its folder alone: the first instance stops before the second opens it.
        await gateways.pop()!.close();
        gateways.push(await start());
      } else {
        gateways.push(await start());
      }
      assert.equal(gateways.length, shared ? 2 : 1);
      for (const gw of gateways) {
        const gwDb = gw.gateway.services.db as Database;
        assert.deepEqual(await gwDb.query('SELECT text FROM notes_entries'), [{ text: 'seeded by 0001_notes' }]);
        const rows = await gwDb.query<{ applied_at: Date }>("SELECT applied_at FROM aigw_schema_migrations WHERE version = 'notes/0001_notes'");
        assert.deepEqual(rows, [firstApplied]);
      }
      const again = await migrate(db(), [{ namespace: 'notes', dir: join(gateways.at(-1)!.configDir, 'migrations') }]);
      assert.deepEqual(again.applied, []);
      assert.equal(again.current.at(-1), 'notes/0001_notes');
    });

    test('its KV operation counts every request exactly once, on concurrent requests to every instance', async () => {
      const base = (await stats(gateways[0]!)).requests;
      const servedBefore = await Promise.all(gateways.map(async (gw) => (await stats(gw)).served));
      const count = 30;
      const answers = await Promise.all(Array.from({ length: count }, (_, i) => chat(gateways[i % gateways.length]!)));
      assert.ok(answers.every((a) => a.status === 200), JSON.stringify(answers.map((a) => a.status)));
      // Each request's number comes from its slot, read in the plugin's stage: every number once, none skipped.
      const numbers = answers.map((a) => Number(a.headers.get('x-notes-sequence'))).sort((x, y) => x - y);
      assert.deepEqual(numbers, Array.from({ length: count }, (_, i) => base + i));
      for (const [i, gw] of gateways.entries()) {
        const now = await stats(gw);
        assert.equal(now.requests, base + count);
        // init's state is one per gateway, shared by its middleware and its endpoint.
        assert.equal(now.served - servedBefore[i]!, count / gateways.length);
      }
      if (shared) assert.notEqual((await stats(gateways[0]!)).instance, (await stats(gateways[1]!)).instance);
    });

    test('its endpoint and admin route answer, behind their credentials, and /openapi.json lists both', async () => {
      const gw = gateways.at(-1)!;
      assert.equal((await chat(gw, { 'x-note': 'first note' })).status, 200);
      assert.equal((await stats(gw)).notes, 2);
      assert.equal((await fetch(`${gw.url}/v1/notes-stats`)).status, 401);

      assert.equal((await fetch(`${gw.url}/admin/v1/notes`)).status, 401);
      assert.equal((await fetch(`${gw.url}/admin/v1/notes`, { headers: { authorization: 'Bearer wrong-token' } })).status, 401);
      const listed = await fetch(`${gw.url}/admin/v1/notes`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(listed.status, 200);
      assert.deepEqual(((await listed.json()) as { data: unknown[] }).data, [{ id: 1, text: 'seeded by 0001_notes' }, { id: 2, text: 'first note' }]);

      const spec = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      assert.ok(spec.paths['/v1/notes-stats']?.get, Object.keys(spec.paths).join(' '));
      assert.ok(spec.paths['/admin/v1/notes']?.get, Object.keys(spec.paths).join(' '));
    });

    test('its error code answers 409 in the canonical envelope, before anything is counted or sent upstream', async () => {
      const gw = gateways[0]!;
      const before = { requests: (await stats(gw)).requests, upstream: fake.requests.length };
      const refused = await chat(gw, { 'x-note-refuse': 'asked to' });
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.body, {
        error: { code: 'NOTE_REFUSED', message: 'The notes plugin refused this request', details: { reason: 'asked to', tenant: 'default' } },
      });
      assert.equal((await stats(gw)).requests, before.requests);
      assert.equal(fake.requests.length, before.upstream);
    });
  });
}

contractSuite('PGlite, memory KV', false);
contractSuite('Postgres, Redis', true);

describe('plugin definitions refused at load', () => {
  /** Loads a config with the plugin modules beside it, as `aigw start` would; returns the ConfigError. */
  async function refusal(yaml: string, files: Record<string, string>): Promise<ConfigError> {
    const dir = await mkdtemp(join(tmpdir(), 'aigw-contract-'));
    try {
      for (const [name, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, name)), { recursive: true });
        await writeFile(join(dir, name), text);
      }
      const err = await parseConfig(yaml, { file: join(dir, 'pipelines.yaml'), env: {}, cwd: dir }).then(() => assert.fail('the config loaded'), (error: unknown) => error);
      assert.ok(err instanceof ConfigError, String(err));
      return err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  test('a plugin that requires "caller", listed before auth, is a config error naming the fact', async () => {
    const err = await refusal(notesConfig('http://127.0.0.1:9/v1', '[notes, auth]'), FILES);
    assert.match(err.message, /plugin "notes" requires "caller": list it after a plugin that provides it/);
  });

  const plain = (apiVersion: string) => `export default {
  ${apiVersion}
  name: 'versioned', description: 'made for some contract version', configSchema: { type: 'object' },
  setup: () => async (ctx, next) => next(),
};
`;
  const versionedConfig = `plugins: [./versioned.mjs]\n${chatConfig('http://127.0.0.1:9/v1')}`;

  test('a definition made for contract 2 is refused, naming both versions', async () => {
    const err = await refusal(versionedConfig, { 'versioned.mjs': plain('apiVersion: 2,') });
    assert.match(err.message, /plugin "versioned" was written for plugin contract 2, and this gateway implements contract 1/);
  });

  test('a definition without apiVersion is refused, naming the version this gateway implements', async () => {
    const err = await refusal(versionedConfig, { 'versioned.mjs': plain('') });
    assert.match(err.message, /plugin "versioned" has no apiVersion: make it with definePlugin from aigw\/plugin \(this gateway implements plugin contract 1\)/);
  });
});
