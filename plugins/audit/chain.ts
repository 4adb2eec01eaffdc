/**
 * The hash chain. A record's content is canonical JSON (keys sorted at every level, no whitespace), so that the
 * verifier recomputes it byte for byte; its hash is SHA-256 over the previous record's hash and that text. A
 * batch is appended in one transaction under an advisory lock, so instances sharing the database take turns and
 * the sequence stays one contiguous order: read the head, number and chain the records, insert, move the head.
 */
import { createHash } from 'node:crypto';
import type { PluginDatabase, PluginQueryable } from '../../core/pipeline/services.ts';

/** The advisory lock every writer (and the pruner) of the chain holds: "aigw-audit" as a number. */
export const AUDIT_LOCK = 0x61756469;
/** The previous hash of the first record ever written. */
export const GENESIS_HASH = '0'.repeat(64);

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };

/** JSON with keys sorted at every level; undefined members left out, non-finite numbers written as null. */
export function canonicalJson(value: Json | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

export function chainHash(prevHash: string, content: string): string {
  return createHash('sha256').update(prevHash).update('\n').update(content).digest('hex');
}

/** A record as it waits to be written: its content is fixed when it is made, never at write time. */
export interface PendingRecord {
  id: string;
  kind: 'request' | 'admin';
  /** ms since the epoch. */
  occurredAt: number;
  requestId: string | null;
  tenantId: string | null;
  apiKeyId: string | null;
  route: string | null;
  status: number | null;
  content: string;
}

export interface ChainHead {
  seq: number;
  hash: string;
}

export async function readHead(db: PluginQueryable): Promise<ChainHead> {
  const [row] = await db.query<{ seq: string; hash: string }>('SELECT seq::text AS seq, hash FROM audit_head WHERE id = 1');
  return row ? { seq: Number(row.seq), hash: row.hash } : { seq: 0, hash: GENESIS_HASH };
}

const COLUMNS: Array<[string, string, (r: PendingRecord & { seq: number; prevHash: string; hash: string }) => unknown]> = [
  ['seq', 'bigint', (r) => r.seq],
  ['id', 'uuid', (r) => r.id],
  ['kind', 'text', (r) => r.kind],
  ['occurred_at', 'timestamptz', (r) => new Date(r.occurredAt).toISOString()],
  ['request_id', 'text', (r) => r.requestId],
  ['tenant_id', 'text', (r) => r.tenantId],
  ['api_key_id', 'text', (r) => r.apiKeyId],
  ['route', 'text', (r) => r.route],
  ['status', 'integer', (r) => r.status],
  ['content', 'text', (r) => r.content],
  ['prev_hash', 'text', (r) => r.prevHash],
  ['hash', 'text', (r) => r.hash],
];

const INSERT = `INSERT INTO audit_records (${COLUMNS.map(([name]) => name).join(', ')})
  SELECT * FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`;

/**
 * Appends a batch at the chain's end, in one transaction. Idempotent: records an earlier attempt wrote (its
 * answer lost) are recognised by id and not written again, so a retried batch never forks the chain.
 */
export async function appendRecords(db: PluginDatabase, batch: readonly PendingRecord[]): Promise<void> {
  if (batch.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_LOCK]);
    const written = new Set((await tx.query<{ id: string }>('SELECT id::text AS id FROM audit_records WHERE id = ANY($1::uuid[])', [batch.map((r) => r.id)])).map((r) => r.id));
    const fresh = batch.filter((r) => !written.has(r.id));
    if (fresh.length === 0) return;
    const head = await readHead(tx);
    let { seq, hash } = head;
    const rows = fresh.map((record) => {
      const prevHash = hash;
      seq += 1;
      hash = chainHash(prevHash, record.content);
      return { ...record, seq, prevHash, hash };
    });
    await tx.query(INSERT, COLUMNS.map(([, , get]) => rows.map(get)));
    await tx.query(
      'INSERT INTO audit_head (id, seq, hash) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash',
      [seq, hash],
    );
  });
}
