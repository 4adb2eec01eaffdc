/**
 * Retention: records older than retentionDays are deleted from the chain's start, and a checkpoint is left in
 * the same transaction: the last pruned record's seq and hash, signed with HMAC-SHA256 under checkpointKey.
 * Verification starts from the newest checkpoint, so pruning does not break it, and a checkpoint nobody with
 * the key signed fails it. Each instance runs the sweep on a timer; the chain's advisory lock makes concurrent
 * sweeps (and writers) take turns, and the second finds nothing left to prune.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PluginDatabase, PluginLogger } from '../../core/pipeline/services.ts';
import { AUDIT_LOCK } from './chain.ts';

/** Records deleted per transaction, so that a first sweep over a large backlog never holds the lock for long. */
const PRUNE_BATCH = 10_000;

export interface Checkpoint {
  seq: number;
  hash: string;
  pruned: number;
  signature: string;
}

const signed = (c: Omit<Checkpoint, 'signature'>) => `aigw-audit-checkpoint\n${c.seq}\n${c.hash}\n${c.pruned}`;

export function signCheckpoint(key: string, checkpoint: Omit<Checkpoint, 'signature'>): string {
  return createHmac('sha256', key).update(signed(checkpoint)).digest('hex');
}

export function checkpointValid(key: string, checkpoint: Checkpoint): boolean {
  const expected = Buffer.from(signCheckpoint(key, checkpoint), 'hex');
  const given = Buffer.from(checkpoint.signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Deletes the chain's oldest records while they are older than `before` (ms), in batches, each leaving a
 * signed checkpoint. Only a prefix of the chain is ever pruned: it stops at the first record that is not old
 * enough, even if later ones are (their times are arrival times; the chain is in write order).
 */
export async function pruneRecords(db: PluginDatabase, before: number, key: string): Promise<number> {
  let total = 0;
  for (;;) {
    const pruned = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_LOCK]);
      const [range] = await tx.query<{ first: string | null; keep: string | null; last: string | null }>(
        `SELECT (SELECT min(seq) FROM audit_records)::text AS first,
                (SELECT min(seq) FROM audit_records WHERE occurred_at >= $1)::text AS keep,
                (SELECT max(seq) FROM audit_records)::text AS last`,
        [new Date(before).toISOString()],
      );
      if (!range?.first) return 0;
      const first = Number(range.first);
      const upTo = Math.min(range.keep === null ? Number(range.last) : Number(range.keep) - 1, first + PRUNE_BATCH - 1);
      if (upTo < first) return 0;
      const [edge] = await tx.query<{ hash: string }>('SELECT hash FROM audit_records WHERE seq = $1', [upTo]);
      if (!edge) throw new Error(`audit: record ${upTo} is missing from the chain: run \`aigw audit verify\``);
      const [deleted] = await tx.query<{ n: number }>('WITH gone AS (DELETE FROM audit_records WHERE seq <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone', [upTo]);
      const checkpoint = { seq: upTo, hash: edge.hash, pruned: deleted!.n };
      await tx.query(
        'INSERT INTO audit_checkpoints (seq, hash, created_at, pruned, signature) VALUES ($1, $2, now(), $3, $4)',
        [checkpoint.seq, checkpoint.hash, checkpoint.pruned, signCheckpoint(key, checkpoint)],
      );
      return deleted!.n;
    });
    total += pruned;
    if (pruned < PRUNE_BATCH) return total;
  }
}

/** The sweep on a timer, for one gateway; the function returned stops it (and waits for a sweep under way). */
export function startPruning(options: { db: PluginDatabase; logger: PluginLogger; now(): number; retentionDays: number; key: string; intervalMs: number }): () => Promise<void> {
  let running: Promise<void> | undefined;
  const sweep = () => {
    if (running) return;
    running = pruneRecords(options.db, options.now() - options.retentionDays * 86_400_000, options.key)
      .then((n) => {
        if (n > 0) options.logger.info({ pruned: n, retentionDays: options.retentionDays }, 'audit: records past retention pruned, a signed checkpoint left');
      })
      .catch((err: unknown) => options.logger.warn({ err }, 'audit: pruning failed; the next sweep tries again'))
      .finally(() => { running = undefined; });
  };
  const timer = setInterval(sweep, options.intervalMs);
  timer.unref();
  sweep();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
