/**
 * What a plugin gets from the gateway: narrow interfaces over the stores, the log and identity, so that the
 * core can change behind them without breaking a plugin. The gateway passes its real services, which satisfy these.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { Log, LogFn } from '../log.ts';
import type { CopyBinary } from '../store/copy-binary.ts';
import type { CopyCsv } from '../store/copy-csv.ts';
import type { KvOperation } from '../store/kv-operation.ts';
import type { Caller, Credential } from './caller.ts';
import type { EmbeddingService } from './embed.ts';
import type { RetrievalService } from './retrieval.ts';

export interface Clock {
  /** Wall time in ms since the epoch. */
  now(): number;
}

export type { LogFn };
export type PluginLogger = Log;

export type Row = Record<string, unknown>;

export interface PluginQueryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Several statements, no parameters. */
  exec(sql: string): Promise<void>;
}

/** Postgres (embedded PGlite or a server); every call is bounded by storage.databaseTimeoutMs. */
export interface PluginDatabase extends PluginQueryable {
  readonly kind: 'pglite' | 'postgres';
  /** Whether pgvector is there; without it, vector search must use an exact scan. */
  readonly hasVector: boolean;
  /**
   * Appends rows given as CSV text to `table (columns)` in one COPY, all or none (an unquoted empty field is NULL,
   * "" the empty string). Present only where it costs less than a multi-row INSERT (PGlite); COPY has no ON
   * CONFLICT. Table and column names must be plain lower-case identifiers.
   */
  readonly copyCsv?: CopyCsv;
  /**
   * The same append from a binary COPY stream written with BinaryCopyWriter (aigw/plugin): the database parses no
   * text, which halves the per-row cost of the CSV on a table without indexes. Present where copyCsv is.
   */
  readonly copyBinary?: CopyBinary;
  transaction<T>(fn: (tx: PluginQueryable) => Promise<T>): Promise<T>;
}

/** The shared KV (memory, or Redis across instances); every call is bounded by storage.kvTimeoutMs. */
export interface PluginKv {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  mget(keys: readonly string[]): Promise<Array<string | null>>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; returns whether it did (locks, single-use tickets, counters' creation). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  incrBy(key: string, by: number, ttlMs?: number): Promise<number>;
  /** The plugin's own atomic operation (defineKvOperation). */
  run<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Promise<Result>;
  /**
   * Present on the in-process KV only: the operation run now, its result returned (no promise). A plugin on the
   * request path may use it when it is there; Redis has only run().
   */
  runNow?<Args, Result>(operation: KvOperation<Args, Result>, args: Args): Result;
}

export interface IdentityService {
  /** A presented credential -> the caller, or a 401/403 GatewayError. */
  authenticate(credential: Credential): Promise<Caller>;
  /**
   * The same answer within the call when it needs no I/O (an API key cached in the in-process KV), else undefined:
   * call authenticate then. Throws the errors authenticate rejects with. Optional: a plugin must fall back.
   */
  authenticateNow?(credential: Credential): Caller | undefined;
}

export interface PluginServices {
  /** The validated pipelines.yaml, defaults applied. Read it; never change it. */
  readonly config: Readonly<GatewayConfig>;
  readonly db: PluginDatabase;
  readonly kv: PluginKv;
  readonly logger: PluginLogger;
  readonly clock: Clock;
  readonly identity: IdentityService;
  /** Embeddings through the gateway's own dispatch, metered in the name of the caller they serve. */
  readonly embeddings: EmbeddingService;
  /** Search of the gateway-owned vector stores (their query embedded through `embeddings`). */
  readonly retrieval: RetrievalService;
  /** Runs at shutdown after in-flight requests finish and before the stores close (flush buffers here). */
  onClose(hook: () => Promise<void>): void;
}
