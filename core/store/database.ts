/** One SQL dialect (Postgres) over two engines: embedded PGlite by default, a Postgres server with DATABASE_URL. */
import type { CopyBinary } from './copy-binary.ts';
import type { CopyCsv } from './copy-csv.ts';

export type { CopyBinary, CopyCsv };
export type Row = Record<string, unknown>;

export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Present where a bulk append costs less than a multi-row INSERT: PGlite, where COPY takes about 40% less of the
   * database thread per row. A Postgres server through `pg` has no COPY without a stream library.
   */
  readonly copyCsv?: CopyCsv;
  /** The same append in the binary COPY format (core/store/copy-binary.ts): no text to parse (usage rows: 22% less than CSV). */
  readonly copyBinary?: CopyBinary;
  /** Whether the pgvector extension is available; without it vector search falls back to an exact scan. */
  readonly hasVector: boolean;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Postgres connection string; without it the embedded database in dataDir is used. */
  databaseUrl?: string;
  dataDir: string;
  /** Postgres only: the schema to work in (tests use one per run). */
  schema?: string;
  /** Called once when the server lacks pgvector. */
  onNoVector?: (reason: string) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { PostgresDatabase } = await import('./postgres.ts');
    return PostgresDatabase.open(options.databaseUrl, options);
  }
  const { PgliteDatabase } = await import('./pglite.ts');
  return PgliteDatabase.open(options.dataDir);
}
