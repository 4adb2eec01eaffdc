/**
 * The job runner's tests run on both engines: a migrated PGlite folder always, and a fresh Postgres schema when
 * TEST_DATABASE_URL is set. `connect()` opens one more connection to the same database (a second instance).
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { JobRunner, type JobRunnerOptions } from '../../core/jobs/runner.ts';
import { silentLogger } from '../../core/logger.ts';
import { openDatabase, type Database, type Queryable } from '../../core/store/database.ts';
import { migrate } from '../../core/store/migrate.ts';
import { freshDataDir } from '../helpers/data-dir.ts';

export const DATABASE_URL = process.env.TEST_DATABASE_URL;

export interface Engine {
  name: string;
  skip: string | false;
  /** A migrated database of its own, with a `job_effects` table for counting handlers' side effects. */
  open(): Promise<TestDatabase>;
}

export interface TestDatabase {
  db: Database;
  /** Postgres: a second pool on the same schema; PGlite: the same database (it has one connection). */
  connect(): Promise<Database>;
  /** The schema, on Postgres, and the data folder, on PGlite: child processes open them by name. */
  schema?: string;
  dataDir?: string;
  /** PGlite: opens the folder again after `db` was closed for another process to use it. */
  reopen?(): Promise<void>;
  close(): Promise<void>;
}

const EFFECTS = 'CREATE TABLE job_effects (job_id uuid NOT NULL, attempt int NOT NULL, runner text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())';

export const engines: Engine[] = [
  {
    name: 'PGlite',
    skip: false,
    async open() {
      const dir = await freshDataDir();
      const t: TestDatabase = {
        db: await openDatabase({ dataDir: dir }),
        dataDir: dir,
        connect: async () => t.db,
        async reopen() { t.db = await openDatabase({ dataDir: dir }); },
        async close() {
          await t.db.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
      await t.db.exec(EFFECTS);
      return t;
    },
  },
  {
    name: 'Postgres',
    skip: DATABASE_URL ? false : 'TEST_DATABASE_URL not set',
    async open() {
      const schema = 'aigw_test_' + randomUUID().replace(/-/g, '');
      const connect = () => openDatabase({ databaseUrl: DATABASE_URL!, dataDir: '', schema, onNoVector: () => {} });
      const db = await connect();
      await migrate(db);
      await db.exec(EFFECTS);
      const extra: Database[] = [];
      return {
        db,
        schema,
        async connect() {
          const other = await connect();
          extra.push(other);
          return other;
        },
        async close() {
          for (const other of extra) await other.close();
          await db.close();
          const client = new pg.Client({ connectionString: DATABASE_URL });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
        },
      };
    },
  },
];

/** Millisecond cadences; anything may be overridden. */
export function runner(db: Queryable, options: Partial<JobRunnerOptions> = {}): JobRunner {
  return new JobRunner({ db, logger: silentLogger(), pollIntervalMs: 10, leaseMs: 5000, concurrency: 4, shutdownTimeoutMs: 1000, ...options });
}

export interface JobRow {
  id: string;
  kind: string;
  key: string | null;
  payload: unknown;
  status: string;
  attempts: number;
  run_at: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  last_error: string | null;
}

export async function jobRow(db: Queryable, id: string): Promise<JobRow> {
  const [row] = await db.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
  if (!row) throw new Error(`no job ${id}`);
  return row;
}

/** A promise with its resolver, for a handler to say that it started. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}
