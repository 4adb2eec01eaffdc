import pg from 'pg';
import type { Database, DatabaseOptions, Queryable, Row } from './database.ts';
import { StoreUnavailableError } from './deadline.ts';

/** SQLSTATE classes that mean the server was not there to answer: connection exceptions, resources, shutdown. */
const NOT_ANSWERED = /^(08|53|57P0)/;

/**
 * Postgres refusing a statement (a DatabaseError with its SQLSTATE) is an answer and passes as it is; anything
 * else (refused, reset, terminated, no connection in time, the server shutting down) means the database was not
 * reached: 503 STORE_UNAVAILABLE, without the server's address in the message.
 */
function unreached(err: unknown): never {
  if (err instanceof pg.DatabaseError && !NOT_ANSWERED.test(err.code ?? '')) throw err;
  throw Object.assign(new StoreUnavailableError('database', 'The database could not be reached'), { cause: err });
}

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(sql: string, params?: unknown[]) {
      const result = await client.query(sql, params as unknown[] | undefined).catch(unreached);
      return result.rows as T[];
    },
    async exec(sql: string) {
      await client.query(sql).catch(unreached);
    },
  };
}

// `CREATE ... IF NOT EXISTS` is not safe against a concurrent creator (it fails on the catalog's unique
// index), so instances starting together take turns under one transaction-scoped advisory lock.
const BOOTSTRAP_LOCK = 7_263_000;

/** `serving`: failures to reach the server become STORE_UNAVAILABLE; at open they stay as they are, for the operator. */
async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, serving = true): Promise<T> {
  const reached = serving ? unreached : (err: unknown): never => { throw err; };
  const client = await pool.connect().catch(reached);
  // A checked-out client has no listener of the pool's: a connection lost mid-transaction is emitted as 'error'
  // (besides failing the query in flight), and an 'error' nobody listens to would crash the process.
  const lost = (): void => {};
  client.on('error', lost);
  try {
    await client.query('BEGIN').catch(reached);
    const result = await fn(client);
    await client.query('COMMIT').catch(reached);
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.removeListener('error', lost);
    client.release();
  }
}

async function createSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => {});
  }
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly q: Queryable;
  private closed = false;

  private constructor(private readonly pool: pg.Pool, readonly hasVector: boolean) {
    this.q = wrap(pool);
  }

  static async open(url: string, options: Pick<DatabaseOptions, 'schema' | 'onNoVector'>): Promise<PostgresDatabase> {
    // The schema exists before the pool opens its first connection: a session that began while the schema was
    // missing could resolve its search_path without it and create the tables in public instead.
    if (options.schema) await createSchema(url, options.schema);
    const pool = new pg.Pool({
      connectionString: url,
      max: 10,
      connectionTimeoutMillis: 5000,
      ...(options.schema ? { options: `-c search_path=${options.schema},public` } : {}),
    });
    // An idle client that loses its server must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    let hasVector = true;
    try {
      await inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
        try {
          await client.query('SAVEPOINT vector');
          await client.query('CREATE EXTENSION IF NOT EXISTS vector');
        } catch (err) {
          await client.query('ROLLBACK TO SAVEPOINT vector');
          hasVector = false;
          options.onNoVector?.((err as Error).message);
        }
      }, false);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return new PostgresDatabase(pool, hasVector);
  }

  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]> {
    return this.q.query<T>(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.q.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (client) => fn(wrap(client)));
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1').catch(unreached);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
