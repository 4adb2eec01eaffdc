import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database, Queryable, Row } from './database.ts';

function wrap(q: PGlite | Transaction): Queryable {
  return {
    async query<T>(sql: string, params?: unknown[]) {
      const result = await q.query<T>(sql, params);
      return result.rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  };
}

/** Postgres compiled to WASM, in this process, with its files under the data folder. */
export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  readonly hasVector = true;
  private readonly q: Queryable;
  private closed = false;

  private constructor(private readonly pg: PGlite) {
    this.q = wrap(pg);
  }

  static async open(dataDir: string): Promise<PgliteDatabase> {
    await mkdir(dataDir, { recursive: true });
    const pg = await PGlite.create(dataDir, { extensions: { vector } });
    await pg.exec('CREATE EXTENSION IF NOT EXISTS vector');
    return new PgliteDatabase(pg);
  }

  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]> {
    return this.q.query<T>(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.q.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pg.transaction((tx) => fn(wrap(tx)));
  }

  async ping(): Promise<void> {
    await this.pg.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pg.close();
  }
}
