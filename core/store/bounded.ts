/**
 * The KV and the Database as the gateway uses them: every call under its store's deadline (deadline.ts), so
 * that identity, the admin API, budgets, rate limits and usage are all bounded without each remembering to be.
 * openStores() wraps the stores in these after migrating; close() is not bounded (shutdown waits for it).
 */
import type { CopyBinary, CopyCsv, Database, Queryable, Row } from './database.ts';
import type { StoreDeadline } from './deadline.ts';
import type { KvOperation } from './kv-operation.ts';
import type { KV } from './kv.ts';

export class BoundedKv implements KV {
  readonly kind: KV['kind'];

  constructor(private readonly kv: KV, readonly deadline: StoreDeadline) {
    this.kind = kv.kind;
  }

  get(key: string): Promise<string | null> {
    return this.deadline.run(() => this.kv.get(key));
  }

  mget(keys: readonly string[]): Promise<Array<string | null>> {
    return this.deadline.run(() => this.kv.mget(keys));
  }

  set(key: string, value: string, ttlMs?: number): Promise<void> {
    return this.deadline.run(() => this.kv.set(key, value, ttlMs));
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return this.deadline.run(() => this.kv.setIfAbsent(key, value, ttlMs));
  }

  del(key: string): Promise<void> {
    return this.deadline.run(() => this.kv.del(key));
  }

  incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    return this.deadline.run(() => this.kv.incrBy(key, by, ttlMs));
  }

  run<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Promise<Result> {
    return this.deadline.run(() => this.kv.run(operation, args));
  }

  ping(): Promise<void> {
    return this.deadline.run(() => this.kv.ping());
  }

  close(): Promise<void> {
    return this.kv.close();
  }
}

/**
 * A transaction is bounded as a whole: BEGIN waiting for a connection, its statements and COMMIT. Past the
 * deadline the caller gets its 503 while the transaction runs on: it commits or rolls back once the database
 * answers, so an admin write that timed out may still have been saved (each says so in docs/operations.md).
 */
export class BoundedDatabase implements Database {
  readonly kind: Database['kind'];
  readonly hasVector: boolean;
  readonly copyCsv?: CopyCsv;
  readonly copyBinary?: CopyBinary;

  constructor(private readonly db: Database, readonly deadline: StoreDeadline) {
    this.kind = db.kind;
    this.hasVector = db.hasVector;
    const copyCsv = db.copyCsv;
    if (copyCsv) this.copyCsv = (table, columns, csv) => this.deadline.run(() => copyCsv(table, columns, csv));
    const copyBinary = db.copyBinary;
    if (copyBinary) this.copyBinary = (table, columns, data) => this.deadline.run(() => copyBinary(table, columns, data));
  }

  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]> {
    return this.deadline.run(() => this.db.query<T>(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.deadline.run(() => this.db.exec(sql));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.deadline.run(() => this.db.transaction(fn));
  }

  ping(): Promise<void> {
    return this.deadline.run(() => this.db.ping());
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
