/**
 * Verification of the chain: from the newest checkpoint (or the start), every record in seq order must carry
 * the hash of its content and the previous hash, link to the record before it, and agree with its filter
 * columns; the head must name the last record. The first problem is named with its kind:
 *
 * - edited: a record's content (or a column copied from it) no longer matches its hash;
 * - deleted: a gap in seq, a record linking to a hash no record has, or a head past the last record;
 * - inserted: a record the next one links past, or records beyond the head;
 * - reordered: a record linking to a record that comes after it (two swapped);
 * - checkpoint: a checkpoint whose signature does not verify (or checkpoints and no key to check them).
 */
import type { PluginQueryable } from '../../core/pipeline/services.ts';
import { chainHash, GENESIS_HASH, readHead } from './chain.ts';
import { checkpointValid, type Checkpoint } from './retention.ts';

export type ProblemKind = 'edited' | 'deleted' | 'inserted' | 'reordered' | 'checkpoint';

export type VerifyResult =
  | { ok: true; records: number; firstSeq: number | null; lastSeq: number | null; checkpointSeq: number | null }
  | { ok: false; kind: ProblemKind; seq: number; requestId: string | null; message: string };

interface Row {
  seq: string;
  id: string;
  kind: string;
  occurred_ms: string;
  request_id: string | null;
  tenant_id: string | null;
  api_key_id: string | null;
  route: string | null;
  status: number | null;
  content: string;
  prev_hash: string;
  hash: string;
}

const PAGE = 1000;

const SELECT = `SELECT seq::text AS seq, id::text AS id, kind, (extract(epoch FROM occurred_at) * 1000)::bigint::text AS occurred_ms,
  request_id, tenant_id, api_key_id, route, status, content, prev_hash, hash FROM audit_records`;

function requestIdOf(row: Row): string | null {
  try {
    const parsed = JSON.parse(row.content) as { requestId?: unknown };
    return typeof parsed.requestId === 'string' ? parsed.requestId : row.request_id;
  } catch {
    return row.request_id;
  }
}

/** Whether the filter columns say what the content says (an edit of a column alone is an edit too). */
function columnsAgree(row: Row): boolean {
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(row.content) as Record<string, unknown>;
  } catch {
    return false;
  }
  return c.id === row.id && c.type === row.kind && (c.requestId ?? null) === row.request_id && (c.tenantId ?? null) === row.tenant_id
    && (c.apiKeyId ?? null) === row.api_key_id && (c.route ?? null) === row.route && (c.status ?? null) === row.status
    && typeof c.time === 'string' && Date.parse(c.time) === Number(row.occurred_ms);
}

