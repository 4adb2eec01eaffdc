/**
 * Tampering with the audit table is found and named: an edited record (content, or a column alone), a deleted
 * one (in the middle, or the newest), two swapped, one inserted (in the middle, renumbering the rest, or at
 * the end), a forged checkpoint. In-process against PGlite (each tamper rolled back), then through the real
 * `aigw audit verify` command against a Postgres schema (each tamper committed, then undone).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PluginQueryable } from '../../core/pipeline/services.ts';
import { chainHash } from '../../plugins/audit/chain.ts';
import { signCheckpoint } from '../../plugins/audit/retention.ts';
import { verifyChain, type VerifyResult } from '../../plugins/audit/verify.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.ts';
import { auditConfig, auditRows, type AuditRow } from '../helpers/audit.ts';
import { createSharedStores, dropSharedStores, type SharedStores } from '../helpers/cluster.ts';
import { postJson, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { runCli } from '../helpers/process.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Each tamper as SQL over the chain of 8 records, and what verify must say. */
const TAMPERS: Array<{ name: string; sql: (rows: AuditRow[]) => Array<[string, unknown[]]>; kind: VerifyResult extends infer R ? R extends { ok: false; kind: infer K } ? K : never : never; seq: number }> = [
  {
    name: 'an edited record', kind: 'edited', seq: 3,
    sql: () => [["UPDATE audit_records SET content = replace(content, '\"status\":200', '\"status\":201') WHERE seq = 3", []]],
  },
  {
    name: 'a column edited alone', kind: 'edited', seq: 4,
    sql: () => [['UPDATE audit_records SET tenant_id = $1 WHERE seq = 4', ['someone-else']]],
  },
  { name: 'a deleted record', kind: 'deleted', seq: 4, sql: () => [['DELETE FROM audit_records WHERE seq = 4', []]] },
  { name: 'the newest record deleted', kind: 'deleted', seq: 8, sql: () => [['DELETE FROM audit_records WHERE seq = 8', []]] },
  {
    name: 'two records swapped', kind: 'reordered', seq: 5,
    sql: () => [
      ['UPDATE audit_records SET seq = -5 WHERE seq = 5', []],
      ['UPDATE audit_records SET seq = 5 WHERE seq = 6', []],
      ['UPDATE audit_records SET seq = 6 WHERE seq = -5', []],
    ],
  },
  {
    name: 'a record inserted in the middle (the rest renumbered)', kind: 'inserted', seq: 4,
    sql: (rows) => {
      const fake = forged(rows[2]!.hash, rows[3]!);
      return [
        ['UPDATE audit_records SET seq = seq + 1000 WHERE seq >= 4', []],
        ['UPDATE audit_records SET seq = seq - 999 WHERE seq >= 1000', []],
        [INSERT, [4, ...fake]],
      ];
    },
  },
  {
    name: 'a record appended past the head', kind: 'inserted', seq: 9,
    sql: (rows) => [[INSERT, [9, ...forged(rows[7]!.hash, rows[7]!)]]],
  },
];

const INSERT = `INSERT INTO audit_records (seq, id, kind, occurred_at, request_id, tenant_id, api_key_id, route, status, content, prev_hash, hash)
  VALUES ($1, $2, 'request', $3, $4, 'default', NULL, '/v1/chat/completions', 200, $5, $6, $7)`;

/** A self-consistent record (its hash computed as the gateway would) linked after `prevHash`. */
function forged(prevHash: string, like: AuditRow): unknown[] {
  const id = randomUUID();
  const record: Record<string, unknown> = { ...like.record, id, requestId: 'forged', apiKeyId: null };
  const content = JSON.stringify(Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1))));
  return [id, record.time, 'forged', content, prevHash, chainHash(prevHash, content)];
}

async function makeRecords(gw: TestGateway, count: number): Promise<string[]> {
  const key = await gw.createKey();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `req-${i + 1}`;
    ids.push(id);
    const r = await postJson(`${gw.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}`, 'x-request-id': id });
    assert.equal(r.status, 200);
  }
  // The key's creation is record 1; the requests follow.
  for (let rows = await auditRows(gw); rows.length < count + 1; rows = await auditRows(gw)) await new Promise((r) => setTimeout(r, 20));
  return ids;
}

class Rollback extends Error {}

