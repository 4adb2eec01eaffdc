/**
 * The chain across instances and through outages, on a Postgres server: two gateways writing at once keep one
 * contiguous, verifiable chain; a Postgres outage loses no record (they wait in memory and are appended, in
 * order, once it is back); records the shutdown could not write are spooled and appended at the next start;
 * pruning leaves a signed checkpoint the chain verifies from. Runs when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { appendRecords, canonicalJson } from '../../plugins/audit/chain.ts';
import { auditRecorderFor } from '../../plugins/audit/index.ts';
import { pruneRecords } from '../../plugins/audit/retention.ts';
import { verifyChain } from '../../plugins/audit/verify.ts';
import { sleep, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { auditConfig } from '../helpers/audit.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN_TOKEN, postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const KEY = 'an-audit-checkpoint-key-of-32-bytes!';

describe('the audit chain on Postgres', { skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set' }, () => {
  let fake: FakeOpenAI;
  let proxy: TcpProxy;
  let direct: Database;
  const schemas: string[] = [];
  const folders: string[] = [];

  before(async () => {
    fake = await startFakeOpenAI();
    const url = new URL(DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  });
  after(async () => {
    await proxy?.close();
    await fake?.close();
    for (const schema of schemas) {
      const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
      await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
    }
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  const newSchema = () => {
    const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
    schemas.push(schema);
    return schema;
  };
  const proxiedUrl = () => {
    const proxied = new URL(DATABASE_URL!);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    return proxied.toString();
  };
  const chat = (gw: TestGateway, key: string, id: string = randomUUID()) =>
    postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}`, 'x-request-id': id });
  const count = async (db: Database) => (await db.query<{ n: number; first: string; last: string }>(
    'SELECT count(*)::int AS n, min(seq)::text AS first, max(seq)::text AS last FROM audit_records'))[0]!;

  test('two gateways writing at once keep one contiguous chain that verifies', async () => {
    const schema = newSchema();
    const config = auditConfig(fake.baseUrl, '- audit:\n    flushIntervalMs: 20\n    batchSize: 7');
    const a = await startTestGateway(config, { env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema });
    const b = await startTestGateway(config, { env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema });
    try {
      const key = await a.createKey();
      const sent = await Promise.all([a, b].flatMap((gw) => Array.from({ length: 8 }, async () => {
        let n = 0;
        for (let i = 0; i < 15; i++) {
          assert.equal((await chat(gw, key)).status, 200);
          n++;
        }
        return n;
      })));
      await Promise.all([auditRecorderFor(a.gateway)!.flush(), auditRecorderFor(b.gateway)!.flush()]);
      const total = sent.reduce((x, y) => x + y, 0) + 1; // and the key's creation
      const stats = await count(a.gateway.services.db as Database);
      assert.equal(stats.n, total);
      assert.equal(Number(stats.first), 1);
      assert.equal(Number(stats.last), total, 'seq is contiguous');
      assert.deepEqual(await verifyChain(a.gateway.services.db, undefined), { ok: true, records: total, firstSeq: 1, lastSeq: total, checkpointSeq: null });
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a Postgres outage loses no audit record: they are appended, in order, once it is back', async () => {
    const schema = newSchema();
    const gw = await startTestGateway(auditConfig(fake.baseUrl, '- audit:\n    flushIntervalMs: 50\n    batchSize: 25'), { env: { DATABASE_URL: proxiedUrl() }, dbSchema: schema });
    direct = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
    try {
      const key = await gw.createKey();
      const recorder = auditRecorderFor(gw.gateway)!;
      const ids = Array.from({ length: 10 }, () => randomUUID() as string);
      for (const id of ids) await chat(gw, key, id);
      await recorder.flush();
      proxy.cut();
      const during: string[] = [];
      const deadline = Date.now() + 20_000;
      while ((recorder.failedWrites < 3 || during.length < 60) && Date.now() < deadline) {
        const id = randomUUID();
        during.push(id);
        await chat(gw, key, id); // answered or refused (a store outage): recorded either way
      }
      assert.ok(recorder.failedWrites >= 3, `writes failed during the outage (${recorder.failedWrites})`);
      assert.ok(recorder.pending >= 40, `records wait in memory (${recorder.pending})`);
      proxy.restore();
      // The pool reconnects after the outage: a flush may still fail once or twice.
      await eventually(async () => {
        await recorder.flush();
        assert.equal(recorder.pending, 0);
      }, 30_000);
      const [missing] = await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM unnest($1::text[]) AS s(id) WHERE NOT EXISTS (SELECT 1 FROM audit_records WHERE request_id = s.id)', [[...ids, ...during]]);
      assert.equal(missing!.n, 0, 'every request has its record');
      const stats = await count(direct);
      assert.equal(stats.n, 1 + ids.length + during.length, 'and only one');
      const result = await verifyChain(direct, undefined);
      assert.equal(result.ok, true, JSON.stringify(result));
    } finally {
      proxy.restore();
      await gw.close();
      await direct.close();
    }
  });

  test('records the shutdown could not write are spooled to the data folder and appended at the next start', async () => {
    const schema = newSchema();
    const dataDir = await mkdtemp(join(tmpdir(), 'aigw-audit-spool-'));
    folders.push(dataDir);
    const config = auditConfig(fake.baseUrl, '- audit:\n    flushIntervalMs: 50', 'server:\n  shutdownTimeoutMs: 300\n');
    const env = { DATABASE_URL: proxiedUrl(), AIGW_DATA_DIR: dataDir };
    const first = await startTestGateway(config, { env, dbSchema: schema });
    const key = await first.createKey();
    await auditRecorderFor(first.gateway)!.flush();
    proxy.cut();
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await chat(first, key, id);
    await first.close();
    proxy.restore();
    const spooled = await readdir(join(dataDir, 'audit-spool'));
    assert.equal(spooled.length, 1, 'one spool file');

    const second = await startTestGateway(config, { env, dbSchema: schema });
    try {
      await (second.gateway.pluginState('audit') as { replayed: Promise<void> }).replayed;
      assert.deepEqual(await readdir(join(dataDir, 'audit-spool')), [], 'the spool is emptied once appended');
      const rows = await second.gateway.services.db.query<{ request_id: string }>('SELECT request_id FROM audit_records WHERE request_id = ANY($1) ORDER BY seq', [ids]);
      assert.equal(rows.length, ids.length);
      assert.equal((await verifyChain(second.gateway.services.db, undefined)).ok, true);
    } finally {
      await second.close();
    }
  });

  test('pruning deletes the oldest records behind a signed checkpoint; the chain verifies from it and goes on', async () => {
    const schema = newSchema();
    const gw = await startTestGateway(auditConfig(fake.baseUrl, `- audit:\n    retentionDays: 30\n    checkpointKey: ${KEY}`), { env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema });
    try {
      const db = gw.gateway.services.db;
      const key = await gw.createKey();
      for (let i = 0; i < 5; i++) await chat(gw, key);
      await auditRecorderFor(gw.gateway)!.flush();
      await sleep(20);
      const cutoff = Date.now();
      await sleep(20);
      for (let i = 0; i < 4; i++) await chat(gw, key);
      await auditRecorderFor(gw.gateway)!.flush();
      assert.equal(await pruneRecords(db, cutoff, KEY), 6);
      assert.equal(await pruneRecords(db, cutoff, KEY), 0, 'a second sweep finds nothing');
      const [checkpoint] = await db.query<{ seq: string; pruned: string }>('SELECT seq::text AS seq, pruned::text AS pruned FROM audit_checkpoints');
      assert.deepEqual(checkpoint, { seq: '6', pruned: '6' });
      await chat(gw, key);
      await auditRecorderFor(gw.gateway)!.flush();
      assert.deepEqual(await verifyChain(db, KEY), { ok: true, records: 5, firstSeq: 7, lastSeq: 11, checkpointSeq: 6 });
      const noKey = await verifyChain(db, undefined);
      assert.equal(noKey.ok, false);
      const admin = await fetch(`${gw.url}/admin/v1/audit`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json()) as { data: Array<{ seq: number }> };
      assert.equal(admin.data[0]!.seq, 7);
    } finally {
      await gw.close();
    }
  });
});

describe('verifying a long chain', { skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set' }, () => {
  test('2500 records verify across pages; an edit deep in the chain is found', async () => {
    const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
    const fake = await startFakeOpenAI();
    const gw = await startTestGateway(auditConfig(fake.baseUrl), { env: { DATABASE_URL: DATABASE_URL! }, dbSchema: schema });
    try {
      const db = gw.gateway.services.db;
      const at = Date.parse('2026-01-01T00:00:00Z');
      const records = Array.from({ length: 2500 }, (_, i) => {
        const id = randomUUID();
        const content = { v: 1, type: 'admin', id, time: new Date(at + i).toISOString(), requestId: `r${i}`, tenantId: null, route: '/admin/v1/keys', status: 201 };
        return { id, kind: 'admin' as const, occurredAt: at + i, requestId: `r${i}`, tenantId: null, apiKeyId: null, route: '/admin/v1/keys', status: 201, content: canonicalJson(content) };
      });
      for (let i = 0; i < records.length; i += 500) await appendRecords(db, records.slice(i, i + 500));
      await appendRecords(db, records.slice(0, 10)); // a retried batch adds nothing
      assert.deepEqual(await verifyChain(db, undefined), { ok: true, records: 2500, firstSeq: 1, lastSeq: 2500, checkpointSeq: null });
      await db.query("UPDATE audit_records SET content = replace(content, '201', '200') WHERE seq = 1700");
      const result = await verifyChain(db, undefined);
      assert.equal(result.ok, false);
      if (!result.ok) assert.deepEqual([result.kind, result.seq, result.requestId], ['edited', 1700, 'r1699']);
    } finally {
      await gw.close();
      await fake.close();
      const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
      await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.close());
    }
  });
});
