/**
 * Opens the stores a config names: the embedded database under its data-folder lock (or Postgres), migrated
 * when asked, and the KV. `close()` releases all of it, in reverse order; a failure half way releases what opened.
 */
import type { GatewayConfig } from '../config/types.ts';
import { BoundedDatabase, BoundedKv } from './bounded.ts';
import { DataDirLock } from './data-dir-lock.ts';
import { looseDataDirModes, type LooseModes } from './data-dir-modes.ts';
import { openDatabase, type Database } from './database.ts';
import { StoreDeadline, type StoreName } from './deadline.ts';
import { openKv, type KV } from './kv.ts';
import { migrate, type MigrationSource } from './migrate.ts';

export interface Stores {
  db: Database;
  kv: KV;
  /** Held while the embedded database is open; absent with DATABASE_URL. */
  lock: DataDirLock | undefined;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  migrate: boolean;
  /** Plugins' migration folders, applied after the core's when migrate is set. */
  pluginMigrations?: readonly MigrationSource[];
  /** Tests: the Postgres schema and the KV key prefix of this run. */
  dbSchema?: string;
  kvPrefix?: string;
  onNoVector?: (reason: string) => void;
  /** The embedded database's existing folder lets group or others in (checked before it is opened). */
  onLooseDataDir?: (dataDir: string, modes: LooseModes) => void;
  onCloseError?: (err: unknown) => void;
  /** A store stopped answering within its deadline (stalled: true), or answers again (false). */
  onStall?: (store: StoreName, stalled: boolean, timeoutMs: number) => void;
}

export async function openStores(config: GatewayConfig, options: OpenStoresOptions): Promise<Stores> {
  const { storage } = config;
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) await fn().catch((err) => options.onCloseError?.(err));
  };
  try {
    if (!storage.databaseUrl && options.onLooseDataDir) {
      const loose = await looseDataDirModes(storage.dataDir);
      if (loose) options.onLooseDataDir(storage.dataDir, loose);
    }
    const lock = storage.databaseUrl ? undefined : await DataDirLock.acquire(storage.dataDir);
    if (lock) closers.push(() => lock.release());
    // Opening and migrating are not bounded (a start waits for its stores); every call made after is. Closing
    // goes through the wrappers, so that whoever holds the stores closes exactly what it calls.
    const onStall = options.onStall;
    const deadline = (store: StoreName, timeoutMs: number) =>
      new StoreDeadline(store, timeoutMs, onStall ? { onStall: (name, stalled) => onStall(name, stalled, timeoutMs) } : {});
    const rawDb = await openDatabase({
      databaseUrl: storage.databaseUrl,
      dataDir: storage.dataDir,
      ...(options.dbSchema ? { schema: options.dbSchema } : {}),
      ...(options.onNoVector ? { onNoVector: options.onNoVector } : {}),
    });
    const db = new BoundedDatabase(rawDb, deadline('database', storage.databaseTimeoutMs));
    closers.push(() => db.close());
    if (options.migrate) await migrate(rawDb, options.pluginMigrations);
    const kvPrefix = options.kvPrefix ?? storage.kvPrefix;
    const rawKv = await openKv({ redisUrl: storage.redisUrl, timeoutMs: storage.kvTimeoutMs, ...(kvPrefix ? { prefix: kvPrefix } : {}) });
    // The in-process KV answers within the call (its promises are settled before they are returned): it cannot
    // stall, and a deadline would only add two timers to each of a request's half-dozen KV calls.
    const kv = rawKv.kind === 'memory' ? rawKv : new BoundedKv(rawKv, deadline('kv', storage.kvTimeoutMs));
    closers.push(() => kv.close());
    return { db, kv, lock, close };
  } catch (err) {
    await close();
    throw err;
  }
}