describe('audit verify names tampering (in-process, PGlite)', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let rows: AuditRow[];

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(auditConfig(fake.baseUrl, '- audit:\n    checkpointKey: an-audit-checkpoint-key-of-32-bytes!'));
    await makeRecords(gw, 7);
    rows = await auditRows(gw);
    assert.equal(rows.length, 8);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function verifyTampered(statements: Array<[string, unknown[]]>): Promise<VerifyResult> {
    let result: VerifyResult | undefined;
    await gw.gateway.services.db.transaction(async (tx: PluginQueryable) => {
      for (const [sql, params] of statements) await tx.query(sql, params);
      result = await verifyChain(tx, 'an-audit-checkpoint-key-of-32-bytes!');
      throw new Rollback();
    }).catch((err) => {
      if (!(err instanceof Rollback)) throw err;
    });
    return result!;
  }

  test('the untouched chain verifies', async () => {
    assert.deepEqual(await verifyChain(gw.gateway.services.db, undefined), { ok: true, records: 8, firstSeq: 1, lastSeq: 8, checkpointSeq: null });
  });

  for (const tamper of TAMPERS) {
    test(`${tamper.name}: ${tamper.kind} at seq ${tamper.seq}`, async () => {
      const result = await verifyTampered(tamper.sql(rows));
      assert.equal(result.ok, false, JSON.stringify(result));
      if (result.ok) return;
      assert.equal(result.kind, tamper.kind, result.message);
      assert.equal(result.seq, tamper.seq, result.message);
    });
  }

  test('a deleted record: the message names the record after the gap, by seq and request id', async () => {
    const result = await verifyTampered([['DELETE FROM audit_records WHERE seq = 4', []]]);
    assert.equal(result.ok, false);
    if (!result.ok) assert.equal(result.message, 'record 4 is missing: the chain goes on at seq 5 (request id req-4)');
  });

  test('records pruned behind a signed checkpoint verify; a forged checkpoint does not', async () => {
    const key = 'an-audit-checkpoint-key-of-32-bytes!';
    const pruned = { seq: 3, hash: rows[2]!.hash, pruned: 3 };
    const checkpoint = 'INSERT INTO audit_checkpoints (seq, hash, created_at, pruned, signature) VALUES ($1, $2, now(), $3, $4)';
    const clean = await verifyTampered([
      ['DELETE FROM audit_records WHERE seq <= 3', []],
      [checkpoint, [pruned.seq, pruned.hash, pruned.pruned, signCheckpoint(key, pruned)]],
    ]);
    assert.deepEqual(clean, { ok: true, records: 5, firstSeq: 4, lastSeq: 8, checkpointSeq: 3 });
    const forgedCheckpoint = await verifyTampered([
      ['DELETE FROM audit_records WHERE seq <= 5', []],
      [checkpoint, [5, rows[4]!.hash, 5, signCheckpoint('not-the-key-but-just-as-long-as-it', { seq: 5, hash: rows[4]!.hash, pruned: 5 })]],
    ]);
    assert.equal(forgedCheckpoint.ok, false);
    if (!forgedCheckpoint.ok) assert.equal(forgedCheckpoint.kind, 'checkpoint');
  });
});

describe('aigw audit verify (the command, against Postgres)', { skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set' }, () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let stores: SharedStores;
  let dataDir: string;
  let rows: AuditRow[];

  before(async () => {
    fake = await startFakeOpenAI();
    stores = await createSharedStores(DATABASE_URL!);
    dataDir = await mkdtemp(join(tmpdir(), 'aigw-audit-cli-'));
    gw = await startTestGateway(auditConfig(fake.baseUrl), { env: { DATABASE_URL: stores.databaseUrl } });
    await makeRecords(gw, 7);
    rows = await auditRows(gw);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    await dropSharedStores(stores, DATABASE_URL!, REDIS_URL);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const verify = () => runCli(['audit', 'verify', '--config', join(gw.configDir, 'pipelines.yaml')], {
    DATABASE_URL: stores.databaseUrl, AIGW_DATA_DIR: dataDir, AIGW_LOG_LEVEL: 'silent',
  });

  /** Applies the tamper, runs the command, and restores the table as it was. */
  async function tampered(statements: Array<[string, unknown[]]>) {
    const db = gw.gateway.services.db;
    // A table of the test's schema, not a TEMP one: a temporary table lives on one pooled connection only.
    await db.transaction(async (tx) => {
      await tx.query('CREATE TABLE IF NOT EXISTS audit_saved AS SELECT * FROM audit_records WITH NO DATA');
      await tx.query('DELETE FROM audit_saved');
      await tx.query('INSERT INTO audit_saved SELECT * FROM audit_records');
      for (const [sql, params] of statements) await tx.query(sql, params);
    });
    try {
      return await verify();
    } finally {
      await db.transaction(async (tx) => {
        await tx.query('DELETE FROM audit_records');
        await tx.query('INSERT INTO audit_records SELECT * FROM audit_saved');
      });
    }
  }

  test('exit 0 with the count on an intact chain', async () => {
    const run = await verify();
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /audit log intact: 8 records \(seq 1 to 8\)/);
  });

  for (const tamper of TAMPERS.filter((t) => ['an edited record', 'a deleted record', 'two records swapped', 'a record inserted in the middle (the rest renumbered)'].includes(t.name))) {
    test(`${tamper.name}: exit 1 naming the record`, async () => {
      const run = await tampered(tamper.sql(rows));
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stderr, new RegExp(`audit log verification failed: ${tamper.kind} record at seq ${tamper.seq}\\b.*request id [\\w-]+`));
    });
  }
});
