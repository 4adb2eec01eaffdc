/**
 * What the vector-store tests share: both engines (a migrated PGlite folder always, a fresh Postgres schema when
 * TEST_DATABASE_URL is set; that server has no pgvector here), tenants t1 and t2, seeded vectors, and the check
 * of a VALIDATION_ERROR.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { GatewayError } from '../../core/errors.ts';
import { openDatabase, type Database } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { insertVectorStore, newVectorStoreId, type NewVectorStore, type VectorStoreRecord } from '../../core/store/vector-stores.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

export interface Engine {
  name: string;
  skip: string | false;
  open(): Promise<{ db: Database; dispose(): Promise<void> }>;
}

const TENANTS = "INSERT INTO tenants (id, name) VALUES ('t1', 'One'), ('t2', 'Two') ON CONFLICT DO NOTHING";

export const engines: Engine[] = [
  {
    name: 'pglite',
    skip: false,
    async open() {
      const dataDir = await freshDataDir();
      const db = await openDatabase({ dataDir });
      await migrate(db);
      await db.exec(TENANTS);
      return { db, async dispose() { await db.close(); await rm(dataDir, { recursive: true, force: true }); } };
    },
  },
  {
    name: 'postgres',
    skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set',
    async open() {
      const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
      const db = await openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
      await migrate(db);
      await db.exec(TENANTS);
      return { db, async dispose() { await db.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); await db.close(); } };
    },
  },
];

export function newStore(db: Database, tenantId: string, overrides: Partial<NewVectorStore> = {}): Promise<VectorStoreRecord> {
  return insertVectorStore(db, newVectorStoreId(), {
    tenantId, name: 'docs', embeddingModel: 'text-embedding-3-small', metadata: null, expiresAt: null, apiKeyId: 'key-1', userId: null, ...overrides,
  });
}

export const fileId = () => `file-${randomUUID()}`;

/** A seeded generator (mulberry32): the same vectors on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomVector(next: () => number, dims: number): number[] {
  return Array.from({ length: dims }, () => next() * 2 - 1);
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0; let na = 0; let nb = 0;
  a.forEach((x, i) => { dot += x * b[i]!; na += x * x; nb += b[i]! * b[i]!; });
  return dot / Math.sqrt(na * nb);
}

export function isValidationError(path: string) {
  return (err: unknown): true => {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.code, 'VALIDATION_ERROR');
    const paths = (err.details as Array<{ path: string }>).map((d) => d.path);
    assert.ok(paths.includes(path), `details ${JSON.stringify(err.details)} should name ${path}`);
    return true;
  };
}