export async function verifyChain(db: PluginQueryable, key: string | undefined): Promise<VerifyResult> {
  const checkpoints = (await db.query<{ seq: string; hash: string; pruned: string; signature: string }>(
    'SELECT seq::text AS seq, hash, pruned::text AS pruned, signature FROM audit_checkpoints ORDER BY audit_checkpoints.seq, id',
  )).map((c): Checkpoint => ({ seq: Number(c.seq), hash: c.hash, pruned: Number(c.pruned), signature: c.signature }));
  for (const checkpoint of checkpoints) {
    if (key === undefined) {
      return { ok: false, kind: 'checkpoint', seq: checkpoint.seq, requestId: null, message: 'the log has pruning checkpoints and no checkpointKey is configured to check them' };
    }
    if (!checkpointValid(key, checkpoint)) {
      return { ok: false, kind: 'checkpoint', seq: checkpoint.seq, requestId: null, message: `the checkpoint at seq ${checkpoint.seq} has a signature that does not verify with checkpointKey` };
    }
  }
  const anchor = checkpoints.at(-1);
  let expectedSeq = (anchor?.seq ?? 0) + 1;
  let expectedPrev = anchor?.hash ?? GENESIS_HASH;
  let records = 0;
  let firstSeq: number | null = null;
  let previous: Row | undefined;

  let head = await readHead(db);
  for (;;) {
    const rows = await db.query<Row>(`${SELECT} WHERE seq >= $1 ORDER BY audit_records.seq LIMIT ${PAGE + 1}`, [expectedSeq]);
    if (rows.length === 0) {
      // Writers go on while we verify: a head that moved past the last record read may have new records.
      head = await readHead(db);
      if (head.seq < expectedSeq) break;
      const [more] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_records WHERE seq >= $1', [expectedSeq]);
      if (more!.n === 0) break;
      continue;
    }
    const page = rows.slice(0, PAGE);
    for (let i = 0; i < page.length; i++) {
      const row = page[i]!;
      const seq = Number(row.seq);
      const fail = (kind: ProblemKind, message: string, at: Row = row): VerifyResult => ({ ok: false, kind, seq: Number(at.seq), requestId: requestIdOf(at), message });
      if (seq > head.seq) head = await readHead(db);
      if (seq > head.seq) return fail('inserted', `record ${seq} does not belong to the chain: it is past the chain's head (seq ${head.seq})`);
      if (seq > expectedSeq) {
        // The missing record's request id went with it: the message names the record after the gap.
        const missing = seq - 1 === expectedSeq ? `record ${expectedSeq} is` : `records ${expectedSeq} to ${seq - 1} are`;
        const nextId = requestIdOf(row);
        return { ok: false, kind: 'deleted', seq: expectedSeq, requestId: null, message: `${missing} missing: the chain goes on at seq ${seq}${nextId ? ` (request id ${nextId})` : ''}` };
      }
      if (chainHash(row.prev_hash, row.content) !== row.hash) {
        const next = rows[i + 1];
        if (next && next.prev_hash === expectedPrev) return fail('inserted', `record ${seq} does not belong to the chain: its hash does not match its content, and the next record links past it`);
        return fail('edited', `record ${seq} was edited: its content does not match its hash`);
      }
      if (!columnsAgree(row)) return fail('edited', `record ${seq} was edited: its columns do not match its hashed content`);
      if (row.prev_hash !== expectedPrev) {
        const [linked] = await db.query<{ seq: string }>('SELECT seq::text AS seq FROM audit_records WHERE hash = $1 ORDER BY audit_records.seq LIMIT 1', [row.prev_hash]);
        if (linked && Number(linked.seq) > seq) return fail('reordered', `record ${seq} is out of order: it follows record ${linked.seq}, which comes after it`);
        if (linked && previous && Number(linked.seq) < Number(previous.seq)) {
          return fail('inserted', `record ${previous.seq} does not belong to the chain: record ${seq} links past it to record ${linked.seq}`, previous);
        }
        if (previous && row.prev_hash === previous.prev_hash) {
          return fail('inserted', `record ${previous.seq} does not belong to the chain: record ${seq} links past it`, previous);
        }
        return fail('deleted', `the record before record ${seq} is missing or was replaced: it links to a record the chain no longer has`);
      }
      records++;
      firstSeq ??= seq;
      previous = row;
      expectedSeq = seq + 1;
      expectedPrev = row.hash;
    }
  }

  const lastSeq = expectedSeq - 1;
  if (head.seq > lastSeq) {
    const missing = head.seq === lastSeq + 1 ? `record ${head.seq} is` : `records ${lastSeq + 1} to ${head.seq} are`;
    return { ok: false, kind: 'deleted', seq: lastSeq + 1, requestId: null, message: `${missing} missing: the chain's head names seq ${head.seq}` };
  }
  if (previous && head.hash !== expectedPrev) {
    return { ok: false, kind: 'edited', seq: lastSeq, requestId: requestIdOf(previous), message: `record ${lastSeq} was edited: the chain's head names another hash` };
  }
  return { ok: true, records, firstSeq, lastSeq: records > 0 ? lastSeq : null, checkpointSeq: anchor?.seq ?? null };
}
