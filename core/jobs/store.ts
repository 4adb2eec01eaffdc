/**
 * The `jobs` table's statements. A claim is identified by (id, lease owner, attempts): every claim increments
 * attempts, so a run whose lease was lost and taken again (even by the same instance) can no longer write its
 * result or renew its lease. Due times are the runner's clock; leases are the database's clock, so that instances
 * whose clocks drift apart still agree on when a lease has expired.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../store/database.ts';
import type { JobRecord, JobResult, JobSpec } from './types.ts';

export interface Claim {
  id: string;
  attempts: number;
}

export interface ClaimedJob extends JobRecord {
  /** The previous run was claimed and never reported: its instance died or lost its lease. */
  reclaimed: boolean;
}

interface JobRow {
  id: string;
  kind: string;
  key: string | null;
  payload: unknown;
  attempts: number;
  run_at: Date | string;
  created_at: Date | string;
  was: string;
}

const ms = (value: Date | string): number => new Date(value).getTime();
const at = (epochMs: number): string => new Date(epochMs).toISOString();

/** The live statuses: the partial unique index on key covers exactly these. */
const LIVE = `status IN ('pending', 'running')`;

export class JobStore {
  constructor(private readonly db: Queryable, readonly owner: string, private readonly leaseMs: number) {}

  /** The new job's id, or the live job's that holds the key already. */
  async enqueue(spec: JobSpec, now: number, tx: Queryable = this.db): Promise<string> {
    const payload = JSON.stringify(spec.payload ?? null);
    const runAt = at(spec.runAt ?? now);
    // A live job with the key may finish between the insert that found it and the select that reads it: then
    // the key is free again, and the next insert takes it.
    for (let tries = 0; tries < 3; tries++) {
      const inserted = await tx.query<{ id: string }>(
        `INSERT INTO jobs (id, kind, key, payload, run_at) VALUES ($1, $2, $3, $4::jsonb, $5::timestamptz)
         ON CONFLICT (key) WHERE ${LIVE} DO NOTHING RETURNING id`,
        [randomUUID(), spec.kind, spec.key ?? null, payload, runAt],
      );
      if (inserted[0]) return inserted[0].id;
      const live = await tx.query<{ id: string }>(`SELECT id FROM jobs WHERE key = $1 AND ${LIVE}`, [spec.key]);
      if (live[0]) return live[0].id;
    }
    throw new Error(`could not enqueue a job with key "${spec.key}": it kept changing hands`);
  }

  /**
   * Up to `limit` due pending jobs and running jobs whose lease has expired, in one statement: each row is locked
   * by the instance that claims it (others skip it), marked running under this owner's lease, and its attempt
   * counted before any handler runs.
   */
  async claim(limit: number, now: number): Promise<ClaimedJob[]> {
    const rows = await this.db.query<JobRow>(
      `WITH picked AS (
         SELECT id, status AS was FROM jobs
         WHERE (status = 'pending' AND run_at <= $1::timestamptz) OR (status = 'running' AND lease_until < now())
         ORDER BY run_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
       )
       UPDATE jobs SET status = 'running', lease_owner = $3, lease_until = now() + $4 * interval '1 millisecond',
         attempts = jobs.attempts + 1, updated_at = now()
       FROM picked WHERE jobs.id = picked.id
       RETURNING jobs.id, jobs.kind, jobs.key, jobs.payload, jobs.attempts, jobs.run_at, jobs.created_at, picked.was`,
      [at(now), limit, this.owner, this.leaseMs],
    );
    return rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      key: row.key,
      payload: row.payload,
      attempts: Number(row.attempts),
      runAt: ms(row.run_at),
      createdAt: ms(row.created_at),
      reclaimed: row.was === 'running',
    }));
  }

  /** Extends the leases still held; returns the ids of those, so that a missing one is a lease lost. */
  async renew(claims: readonly Claim[]): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await this.db.query<{ id: string }>(
      `UPDATE jobs j SET lease_until = now() + $1 * interval '1 millisecond', updated_at = now()
       FROM unnest($2::uuid[], $3::int[]) AS c(id, attempts)
       WHERE j.id = c.id AND j.attempts = c.attempts AND j.status = 'running' AND j.lease_owner = $4
       RETURNING j.id`,
      [this.leaseMs, claims.map((c) => c.id), claims.map((c) => c.attempts), this.owner],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Writes a run's result; false when the lease was lost meanwhile (the result is then dropped). */
  async finish(claim: Claim, result: JobResult): Promise<boolean> {
    const [set, params] = outcome(result);
    const rows = await this.db.query<{ id: string }>(
      `UPDATE jobs SET ${set}, lease_owner = NULL, lease_until = NULL, updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'running' AND lease_owner = $3
       RETURNING id`,
      [claim.id, claim.attempts, this.owner, ...params],
    );
    return rows.length === 1;
  }

  /** Hands jobs back at shutdown: pending and due at once, for another instance or the next start. */
  async release(claims: readonly Claim[], now: number): Promise<void> {
    if (claims.length === 0) return;
    await this.db.query(
      `UPDATE jobs j SET status = 'pending', run_at = $1::timestamptz, lease_owner = NULL, lease_until = NULL, updated_at = now()
       FROM unnest($2::uuid[], $3::int[]) AS c(id, attempts)
       WHERE j.id = c.id AND j.attempts = c.attempts AND j.status = 'running' AND j.lease_owner = $4`,
      [at(now), claims.map((c) => c.id), claims.map((c) => c.attempts), this.owner],
    );
  }
}

/** The SET clause of a result, its parameters numbered from $4. */
function outcome(result: JobResult): [string, unknown[]] {
  switch (result.status) {
    case 'done':
      return [`status = 'done'`, []];
    case 'retry':
      return [`status = 'pending', run_at = $4::timestamptz, last_error = $5`, [at(result.at), result.error]];
    case 'reschedule':
      return [
        `status = 'pending', run_at = $4::timestamptz, attempts = 0, last_error = NULL, payload = coalesce($5::jsonb, payload)`,
        [at(result.at), result.payload === undefined ? null : JSON.stringify(result.payload)],
      ];
    case 'failed':
      return [`status = 'failed', last_error = $4`, [result.error]];
  }
}
